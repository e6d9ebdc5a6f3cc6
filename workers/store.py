"""Reads of stored stream state, with the in-memory cache of the partition's only writer.

The owner of a partition is its only writer, so it may keep each UI's current generation in
memory.  The commit script's CAS (stored seq and generation) keeps the cache honest: on a
`StaleCache` the owner drops the session's entries and reads them again from Redis.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from core.stream import resume_ui_stream

from .entry import dumps, loads
from .keys import Keys

CACHE_SIZE = 4_096  # entries per cache of one partition
CACHE_BYTES = 8 * 1024 * 1024  # checkpoint JSON bytes of the cached generations of one partition


@dataclass(frozen=True)
class Generation:
    """The current generation of one (session, uiId): checkpoint, cursor and bookkeeping."""

    ui_id: str
    generation: int
    source: str
    seq: int
    revision: int
    status: str
    frames: int
    bytes: int
    checkpoint: str
    last_call: str
    last_digest: str
    last_receipt: str
    ledger: tuple[str, ...]
    state: Any = field(default=None, compare=False)

    def stream_state(self) -> Any:
        """The core `UIStreamState` of the stored checkpoint (rebuilt once after a cache miss)."""
        if self.state is None:
            state = resume_ui_stream(loads(self.checkpoint), frame_count=self.frames, byte_count=self.bytes)
            object.__setattr__(self, "state", state)
        return self.state

    @property
    def last_result(self) -> str:
        """The reply `result` of the last accepted call: its frame is the current checkpoint."""
        return '{"frame":' + self.checkpoint + ',"receipt":' + dumps(self.last_receipt) + "}"

    def cursor(self) -> str:
        """The cursor text a conflict error names."""
        return (f"sourceCallId={self.source} uiId={self.ui_id} generation={self.generation} "
                f"revision={self.revision} seq={self.seq} status={self.status}")

    def advanced(self, **changes: Any) -> "Generation":
        """A copy with some fields changed."""
        return replace(self, **changes)


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _size(record: Generation | None) -> int:
    return len(record.checkpoint) if record is not None else 0


class Store:
    """Cached reads of one partition's session state."""

    def __init__(self, *, redis: Any, keys: Keys, partition: int) -> None:
        self._redis = redis
        self._keys = keys
        self._partition = partition
        self._generations: OrderedDict[tuple[str, str], Generation | None] = OrderedDict()
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._sources: OrderedDict[tuple[str, str], str] = OrderedDict()  # write-once in Redis
        self._bytes = 0

    def forget(self, session: str) -> None:
        """Drop every cached value of a session (after a CAS failure)."""
        self._counts.pop(session, None)
        for key in [k for k in self._generations if k[0] == session]:
            self._bytes -= _size(self._generations.pop(key))

    def ui_of_source(self, session: str, source: str) -> str | None:
        """The uiId a sourceCallId opened in this session, if any."""
        known = self._sources.get((session, source))
        if known is not None:
            return known
        value = self._redis.hget(self._keys.session(self._partition, session), f"src:{source}")
        if value is None:
            return None
        self._remember(self._sources, (session, source), _text(value))
        return _text(value)

    def generation_count(self, session: str) -> int:
        """How many generations the session has opened."""
        if session not in self._counts:
            value = self._redis.hget(self._keys.session(self._partition, session), "generations")
            self._remember(self._counts, session, int(value or 0))
        return self._counts[session]

    def current(self, session: str, ui_id: str) -> Generation | None:
        """The latest generation of (session, uiId), or None if it never opened one."""
        key = (session, ui_id)
        if key not in self._generations:
            record = self._load(session, ui_id)
            self._keep(key, record)
            return record
        self._generations.move_to_end(key)
        return self._generations[key]

    def remember(self, session: str, record: Generation, *, opened: bool) -> None:
        """Cache the state just committed."""
        self._keep((session, record.ui_id), record)
        if opened:
            if session in self._counts:  # else the next read loads the committed count
                self._remember(self._counts, session, self._counts[session] + 1)
            self._remember(self._sources, (session, record.source), record.ui_id)

    def _keep(self, key: tuple[str, str], record: Generation | None) -> None:
        """Cache a generation; evict the least recently used beyond the entry and byte bounds."""
        self._bytes -= _size(self._generations.pop(key, None))
        self._generations[key] = record
        self._bytes += _size(record)
        while len(self._generations) > 1 and (len(self._generations) > CACHE_SIZE or self._bytes > CACHE_BYTES):
            self._bytes -= _size(self._generations.popitem(last=False)[1])

    def _remember(self, cache: OrderedDict, key: Any, value: Any) -> None:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > CACHE_SIZE:
            cache.popitem(last=False)

    def _load(self, session: str, ui_id: str) -> Generation | None:
        number = self._redis.hget(self._keys.ui(self._partition, session, ui_id), "generation")
        if number is None:
            return None
        generation = int(number)
        pipe = self._redis.pipeline(transaction=False)
        pipe.hgetall(self._keys.generation(self._partition, session, ui_id, generation))
        pipe.lrange(self._keys.ledger(self._partition, session, ui_id, generation), 0, -1)
        raw, ledger = pipe.execute()
        stored = {_text(k): _text(v) for k, v in raw.items()}
        return Generation(
            ui_id=ui_id, generation=generation, source=stored["source"], seq=int(stored["seq"]),
            revision=int(stored["revision"]), status=stored["status"], frames=int(stored["frames"]),
            bytes=int(stored["bytes"]), checkpoint=stored["checkpoint"], last_call=stored["last_call"],
            last_digest=stored["last_digest"], last_receipt=stored["last_receipt"],
            ledger=tuple(_text(d) for d in ledger),
        )
