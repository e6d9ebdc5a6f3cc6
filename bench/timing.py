"""Timing shared by every benchmark: medians over repeated rounds (timeit underneath)."""

from __future__ import annotations

import statistics
import timeit
from collections.abc import Callable
from typing import Any


def median_seconds(call: Callable[[], Any], *, repeat: int, min_time: float) -> float:
    """Median seconds per call over `repeat` rounds, each lasting at least `min_time`."""
    timer = timeit.Timer(call)
    number = 1
    while (elapsed := timer.timeit(number)) < min_time:
        number = max(number * 2, int(number * min_time / max(elapsed, 1e-9)) + 1)
    return statistics.median(t / number for t in timer.repeat(repeat=repeat, number=number))
