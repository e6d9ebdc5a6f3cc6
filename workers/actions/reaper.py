"""The reaper of a partition: lost jobs become `unknown`, queued operations get their job.

It runs in the partition owner's thread between reads, so its receipt changes are fenced
commits of the one writer like any other.  Each sweep looks at the partition's active
operations (`queued` and `running`, oldest first):

- `queued` without an RQ job (the owner crashed between the commit and the enqueue): enqueue
  it, idempotently (job id = operation id, `unique=True`);
- `queued` whose job ended in RQ (`failed`/`stopped`/`finished`) before its `running` report was
  committed, or that RQ calls `started` for longer than START_GRACE_BEATS heartbeats while its
  job keeps no heartbeat (its worker died before the job's first beat: RQ keeps such a job
  `started` until its own cleanup, minutes later): `failed` - the capability was never
  called, because a job only runs it after `queued -> running` was committed;
- `running` whose job heartbeat has lapsed, seen missing at sweeps a heartbeat apart (its RQ
  worker or work horse died: SIGKILL, OOM,
  a lost host, RQ's horse monitor; a job stopped by a timeout reports `unknown` itself):
  `unknown`.  It is never re-executed: the side effect may or
  may not have happened.  The verdict is only given while the partition stream holds nothing
  newer than what the owner has read, so an outcome report the job added just before its
  heartbeat lapsed is always applied first.

It also cancels `awaiting_confirmation` operations whose approval expired (the capability's
`confirmationTimeout` after the reserve), found by their deadline in the partition's approvals
index: nothing ran, and a `confirm` that comes later is `not_awaiting_confirmation`.  A confirm
already in the stream wins: verdicts are only committed when the stream is read to its end.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from ..redisio.client import RedisClient
from ..redisio.connection import array, text
from ..redisio.keys import Keys
from .jobs import JobQueue
from .outcomes import OutcomeHandler
from .receipts import ReceiptChange, Record, read_record

log = logging.getLogger(__name__)
SWEEP_LIMIT = 256  # operations looked at per sweep
START_GRACE_BEATS = 3  # RQ's `started` with no job heartbeat this long (plus a skew margin) is a dead job
CLOCK_SKEW_MS = 5_000  # RQ's start time is the RQ worker host's clock, `now` is Redis's
APPROVAL_EXPIRED = "the approval request expired before anyone approved it; nothing was run"


@dataclass(frozen=True)
class Verdict:
    """A receipt change the reaper decided, with its metric label."""

    change: ReceiptChange
    capability: str
    status: str


class Reaper:
    """Finds lost and never-enqueued jobs among the active operations of one partition."""

    def __init__(self, *, redis: RedisClient, keys: Keys, partition: int, jobs: JobQueue, outcomes: OutcomeHandler,
                 heartbeat_ms: int) -> None:
        self._redis = redis
        self._keys = keys
        self._partition = partition
        self._jobs = jobs
        self._outcomes = outcomes
        self._heartbeat_ms = heartbeat_ms
        self.oldest_queued_ms = 0  # the last sweep's: how long its oldest `queued` operation has waited
        self._missing: dict[str, int] = {}  # operation -> when its heartbeat was first seen missing

    def sweep(self, now_ms: int, quiet: Callable[[], bool]) -> list[Verdict]:
        """Enqueue missing jobs; return the verdicts to commit (only if `quiet()` holds)."""
        active = self._keys.active_operations(self._partition)
        members = [text(m) for m in array(self._redis.zrange(active, 0, SWEEP_LIMIT - 1))]
        verdicts: list[Verdict] = []
        lost: list[tuple[str, Record]] = []
        self.oldest_queued_ms = 0
        for member in members:
            session, _, op = member.partition(" ")
            record = read_record(self._redis, self._keys.operations(self._partition, session), op)
            if record is None or record.status not in ("queued", "running"):
                self._redis.zrem(active, member)  # the receipt is gone or final: never wrong to drop
                continue
            if record.status == "queued":
                self.oldest_queued_ms = max(self.oldest_queued_ms, now_ms - record.updated_at)
                verdict = self._queued(session, record, now_ms)
                if verdict is not None:
                    verdicts.append(verdict)
            elif now_ms - record.updated_at > self._heartbeat_ms:
                lost.append((session, record))
        if lost:
            beats = self._redis.mget([self._keys.heartbeat(self._partition, s, r.operation_id) for s, r in lost])
            for (session, record), beat in zip(lost, beats, strict=True):
                if self._lapsed(record.operation_id, beat is None, now_ms):
                    log.warning("partition %d: operation %s of session %s ended unknown: its job was lost",
                                self._partition, record.operation_id, session)
                    verdicts.append(Verdict(self._outcomes.verdict(
                        session, record, "unknown", "the job was lost with its worker; it is not re-executed "
                        "and its side effect may or may not have happened"), record.capability, "unknown"))
        verdicts += self._expired_approvals(now_ms)
        return verdicts if verdicts and quiet() else []

    def _expired_approvals(self, now_ms: int) -> list[Verdict]:
        """`cancelled` for each operation still awaiting an approval whose time is up."""
        approvals = self._keys.approvals(self._partition)
        due = [text(m) for m in array(self._redis.zrangebyscore(approvals, "-inf", now_ms, start=0, num=SWEEP_LIMIT))]
        verdicts: list[Verdict] = []
        for member in due:
            session, _, op = member.partition(" ")
            record = read_record(self._redis, self._keys.operations(self._partition, session), op)
            if record is None or record.status != "awaiting_confirmation":
                self._redis.zrem(approvals, member)  # the session expired, or it was decided: never wrong to drop
                continue
            verdicts.append(Verdict(self._outcomes.verdict(session, record, "cancelled", APPROVAL_EXPIRED),
                                    record.capability, "cancelled"))
        return verdicts

    def _lapsed(self, op: str, missing: bool, now_ms: int) -> bool:
        """A heartbeat missing at two sweeps a whole heartbeat apart.  One look is not enough: a
        Redis outage longer than the heartbeat's TTL expires the key of a job that is alive, which
        sets it again within a third of the TTL once Redis is back (and then reports)."""
        if not missing:
            self._missing.pop(op, None)
            return False
        first = self._missing.setdefault(op, now_ms)
        if len(self._missing) > SWEEP_LIMIT * 4:  # operations ended meanwhile: forget the oldest
            self._missing.pop(next(iter(self._missing)))
        return now_ms - first >= self._heartbeat_ms

    def _queued(self, session: str, record: Record, now_ms: int) -> Verdict | None:
        status = self._jobs.status(record.operation_id)
        if status is None and record.job is not None and record.secret:
            self._jobs.enqueue({**record.job, "secret": record.secret})
            log.info("partition %d: enqueued the job of %s", self._partition, record.operation_id)
            return None
        # `finished` with the operation still `queued`: the job gave up on its start and its
        # `failed` report was lost with Redis's last writes
        if status in ("failed", "stopped", "finished") or (status == "started"
                                                            and self._died_unstarted(session, record, now_ms)):
            return Verdict(self._outcomes.verdict(session, record, "failed",
                                                  "the job ended before it started the capability"),
                           record.capability, "failed")
        return None

    def _died_unstarted(self, session: str, record: Record, now_ms: int) -> bool:
        """RQ started the job long enough ago, and no heartbeat of it is alive."""
        started = self._jobs.started_ms(record.operation_id)
        grace = START_GRACE_BEATS * self._heartbeat_ms + CLOCK_SKEW_MS
        if started is None or now_ms - started <= grace:
            return False
        return self._redis.get(self._keys.heartbeat(self._partition, session, record.operation_id)) is None

