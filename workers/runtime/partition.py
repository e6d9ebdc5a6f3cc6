"""The consumer of one leased partition: pending-first replay, then new entries, in id order.

It owns the partition while its fencing epoch is current.  Every entry ends in exactly one
script call that replies and XACKs together with its effect, so an entry is never lost (still
pending for the next owner) and never applied twice (acked with its effect).

New entries are delivered by the dispatcher's one `XREADGROUP` for every readable partition
(`take`); the consumer replays its pending list itself (`step`): when it starts, after an
error, when a write found an older entry still pending (`OutOfOrder`), and when the pool's
renewal counted pending entries (`request_replay`).  Acks happen in id order: every
entry-ending script refuses to write while an older entry of the partition is pending, so an
entry that a paused-then-resumed process moved into the pending list after this owner's replay
is applied before anything newer, never after it, and never stays behind.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Final

from redis.typing import EncodableT

from config.settings import Settings

from ..actions.operations import ActionServices, PartitionOperations
from ..answers.runtime import PartitionAnswers, handles
from ..observability.metrics import Metrics
from ..redisio.client import RedisClient, Reply
from ..redisio.connection import (
    TRANSIENT_ERRORS,
    Backoff,
    Entry,
    SharedRoundTrip,
    array,
    integer,
    is_busy_group,
    mapping,
    stream_id,
    stream_range,
    text,
)
from ..redisio.dead_letter import DeadLetterPolicy
from ..redisio.keys import CONSUMER, GROUP, Keys, partition_of
from ..redisio.scripts import PENDING, ScriptCall, Scripts
from ..redisio.seal import Seal
from ..sessions.owners import SessionOwners
from ..sessions.snapshots import SnapshotShelf
from ..sessions.store import SharedCache, Store
from ..streams.tools import Decision, ToolHandler, unknown_tool
from ..wire.entry import BODY_MARGIN, address_of, decode_fields, error_reply, ok_reply_text, parse_body, parse_entry
from ..wire.errors import ErrorCode, Fenced, HostError, OutOfOrder, StaleCache
from ..wire.names import TOOLS
from .batch import Queued, WriteBatch
from .heap import HeapPolicy

log = logging.getLogger(__name__)
QUEUED = "queued"  # `_process` queued the write (its metrics are recorded already)
TRIM_EVERY_S = 30.0


def own_group(groups: Reply) -> dict[Reply, Reply] | None:
    """The runtime's consumer group in an `XINFO GROUPS` reply, or None (not created yet)."""
    return next((group for group in map(mapping, array(groups)) if text(group["name"]) == GROUP), None)


class _Write:
    """The one script call that answers an entry, with what is booked once it is confirmed
    (a plain class with `Final` attributes, as `ScriptCall`: one per entry)."""

    __slots__ = ("call", "decision", "outcome", "rejection")

    def __init__(self, call: ScriptCall, outcome: str, decision: Decision | None = None,
                 rejection: str | None = None) -> None:
        self.call: Final = call
        self.outcome: Final = outcome
        self.decision: Final = decision
        self.rejection: Final = rejection


