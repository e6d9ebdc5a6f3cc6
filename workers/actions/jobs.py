"""Capabilities as RQ jobs: enqueueing (`JobQueue`) and the job itself (`run_operation`).

The partition owner commits `queued` first and enqueues afterwards, with the operation id as
the RQ job id and `unique=True`, so an enqueue repeated after a fail-over is a no-op.  RQ
never retries a job: a lost run ends `unknown` (see `workers.reaper`), never re-executed.

The job, in the RQ worker process (its settings come from the same `IUI_*` variables):

1. keeps a heartbeat key alive while it runs (the reaper's evidence that it is alive);
2. reports `running` as a `kind=result` entry and waits for that entry's reply: only a
   committed `queued -> running` lets it go on (a cancelled, repeated or unconfirmed run
   exits without touching anything);
3. runs the capability with validated arguments, cut at the capability's declared `timeout`
   (`workers.deadline`), and reports `succeeded` (public fields only), `failed` (an error the
   capability raised) or `unknown` (it was stopped: its own timeout, RQ's job timeout,
   SystemExit, KeyboardInterrupt - its side effect may or may not have happened), then lets
   the heartbeat lapse.

RQ's `job_timeout` bounds the whole job: `IUI_JOB_START_TIMEOUT_S` (the longest wait for the
`running` report's commit) + the capability's timeout + `JOB_GRACE_S` for the reports.

Every report carries the operation's secret; the owner refuses reports without it.
"""

from __future__ import annotations

import functools
import logging
import math
import secrets
import threading
import time
from collections.abc import Mapping
from datetime import UTC
from pathlib import Path
from typing import Any

import orjson
from redis import Redis

from config.capabilities import ArgumentsError, Capability, CapabilityContext, Catalog, load_catalog
from config.settings import Settings, load_settings
from core.json._text import utf16_prefix
from core.limits import MESSAGE_LENGTH, UI_PROTOCOL_LIMITS

from ..redisio.client import RedisClient
from ..redisio.connection import TRANSIENT_ERRORS, Backoff, add_entry, text
from ..redisio.durability import Durability
from ..redisio.keys import Keys
from ..redisio.replies import ReplyTimeout, await_reply
from ..wire.entry import dumps, loads
from .capabilities.files import CapabilityError
from .deadline import CapabilityTimeout, deadline

log = logging.getLogger(__name__)
JOB_FUNCTION = "workers.actions.jobs.run_operation"
RESULT_TTL_S = 86_400
ENQUEUED, EXISTS = "enqueued", "exists"
REPORT_TIMEOUT_S = 30.0  # an outcome report is sent again through a Redis outage for this long
JOB_GRACE_S = 5 + int(REPORT_TIMEOUT_S)  # RQ's job timeout beyond the start wait and the capability: the reports
UNSURE = "its side effect may or may not have happened (it is not re-executed)"
MAX_RESULT_BYTES = UI_PROTOCOL_LIMITS["maxActionResultBytes"]  # a public result's JSON (seed 000 §13)


def job_timeout(settings: Settings, capability: Capability | None) -> int:
    """RQ's timeout of an operation's whole job, in whole seconds (see the module docstring)."""
    run_s = capability.spec.timeout_s if capability else 60.0
    return math.ceil(settings.job_start_timeout_s + run_s) + JOB_GRACE_S


def _stopped_from_outside(error: BaseException) -> bool:
    """RQ's timeout, SystemExit, KeyboardInterrupt...: raised in the capability's frame, never its own error."""
    from rq.timeouts import BaseTimeoutException

    return isinstance(error, BaseTimeoutException) or not isinstance(error, Exception)


