"""Cold sessions vs warm: `python -m bench cold [--sessions 1000] [--repeat 3]`.

A private redis-server; `--sessions` sessions each open the 200-component document (the
bench's large document).  Then, `--repeat` times: a fresh `iui worker` process (its cache
empty, as after a fail-over or a scale-out) drains one patch per session (cold), and at once
the same worker drains one more patch per session (warm: every session now in its cache).
Each round is submitted at once and timed from the submission to the last frame (pushed on
pub/sub, nothing polls).  Printed: calls/s of each round, min/median, and cold/warm.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile

from bench.scale import open_sessions
from bench.workers import Load, large_document, start_workers, stop, throughput
from workers.redisio.local_server import start_redis_server


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench cold", description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    document = large_document()
    with tempfile.TemporaryDirectory() as directory:
        server, port = start_redis_server(directory)
        url = f"redis://127.0.0.1:{port}/0"
        try:
            load = _opened(url, document, args.sessions)
            cold, warm = [], []
            for run in range(args.repeat):
                workers = start_workers(url, 1)  # a new process: nothing cached
                try:
                    cold.append(throughput(load, 1))
                    warm.append(throughput(load, 1))
                finally:
                    stop(workers)
                print(f"run {run + 1}: cold {cold[-1]:7.0f} calls/s, warm {warm[-1]:7.0f} calls/s, "
                      f"cold/warm {cold[-1] / warm[-1]:.2f}", flush=True)
        finally:
            server.kill()
            server.wait()
    print(f"{args.sessions} sessions of the 200-component document, one patch each per round, 1 worker process")
    for name, rates in (("cold", cold), ("warm", warm)):
        print(f"{name}: min {min(rates):7.0f}, median {statistics.median(rates):7.0f} calls/s")
    ratios = [c / w for c, w in zip(cold, warm, strict=True)]
    print(f"cold/warm: min {min(ratios):.2f}, median {statistics.median(ratios):.2f} (goal >= 0.7)")
    return 0


def _opened(url: str, document: dict, sessions: int) -> Load:
    """`sessions` sessions with an open generation of `document` (opened by a worker that then stops)."""
    workers = start_workers(url, 1)
    try:
        load = Load(url, document, 0, "cold")
        open_sessions(load, [f"cold-{n}" for n in range(sessions)], document)
        return load
    finally:
        stop(workers)
