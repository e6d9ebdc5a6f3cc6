"""Machine slowdowns during a run: a probe process that times a fixed unit of pure-Python work.

On a shared VM the whole machine sometimes runs 10-20x slower for tens of milliseconds. The
worker's thread CPU time for one entry then grows as much as this probe's (measured: 0.4 ms
becomes 4-10 ms), so the entries paced in meanwhile queue up and make the run's p99 whatever
the longest slowdown was. A latency figure is only comparable with one taken while the machine
ran as fast, so the latency runs report the slowdowns next to the percentiles.

The probe is a separate process (it must not share a GIL with the load generator). Every 2 ms
it runs a unit of ~0.1 ms and measures its thread CPU time: a unit that took more than
`SLOWED` times the median was slowed by the machine, since nothing else runs in its thread.
Consecutive slowed units closer than `JOIN_S` form one slowdown. Its cost is ~5 % of a core.

`python -m bench stalls [--seconds 8] [--runs 3]` probes the machine with nothing else running:
where it reports slowdowns, no worker can keep a p99 below their length.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass

SLOWED = 5.0
JOIN_S = 0.010

PROBE = r"""
import select, sys, time
def unit():
    total = 0
    for i in range(1500):
        total += i
    return total
times = []
print("ready", flush=True)
while len(times) % 64 or not select.select([sys.stdin], [], [], 0)[0]:  # stdin readable: "stop" or EOF
    started, cpu = time.monotonic(), time.thread_time()
    unit()
    times.append((started, time.monotonic(), time.thread_time() - cpu))
    time.sleep(0.002)
for row in times:
    print(*row)
"""


@dataclass(frozen=True)
class Slowdowns:
    """Stretches of a run in which the machine ran at least `SLOWED` times slower than usual."""

    count: int
    longest_ms: float
    total_ms: float
    seconds: float

    def describe(self) -> str:
        return (f"{self.count} machine slowdowns >= {SLOWED:.0f}x (longest {self.longest_ms:.0f} ms, "
                f"{self.total_ms:.0f} ms in {self.seconds:.0f} s)")

    def __add__(self, other: Slowdowns) -> Slowdowns:
        return Slowdowns(self.count + other.count, max(self.longest_ms, other.longest_ms),
                         self.total_ms + other.total_ms, self.seconds + other.seconds)


NONE = Slowdowns(0, 0.0, 0.0, 0.0)


class StallProbe:
    """`with StallProbe() as probe: ...`, then `probe.slowdowns` covers the block."""

    def __enter__(self) -> StallProbe:
        self._process = subprocess.Popen([sys.executable, "-c", PROBE], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True)
        assert self._process.stdout is not None
        self._process.stdout.readline()
        self.slowdowns = NONE
        return self

    def __exit__(self, *exc: object) -> None:
        out, _ = self._process.communicate(input="stop\n", timeout=30)
        units = [tuple(float(x) for x in line.split()) for line in out.splitlines()]
        self.slowdowns = slowdowns(units)


def slowdowns(units: list[tuple[float, ...]]) -> Slowdowns:
    """Join the slowed units (start, end, CPU seconds) of one probe run into slowdowns."""
    if not units:
        return NONE
    median = sorted(cpu for _, _, cpu in units)[len(units) // 2]
    spans: list[list[float]] = []
    for start, end, cpu in units:
        if cpu <= SLOWED * median:
            continue
        if spans and start - spans[-1][1] < JOIN_S:
            spans[-1][1] = end
        else:
            spans.append([start, end])
    lengths = [(end - start) * 1000 for start, end in spans]
    return Slowdowns(len(spans), max(lengths, default=0.0), sum(lengths), units[-1][1] - units[0][0])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench stalls", description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    for _ in range(args.runs):
        with StallProbe() as probe:
            time.sleep(args.seconds)
        print(f"idle machine: {probe.slowdowns.describe()}", flush=True)
    return 0