class PartitionConsumer:
    """Processes the input stream of one partition under one lease epoch."""

    def __init__(self, *, redis: RedisClient, settings: Settings, keys: Keys, scripts: Scripts,
                 metrics: Metrics, partition: int, epoch: int, fence: str, actions: ActionServices | None = None,
                 cache: SharedCache | None = None, valid_until: float = float("inf"),
                 heap: HeapPolicy | None = None, seal: Seal | None = None,
                 snapshots: SnapshotShelf | None = None) -> None:
        self.partition = partition
        self.epoch = epoch
        self.fence = fence  # "<epoch>:<owner>": what every fenced script checks
        self._redis = redis
        self._settings = settings
        self._keys = keys
        self._scripts = scripts
        self._metrics = metrics
        self._lease = keys.lease(partition)
        self._input = keys.input(partition)
        self._store = Store(redis=redis, keys=keys, partition=partition, session_ttl_s=settings.session_ttl_s,
                            cache=cache, scope=epoch, seal=seal, on_read=metrics.count_state_read,
                            snapshots=snapshots)
        self._handler = ToolHandler(settings=settings, keys=keys, partition=partition, store=self._store)
        self._operations = PartitionOperations(
            redis=redis, settings=settings, keys=keys, scripts=scripts, metrics=metrics, partition=partition,
            fence=fence, store=self._store, services=actions or ActionServices.of(settings, redis))
        self._answers = PartitionAnswers(redis=redis, settings=settings, keys=keys, scripts=scripts,
                                         metrics=metrics, partition=partition, fence=fence)
        self._owners = SessionOwners(scripts=scripts, lease_key=self._lease, fence=fence)
        self._stop = threading.Event()
        self.busy = threading.Lock()  # held by the dispatcher while this consumer works
        self.fenced = False
        # spread over one interval: partitions acquired together must not all trim in one round
        self._last_trim = time.monotonic() - random.uniform(0, TRIM_EVERY_S)
        self._replay = True  # replay the pending list (and create the group) before anything newer
        self._replay_requested = False  # the pool's renewal counted pending entries
        self.valid_until = valid_until  # monotonic time until which the lease is surely held
        self._batch: WriteBatch | None = None  # the writes of the read batch in hand
        self._unsettled: WriteBatch | None = None  # writes handed to the dispatcher to send (`take(defer=True)`)
        self._retry_at = 0.0
        self._next_reap = 0.0
        self._active_operations: int | None = None  # queued/running/awaiting operations at the last look
        self._operations_seen = False  # an action request or job report arrived since then
        self._backoff = Backoff(limit=settings.lease_renew_ms / 1000)  # a retry never outlasts a renewal
        self._heap = heap  # the process's collector policy, asked before each entry is decided
        # The entries `prefetch` was given and their decoded fields (`take` of them decodes them once).
        self._prefetched: tuple[list[Entry], list[tuple[str, dict[str, str]]]] | None = None

    def stop(self) -> None:
        """Stop taking entries (the dispatcher finishes the batch in hand first)."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        """True once `stop()` was called or the lease was lost."""
        return self._stop.is_set()

    @property
    def input_key(self) -> str:
        """The partition's input stream."""
        return self._input

    def readable(self, now: float, until: float) -> bool:
        """True when the dispatcher may deliver new entries that it reads by `until`: replayed,
        not backing off, and the lease surely held until then (a process resumed after a pause
        past its lease must not move entries into the pending list; those it moves in a race
        anyway are found by the owner's next write or renewal)."""
        return not self._replay and until < self.valid_until and now >= self._retry_at and not self._stop.is_set()

    @property
    def replaying(self) -> bool:
        """True when the pending list must be replayed before new entries are read."""
        return self._replay

    def request_replay(self) -> None:
        """Replay the pending list at the next turn (the renewal found entries pending)."""
        self._replay_requested = True

    def ready(self, now: float) -> bool:
        """True when the dispatcher should give this consumer a `step` turn now."""
        if self._stop.is_set() or now < self._retry_at or self._unsettled is not None:
            return False  # (a replay must not see entries whose writes are still on their way)
        return (self._replay or self._replay_requested or now >= self._next_reap
                or now - self._last_trim >= TRIM_EVERY_S)

    def ensure_group(self) -> None:
        """Create the partition's consumer group (and stream) if needed."""
        try:
            self._redis.xgroup_create(self._input, GROUP, id="0", mkstream=True)
        except Exception as error:
            if not is_busy_group(error):
                raise

    def step(self) -> bool:
        """Replay the pending list if needed, then the reaper and the trim; True if entries were read."""
        return self._guarded(self._turn)

    @property
    def unsettled(self) -> bool:
        """True while writes handed to the dispatcher have not been settled."""
        return self._unsettled is not None

    def take(self, entries: list[Entry], *, defer: bool = False) -> WriteBatch | None:
        """Decide entries the dispatcher delivered (new, in id order) and write them in one round trip.

        With `defer` the writes are returned unsent: the dispatcher sends them on its round's
        connection (before it decides the next partition, or with its next read) and hands their
        replies to `settle` after that read, or sooner once the round holds its share of the
        cache; until then this consumer takes no `step` turn.
        """
        self._guarded(lambda: self._take(entries, defer))
        return self._unsettled

    def commands(self) -> list[tuple[EncodableT, ...]]:
        """The deferred writes, for the dispatcher's next round trip (one reply each)."""
        return self._unsettled.commands() if self._unsettled is not None else []

    def settle(self, results: list[Reply] | BaseException) -> None:
        """The replies of the deferred writes, in order (or the error that kept them from Redis)."""
        batch, self._unsettled = self._unsettled, None
        if batch is not None:
            self._guarded(lambda: self._settle_deferred(batch, results))

    def _settle_deferred(self, batch: WriteBatch, results: list[Reply] | BaseException) -> bool:
        if isinstance(results, BaseException):
            for session in batch.sessions():  # optimistic cache entries of writes that may not have happened
                self._store.forget(session)
            raise results
        self._batch = batch
        try:
            self._settle(batch, batch.complete(results))
        finally:
            self._batch = None
        return True

    def _guarded(self, work: Callable[[], bool]) -> bool:
        """Run `work`; transient Redis errors (and bugs) schedule a retry with back-off and a
        replay, an older pending entry a replay at once, a lost lease stops the consumer."""
        try:
            worked = work()
            self._backoff.reset()
            return worked
        except OutOfOrder:
            self._replay = True
            return True
        except Fenced:
            self._lost()
        except TRANSIENT_ERRORS as error:
            self._metrics.redis_errors.inc()
            log.warning("partition %d: redis unavailable (%s); retrying", self.partition, error)
            self._retry_later()
        except Exception:
            log.exception("partition %d: unexpected error; replaying pending entries", self.partition)
            self._retry_later()
        return False

    def _turn(self) -> bool:
        replayed = False
        if self._replay or self._replay_requested:
            self._replay_requested = False
            if self._replay:
                self.ensure_group()
            replayed = self._replay_pending()
            self._replay = False
        now = time.monotonic()
        if now >= self._next_reap:
            self._next_reap = now + self._settings.reaper_interval_ms / 1000
            if self._may_have_operations():
                self._operations.maybe_reap(self._quiet)
            else:
                self._operations.none_active()
        self._maybe_trim()
        return replayed

    def reset(self) -> None:
        """The dispatcher's read failed (a Redis error): create the group again and replay."""
        self._replay = True

    def _may_have_operations(self) -> bool:
        """False while the partition is known to hold no queued or running operation, and none
        awaiting its approval (which expires).

        An idle partition then costs no command per sweep: it is checked once, and again
        only after it took an action request or a job report (only those create or move one).
        """
        if self._operations_seen or self._active_operations is None:
            self._operations_seen = False
            pipe = self._redis.pipeline(transaction=False)  # one round trip (the keys share the partition's slot)
            pipe.zcard(self._keys.active_operations(self.partition))
            pipe.zcard(self._keys.approvals(self.partition))
            self._active_operations = sum(integer(count) for count in pipe.execute())
        return self._active_operations > 0

    def _retry_later(self) -> None:
        self._replay = True
        self._retry_at = time.monotonic() + self._backoff.next()

    def _lost(self) -> None:
        self.fenced = True
        self._stop.set()

    def _replay_pending(self) -> bool:
        """Entries delivered to the partition's consumer but never acked (a previous owner's, or
        moved there by a paused process), oldest first, each written on its own."""
        replayed = False
        while not self._stop.is_set():
            batch = self._scripts.read(self._lease, self._input, self.fence, CONSUMER,
                                       self._settings.batch_size, PENDING)
            if not batch.entries:
                return replayed
            replayed = True
            for entry_id, fields in self._read_ahead(batch.entries):
                if self._stop.is_set():
                    return replayed
                self._handle(entry_id, fields, batch.deliveries.get(entry_id, 1))
        return replayed

    def _take(self, entries: list[Entry], defer: bool) -> bool:
        """Decide delivered entries in order against the cache, then write them in one round trip."""
        self._batch = WriteBatch(self._scripts.batch())
        try:
            for entry_id, fields in self._read_ahead(entries):
                self._handle(entry_id, fields, 1)
                if self._stop.is_set():
                    break
            if defer and len(self._batch) and not self._stop.is_set():
                self._unsettled = self._batch
            else:
                self._flush()
        except BaseException:
            for session in self._batch.sessions():  # optimistic cache entries of unsent commits
                self._store.forget(session)
            raise
        finally:
            self._batch = None
        return True

    def prefetch(self, entries: list[Entry], shared: SharedRoundTrip | None = None) -> None:
        """Send the reads that `take` of these entries will need (`ToolHandler.prefetch`; on the
        round's `shared` connection, when given), so that Redis runs them while the dispatcher
        decides other partitions' entries.  A hint: an error here is left for `take`, which does
        the same work again, to meet."""
        try:
            decoded = self._decoded(entries)
            self._handler.prefetch([fields for _, fields in decoded], shared)
            self._prefetched = (entries, decoded)
        except Exception:  # `take` meets it again, in its guard
            self.abandon_prefetch()

    def abandon_prefetch(self) -> None:
        """Give up what `prefetch` sent, if `take` did not read it (the dispatcher, after its round)."""
        self._prefetched = None
        with contextlib.suppress(Exception):  # a connection that fails to close is dropped all the same
            self._handler.abandon_prefetch()

    def _read_ahead(self, entries: Sequence[Entry]) -> list[tuple[str, dict[str, str]]]:
        """Entries (id, fields) as text, once the stored generations their cold sessions' calls
        will need were read in one round trip (`ToolHandler.read_ahead`; sent before by
        `prefetch`, when the dispatcher prefetched them)."""
        prefetched, self._prefetched = self._prefetched, None
        decoded = prefetched[1] if prefetched is not None and prefetched[0] is entries else self._decoded(entries)
        self._handler.read_ahead([fields for _, fields in decoded])
        return decoded

    @staticmethod
    def _decoded(entries: Sequence[Entry]) -> list[tuple[str, dict[str, str]]]:
        return [(text(entry_id), decode_fields(fields or {})) for entry_id, fields in entries]

    def _handle(self, entry_id: str, fields: dict[str, str], deliveries: int) -> None:
        if self._heap is not None:
            self._heap.relieve()  # what the entries before decided (resumed cold states) is long-lived: frozen
        if deliveries > self._settings.dead_letter_after:
            address = address_of(fields)
            reply_key = self._keys.reply(self.partition, *address) if address else ""
            self._dead(entry_id, fields, "redelivered", f"entry was delivered {deliveries} times without a commit",
                       reply_key, address[1] if address else "")
            return
        started = time.perf_counter()
        outcome = self._process(entry_id, fields, started)
        if outcome is not QUEUED:
            self._count(fields, started, outcome)

    def _count(self, fields: dict[str, str], started: float, outcome: str) -> None:
        self._metrics.count_entry(fields, time.perf_counter() - started, outcome)

    def _process(self, entry_id: str, fields: dict[str, str], started: float) -> str:
        """Validate one entry and write (or queue) its effect; returns the outcome label or QUEUED."""
        address = address_of(fields)
        if address is None:
            self._dead(entry_id, fields, "no_reply_address", "")
            return "dead_letter"
        session, request = address
        reply_key = self._keys.reply(self.partition, session, request)
        for attempt in range(self._settings.dead_letter_after):
            try:
                write = self._decide(entry_id, fields, reply_key, session, request)
                if isinstance(write, str):
                    return write  # handled at once by the action or answer runtime
                return self._submit(write, Queued(entry_id, fields, session, write.outcome, started, write.decision))
            except StaleCache:
                self._store.forget(session)  # another writer moved the state: re-read and retry
            except (Fenced, OutOfOrder):
                raise
            except TRANSIENT_ERRORS:
                raise
            except Exception:
                log.exception("partition %d: entry %s failed (attempt %d)", self.partition, entry_id, attempt + 1)
                self._store.forget(session)
        self._dead(entry_id, fields, "failed", "the entry could not be processed", reply_key, request)
        return "dead_letter"

    def _decide(self, entry_id: str, fields: dict[str, str], reply_key: str, session: str,
                request: str) -> _Write | str:
        """The write of a tool call (a rejection is a reply), or the outcome of an entry handled at once."""
        try:
            return self._apply(entry_id, fields, reply_key)
        except HostError as error:
            reply = error_reply(request, error)
            # A call refused as another identity's session slides nothing of it: a stranger's refused
            # calls kept a session alive past its owner's last call.
            sliding = () if error.code is ErrorCode.UNKNOWN_SESSION else self._session_keys(session)
            return _Write(self._scripts.reply_call(self._lease, self._input, self.fence, entry_id, reply_key, reply,
                                                   sliding), "rejected", rejection=error.code)

    def _apply(self, entry_id: str, fields: dict[str, str], reply_key: str) -> _Write | str:
        entry = parse_entry(fields)
        if partition_of(entry.session, self._settings.partitions) != self.partition:
            raise HostError(f"session belongs to partition {partition_of(entry.session, self._settings.partitions)},"
                            f" not {self.partition}", code=ErrorCode.WRONG_PARTITION)
        self._owners.check(entry, self._keys.sliding_keys(self.partition, entry.session))
        if handles(entry):  # answer-ui@1 tools and view-state requests (workers.answer_runtime)
            self._flush()  # they read committed state
            return self._answers.apply(entry_id, entry, reply_key)
        if entry.kind != "tool":  # action requests and job reports (workers.operations)
            self._operations_seen = True
            self._flush()
            return self._operations.apply(entry_id, entry, reply_key)
        if entry.name not in TOOLS:
            raise unknown_tool(self._settings.streaming_enabled)
        args = parse_body(entry.body, self._settings.max_document_bytes + BODY_MARGIN)
        decision = self._handler.decide(entry, args)
        return self._tool_write(entry_id, entry.session, entry.request, reply_key, decision)

    def _tool_write(self, entry_id: str, session: str, request: str, reply_key: str, decision: Decision) -> _Write:
        if decision.action == "commit":
            assert decision.plan is not None and decision.record is not None
            return _Write(self._scripts.commit_call(self._lease, self._input, self.fence, entry_id, decision.plan),
                          "accepted", decision=decision)
        reply = ok_reply_text(request, decision.reply_result)
        if decision.action == "plain":
            assert decision.plain is not None
            return _Write(self._scripts.plain_call(self._lease, self._input, self.fence, entry_id,
                                                   self._keys.session_keys(self.partition, session), decision.plain,
                                                   reply_key, reply,
                                                   self._keys.other_sliding_keys(self.partition, session)),
                          "accepted")
        return _Write(self._scripts.reply_call(self._lease, self._input, self.fence, entry_id, reply_key, reply,
                                               self._session_keys(session)), "resent")

    def _submit(self, write: _Write, queued: Queued) -> str:
        """Run the write now (no batch) or queue it; raises `StaleCache` when it must be decided again."""
        decision = write.decision
        record = decision.record if decision is not None else None
        opened = decision.opened if decision is not None else False
        if self._batch is None:
            self._book(queued, write.rejection)  # before the reply exists, so a client never sees it first
            self._scripts.run(write.call)
            if record is not None:
                self._store.remember(queued.session, record, opened=opened)
            return queued.outcome
        if (not self._batch.can_queue(queued.session, record.ui_id if record else None)
                and queued.session in self._flush()):
            raise StaleCache("an earlier commit of the session failed")
        if record is not None:
            self._store.remember(queued.session, record, opened=opened)  # optimistic until flushed
        self._book(queued, write.rejection)
        self._batch.add(write.call, queued, chain_ui=record.ui_id if record else None)
        return QUEUED

    def _flush(self) -> set[str]:
        """Send the queued writes; entries whose CAS failed are decided again, in order.

        Returns the sessions that had a failed commit.  A fenced write raises `Fenced`.
        """
        if self._batch is None or not len(self._batch):
            return set()
        return self._settle(self._batch, self._batch.execute())

    def _settle(self, batch: WriteBatch, outcomes: list[tuple[Queued, BaseException | None]]) -> set[str]:
        """Book the outcomes of a batch's writes; entries whose write failed are decided again, in order."""
        failed: set[str] = set()
        retry: list[Queued] = []
        for queued, error in outcomes:
            if isinstance(error, Fenced):
                raise error  # an OutOfOrder is decided again below: its predecessor in the batch failed
            if error is not None or queued.session in failed:
                failed.add(queued.session)  # booked already; booked again when decided again (rare)
                retry.append(queued)
        for session in failed:
            self._store.forget(session)
        self._batch = None  # decided again one by one, each written at once
        try:
            for queued in retry:
                self._handle(queued.entry_id, queued.fields, 1)
        finally:
            self._batch = batch
        return failed

    def _book(self, queued: Queued, rejection: str | None) -> None:
        """The metrics of a write, recorded before it is sent (a client may read the reply at once)."""
        decision = queued.decision
        if decision is not None and decision.record is not None:
            self._metrics.count_frame(decision.frame_type)
            if decision.record.status != "streaming":
                self._metrics.generation_frames.observe(decision.record.frames)
                self._metrics.generation_bytes.observe(decision.record.bytes)
        if rejection is not None:
            self._metrics.rejections.labels(rejection).inc()
        self._count(queued.fields, queued.started, queued.outcome)

    def _session_keys(self, session: str) -> tuple[str, ...]:
        """The keys whose expiry a call of `session` slides (none for another partition's session)."""
        if partition_of(session, self._settings.partitions) != self.partition:
            return ()
        return self._keys.sliding_keys(self.partition, session)

    def _dead(self, entry_id: str, fields: dict[str, str], reason: str, message: str,
              reply_key: str = "", request: str = "") -> None:
        reply = error_reply(request, HostError(message, code=ErrorCode.DEAD_LETTER)) if reply_key else ""
        self._scripts.dead(self._lease, self._input, self._keys.dead(self.partition),
                           self._keys.dead_bytes(self.partition), self.fence, entry_id, reason, fields,
                           DeadLetterPolicy.of(self._settings), reply_key, reply)
        self._metrics.dead_lettered.labels(reason).inc()

    def _quiet(self) -> bool:
        """True when every entry of the stream was delivered and acked (the reaper's precondition:
        no job report waits unread)."""
        pipe = self._redis.pipeline(transaction=False)
        pipe.xinfo_groups(self._input)
        pipe.xrevrange(self._input, count=1)
        groups, newest = pipe.execute()
        group = own_group(groups)
        if group is None or group.get("pending"):
            return False
        rows = stream_range(newest)
        return not rows or stream_id(rows[0][0]) <= stream_id(group["last-delivered-id"])

    def _maybe_trim(self) -> None:
        """Trim the input stream below the oldest pending entry (MINID), never by MAXLEN."""
        if time.monotonic() - self._last_trim < TRIM_EVERY_S:
            return
        self._last_trim = time.monotonic()
        summary = self._redis.xpending(self._input, GROUP)
        if summary.get("pending"):
            floor = summary["min"]
        else:
            group = own_group(self._redis.xinfo_groups(self._input))
            floor = group["last-delivered-id"] if group else None
        if floor:
            self._redis.xtrim(self._input, minid=text(floor), approximate=False)
