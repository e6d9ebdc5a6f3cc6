"""Opens per second of one worker process: `python -m bench opens [--sessions 400]`.

A private redis-server and one `iui worker`; `--sessions` new sessions each open the small
(10-component) and then the large (200-component) document, submitted 500 at a time, replies
collected in bulk (`bench.scale.open_sessions`).
"""

from __future__ import annotations

import argparse
import tempfile
import time

from bench.scale import open_sessions
from bench.workers import Load, large_document, small_document, start_workers, stop
from workers.redisio.local_server import start_redis_server


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench opens", description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=400)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        server, port = start_redis_server(directory)
        url = f"redis://127.0.0.1:{port}/0"
        workers = start_workers(url, 1)
        try:
            for name, document in (("small", small_document()), ("large", large_document())):
                load = Load(url, document, 0, name)
                started = time.perf_counter()
                open_sessions(load, [f"{name}-{n}" for n in range(args.sessions)], document)
                elapsed = time.perf_counter() - started
                print(f"{name} document: {args.sessions / elapsed:.0f} opens/s (1 worker process)")
        finally:
            stop(workers)
            server.kill()
            server.wait()
    return 0
