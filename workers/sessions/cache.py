"""The process-wide cache of stored generations, bounded by an estimate of what it holds.

A cached generation holds its checkpoint JSON and, once used, the parsed stream state built
from it (document tree, revalidation cache).  The parsed state is about 17-20 times the
checkpoint's size (tracemalloc, 10- and 200-component documents); a worker's RSS grew by
~25 KiB per cached small session (1.3 KB checkpoint: 19x) and ~370 KiB per 200-component one
(15 KB: 24x) (`python -m bench scale`).  An entry is estimated at the larger factor,
`PARSED_FACTOR` times its checkpoint, plus a fixed overhead, and the least recently used
entries are evicted while the estimates add up to more than `IUI_CACHE_BYTES`.  Only the dispatcher thread uses it.

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
V = TypeVar("V")


class Missing(enum.Enum):
    """The type of `MISSING`."""

    MISSING = "missing"


MISSING: Final = Missing.MISSING  # `get` of a key that is not cached (None is a cached "no generation")


def estimate(checkpoint: str | None) -> int:
    """The bytes an entry is assumed to hold."""
    return ENTRY_OVERHEAD + PARSED_FACTOR * len(checkpoint or "")


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
