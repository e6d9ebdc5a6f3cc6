"""Opens per second of one worker process: `python -m bench opens [--sessions 400]`.

A private redis-server and one `iui worker`; `--sessions` new sessions each open the small
(10-component) and then the large (200-component) document, all submitted at once, replies
collected in bulk.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

from bench.workers import PARTITIONS, Load, collect_replies, large_document, small_document, start_workers, stop
from workers.keys import partition_of
from workers.local_redis import start_redis_server


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
                body = json.dumps({"document": document})
                names = [f"{name}-{n}" for n in range(args.sessions)]
                pipe = load.redis.pipeline(transaction=False)
                started = time.perf_counter()
                requests = [load.submit_raw(s, "intelligent_ui_open", body, f"open-{s}", pipe) for s in names]
                pipe.execute()
                keys = [load.keys.reply(partition_of(s, PARTITIONS), s, r)
                        for s, r in zip(names, requests, strict=True)]
                replies = collect_replies(load.redis, keys, timeout=600)
                elapsed = time.perf_counter() - started
                if not all(json.loads(reply)["ok"] for reply in replies):
                    raise RuntimeError("an open was rejected")
                print(f"{name} document: {len(names) / elapsed:.0f} opens/s (1 worker process)")
        finally:
            stop(workers)
            server.kill()
            server.wait()
    return 0
