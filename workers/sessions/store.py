"""Reads of stored stream state, with the in-memory cache of the partition's only writer.

The owner of a partition is its only writer, so it may keep each UI's current generation in
memory.  The commit script's CAS (stored seq and generation) keeps the cache honest: on a
`StaleCache` the owner drops the session's entries and reads them again from Redis.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, TypeVar

from core.errors import UIStreamError
from core.stream.lifecycle import UIStreamState, resume_ui_stream

from ..redisio.client import RedisClient, Reply
from ..redisio.connection import SharedRoundTrip, array, integer
from ..redisio.keys import Keys, plain_field, source_field, ui_field
from ..redisio.scripts import GenerationRead, SentReads, StoredGeneration
from ..redisio.seal import SNAPSHOT_KEY, Seal, parse_facts, retired_of, snapshot_digest
from ..wire.entry import dumps, loads
from .cache import MISSING, GenerationCache, estimate
from .snapshots import SHELF_SHARE, SnapshotShelf

# The stored fields of a generation, in the order `generation.lua` reads them: the checkpoint and the
# seal's digest of its snapshot (`snapshot_digest`: the script sends the record's envelope field in
# the first's place when the second names a snapshot the reader's shelf holds), the other required
# ones, then the restore facts and the seal (absent from a record written before seals: it is
# validated in full), then `calls`, the call ledger of a record written before the ledger became one
# field per call (`ledger_name`): its digests separated by spaces; then `retired`, the generation's
# removed ids and their types (JSON, absent until a remove; its digest is in `facts`, under the seal).
REQUIRED_FIELDS = ("checkpoint", "source", "seq", "revision", "status", "frames", "bytes",
                   "last_call", "last_digest", "last_receipt")
FIELDS = ("checkpoint", "snapshot_digest", *REQUIRED_FIELDS[1:], "facts", "seal", "calls", "retired")
_FACTS_AT = FIELDS.index("facts")
CACHE_SIZE = 4_096  # sessions whose counters and sources one partition remembers
DEFAULT_CACHE_BYTES = 64 * 1024 * 1024  # a Store built without the process's shared cache
PRUNE_UI_IDS = 512  # a session's remembered uiIds are pruned to the cached ones from this many on
READ_AHEAD_SHARE = 8  # a read-ahead caches at most 1/8 of the cache's budget (as the cache estimates)


def call_id_of(digest: str) -> str:
    """The call-id part of a ledger digest ("<sha256 of the call id>[:32]:<content digest>")."""
    return digest.split(":", 1)[0] + ":"


class Generation:
    """The current generation of one (session, uiId): checkpoint, cursor and bookkeeping.

    A plain class with `Final` attributes, not a frozen dataclass: every accepted call builds
    one, and a frozen dataclass sets each of its 14 fields through `object.__setattr__`
    (decisions.md, "The worker's per-call objects")."""

    __slots__ = (
        "bytes",
        "call_ids",
        "checkpoint",
        "facts",
        "frames",
        "generation",
        "last_call",
        "last_digest",
        "last_receipt",
        "restorable",
        "retired",
        "revision",
        "seal",
        "seq",
        "snapshot_digest",
        "snapshots",
        "source",
        "state",
        "status",
        "ui_id",
    )

    def __init__(self, *, ui_id: str, generation: int, source: str, seq: int, revision: int, status: str,
                 frames: int, bytes: int, checkpoint: str, last_call: str, last_digest: str, last_receipt: str,
                 call_ids: frozenset[str], facts: str = "", seal: str = "", state: UIStreamState | None = None,
                 restorable: tuple[int, int, int] | None = None, snapshots: SnapshotShelf | None = None,
                 retired: str = "", snapshot_digest: str = "") -> None:
        self.ui_id: Final = ui_id
        self.generation: Final = generation
        self.source: Final = source
        self.seq: Final = seq
        self.revision: Final = revision
        self.status: Final = status
        self.frames: Final = frames
        self.bytes: Final = bytes
        self.checkpoint: Final = checkpoint
        self.last_call: Final = last_call
        self.last_digest: Final = last_digest
        self.last_receipt: Final = last_receipt
        self.call_ids: Final = call_ids  # the call-id part ("<sha256[:32]>:") of every digest in the call ledger
        self.facts: Final = facts  # the stored restore facts of `checkpoint` ("" when none were stored)
        self.seal: Final = seal  # the stored seal of the record ("" when none was stored)
        self.retired: Final = retired  # the stored retired types' JSON ("" when the generation removed nothing)
        self.state = state  # the core state of `checkpoint`, built once after a cache miss
        # The restore facts when the seal verified (the state is then restored, not parsed in full).
        self.restorable: Final = restorable
        self.snapshots: Final = snapshots  # where a restore finds a snapshot another session restored
        # The seal's digest of the checkpoint's snapshot: the one the seal verified with, when it did.
        self.snapshot_digest: Final = snapshot_digest

    def __eq__(self, other: object) -> bool:
        """Equal stored fields (the rebuilt core state is not compared)."""
        if type(other) is not Generation:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _COMPARED)

    def stream_state(self) -> UIStreamState:
        """The core `UIStreamState` of the stored checkpoint (rebuilt once after a cache miss):
        restored when its seal verified, else parsed in full."""
        if self.state is None:
            # A Store gives a record whose seal verified its shelf; the retired types count only
            # with the digest its sealed facts name.
            retired = retired_of(self.facts, self.retired) if self.restorable is not None else None
            if self.restorable is not None and self.snapshots is not None and retired is not None:
                try:
                    self.state = self.snapshots.restore(self.checkpoint, digest=self.snapshot_digest,
                                                        facts=self.restorable, frame_count=self.frames,
                                                        byte_count=self.bytes, retired_types=retired)
                    return self.state
                except UIStreamError:
                    pass  # sealed, yet not what this build restores: the full check decides
            self.state = resume_ui_stream(loads(self.checkpoint), frame_count=self.frames, byte_count=self.bytes)
        return self.state

    @property
    def last_result(self) -> str:
        """The reply `result` of the last accepted call: its frame is the current checkpoint."""
        return '{"frame":' + self.checkpoint + ',"receipt":' + dumps(self.last_receipt) + "}"

    def cursor(self) -> str:
        """The cursor text a conflict error names."""
        return (f"sourceCallId={self.source} uiId={self.ui_id} generation={self.generation} "
                f"revision={self.revision} seq={self.seq} status={self.status}")


# The stored fields `__eq__` compares: every slot but the rebuilt core state and what the seal's check
# found (a class's `__slots__` is not readable in the compiled build; tests/unit/test_workers_cache.py
# checks the list).
_COMPARED = ("bytes", "call_ids", "checkpoint", "facts", "frames", "generation", "last_call", "last_digest",
             "last_receipt", "retired", "revision", "seal", "seq", "snapshot_digest", "source", "status", "ui_id")


SharedCache: TypeAlias = GenerationCache[Generation | None]  # what every held partition's Store caches


@dataclass(frozen=True)
class OpenFacts:
    """The stored facts an `intelligent_ui_open` is decided on."""

    current: Generation | None  # the UI's latest generation
    source_opened: bool  # the call id already opened a stream
    plain_stored: bool  # the call id already stored a plain document
    generations: int  # generations the session has opened


def _text(value: Reply) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


def record_estimate(record: Generation | None) -> int:
    """What the cache counts for a record (`estimate` of its checkpoint, retired types and call ids)."""
    if record is None:
        return estimate(None)
    return estimate(record.checkpoint, record.retired, len(record.call_ids))


class Store:
    """Cached reads of one partition's session state."""

    def __init__(self, *, redis: RedisClient, keys: Keys, partition: int, session_ttl_s: float = 0,
                 cache: SharedCache | None = None, scope: Hashable = None, seal: Seal | None = None,
                 on_read: Callable[[str], None] | None = None, snapshots: SnapshotShelf | None = None) -> None:
        self._redis = redis
        self._keys = keys
        self._partition = partition
        # Generations live in the process-wide cache under (partition, scope): a new lease of
        # the same partition uses a new scope, so it never reads what an earlier lease cached.
        self._cache = cache if cache is not None else SharedCache(max_bytes=DEFAULT_CACHE_BYTES)
        self._scope = (partition, scope)
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._sources: OrderedDict[tuple[str, str], str] = OrderedDict()  # write-once while the session lives
        # The sourceCallIds `_sources` holds of each session: `forget` drops a session's sources
        # without scanning all of them (it runs at every cold session's first touch).
        self._sources_of: dict[str, set[str]] = {}
        # A session idle for its TTL may have expired in Redis: its cached values are then dropped.
        self._idle_limit = session_ttl_s / 2 if session_ttl_s > 0 else float("inf")
        self._touched: OrderedDict[str, tuple[float, set[str]]] = OrderedDict()  # session -> (when, uiIds)
        self._read_generation = GenerationRead(redis)
        self._seal = seal if seal is not None else Seal()
        self._on_read = on_read  # told each stored generation's seal outcome (a metric)
        # Restored snapshots, shared by the process's partitions (a private shelf when none is given).
        self._snapshots = snapshots if snapshots is not None else SnapshotShelf(
            max_bytes=self._cache.max_bytes // SHELF_SHARE)
        self._sent: tuple[list[tuple[str, str]], SentReads] | None = None  # the reads `prefetch` sent

    @property
    def seal(self) -> Seal:
        """The seal this store checks records with (and its partition's commits seal them with)."""
        return self._seal

    def forget(self, session: str) -> None:
        """Drop every cached value of a session (after a CAS failure or a possible expiry)."""
        self._counts.pop(session, None)
        touched = self._touched.get(session)
        for ui_id in touched[1] if touched else ():
            self._cache.drop((self._scope, session, ui_id))
        for source in self._sources_of.pop(session, ()):
            del self._sources[(session, source)]

    def _touch(self, session: str) -> set[str]:
        now = time.monotonic()
        touched = self._touched.get(session)
        if touched is None or now - touched[0] > self._idle_limit:
            self.forget(session)  # unknown: this cache may hold values from before an expiry
            touched = (now, set())
        self._touched[session] = (now, touched[1])
        self._touched.move_to_end(session)
        while len(self._touched) > CACHE_SIZE:
            old, (_, ui_ids) = self._touched.popitem(last=False)
            for ui_id in ui_ids:
                self._cache.drop((self._scope, old, ui_id))
        return touched[1]

    def ui_of_source(self, session: str, source: str) -> str | None:
        """The uiId a sourceCallId opened in this session, if any."""
        known = self._cached_source(session, source)
        if known is not None:
            return known
        value = self._redis.hget(self._keys.session(self._partition, session), source_field(source))
        if value is None:
            return None
        self._remember_source(session, source, _text(value))
        return _text(value)

    def of_source(self, session: str, source: str) -> tuple[str | None, Generation | None]:
        """The uiId a sourceCallId opened and that UI's latest generation: from the cache, else
        read in one round trip (`generation.lua`: a cold session's patch needs no other read)."""
        ui_id = self._cached_source(session, source)
        if ui_id is not None:
            cached = self._cache.get((self._scope, session, ui_id))
            if cached is not MISSING:
                return ui_id, cached
        keys, partition = self._keys, self._partition
        found = self._read_generation(keys.session(partition, session), keys.generations(partition, session),
                                      source_field(source), ui_field(""), FIELDS, self._snapshots.known())
        if found.ui_id is None and ui_id is not None:  # remembered, gone from Redis since: expired
            self._keep(session, ui_id, None)
            return ui_id, None
        return self._found(session, source, found)

    def holds(self, session: str) -> bool:
        """True if this store caches a generation of the session (read or written lately, and
        not evicted since: a session evicted is cold again, and its read-ahead reads it)."""
        touched = self._touched.get(session)
        return touched is not None and any(self._cache.holds((self._scope, session, ui_id)) for ui_id in touched[1])

    def read_ahead(self, calls: Iterable[tuple[str, str]]) -> None:
        """Read what `of_source` needs of each (session, sourceCallId) whose generation is not
        cached, all in one round trip, and cache it: the calls of a batch of cold sessions
        (after a fail-over, a scale-out or a restart) then wait for one read, not one each.
        The reads `prefetch` sent are not sent again: their replies are read now.

        What it caches is bounded (`READ_AHEAD_SHARE`), the earliest calls first: a batch of
        more cold sessions than the cache holds would evict what it read before its decisions
        came to it; the calls beyond are read at their decision, as without a read-ahead."""
        todo = self._todo(calls)
        sent, self._sent = self._sent, None
        if sent is not None:
            read = set(sent[0])
            self._cache_found(sent[0], sent[1].stored())
            todo = [call for call in todo if call not in read]  # what it did not cache stays for the decision
        if todo:
            self._cache_found(todo, self._read_generation.send(self._reads(todo), FIELDS,
                                                               known=self._snapshots.known()).stored())

    def prefetch(self, calls: Iterable[tuple[str, str]], shared: SharedRoundTrip | None = None) -> None:
        """Send now the reads `read_ahead` of the same calls would make (on `shared`, when given),
        without waiting for their replies: Redis runs them while the worker decides other
        partitions' entries, and the next `read_ahead` reads the replies.  A read sent before
        and not read is given up."""
        self.abandon_prefetch()
        todo = self._todo(calls)
        if todo:
            self._sent = (todo, self._read_generation.send(self._reads(todo), FIELDS, shared,
                                                           known=self._snapshots.known()))

    def abandon_prefetch(self) -> None:
        """Give up the reads `prefetch` sent, if `read_ahead` did not read them."""
        sent, self._sent = self._sent, None
        if sent is not None:
            sent[1].abandon()

    def _todo(self, calls: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        """The distinct calls whose generation `of_source` would not find cached."""
        return [(session, source) for session, source in dict.fromkeys(calls) if not self._has(session, source)]

    def _reads(self, todo: list[tuple[str, str]]) -> list[tuple[str, str, str, str]]:
        keys, partition = self._keys, self._partition
        return [(keys.session(partition, session), keys.generations(partition, session), source_field(source),
                 ui_field("")) for session, source in todo]

    def _cache_found(self, todo: list[tuple[str, str]], found: list[StoredGeneration]) -> None:
        """Cache what was read of each call, within the read-ahead's share of the cache."""
        budget = self._cache.max_bytes // READ_AHEAD_SHARE
        for (session, source), each in zip(todo, found, strict=True):
            budget -= self._estimate(each)
            if budget < 0:
                break
            self._found(session, source, each)

    def _estimate(self, found: StoredGeneration) -> int:
        """What the cache will count for a read's record (`estimate` of its checkpoint); of a cut
        one, its envelope's and the shelved snapshot's that makes it whole (a little more than the
        whole text's: the bound stays conservative)."""
        text = self._shelved_text(found) if found.cut else None
        fields = dict(zip(FIELDS, found.fields, strict=False))
        calls = len((fields.get("calls") or "").split()) + len(found.ledger)
        return (estimate(fields.get("checkpoint"), fields.get("retired") or "", calls)
                + (estimate(text) if text is not None else 0))

    def _has(self, session: str, source: str) -> bool:
        """True if `of_source` would answer from the cache."""
        ui_id = self._cached_source(session, source)
        return ui_id is not None and self._cache.get((self._scope, session, ui_id)) is not MISSING

    def _found(self, session: str, source: str, found: StoredGeneration) -> tuple[str | None, Generation | None]:
        """Cache what `generation.lua` read of a source (unless the cache is newer) and return it."""
        if found.ui_id is None:
            return None, None
        self._remember_source(session, source, found.ui_id)
        cached = self._cache.get((self._scope, session, found.ui_id))
        if cached is not MISSING:  # the cache is newer than Redis while this batch's commits are unconfirmed
            return found.ui_id, cached
        record = self._stored(session, found.ui_id, found)
        self._keep(session, found.ui_id, record)
        return found.ui_id, record

    def _cached_source(self, session: str, source: str) -> str | None:
        """The uiId a sourceCallId opened, if this store remembers it (no read)."""
        self._touch(session)
        return self._sources.get((session, source))

    def open_facts(self, session: str, ui_id: str | None, call: str) -> OpenFacts:
        """What an open needs to know, read in one round trip when not cached: the UI's latest
        generation, whether the call id already opened a stream or stored a plain document,
        and the session's generation count."""
        self._touch(session)
        key = self._keys.session(self._partition, session)
        pipe = self._redis.pipeline(transaction=False)
        pipe.hmget(key, [ui_field(ui_id or ""), source_field(call), "generations"])
        pipe.hexists(self._keys.plain(self._partition, session), plain_field("doc", call))
        values, plain = pipe.execute()
        number, source, count = array(values)
        if session not in self._counts:  # a cached count includes this batch's unconfirmed opens
            self._remember(self._counts, session, integer(count or 0))
        if source is not None:
            self._remember_source(session, call, _text(source))
        current = None
        if ui_id is not None:
            cached = self._cache.get((self._scope, session, ui_id))
            current = cached if cached is not MISSING else self.current(session, ui_id) if number else None
            if cached is MISSING and not number:
                self._keep(session, ui_id, None)
        opened = source is not None or (session, call) in self._sources
        return OpenFacts(current, opened, bool(plain), self._counts[session])

    def generation_count(self, session: str) -> int:
        """How many generations the session has opened."""
        self._touch(session)
        if session not in self._counts:
            value = self._redis.hget(self._keys.session(self._partition, session), "generations")
            self._remember(self._counts, session, integer(value or 0))
        return self._counts[session]

    def current(self, session: str, ui_id: str) -> Generation | None:
        """The latest generation of (session, uiId), or None if it never opened one."""
        self._touch(session)
        cached = self._cache.get((self._scope, session, ui_id))
        if cached is not MISSING:
            return cached
        record = self._load(session, ui_id)
        self._keep(session, ui_id, record)
        return record

    def remember(self, session: str, record: Generation, *, opened: bool) -> None:
        """Cache the state just committed."""
        self._keep(session, record.ui_id, record)
        if opened:
            if session in self._counts:  # else the next read loads the committed count
                self._remember(self._counts, session, self._counts[session] + 1)
            self._remember_source(session, record.source, record.ui_id)

    def _keep(self, session: str, ui_id: str, record: Generation | None) -> None:
        ui_ids = self._touch(session)
        ui_ids.add(ui_id)
        self._cache.put((self._scope, session, ui_id), record, record_estimate(record))
        if len(ui_ids) >= PRUNE_UI_IDS and len(ui_ids) & (len(ui_ids) - 1) == 0:
            self._prune(session, ui_ids)

    def _prune(self, session: str, ui_ids: set[str]) -> None:
        """Forget the uiIds of a session whose entries the cache evicted.  The set only grows
        while the session is used (every uiId an open names, refused ones included: ~200 bytes
        each, 80,000 opens held 13 MB), so it is pruned each time its size reaches a power of two
        from `PRUNE_UI_IDS` on: amortized O(1) an open."""
        ui_ids.intersection_update([ui_id for ui_id in ui_ids if self._cache.holds((self._scope, session, ui_id))])

    def _remember_source(self, session: str, source: str, ui_id: str) -> None:
        """`_remember` of the uiId a session's sourceCallId opened, kept in `_sources_of` too."""
        self._sources_of.setdefault(session, set()).add(source)
        for old, old_source in self._remember(self._sources, (session, source), ui_id):
            held = self._sources_of[old]
            held.discard(old_source)
            if not held:
                del self._sources_of[old]

    def _remember(self, cache: OrderedDict[K, T], key: K, value: T) -> list[K]:
        """Keep `value` as the most recent of `cache`; returns the keys evicted beyond CACHE_SIZE."""
        cache[key] = value
        cache.move_to_end(key)
        evicted = []
        while len(cache) > CACHE_SIZE:
            evicted.append(cache.popitem(last=False)[0])
        return evicted

    def plain_entry(self, session: str, call: str) -> tuple[str, str, str] | None:
        """The (content digest, uiId, document JSON) a plain call stored, or None."""
        values = self._redis.hmget(self._keys.plain(self._partition, session),
                                   [plain_field(kind, call) for kind in ("sum", "ui", "doc")])
        if any(v is None for v in values):
            return None
        digest, ui_id, document = (_text(v) for v in values)
        return digest, ui_id, document

    def plain_count(self, session: str) -> int:
        """How many plain documents the session holds (three hash fields each)."""
        return self._redis.hlen(self._keys.plain(self._partition, session)) // 3

    def plain_document(self, session: str, call_id: str, ui_id: str) -> dict[str, Any] | None:
        """The plain document of `documentRef = {sourceCallId: call_id, uiId: ui_id, generation: 0,
        revision: 0}`: exactly what that native call stored, or None (unknown call, other uiId)."""
        stored = self.plain_entry(session, call_id)
        if stored is None or stored[1] != ui_id:
            return None
        document: dict[str, Any] = loads(stored[2])
        return document

    def _load(self, session: str, ui_id: str) -> Generation | None:
        """The latest generation of (session, uiId) from Redis, in one `generation.lua` round trip."""
        return self._stored(session, ui_id, self._read(session, ui_id, self._snapshots.known()))

    def _read(self, session: str, ui_id: str, known: str) -> StoredGeneration:
        keys, partition = self._keys, self._partition
        return self._read_generation.of_ui(keys.session(partition, session), keys.generations(partition, session),
                                           ui_id, ui_field(""), FIELDS, known)

    def _stored(self, session: str, ui_id: str, found: StoredGeneration) -> Generation | None:
        """The `Generation` of what `generation.lua` read of a UI (None: no generation, or expired).
        A record read cut to its envelope is made whole with the shelved snapshot its digest names,
        and taken only when its seal verifies so; else (evicted from the shelf since the read was
        sent, a digest or envelope field altered) it is read again whole."""
        if found.generation is None:
            return None
        stored = dict(zip(FIELDS, found.fields, strict=True))
        text = self._shelved_text(found) if found.cut else None
        if text is not None:
            whole = {**stored, "checkpoint": f"{stored['checkpoint']}{SNAPSHOT_KEY}{text}}}"}
            record = self._generation(ui_id, found.generation, whole, found.ledger, cut=True)
            if record is not None:
                return record
        if found.cut:
            return self._stored(session, ui_id, self._read(session, ui_id, ""))  # named nothing: never cut
        return self._generation(ui_id, found.generation, stored, found.ledger)

    def _shelved_text(self, found: StoredGeneration) -> str | None:
        """The shelved snapshot text a cut read's `snapshot_digest` and facts name, if any."""
        envelope, digest, facts = found.fields[0], found.fields[1], parse_facts(found.fields[_FACTS_AT] or "")
        return self._snapshots.text_of(facts, digest) if envelope is not None and digest and facts else None

    def _generation(self, ui_id: str, generation: int, stored: dict[str, str | None],
                    ledger: tuple[str, ...], *, cut: bool = False) -> Generation | None:
        """The `Generation` of its stored fields and its ledger fields' digests, its seal checked;
        None when a required field is missing (expired in between: the session's keys share one
        deadline).  `cut`: the checkpoint was made whole with the shelved snapshot its digest
        names; None unless its seal then verifies (nothing counted: the caller reads it again)."""
        if any(stored[name] is None for name in REQUIRED_FIELDS):
            return None
        values = {name: str(value) for name, value in stored.items() if value is not None}
        frames, byte_count = int(values["frames"]), int(values["bytes"])
        facts, seal = values.get("facts"), values.get("seal")
        restorable, sealed = None, ""  # `sealed`: the snapshot digest the seal is checked with
        if facts is None or seal is None:
            outcome = "missing"
        else:
            sealed = self._digest(values["checkpoint"], values.get("snapshot_digest", ""), facts, cut=cut)
            if self._seal.verifies(seal, values["checkpoint"], frames, byte_count, facts, snapshot_digest=sealed):
                outcome, restorable = "valid", parse_facts(facts)
            else:
                outcome = "invalid"
        if cut and outcome != "valid":
            return None
        if self._on_read is not None:
            self._on_read(outcome)
        return Generation(
            ui_id=ui_id, generation=generation, source=values["source"], seq=int(values["seq"]),
            revision=int(values["revision"]), status=values["status"], frames=frames, bytes=byte_count,
            checkpoint=values["checkpoint"], last_call=values["last_call"], last_digest=values["last_digest"],
            last_receipt=values["last_receipt"],
            call_ids=frozenset(call_id_of(digest) for digest in (*values.get("calls", "").split(), *ledger)),
            facts=facts or "", seal=seal or "", restorable=restorable,
            snapshots=self._snapshots if restorable is not None else None, retired=values.get("retired", ""),
            snapshot_digest=sealed if restorable is not None else values.get("snapshot_digest", ""),
        )

    def _digest(self, checkpoint: str, stored: str, facts: str, *, cut: bool) -> str:
        """The seal's digest of the checkpoint's snapshot to check its seal with: the stored one when
        the checkpoint was made whole with the shelved text it names, or is that text (a memory
        compare); else computed (hashing the text was the largest cost of a cold read's check)."""
        restorable = parse_facts(facts)
        if stored and restorable is not None and (cut or self._snapshots.holds(checkpoint, restorable, stored)):
            return stored
        return snapshot_digest(checkpoint)
