"""Cold sessions vs warm: `python -m bench cold [--sessions 1000] [--repeat 3]`.

A private redis-server; `--sessions` sessions each open the 200-component document (the
bench's large document).  Then, `--repeat` times: a fresh `iui worker` process (its cache
empty, as after a fail-over or a scale-out) drains one patch per session (cold), and at once
the same worker drains one more patch per session (warm: every session now in its cache).
Each round is submitted at once and timed from the submission to the last reply (each frame
pushed on pub/sub, nothing polls), or with `--presubmitted` from the worker's SIGCONT to the last
frame, the round submitted while it was stopped (`bench.workers.drain`: "queued", as issue 24
words it).  Printed: calls/s of each round, min/median, cold/warm, and the worker's
RSS after its cold round.

The sessions all open the same document, so a worker restores its snapshot once and the other
sessions around it (workers/sessions/snapshots.py); `--distinct` gives each session its own
document (its title names the session), so every cold session restores its own.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from collections.abc import Callable
from functools import partial
from typing import Any

from bench.scale import open_sessions, rss_mb
from bench.workers import Load, large_document, start_workers, stop, throughput
from workers.redisio.local_server import start_redis_server


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench cold", description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--distinct", action="store_true", help="a different document in every session")
    parser.add_argument("--presubmitted", action="store_true",
                        help="submit each round while the worker is stopped, timed from its SIGCONT")
    args = parser.parse_args(argv)
    document = large_document()
    with tempfile.TemporaryDirectory() as directory:
        server, port = start_redis_server(directory)
        url = f"redis://127.0.0.1:{port}/0"
        try:
            start = partial(start_workers, url, 1)
            load = opened(url, document, args.sessions, "cold", start, distinct=args.distinct)
            cold, warm, rss = [], [], []
            for run in range(args.repeat):
                first, second = cold_then_warm(load, start, rss, presubmitted=args.presubmitted)
                cold.append(first)
                warm.append(second)
                print(f"run {run + 1}: cold {cold[-1]:7.0f} calls/s, warm {warm[-1]:7.0f} calls/s, "
                      f"cold/warm {cold[-1] / warm[-1]:.2f}, worker RSS after the cold round {rss[-1]:.0f} MiB",
                      flush=True)
        finally:
            server.kill()
            server.wait()
    kind = "a 200-component document each (all different)" if args.distinct else "the 200-component document"
    print(f"{args.sessions} sessions of {kind}, one patch each per round, 1 worker process")
    for name, rates in (("cold", cold), ("warm", warm)):
        print(f"{name}: min {min(rates):7.0f}, median {statistics.median(rates):7.0f} calls/s")
    ratios = [c / w for c, w in zip(cold, warm, strict=True)]
    print(f"cold/warm: min {min(ratios):.2f}, median {statistics.median(ratios):.2f} (goal >= 0.7)")
    return 0


def opened(url: str, document: dict[str, Any], sessions: int, tag: str,
           start: Callable[[], list[Any]], *, distinct: bool = False) -> Load:
    """`sessions` sessions (`<tag>-<n>`) with an open generation of `document` (with `distinct`,
    a variant of it each), opened by a worker `start()` gives, which then stops."""
    workers = start()
    try:
        load = Load(url, document, 0, tag)
        open_sessions(load, [f"{tag}-{n}" for n in range(sessions)], document, distinct=distinct)
        return load
    finally:
        stop(workers)


def cold_then_warm(load: Load, start: Callable[[], list[Any]], rss: list[float] | None = None, *,
                   presubmitted: bool = False) -> tuple[float, float]:
    """Calls/s of a fresh worker (`start()`: nothing cached) draining one patch of every session of
    `load` (cold), then at once one more of each (warm); `rss` gets the worker's RSS (MiB) after
    the cold round, when given; `presubmitted`: each round submitted while the worker is stopped."""
    workers = start()
    pause = workers if presubmitted else ()
    try:
        cold = throughput(load, 1, pause=pause)
        if rss is not None:
            rss.append(rss_mb(workers[0].pid))
        return cold, throughput(load, 1, pause=pause)
    finally:
        stop(workers)