class JobQueue:
    """Enqueues, inspects and cancels operation jobs on RQ's Redis."""

    def __init__(self, *, redis: Redis, settings: Settings, catalog: Catalog) -> None:
        self._redis = redis  # RQ's: one server (RQ does not support Redis Cluster)
        self._settings = settings
        self._catalog = catalog

    def enqueue(self, payload: Mapping[str, Any]) -> str:
        """Enqueue the job of an operation once (`ENQUEUED`), or find it there already (`EXISTS`)."""
        from rq import Queue
        from rq.exceptions import DuplicateJobError

        capability = self._catalog.get(str(payload["capabilityId"]))
        queue = capability.spec.queue if capability else "iui"
        try:
            Queue(queue, connection=self._redis).enqueue_call(
                JOB_FUNCTION, args=(dict(payload),), job_id=str(payload["operationId"]),
                timeout=job_timeout(self._settings, capability),
                result_ttl=RESULT_TTL_S, failure_ttl=RESULT_TTL_S, ttl=self._queued_ttl(),
                description=f"iui operation {payload['capabilityId']}", unique=True)
        except DuplicateJobError:
            return EXISTS
        return ENQUEUED

    def _queued_ttl(self) -> int | None:
        """How long a job may wait in its queue: its session's time to live (None: no limit).  A job
        had no limit: with no RQ worker on its queue, the jobs of sessions long expired stayed for
        ever (an audit: 300 of them after 300 reserves).  A job discarded while its operation is still
        queued (the session kept alive, RQ away for as long) is enqueued again by the reaper."""
        return self._settings.session_ttl_s or None

    def status(self, op: str) -> str | None:
        """RQ's status of the operation's job (`queued`, `started`, `finished`, `failed`...), or None."""
        from rq.exceptions import NoSuchJobError
        from rq.job import Job

        try:
            return str(Job.fetch(op, connection=self._redis).get_status(refresh=False).value)
        except NoSuchJobError:
            return None

    def started_ms(self, op: str) -> int | None:
        """When RQ's worker started the operation's job (Unix ms, by that host's clock), or None."""
        from rq.exceptions import NoSuchJobError
        from rq.job import Job

        try:
            started = Job.fetch(op, connection=self._redis).started_at
        except NoSuchJobError:
            return None
        if started is None:
            return None
        if started.tzinfo is None:  # RQ stores UTC without a zone
            started = started.replace(tzinfo=UTC)
        return int(started.timestamp() * 1000)

    def cancel(self, op: str) -> None:
        """Take a queued job off its queue so it never starts (a run that starts anyway is refused).

        RQ keeps a cancelled job's hash and its canceled-registry entry with no expiry and never
        cleans that registry: the hash is kept `RESULT_TTL_S`, as a finished job's is (its
        `canceled` status is what tells the reaper not to enqueue the job again should the
        cancelling receipt be lost with Redis's last writes), and the registry entry is removed."""
        from rq.exceptions import InvalidJobOperation, NoSuchJobError
        from rq.job import Job
        from rq.registry import CanceledJobRegistry

        try:
            job = Job.fetch(op, connection=self._redis)
            if job.get_status(refresh=False).value in ("queued", "deferred", "scheduled"):
                job.cancel()
                CanceledJobRegistry(job.origin, connection=self._redis).remove(job)
                self._redis.expire(job.key, RESULT_TTL_S)
        except (NoSuchJobError, InvalidJobOperation):
            pass


@functools.lru_cache(maxsize=4)
def _catalog(path: str, mtime: float) -> Catalog:
    return load_catalog(path)


def catalog_of(settings: Settings) -> Catalog:
    """The catalog of this process (re-read when the file changes)."""
    path = Path(settings.capabilities)
    return _catalog(str(path), path.stat().st_mtime if path.exists() else 0.0)


class _Heartbeat:
    """Keeps `{prefix}:{pN}:hb:<session>:<op>` alive (PX) until stopped; it then lapses by itself."""

    def __init__(self, redis: RedisClient, key: str, ttl_ms: int) -> None:
        self._redis, self._key, self._ttl_ms = redis, key, ttl_ms
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="iui-heartbeat", daemon=True)

    def __enter__(self) -> _Heartbeat:
        try:
            self._redis.set(self._key, "1", px=self._ttl_ms)
        except TRANSIENT_ERRORS:  # Redis away: the beats retry, and the start waits for Redis anyway
            log.warning("heartbeat of %s failed", self._key)
        self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._stop.wait(self._ttl_ms / 3000):
            try:
                self._redis.set(self._key, "1", px=self._ttl_ms)
            except Exception:
                log.warning("heartbeat of %s failed", self._key)

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


