"""The garbage-collector policy of a worker process: no stop-the-world pauses from its cache.

A worker keeps many long-lived containers: the parsed documents of its generation cache.
CPython's older-generation collections walk every one of them; with a full cache they took
25-250 ms and stalled every partition at once.  Neither core nor the worker makes reference
cycles (tests run hostile inputs through every public core function, and a live pool through
accepted, rejected and unknown calls and cold sessions, before and after the server lost its
scripts, with the collector off, and find no cyclic garbage; an error reply or a failed write's
exception kept in a list is detached from its traceback, `redisio.connection.detached`), so
the worker freezes its heap (`gc.freeze`) after start-up and then every `IUI_GC_FREEZE_S`
seconds (default 1), and sooner whenever the young generation passes `RELIEVE_AT` objects.
Frozen objects are never examined by the collector again, so any collection only walks what was
allocated since the last freeze.  They are still freed by
reference counting; only cyclic garbage made in the interval before a freeze would be kept
until the process ends, and the tests show none is made.  `IUI_GC_FREEZE_S=0` leaves the
collector as CPython configures it.
"""

from __future__ import annotations

import gc
import time

# young, middle, old.  The young count is net: tracked objects allocated minus those freed, so a
# young collection walks what is alive of the interval, mostly the decided states a dispatcher
# round holds until Redis confirms them.  At 10_000 a drained worker ran one every ~100 ms and
# spent ~10 % of its CPU in them; at 100_000 they are ten times rarer (a freeze resets the count,
# so a paced worker hardly meets one): +10 % drained calls/s on the small document, docs/benchmarks.md.
THRESHOLDS = (100_000, 10, 10)
# Young objects past which `relieve` freezes them rather than wait for the young collection: a
# cold session's state (~14,000 containers for 200 components) is as long-lived as the cache, and
# while a worker resumes cold sessions that collection came every few calls, walking the states just
# built (0.14-0.22 s of collections per 1,000 cold sessions, 0.015 s with this; docs/benchmarks.md).
RELIEVE_AT = THRESHOLDS[0] // 2


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

    def relieve(self) -> None:
        """Freeze now if the young generation holds more than RELIEVE_AT objects (a partition asks
        before each entry it decides); a no-op when the collector is left as it is."""
        if self._every_s > 0 and gc.get_count()[0] > RELIEVE_AT:
            self.freeze()

    def freeze(self) -> None:
        """Move every object alive now out of the collector's reach (no collection: that would stall)."""
        gc.freeze()
        self._frozen_at = time.monotonic()
