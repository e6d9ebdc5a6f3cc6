"""The runtime half of `python -m bench compare`: one `iui worker` with the pure core and one
with the compiled core, the floors beside them, cold sessions beside warm ones.

Each round, on one private redis-server, in alternated order of the two sides: a worker drains
patches of the 10-component and of the 200-component document (64 sessions, all submitted at
once, as `bench workers` does) and we read its CPU from `/proc`, then drains them again
"pre-submitted": stopped while they are submitted, timed from its SIGCONT to the last frame
(`bench.workers.drain`: the first ruler counts the load generator's own work, ~12 % of a fast
drain); the worker of the 10-component document is then paced at `--paced-rate` (open loop, as
`bench workers` paces it): its busiest thread's CPU per paced call (the dispatcher's: a paced
call pays a whole round) and the p99, beside the latency floor's p99 at the same rate in the
same round; a fresh worker drains one patch of each of `--cold-sessions` sessions of the
200-component document (cold: nothing cached) and at once one more each (warm).  Each round also
runs the two floors of `bench workers` (the runtime's commit script with no validation; the
contract minimum of `bench.minimum`), by both rulers.  The compiled worker is the other
interpreter's installed build as it is (its compiled `core` and worker hot path, `IUI_COMPILE=1
pip install .` of this tree), started from an empty folder without PYTHONPATH so that nothing of
this tree can shadow it.

`--baseline REF` adds a third side, alternated with the other two: a pure worker of an earlier
commit (a `git worktree` of REF, removed afterwards), so "today's" worker and this tree's are
measured in the same run on the same server.  REF must speak this tree's wire contract.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import redis

from bench.cold import cold_then_warm, opened
from bench.minimum import minimum_floor
from bench.workers import (
    Load,
    cpu_seconds,
    floor,
    large_document,
    latency,
    latency_floor,
    small_document,
    start_workers,
    stop,
    thread_cpu_seconds,
    throughput,
)
from workers.redisio.local_server import start_redis_server

ROOT = Path(__file__).resolve().parents[1]
SESSIONS, PER_SESSION = 64, 100
PACED_CALLS = 4_000  # one paced run per side and round (~3 s at 1,200 calls/s)
SIDES = ("pure", "compiled")
PRESUBMITTED = "pre-submitted"  # the rows timed as `bench.workers.drain` times a paused consumer


def outside_env() -> dict[str, str]:
    """This process's environment without PYTHONPATH: an interpreter started with it in a folder
    outside this tree imports the build installed beside it, nothing of this tree."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


class Side:
    """How to start a worker of one build: interpreter, environment and working folder."""

    def __init__(self, name: str, compiled_python: str, empty: Path, tree: Path = ROOT) -> None:
        self.name = name
        if name == "compiled":  # the installed build only: no tree on the path
            self.python: tuple[str, ...] = (compiled_python,)
            self.env = outside_env()
            self.cwd = str(empty)
        else:  # "pure" (this tree) or "baseline" (an earlier commit's tree), both pure Python
            self.python = (sys.executable,)
            self.env, self.cwd = {**os.environ, "PYTHONPATH": str(tree)}, str(tree)
        self._tree = tree

    def check(self) -> None:
        """Refuse a side whose workers would not run the builds it stands for (a compiled side whose
        core or worker hot path is pure, a pure side that would not load this tree's modules)."""
        probe = ("import core, workers.runtime.build as worker; "
                 "print(int(core.COMPILED), int(worker.COMPILED), core.__file__, worker.__file__)")
        done = subprocess.run([*self.python, "-c", probe], env=self.env, cwd=self.cwd, capture_output=True, text=True,
                              check=False)
        fields = done.stdout.split()
        if done.returncode != 0 or len(fields) != 4:
            raise SystemExit(f"bench compare: the {self.name} worker would not start: {done.stderr.strip()}")
        compiled = self.name == "compiled"
        builds = ["compiled" if flag == "1" else "pure" for flag in fields[:2]]
        inside = all(path.startswith(str(self._tree)) for path in fields[2:])
        if builds != ["compiled" if compiled else "pure"] * 2 or (not compiled and not inside):
            raise SystemExit(f"bench compare: the {self.name} worker would run the {builds[0]} core and the "
                             f"{builds[1]} worker ({fields[2]}, {fields[3]})")

    def start(self, url: str) -> list[Any]:
        return start_workers(url, 1, python=self.python, env=self.env, cwd=self.cwd)