class OperationRun:
    """One execution of an operation's job."""

    def __init__(self, *, redis: RedisClient, settings: Settings, payload: Mapping[str, Any],
                 catalog: Catalog) -> None:
        self._redis = redis
        self._settings = settings
        self._payload = payload
        self._catalog = catalog
        self._keys = Keys(str(payload["prefix"]))
        self._partition = int(payload["partition"])
        self._session = str(payload["session"])
        self._op = str(payload["operationId"])
        self._token = secrets.token_hex(8)  # names this run's reply keys
        self._mode: Durability | None = None

    def _entry(self, name: str, **body: Any) -> tuple[str, dict[str, str]]:
        if isinstance(body.get("message"), str):  # a receipt keeps 512 UTF-16 units; the entry stays small
            body["message"] = utf16_prefix(body["message"], MESSAGE_LENGTH)
        request = f"{self._op}.{name}.{self._token}"
        return request, {"session": self._session, "request": request, "kind": "result", "name": name,
                         "call": self._op,
                         "body": dumps({"operationId": self._op, "secret": self._payload["secret"], **body})}

    def _report(self, name: str, **body: Any) -> None:
        """An outcome report, added again after a connection error until Redis takes it, for up to
        REPORT_TIMEOUT_S (else the reaper rules the operation).  An add that failed may still have
        been applied: a second copy of a report is refused by the status machine, harmlessly.  The
        owner's reply is not awaited: the entry waits in the stream for an owner that is away."""
        _, fields = self._entry(name, **body)
        deadline = time.monotonic() + REPORT_TIMEOUT_S
        backoff = Backoff(first=0.05, limit=1.0)
        while True:
            try:
                add_entry(self._redis, self._keys.input(self._partition), fields)
                return
            except TRANSIENT_ERRORS:
                if time.monotonic() >= deadline:
                    log.warning("operation %s: the %s report could not be sent in %g s; the reaper rules it",
                                self._op, name, REPORT_TIMEOUT_S)
                    return
                time.sleep(backoff.next())

    def _started(self, timeout: float) -> dict[str, Any] | None:
        """Report `running` once and await its reply through connection errors, or None by `timeout`.

        Never sent again: a second `running` after its commit is refused as a repeated run.  The
        reply is kept with the commit, so a wait broken by a Redis restart finds it; an entry Redis
        lost gets none, and the job gives up (`_gave_up`)."""
        deadline = time.monotonic() + timeout
        request, fields = self._entry("running")
        key = self._keys.reply(self._partition, self._session, request)
        backoff = Backoff(first=0.05, limit=1.0)
        sent = False
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                if not sent:
                    add_entry(self._redis, self._keys.input(self._partition), fields)
                    sent = True
                value = await_reply(self._redis, key, max(0.01, round(remaining, 3)), self._durability())
            except ReplyTimeout:  # not confirmed on the replicas: as if no reply came (nothing is run)
                return None
            except TRANSIENT_ERRORS:
                time.sleep(min(backoff.next(), max(0.0, deadline - time.monotonic())))
                continue  # an XADD that failed may have been applied: never sent again, only awaited
            return None if value is None else loads(value)
        return None

    def _durability(self) -> Durability:
        """The deployment's durability, read once (a connection error is the caller's to wait through)."""
        if self._mode is None:
            self._mode = Durability.parse(text(self._redis.hget(self._keys.meta, "durability")) or "fast")
        return self._mode

    def run(self) -> str:
        """Report running, run the capability once if that was committed, report the outcome."""
        capability = self._catalog.get(str(self._payload["capabilityId"]))
        if capability is None:
            self._report("failed", message="the capability is not configured on the RQ worker")
            return "failed"
        heartbeat = self._keys.heartbeat(self._partition, self._session, self._op)
        with _Heartbeat(self._redis, heartbeat, self._settings.job_heartbeat_ms):
            started = self._started(self._settings.job_start_timeout_s)
            if not started or not started.get("ok"):
                reason = "no reply" if not started else started["error"]["code"]
                log.warning("operation %s not started (%s); nothing was run", self._op, reason)
                if not started:
                    self._gave_up()
                return "not_started"
            try:
                status, body = self._execute(capability)
            except BaseException as error:  # stopped from outside while the capability ran
                self._stopped(error)
                raise
            self._report(status, **body)
        return status

    def _gave_up(self) -> None:
        """Report `failed` after the `running` report that no one answered in time: that report is
        still in the partition's stream, and an owner that comes back commits it; this one, next
        in the stream, then ends the operation `failed` (else the reaper, missing this job's
        heartbeat, would rule `unknown` for a capability that never ran)."""
        try:
            self._report("failed", message=f"not started: no partition owner committed the start within "
                                            f"{self._settings.job_start_timeout_s:g} s; nothing was run")
        except Exception:
            log.exception("operation %s: the not-started report failed; the reaper rules it", self._op)

    def _stopped(self, error: BaseException) -> None:
        """Report `unknown` for a run stopped from outside (best effort: else the reaper rules it)."""
        log.warning("operation %s of session %s: stopped by %s while the capability ran", self._op, self._session,
                    type(error).__name__)
        try:
            self._report("unknown", message=f"stopped: the job was stopped ({type(error).__name__}) while the "
                                            f"capability ran; {UNSURE}")
        except Exception:
            log.exception("operation %s: the unknown report failed; the reaper rules it", self._op)

    def _execute(self, capability: Capability) -> tuple[str, dict[str, Any]]:
        try:
            arguments = capability.validate_arguments(self._payload["arguments"])
        except ArgumentsError as error:
            return "failed", {"message": f"argument_mismatch: {error}"}
        if capability.wants_context:
            arguments["context"] = CapabilityContext(files_root=Path(self._settings.files_root),
                                                     max_file_bytes=self._settings.max_file_bytes)
        try:
            with deadline(capability.spec.timeout_s):
                result = capability.function(**arguments)
        except CapabilityTimeout:
            log.warning("operation %s of session %s: capability %s ran past its timeout", self._op, self._session,
                        capability.id)
            return "unknown", {"message": f"timeout: the capability did not finish within "
                                          f"{capability.spec.timeout_s:g} s and was stopped; {UNSURE}"}
        except CapabilityError as error:
            return "failed", {"message": f"{error.code}: {error}"}
        except Exception as error:
            if _stopped_from_outside(error):
                raise
            log.exception("operation %s: capability %s raised", self._op, capability.id)
            return "failed", {"message": f"the capability raised {type(error).__name__}"}
        public = capability.public_result(result)  # private fields never leave the job
        try:
            size = len(orjson.dumps(public))
        except TypeError:
            return "failed", {"message": "the capability returned a result that is not JSON"}
        if size > MAX_RESULT_BYTES:  # refused by the owner anyway; too large for a report entry besides
            return "failed", {"message": f"result_too_large: the capability's public result is {size:,} JSON "
                                         f"bytes; the limit is {MAX_RESULT_BYTES:,}"}
        return "succeeded", {"result": public}


def run_operation(payload: dict[str, Any]) -> str:
    """The RQ job of one operation (see the module docstring); returns the reported status."""
    from ..redisio.connection import connect

    settings = load_settings()
    redis = connect(settings.redis_url)
    try:
        return OperationRun(redis=redis, settings=settings, payload=payload, catalog=catalog_of(settings)).run()
    finally:
        redis.close()
