"""The process-wide cache of stored generations, bounded by an estimate of what it holds.

A cached generation holds its checkpoint JSON and, once used, the parsed stream state built
from it (document tree, revalidation cache).  The parsed state is about 17-20 times the
checkpoint's size (tracemalloc, 10- and 200-component documents); a worker's RSS grew by
~25 KiB per cached small session (1.3 KB checkpoint: 19x) and ~370 KiB per 200-component one
(15 KB: 24x) (`python -m bench scale`).  An entry is estimated at the larger factor,
`PARSED_FACTOR` times its checkpoint, plus a fixed overhead, and the least recently used
entries are evicted while the estimates add up to more than `IUI_CACHE_BYTES`.  Only the dispatcher thread uses it.

The retired types (every id a generation's patches removed, with its type: up to ~25,000 in 256
frames) and the call ledger's ids are counted beside the checkpoint (`RETIRED_FACTOR`,
`CALL_ID_BYTES`): they grow with the generation while its checkpoint may stay small.

The estimate holds for a long generation too: the state a worker caches keeps no earlier
frames (`UIStreamState.without_history`) and the document cache sweeps the facts of
replaced nodes (`core.document._revalidation`).  Before, a state grew by ~2.8 KiB a patch
(small document: 720 KiB after 250 patches, 22x its estimate) or ~8.8 KiB (200 components:
2.4 MiB); now tracemalloc puts it at most at 0.76x (small) and 0.86x (large) of its
estimate over 1-250 patches.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from collections.abc import Hashable
from typing import Final, Generic, Literal, TypeVar

PARSED_FACTOR = 24  # estimated bytes held per checkpoint byte once the state is parsed
ENTRY_OVERHEAD = 2_048  # the record, its key and the cache's own bookkeeping
# Bytes held per byte of a generation's retired types' JSON (the ids its patches removed, with
# their types): the record's text (1x), the state's retired map and its lineage's id -> type
# table (tracemalloc: 3.6x for 5,921 ids, 3.3x for 23,684), with a margin.
RETIRED_FACTOR = 6
CALL_ID_BYTES = 128  # one call id of a generation's ledger: its 33-character text and its set slot
V = TypeVar("V")


class Missing(enum.Enum):
    """The type of `MISSING`."""

    MISSING = "missing"


MISSING: Final = Missing.MISSING  # `get` of a key that is not cached (None is a cached "no generation")


def estimate(checkpoint: str | None, retired: str = "", call_ids: int = 0) -> int:
    """The bytes an entry is assumed to hold: its checkpoint parsed, its retired types' JSON and
    its call ledger's ids (a generation that added and removed many nodes holds far more than its
    checkpoint says: ~9 MB where the checkpoint alone counted 10 KB)."""
    return (ENTRY_OVERHEAD + PARSED_FACTOR * len(checkpoint or "") + RETIRED_FACTOR * len(retired)
            + CALL_ID_BYTES * call_ids)


class GenerationCache(Generic[V]):
    """Least-recently-used mapping whose entries' estimates stay within `max_bytes`."""

    def __init__(self, *, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> V | Literal[Missing.MISSING]:
        """The cached value (marked recently used), or `MISSING`."""
        entry = self._entries.get(key)
        if entry is None:
            return MISSING
        self._entries.move_to_end(key)
        return entry[0]

    def recent(self, count: int) -> list[V]:
        """The values of the `count` most recently used entries, the most recent first (not marked used)."""
        values: list[V] = []
        for value, _ in reversed(self._entries.values()):
            if len(values) == count:
                break
            values.append(value)
        return values

    def holds(self, key: Hashable) -> bool:
        """True if `key` is cached (not marked recently used: a question, not a use)."""
        return key in self._entries

    def put(self, key: Hashable, value: V, size: int) -> None:
        """Cache `value`, then evict the least recently used entries beyond the budget."""
        self.drop(key)
        self._entries[key] = (value, size)
        self.bytes += size
        while self.bytes > self.max_bytes and len(self._entries) > 1:
            _, (_, evicted) = self._entries.popitem(last=False)
            self.bytes -= evicted

    def drop(self, key: Hashable) -> None:
        """Forget one key (no error when it is not cached)."""
        entry = self._entries.pop(key, None)
        if entry is not None:
            self.bytes -= entry[1]
