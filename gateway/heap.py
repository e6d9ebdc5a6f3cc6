"""The garbage-collector policy of a gateway process: no stream waits for a full collection.

Every open stream keeps a few hundred objects alive; with a thousand streams a full collection
walks about 300,000 objects and stops the event loop for 150-300 ms, so every subscriber's
events wait.  As the workers do (`workers.runtime.heap`), the gateway freezes its heap
(`gc.freeze`) after start-up and then every `IUI_GC_FREEZE_S` seconds: frozen objects are freed
by reference counting as usual but never walked again.  A frozen reference cycle stays, though,
so every `FULL_EVERY_S` the heap is unfrozen and collected once, one pause an interval, which frees
what cycles an ASGI server still makes (an exception kept with its traceback, on rarer paths).  An
ended stream makes none (`gateway.acyclic`).  Each used to leave ~30 KiB of them (anyio's cancelled
tasks, the protocol and its transport): 70 -> 138 MB of RSS over 2,200 streams cut within five
minutes, so the collection also came every 1,000 ended streams, a pause of 0.2-0.3 s with 500
streams open.  It still comes once `FULL_AFTER_ENDED` streams ended, a bound for what a path not
yet seen might leave (8,000 streams cut beside 500 open ones: RSS flat at 101 MB, no collection).
`IUI_GC_FREEZE_S=0` leaves the collector as CPython configures it.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

from workers.runtime.heap import RELIEVE_AT, THRESHOLDS

FULL_EVERY_S = 600.0
FULL_AFTER_ENDED = 10_000  # ended streams between two collections (they leave no cycle: a bound, not a need)

_releasing: set[asyncio.Task[None]] = set()  # a task is kept only weakly by the loop


async def keep_heap(every_s: float, ended: Callable[[], int],
                    collected: Callable[[float], None] = lambda seconds: None) -> None:
    """Freeze the heap every `every_s` seconds and collect it whole every FULL_EVERY_S, or once
    `ended()` (a count of the streams that ended) grew by FULL_AFTER_ENDED, telling `collected`
    how long each whole collection took (runs until cancelled)."""
    if every_s <= 0:
        return
    gc.set_threshold(*THRESHOLDS)
    gc.freeze()
    since_full, ended_at_full = 0.0, ended()
    while True:
        await asyncio.sleep(every_s)
        since_full += every_s
        count = ended()
        if since_full >= FULL_EVERY_S or count - ended_at_full >= FULL_AFTER_ENDED:
            since_full, ended_at_full = 0.0, count
            started = time.perf_counter()
            gc.unfreeze()
            gc.collect()
            collected(time.perf_counter() - started)
        gc.freeze()


def relieve() -> None:
    """Freeze the young generation once it holds more than RELIEVE_AT objects, rather than let a
    young collection walk them: decoding an AG-UI snapshot of 100 UIs at the document limit
    (~320,000 objects the collector tracks, as long-lived as their stream) met three young
    collections, 111-172 ms against 73-77 ms without them.  Only while `keep_heap` runs: what it
    freezes is collected whole at its next full collection, like every other frozen object."""
    if gc.get_count()[0] > RELIEVE_AT:
        gc.freeze()


def release(parts: dict[str, Any]) -> asyncio.Task[None] | None:
    """Free a large mapping one value per turn of the event loop, in a task of its own: an AG-UI
    connection to a session of 100 UIs at the document limit holds ~27 MB of decoded state, and
    freeing it in one piece when the connection ends stopped every stream of the process ~43 ms.
    Without a running loop (a renderer used outside the gateway) it is freed at once.  Returns the
    task freeing it, if any."""
    if not parts:
        return None
    try:
        task = asyncio.get_running_loop().create_task(_free(parts), name="iui-release-state")
    except RuntimeError:
        return None
    _releasing.add(task)
    task.add_done_callback(_releasing.discard)
    return task


async def _free(parts: dict[str, Any]) -> None:
    while parts:
        parts.popitem()  # the value's last reference: freed here
        await asyncio.sleep(0)
