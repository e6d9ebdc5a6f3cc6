"""The action runtime inside one partition owner: requests, job reports and the reaper.

`PartitionOperations` is what `PartitionConsumer` calls for `kind=action` and `kind=result`
entries and between reads.  Each accepted entry ends in one `receipt.lua` commit (which also
replies and acks) or, for reads and idempotent replays, one `reply.lua` call; RQ is touched
only *after* the commit (enqueue on `queued`, cancel on a cancelled `queued`), so a crash in
between leaves a `queued` receipt that the reaper enqueues later (idempotently).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from redis import Redis

from config.capabilities import Catalog, load_catalog
from config.settings import Settings

from ..observability.metrics import Metrics
from ..redisio.client import RedisClient
from ..redisio.connection import connect_server
from ..redisio.keys import GROUP, Keys
from ..redisio.scripts import Scripts
from ..sessions.store import Store
from ..wire.entry import InputEntry, parse_body
from ..wire.errors import StaleCache
from .jobs import JobQueue
from .outcomes import RESULT_BODY_BYTES, OutcomeHandler
from .plain import PLAIN_SHARE, PlainDocuments
from .reaper import Reaper
from .receipts import ReceiptChange
from .requests import REQUEST_BODY_BYTES, ActionDecision, ActionHandler, ReceiptWriter, now_ms
from .scripts import ReceiptScript

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ActionServices:
    """What every partition of a pool shares: the capability catalog, the RQ queue and the parsed
    plain documents."""

    catalog: Catalog
    jobs: JobQueue
    plain: PlainDocuments = field(default_factory=PlainDocuments)

    @classmethod
    def of(cls, settings: Settings, redis: RedisClient, rq_redis: Redis | None = None) -> ActionServices:
        """Load the catalog (raises a one-line `CatalogError`) and connect RQ (`IUI_RQ_REDIS_URL`).

        RQ shares the runtime's client when both use one Redis server; RQ does not support Redis
        Cluster, so with a cluster URL `Settings` requires a server of its own.
        """
        catalog = load_catalog(settings.capabilities)
        if rq_redis is None:
            shared = settings.rq_redis_url is None or settings.rq_redis_url == settings.redis_url
            rq_redis = redis if shared and isinstance(redis, Redis) else connect_server(settings.rq_url)
        return cls(catalog=catalog, jobs=JobQueue(redis=rq_redis, settings=settings, catalog=catalog),
                   plain=PlainDocuments(max_bytes=settings.cache_bytes // PLAIN_SHARE))


class PartitionOperations:
    """Action requests, job reports and the reaper of one partition under one lease (its fence)."""

    def __init__(self, *, redis: RedisClient, settings: Settings, keys: Keys, scripts: Scripts, metrics: Metrics,
                 partition: int, fence: str, store: Store, services: ActionServices) -> None:
        self._settings = settings
        self._keys = keys
        self._scripts = scripts
        self._receipts = ReceiptScript(redis=redis, group=GROUP, reply_ttl_ms=settings.reply_ttl_s * 1000)
        self._metrics = metrics
        self._fence = fence
        self._partition = partition
        self._lease = keys.lease(partition)
        self._input = keys.input(partition)
        self._jobs = services.jobs
        writer = ReceiptWriter(settings=settings, keys=keys, partition=partition)
        self._requests = ActionHandler(settings=settings, keys=keys, partition=partition, store=store,
                                       catalog=services.catalog, redis=redis, writer=writer, plain=services.plain)
        self._outcomes = OutcomeHandler(catalog=services.catalog, redis=redis, writer=writer)
        self._reaper = Reaper(redis=redis, keys=keys, partition=partition, jobs=services.jobs,
                              outcomes=self._outcomes, heartbeat_ms=settings.job_heartbeat_ms)
        self._reaped_at = time.monotonic()
        metrics.queued_oldest.labels(str(partition)).set(0)  # exported from the attach on: none waits yet

    def apply(self, entry_id: str, entry: InputEntry, reply_key: str) -> str:
        """Decide and write one `kind=action` or `kind=result` entry; returns the outcome label."""
        if entry.kind == "action":
            body = parse_body(entry.body, REQUEST_BODY_BYTES)
            decision = self._requests.decide(entry_id, entry, body, reply_key)
        else:
            body = parse_body(entry.body, RESULT_BODY_BYTES)
            decision = self._outcomes.decide(entry_id, entry, body, reply_key)
        if decision.change is None:
            self._scripts.reply(self._lease, self._input, self._fence, entry_id, reply_key, decision.reply,
                                self._keys.sliding_keys(self._partition, entry.session))
            return "resent" if entry.name == "reserve" else "accepted"
        self._commit(decision.change, decision)
        return "accepted"

    def _commit(self, change: ReceiptChange, decision: ActionDecision) -> None:
        self._receipts.commit(self._lease, self._input, self._fence, change)
        label = decision.capability or "none"
        self._metrics.receipts.labels(label, change.status).inc()
        if decision.ran_ms >= 0:
            self._metrics.job_seconds.labels(label).observe(decision.ran_ms / 1000)
        if decision.waited_ms >= 0:
            self._metrics.confirmation_wait.labels(label).observe(decision.waited_ms / 1000)
        if change.status == "unknown":
            self._metrics.unknown_outcomes.labels(label).inc()
        self._after(decision)

    def _after(self, decision: ActionDecision) -> None:
        """RQ work after a committed change: never before, so a crash leaves work for the reaper."""
        try:
            if decision.enqueue is not None:
                self._jobs.enqueue(decision.enqueue)
                self._metrics.jobs_enqueued.labels(decision.capability or "none").inc()
            if decision.cancel_job:
                self._jobs.cancel(decision.cancel_job)
        except Exception:
            log.exception("RQ follow-up of a committed receipt failed; the reaper retries")

    def none_active(self) -> None:
        """The partition holds no queued or running operation (so no sweep runs): none waits."""
        if self._reaper.oldest_queued_ms:
            self._reaper.oldest_queued_ms = 0
            self._metrics.queued_oldest.labels(str(self._partition)).set(0)

    def maybe_reap(self, quiet: Callable[[], bool]) -> None:
        """Run a reaper sweep when one is due; `quiet()` is True when no entry is waiting to be read."""
        if time.monotonic() - self._reaped_at < self._settings.reaper_interval_ms / 1000:
            return
        self._reaped_at = time.monotonic()
        verdicts = self._reaper.sweep(now_ms(), quiet)
        self._metrics.queued_oldest.labels(str(self._partition)).set(self._reaper.oldest_queued_ms / 1000)
        for verdict in verdicts:
            try:
                self._commit(verdict.change, ActionDecision("", verdict.change, capability=verdict.capability))
            except StaleCache:  # the receipt moved since the sweep read it: the next sweep looks again
                continue
