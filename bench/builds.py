"""Drained calls/s of installed builds side by side: `python -m bench builds --python A=<python> ...`.

`python -m bench compare` sets the pure core against a compiled one; this sets any installed
builds against each other (two compiled builds of different commits, say: one venv each, made
with `IUI_COMPILE=1 pip install .` from each commit's tree), one `iui worker` process at a time.
Each round runs every build once, the order reversed every other round (the machine's phase
drifts over minutes, so neither build always goes first): a private redis-server, one worker of
that interpreter (started outside any source tree and without `PYTHONPATH`, so it runs the
`core` and `workers` installed beside it), `--sessions` sessions of the 10-component document
(`--document large`: the 200-component one), one warm-up patch per session, then three drains of
`--per-session` patches per session submitted at once; the round's figure is the median of the
three.  `--presubmitted` times each drain as `bench.workers.drain` does with the worker stopped
while the patches are submitted (from its SIGCONT to the last frame), not from the submission's
start to the last reply popped.  Printed: each round, then for each build its core (compiled or
pure), min / median calls/s over the rounds and the ratio of its median to the first build's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.compare_runtime import outside_env
from bench.workers import Load, large_document, small_document, start_workers, stop, throughput
from workers.redisio.local_server import start_redis_server

DRAINS = 3  # drains per build per round; the round's figure is their median
_PROBE = "import core, workers.runtime.build as w; print('compiled' if core.COMPILED and w.COMPILED else 'pure')"


def build(spec: str) -> tuple[str, str]:
    """(label, interpreter) of a `--python` value, `LABEL=PATH` or a bare `PATH` (labelled by it)."""
    label, separator, path = spec.partition("=")
    if not separator:
        label, path = spec, spec
    if not label or not path:
        raise argparse.ArgumentTypeError(f"expected LABEL=PATH or PATH, got {spec!r}")
    if not (Path(path).is_file() and os.access(path, os.X_OK)):
        raise argparse.ArgumentTypeError(f"{path!r} is not an executable interpreter")
    return label, path


def core_of(python: str) -> str:
    """'compiled' or 'pure': which core and worker the interpreter runs from outside any tree."""
    with tempfile.TemporaryDirectory() as outside:
        done = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, cwd=outside,
                              env=outside_env(), timeout=60)
    if done.returncode != 0:
        raise SystemExit(f"{python} cannot import core and workers: {done.stderr.strip()[-300:]}")
    return done.stdout.strip()


def drained(python: str, document: dict[str, Any], sessions: int, per_session: int, *,
            presubmitted: bool = False) -> float:
    """The median calls/s of `DRAINS` drains by one fresh worker of `python` on a fresh redis-server
    (`presubmitted`: the worker stopped while each drain's patches are submitted)."""
    with tempfile.TemporaryDirectory() as directory:
        server, port = start_redis_server(directory)
        url = f"redis://127.0.0.1:{port}/0"
        try:
            workers = start_workers(url, 1, python=(python,), env=outside_env(), cwd=directory)
            try:
                load = Load(url, document, sessions, "builds")
                throughput(load, 1)  # warm-up: the scripts loaded, every session cached
                pause = workers if presubmitted else ()
                return statistics.median(throughput(load, per_session, pause=pause) for _ in range(DRAINS))
            finally:
                stop(workers)
        finally:
            server.kill()
            server.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench builds", description=__doc__.split("\n")[0])
    parser.add_argument("--python", type=build, action="append", default=None, metavar="LABEL=PATH",
                        help="an interpreter with a build installed (repeat; default: this interpreter)")
    parser.add_argument("--rounds", type=int, default=8, help="rounds, each running every build once")
    parser.add_argument("--document", choices=("small", "large"), default="small")
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--per-session", type=int, default=120, help="patches per session per drain")
    parser.add_argument("--presubmitted", action="store_true",
                        help="time each drain from the worker's SIGCONT, its patches submitted while it was stopped")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.sessions < 1 or not 1 <= args.per_session <= 240:
        parser.error("--rounds and --sessions must be at least 1, --per-session within 1..240")
    builds: list[tuple[str, str]] = args.python or [("this", sys.executable)]
    if len({label for label, _ in builds}) != len(builds):
        parser.error("each --python needs its own label")
    cores = {label: core_of(python) for label, python in builds}
    document = small_document() if args.document == "small" else large_document()
    rates: dict[str, list[float]] = {label: [] for label, _ in builds}
    for round_ in range(args.rounds):
        for label, python in builds if round_ % 2 == 0 else builds[::-1]:
            rates[label].append(drained(python, document, args.sessions, args.per_session,
                                        presubmitted=args.presubmitted))
        print(f"round {round_ + 1}: " + ", ".join(f"{label} {rates[label][-1]:,.0f}" for label, _ in builds),
              flush=True)
    first = statistics.median(rates[builds[0][0]])
    ruler = "pre-submitted (the worker stopped meanwhile)" if args.presubmitted else "submitted at once"
    print(f"{args.document} document, {args.sessions} sessions, {DRAINS} drains of {args.per_session} patches a "
          f"session per build and round, {ruler}, {args.rounds} rounds alternated; calls/s")
    for label, python in builds:
        median = statistics.median(rates[label])
        print(f"{label} ({cores[label]}, {python}): min {min(rates[label]):,.0f}, median {median:,.0f}, "
              f"median / {builds[0][0]}'s {median / first:.3f}")
    return 0