def drained(url: str, side: Side, name: str, document: dict[str, Any], run: int,
            paced_rate: float = 0.0) -> tuple[float, ...]:
    """Calls/s of one worker draining patches, its CPU ms per call, then its calls/s when they
    were all submitted while it was stopped (`bench.workers.drain`); with `paced_rate`, then its
    busiest thread's CPU ms per paced call and the paced p99 (ms)."""
    workers = side.start(url)
    try:
        load = Load(url, document, SESSIONS, f"{side.name}-{name}-{run}")
        throughput(load, 20)  # warm-up: caches, script loading
        before = cpu_seconds(workers[0].pid)
        rate = throughput(load, PER_SESSION)
        cpu = (cpu_seconds(workers[0].pid) - before) * 1000 / (SESSIONS * PER_SESSION)
        presubmitted = throughput(load, PER_SESSION, pause=workers)
        if not paced_rate:
            return rate, cpu, presubmitted
        load.reopen_if_needed(PACED_CALLS // SESSIONS + 1)
        threads = thread_cpu_seconds(workers[0].pid)
        _, p99, _ = latency(load, paced_rate, PACED_CALLS)
        after = thread_cpu_seconds(workers[0].pid)
        busiest = max(seconds - threads.get(thread, 0.0) for thread, seconds in after.items())
        return rate, cpu, presubmitted, busiest * 1000 / PACED_CALLS, p99
    finally:
        stop(workers)


def cold_and_warm(url: str, side: Side, sessions: int, run: int, *, distinct: bool = False) -> tuple[float, float]:
    """Calls/s of a fresh worker's first patch of each session (cold), then of a second (warm);
    with `distinct`, every session holds its own variant of the document (none shares a restore)."""
    start = partial(side.start, url)
    tag = f"cold{'-distinct' if distinct else ''}-{side.name}-{run}"
    return cold_then_warm(opened(url, large_document(), sessions, tag, start, distinct=distinct), start)


def measure_round(url: str, sides: list[Side], cold_sessions: int, run: int, paced_rate: float) -> dict[str, Any]:
    """One round: every measure of both sides (in the given order), the two floors and the latency floor."""
    result: dict[str, Any] = {"paced rate": paced_rate}
    for side in sides:
        small = drained(url, side, "small", small_document(), run, paced_rate)
        large = drained(url, side, "large", large_document(), run)
        cold, warm = cold_and_warm(url, side, cold_sessions, run)
        distinct, distinct_warm = cold_and_warm(url, side, cold_sessions, run, distinct=True)
        result[side.name] = {"small": small, "large": large, "cold": cold, "warm": warm,
                             "cold distinct": distinct, "warm distinct": distinct_warm}
        redis.Redis.from_url(url).flushall()
    for name, document in (("small", small_document()), ("large", large_document())):
        frame = len(json.dumps({"protocol": "x" * 26, "snapshot": document}))  # about the real frame's size
        result[f"floor {name}"] = floor(url, frame, SESSIONS, PER_SESSION, run, batched=True)
        result[f"minimum {name}"] = minimum_floor(url, frame, SESSIONS, PER_SESSION, run)
        result[f"floor {name} presubmitted"] = floor(url, frame, SESSIONS, PER_SESSION, run, batched=True,
                                                     presubmitted=True)
        result[f"minimum {name} presubmitted"] = minimum_floor(url, frame, SESSIONS, PER_SESSION, run,
                                                               presubmitted=True)
        redis.Redis.from_url(url).flushall()
    if paced_rate:
        paced = argparse.Namespace(sessions=SESSIONS, latency_runs=1, latency_calls=PACED_CALLS)
        result["latency floor"] = latency_floor(url, paced_rate, paced)[0][1]
    return result


@contextmanager
def baseline_tree(ref: str | None) -> Iterator[Path | None]:
    """A detached `git worktree` of `ref` (None: no baseline side), removed afterwards."""
    if ref is None:
        yield None
        return
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref], check=True,
                       capture_output=True)
        try:
            yield tree
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False,
                           capture_output=True)


def run_rounds(compiled_python: str, repeat: int, cold_sessions: int, baseline: str | None = None,
               paced_rate: float = 0.0) -> list[dict[str, Any]]:
    """`repeat` rounds on one private redis-server, the sides' order alternated."""
    rounds = []
    with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as directory, \
            baseline_tree(baseline) as tree:
        server, port = start_redis_server(directory)
        url = f"redis://127.0.0.1:{port}/0"
        try:
            sides = [Side(name, compiled_python, Path(empty)) for name in SIDES]
            if tree is not None:
                sides.insert(0, Side("baseline", compiled_python, Path(empty), tree))
            for side in sides:
                side.check()
            for run in range(repeat):
                order = sides if run % 2 == 0 else sides[::-1]
                rounds.append(measure_round(url, order, cold_sessions, run, paced_rate))
                print(f"runtime round {run + 1}/{repeat} done", flush=True)
        finally:
            server.kill()
            server.wait()
    return rounds


