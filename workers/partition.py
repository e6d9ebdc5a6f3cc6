"""The consumer of one leased partition: pending-first replay, then new entries, in id order.

It owns the partition while its fencing epoch is current.  Every entry ends in exactly one
script call that replies and XACKs together with its effect, so an entry is never lost (still
pending for the next owner) and never applied twice (acked with its effect).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from config.settings import Settings

from .answer_runtime import PartitionAnswers, handles
from .cache import GenerationCache
from .dead_letter import DeadLetterPolicy
from .entry import address_of, decode_fields, dumps, error_reply, parse_body, parse_entry
from .errors import Fenced, HostError, StaleCache
from .keys import GROUP, Keys, consumer_of, partition_of
from .metrics import Metrics, entry_label
from .operations import ActionServices, PartitionOperations
from .redisio import TRANSIENT_ERRORS, Backoff, is_busy_group
from .scripts import NEW, PENDING, Scripts
from .store import Store
from .tools import TOOLS, Decision, ToolHandler

log = logging.getLogger(__name__)
TRIM_EVERY_S = 30.0
BODY_MARGIN = 4_096  # envelope room above the document budget for one tool call body


class PartitionConsumer:
    """Processes the input stream of one partition under one lease epoch."""

    def __init__(self, *, redis: Any, settings: Settings, keys: Keys, scripts: Scripts,
                 metrics: Metrics, partition: int, epoch: int, actions: ActionServices | None = None,
                 cache: GenerationCache | None = None) -> None:
        self.partition = partition
        self.epoch = epoch
        self._redis = redis
        self._settings = settings
        self._keys = keys
        self._scripts = scripts
        self._metrics = metrics
        self._lease = keys.lease(partition)
        self._input = keys.input(partition)
        self._consumer = consumer_of(partition)
        self._store = Store(redis=redis, keys=keys, partition=partition, session_ttl_s=settings.session_ttl_s,
                            cache=cache, scope=epoch)
        self._handler = ToolHandler(settings=settings, keys=keys, partition=partition, store=self._store)
        self._operations = PartitionOperations(
            redis=redis, settings=settings, keys=keys, scripts=scripts, metrics=metrics, partition=partition,
            epoch=epoch, store=self._store, services=actions or ActionServices.of(settings, redis))
        self._answers = PartitionAnswers(redis=redis, settings=settings, keys=keys, scripts=scripts,
                                         metrics=metrics, partition=partition, epoch=epoch)
        self._stop = threading.Event()
        self.busy = threading.Lock()  # held by the dispatcher while this consumer works
        self.fenced = False
        self._last_trim = time.monotonic()
        self._cursor: str | None = None  # the last entry id seen by a fenced read
        self._replay = True  # replay the pending list before anything newer
        self._woken = False
        self._retry_at = 0.0
        self._next_reap = 0.0
        self._backoff = Backoff(limit=settings.lease_renew_ms / 1000)  # a retry never outlasts a renewal

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

    @property
    def cursor(self) -> str | None:
        """The id after which a plain XREAD wakes this consumer (None: it must read at once)."""
        return None if self._replay else self._cursor

    def wake(self) -> None:
        """An entry arrived after the cursor (or the blocking read failed): read at the next turn."""
        self._woken = True

    def ready(self, now: float) -> bool:
        """True when the dispatcher should give this consumer a turn now."""
        if self._stop.is_set() or now < self._retry_at:
            return False
        return self._replay or self._cursor is None or self._woken or now >= self._next_reap

    def ensure_group(self) -> None:
        """Create the partition's consumer group (and stream) if needed."""
        try:
            self._redis.xgroup_create(self._input, GROUP, id="0", mkstream=True)
        except Exception as error:  # noqa: BLE001 - only BUSYGROUP is expected here
            if not is_busy_group(error):
                raise

    def step(self) -> bool:
        """Replay pending entries if needed, then one batch of new ones; True if entries were read.

        Transient Redis errors (and bugs) schedule a retry with back-off and a replay of the
        pending list; a lost lease marks the consumer fenced and stops it.
        """
        self._woken = False
        try:
            if self._replay:
                self.ensure_group()
                self._replay_pending()
                self._cursor = None
                self._replay = False
            read = self._read_new()
            now = time.monotonic()
            if now >= self._next_reap:
                self._next_reap = now + self._settings.reaper_interval_ms / 1000
                self._operations.maybe_reap(self._quiet)
            self._maybe_trim()
            self._backoff.reset()
            return read
        except Fenced:
            self._lost()
        except TRANSIENT_ERRORS as error:
            self._metrics.redis_errors.inc()
            log.warning("partition %d: redis unavailable (%s); retrying", self.partition, error)
            self._retry_later()
        except Exception:  # noqa: BLE001 - e.g. NOGROUP after a Redis restart without persistence
            log.exception("partition %d: unexpected error; replaying pending entries", self.partition)
            self._retry_later()
        return False

    def _retry_later(self) -> None:
        self._replay = True
        self._retry_at = time.monotonic() + self._backoff.next()

    def _lost(self) -> None:
        self.fenced = True
        self._stop.set()

    def _replay_pending(self) -> None:
        """Entries delivered to this partition's consumer but never acked (a previous owner's)."""
        while not self._stop.is_set():
            batch = self._scripts.read(self._lease, self._input, self.epoch, self._consumer,
                                       self._settings.batch_size, PENDING)
            if not batch.entries:
                return
            for entry_id, fields in batch.entries:
                if self._stop.is_set():
                    return
                self._handle(entry_id, fields, batch.deliveries.get(entry_id, 1))

    def _read_new(self) -> bool:
        """Take new entries with a fenced read (only the current owner can move them to pending).

        A blocking XREADGROUP would move entries into the pending list even when this process
        lost its lease while it was paused; the fenced read script refuses that, so only the
        current owner ever delivers entries, and it finds them all in its own replay.  Waiting
        is the dispatcher's plain XREAD, which moves nothing.
        """
        batch = self._scripts.read(self._lease, self._input, self.epoch, self._consumer,
                                   self._settings.batch_size, NEW)
        self._cursor = batch.cursor
        for entry_id, fields in batch.entries:
            self._handle(entry_id, fields, 1)
            if self._stop.is_set():
                break
        self._woken = len(batch.entries) >= self._settings.batch_size  # more may be waiting
        return bool(batch.entries)

    def _handle(self, entry_id: str, raw_fields: Any, deliveries: int) -> None:
        fields = decode_fields(raw_fields or {})
        if deliveries > self._settings.dead_letter_after:
            address = address_of(fields)
            reply_key = self._keys.reply(self.partition, *address) if address else ""
            self._dead(entry_id, fields, "redelivered", f"entry was delivered {deliveries} times without a commit",
                       reply_key, address[1] if address else "")
            return
        started = time.perf_counter()
        tool = entry_label(fields)
        outcome = self._process(entry_id, fields)
        self._metrics.latency.labels(tool).observe(time.perf_counter() - started)
        self._metrics.entries.labels(fields.get("kind", "") if fields.get("kind") in ("tool", "action", "result", "view")
                                     else "other", tool, outcome).inc()

    def _process(self, entry_id: str, fields: dict[str, str]) -> str:
        """Validate and commit one entry; returns the outcome label."""
        address = address_of(fields)
        if address is None:
            self._dead(entry_id, fields, "no_reply_address", "")
            return "dead_letter"
        session, request = address
        reply_key = self._keys.reply(self.partition, session, request)
        for attempt in range(self._settings.dead_letter_after):
            try:
                return self._apply(entry_id, fields, reply_key)
            except HostError as error:
                self._metrics.rejections.labels(error.code).inc()
                self._scripts.reply(self._lease, self._input, self.epoch, entry_id, reply_key,
                                    error_reply(request, error), self._session_keys(session))
                return "rejected"
            except StaleCache:
                self._store.forget(session)  # another writer moved the state: re-read and retry
            except (Fenced, *TRANSIENT_ERRORS):
                raise
            except Exception:  # noqa: BLE001 - a bug must not block the partition
                log.exception("partition %d: entry %s failed (attempt %d)", self.partition, entry_id, attempt + 1)
                self._store.forget(session)
        self._dead(entry_id, fields, "failed", "the entry could not be processed", reply_key, request)
        return "dead_letter"

    def _apply(self, entry_id: str, fields: dict[str, str], reply_key: str) -> str:
        entry = parse_entry(fields)
        if partition_of(entry.session, self._settings.partitions) != self.partition:
            raise HostError(f"session belongs to partition {partition_of(entry.session, self._settings.partitions)},"
                            f" not {self.partition}", code="wrong_partition")
        if handles(entry):  # answer-ui@1 tools and view-state requests (workers.answer_runtime)
            return self._answers.apply(entry_id, entry, reply_key)
        if entry.kind != "tool":  # action requests and job reports (workers.operations)
            return self._operations.apply(entry_id, entry, reply_key)
        if entry.name not in TOOLS:
            raise HostError("unknown tool; use one of " + ", ".join(TOOLS), code="unknown_tool")
        args = parse_body(entry.body, self._settings.max_document_bytes + BODY_MARGIN)
        decision = self._handler.decide(entry, args)
        self._write(entry_id, entry.session, entry.request, reply_key, decision)
        return "resent" if decision.action == "resend" else "accepted"

    def _write(self, entry_id: str, session: str, request: str, reply_key: str, decision: Decision) -> None:
        if decision.action == "commit":
            assert decision.plan is not None and decision.record is not None
            self._scripts.commit(self._lease, self._input, self.epoch, entry_id, decision.plan)
            self._store.remember(session, decision.record, opened=decision.opened)
            self._metrics.frames.labels(decision.frame_type).inc()
            if decision.record.status != "streaming":
                self._metrics.generation_frames.observe(decision.record.frames)
                self._metrics.generation_bytes.observe(decision.record.bytes)
            return
        reply = '{"ok":true,"request":' + dumps(request) + ',"result":' + decision.reply_result + "}"
        if decision.action == "plain":
            assert decision.plain is not None
            self._scripts.plain(self._lease, self._input, self.epoch, entry_id,
                                self._keys.session_keys(self.partition, session), decision.plain, reply_key, reply)
        else:
            self._scripts.reply(self._lease, self._input, self.epoch, entry_id, reply_key, reply,
                                self._session_keys(session))

    def _session_keys(self, session: str) -> tuple[str, ...]:
        """The keys whose expiry a call of `session` slides (none for another partition's session)."""
        if partition_of(session, self._settings.partitions) != self.partition:
            return ()
        return self._keys.session_keys(self.partition, session) + self._keys.answer_keys(self.partition, session)

    def _dead(self, entry_id: str, fields: dict[str, str], reason: str, message: str,
              reply_key: str = "", request: str = "") -> None:
        reply = error_reply(request, HostError(message, code="dead_letter")) if reply_key else ""
        self._scripts.dead(self._lease, self._input, self._keys.dead(self.partition),
                           self._keys.dead_bytes(self.partition), self.epoch, entry_id, reason, fields,
                           DeadLetterPolicy.of(self._settings), reply_key, reply)
        self._metrics.dead_lettered.labels(reason).inc()

    def _quiet(self) -> bool:
        """True when the stream holds no entry newer than the last one read (the reaper's precondition)."""
        if self._cursor is None:
            return False
        return not self._redis.xread({self._input: self._cursor}, count=1)

    def _maybe_trim(self) -> None:
        """Trim the input stream below the oldest pending entry (MINID), never by MAXLEN."""
        if time.monotonic() - self._last_trim < TRIM_EVERY_S:
            return
        self._last_trim = time.monotonic()
        summary = self._redis.xpending(self._input, GROUP)
        if summary.get("pending"):
            floor = summary["min"]
        else:
            groups = [g for g in self._redis.xinfo_groups(self._input) if g["name"] in (GROUP, GROUP.encode())]
            floor = groups[0]["last-delivered-id"] if groups else None
        if floor:
            self._redis.xtrim(self._input, minid=floor, approximate=False)
