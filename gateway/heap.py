"""The garbage-collector policy of a gateway process: no stream waits for a full collection.

Every open stream keeps a few hundred objects alive; with a thousand streams a full collection
walks about 300,000 objects and stops the event loop for 150-300 ms, so every subscriber's
events wait.  As the workers do (`workers.runtime.heap`), the gateway freezes its heap
(`gc.freeze`) after start-up and then every `IUI_GC_FREEZE_S` seconds: frozen objects are freed
by reference counting as usual but never walked again.  Unlike the workers, an ASGI server does
make some reference cycles (exceptions with their tracebacks, cancelled tasks), so a frozen
cycle would stay: every `FULL_EVERY_S` the heap is unfrozen and collected once, one pause an
interval, which frees them.  `IUI_GC_FREEZE_S=0` leaves the collector as CPython configures it.
"""

from __future__ import annotations

import asyncio
import gc

from workers.runtime.heap import THRESHOLDS

FULL_EVERY_S = 600.0


async def keep_heap(every_s: float) -> None:
    """Freeze the heap every `every_s` seconds and collect it whole every FULL_EVERY_S (runs until cancelled)."""
    if every_s <= 0:
        return
    gc.set_threshold(*THRESHOLDS)
    gc.freeze()
    since_full = 0.0
    while True:
        await asyncio.sleep(every_s)
        since_full += every_s
        if since_full >= FULL_EVERY_S:
            since_full = 0.0
            gc.unfreeze()
            gc.collect()
        gc.freeze()