def header(baseline: str | None) -> list[str]:
    """The runtime table's column titles (as wide as every row of `rows`)."""
    before = [f"{baseline} min", f"{baseline} median"] if baseline else []
    after = [f"compiled / {baseline} (medians)"] if baseline else []
    return ["runtime (1 iui worker, 64 sessions drained)", *before, "pure min", "pure median", "compiled min",
            "compiled median", "compiled / pure (medians)", *after]


def rows(rounds: list[dict[str, Any]]) -> list[list[str]]:
    """Table rows: each measure's min and median per side, and the ratio of the medians."""
    def values(side: str, pick: Any) -> list[float]:
        return [pick(r[side], r) for r in rounds]

    measures = [
        ("1 worker, 10 components, calls/s", lambda s, r: s["small"][0]),
        ("1 worker, 200 components, calls/s", lambda s, r: s["large"][0]),
        ("worker CPU ms per call, 10 components", lambda s, r: s["small"][1]),
        ("worker CPU ms per call, 200 components", lambda s, r: s["large"][1]),
        ("10 components / batched floor", lambda s, r: s["small"][0] / r["floor small"]),
        ("10 components / contract minimum", lambda s, r: s["small"][0] / r["minimum small"]),
        ("200 components / batched floor", lambda s, r: s["large"][0] / r["floor large"]),
        ("200 components / contract minimum", lambda s, r: s["large"][0] / r["minimum large"]),
        (f"1 worker, 10 components, calls/s, {PRESUBMITTED}", lambda s, r: s["small"][2]),
        (f"1 worker, 200 components, calls/s, {PRESUBMITTED}", lambda s, r: s["large"][2]),
        (f"10 components / batched floor, both {PRESUBMITTED}",
         lambda s, r: s["small"][2] / r["floor small presubmitted"]),
        (f"10 components / contract minimum, both {PRESUBMITTED}",
         lambda s, r: s["small"][2] / r["minimum small presubmitted"]),
        (f"200 components / batched floor, both {PRESUBMITTED}",
         lambda s, r: s["large"][2] / r["floor large presubmitted"]),
        ("cold sessions, calls/s", lambda s, r: s["cold"]),
        ("warm sessions, calls/s", lambda s, r: s["warm"]),
        ("cold / warm", lambda s, r: s["cold"] / s["warm"]),
        ("cold sessions, each its own document, calls/s", lambda s, r: s["cold distinct"]),
        ("cold / warm, each its own document", lambda s, r: s["cold distinct"] / s["warm distinct"]),
    ]
    paced = rounds[0].get("paced rate")
    if paced:
        at = f"paced at {paced:,.0f} calls/s, 10 components"
        measures += [
            (f"busiest thread's CPU ms per call, {at}", lambda s, r: s["small"][3]),
            (f"p99 ms, {at}", lambda s, r: s["small"][4]),
            (f"p99 / the latency floor's p99, {at}", lambda s, r: s["small"][4] / r["latency floor"]),
        ]
    table = []
    baseline = "baseline" in rounds[0]
    for name, pick in measures:
        pure, compiled = values("pure", pick), values("compiled", pick)
        row = [name, _figure(min(pure)), _figure(statistics.median(pure)), _figure(min(compiled)),
               _figure(statistics.median(compiled)), f"{statistics.median(compiled) / statistics.median(pure):.2f}"]
        if baseline:
            before = values("baseline", pick)
            row[1:1] = [_figure(min(before)), _figure(statistics.median(before))]
            row.append(f"{statistics.median(compiled) / statistics.median(before):.2f}")
        table.append(row)
    for floor_name, title in (("floor", "batched floor"), ("minimum", "contract minimum")):
        for size, components in (("small", 10), ("large", 200)):
            for suffix, ruler in (("", ""), (" presubmitted", f", {PRESUBMITTED}")):
                figures = [r[f"{floor_name} {size}{suffix}"] for r in rounds]
                table.append([f"{title}, frame of {components} components, calls/s{ruler}", _figure(min(figures)),
                              _figure(statistics.median(figures)), *[""] * (6 if baseline else 3)])
    if paced:
        figures = [r["latency floor"] for r in rounds]
        table.append([f"latency floor, p99 ms at {paced:,.0f} calls/s", _figure(min(figures)),
                      _figure(statistics.median(figures)), *[""] * (6 if baseline else 3)])
    return table


def _figure(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"
