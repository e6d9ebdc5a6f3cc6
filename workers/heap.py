"""The garbage-collector policy of a worker process: no stop-the-world pauses from its cache.

A worker keeps many long-lived containers: the parsed documents of its generation cache.
CPython's full (generation 2) collections walk every one of them; with a full cache they took
150-250 ms and stalled every partition at once.  Core makes no reference cycles (a unit test
checks that stream states are freed by reference counting alone), so the worker:

- collects the young generations less often (`gc.set_threshold`), and
- freezes its heap (`gc.freeze`) after start-up and then every `IUI_GC_FREEZE_S` seconds,
  right after a young collection.  Frozen objects are never examined by the collector again,
  so a full collection only walks what was allocated since the last freeze.  They are still
  freed by reference counting; only cyclic garbage that was already old at a freeze is kept
  until the process ends, and core makes none.
"""

from __future__ import annotations

import gc
import time

THRESHOLDS = (20_000, 20, 50)  # young, middle, old: fewer collections of the young generations


class HeapPolicy:
    """Start-up thresholds and periodic freezing; `every_s <= 0` leaves the collector as it is."""

    def __init__(self, *, every_s: float) -> None:
        self._every_s = every_s
        self._frozen_at = 0.0

    def start(self) -> None:
        """Apply the thresholds and freeze what start-up allocated (modules, tables, clients)."""
        if self._every_s <= 0:
            return
        gc.set_threshold(*THRESHOLDS)
        self.freeze()

    def maybe_freeze(self) -> None:
        """Freeze again when the interval has passed (called from the pool's tick)."""
        if self._every_s > 0 and time.monotonic() - self._frozen_at >= self._every_s:
            self.freeze()

    def freeze(self) -> None:
        """Collect the young generations, then move every surviving object out of the collector's reach."""
        gc.collect(1)
        gc.freeze()
        self._frozen_at = time.monotonic()
