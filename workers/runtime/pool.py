"""A worker pool process: heartbeats, fair share of partitions, leases, one dispatcher thread.

Every process announces itself in the `{prefix}:workers` sorted set (score = heartbeat expiry
on the Redis clock).  Each tick it renews its leases, computes its fair share
ceil(P / live workers), acquires free partitions (its preferred ones first) while below the
share and releases extras while above it.  The held partitions are served by one
`Dispatcher` thread; the tick runs in the pool's own thread so renewals never wait for work.
A stopped process finishes the batch in hand and releases its leases at once; a killed one's
leases expire after the lease TTL.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
import uuid
from collections.abc import Callable

from config.settings import Settings

from ..actions.operations import ActionServices
from ..observability.metrics import Metrics
from ..redisio.client import RedisClient
from ..redisio.connection import TRANSIENT_ERRORS, Backoff, integer, text
from ..redisio.durability import CHECK_EVERY_S, Durability, Mode, check_server
from ..redisio.keys import GROUP, PROTOCOL, Keys
from ..redisio.scripts import Acquired, LostLease, Scripts
from ..redisio.seal import Seal
from ..sessions.snapshots import SHELF_SHARE, SnapshotShelf
from ..sessions.store import SharedCache
from .dispatcher import Dispatcher
from .heap import HeapPolicy
from .partition import PartitionConsumer, own_group

log = logging.getLogger(__name__)
LAG_EVERY_S = 5.0  # one XINFO per held partition: not every tick
# `{prefix}:meta` is checked (and `streaming` advertised) at start, after an outage and this often:
# a round trip (`meta.lua`) in the tick's thread, which holds the GIL the
# dispatcher needs (every tick cost a paced worker's tail; docs/decisions.md, the runtime).
META_EVERY_S = 5.0
ACQUIRE_ROUNDS = 4  # acquisitions per tick when other workers take the same free leases first
HELD_SHARE = 8  # a dispatcher round holds decided, unconfirmed states of at most 1/8 of IUI_CACHE_BYTES


class MetaMismatch(Exception):
    """The deployment's `{prefix}:meta` disagrees with this process's configuration."""


def check_meta(scripts: Scripts, keys: Keys, partitions: int, durability: Durability | None = None, *,
               streaming: bool = True) -> None:
    """Refuse a `{prefix}:meta` of another deployment (`MetaMismatch`, nothing written), else set
    its fixed fields on first start and advertise `streaming` (1/0): `Scripts.meta`, one script."""
    durability = durability or Durability()
    configured = {"partitions": str(partitions), "protocol": str(PROTOCOL), "durability": durability.meta}
    mismatch = scripts.meta(keys.meta, list(configured.items()), streaming)
    if mismatch is None:
        return
    field, stored = mismatch
    if field == "durability":
        raise MetaMismatch(f"{keys.meta} has durability={stored}, configured {durability.meta} "
                           f"(change it for the whole deployment: stop every worker, HSET {keys.meta} durability "
                           f"{durability.meta}, start them)")
    wanted = "this build speaks" if field == "protocol" else "configured"
    raise MetaMismatch(f"{keys.meta} has {field}={stored}, {wanted} {configured[field]}")


class WorkerPool:
    """One pool process (or, in the demo, one thread group) sharing the partitions."""

    def __init__(self, *, settings: Settings, redis: RedisClient, metrics: Metrics, worker_id: str | None = None,
                 on_serving: Callable[[], None] | None = None, actions: ActionServices | None = None) -> None:
        self.worker_id = worker_id or f"w-{uuid.uuid4().hex[:12]}"
        self._settings = settings
        self._redis = redis
        self._metrics = metrics
        self._keys = Keys(settings.key_prefix)
        self._scripts = Scripts(redis=redis, group=GROUP, reply_ttl_ms=settings.reply_ttl_s * 1000,
                                frame_log_max=settings.frame_log_max,
                                frame_log_max_bytes=settings.frame_log_max_bytes,
                                session_ttl_ms=settings.session_ttl_s * 1000,
                                max_plain_per_session=settings.max_plain_per_session,
                                max_generations_per_session=settings.max_generations_per_session)
        self._actions = actions or ActionServices.of(settings, redis)  # the catalog: validated at start
        metrics.initialise_capabilities(self._actions.catalog.ids)
        self._held: dict[int, PartitionConsumer] = {}
        # read at each scrape: a lease past its TTL (Redis away, renewals failing) is not held any more
        metrics.watch_leases(self._valid_leases)
        self._dispatcher = Dispatcher(redis=redis, batch_size=settings.batch_size,
                                      held_bytes=settings.cache_bytes // HELD_SHARE)
        self._cache = SharedCache(max_bytes=settings.cache_bytes)  # shared by every held partition
        self._snapshots = SnapshotShelf(max_bytes=settings.cache_bytes // SHELF_SHARE,  # so are restored snapshots
                                        on_shared=metrics.count_shared_snapshot)
        key = settings.state_key
        self._seal = Seal(key.get_secret_value().encode("utf-8") if key is not None else None)
        self._heap = HeapPolicy(every_s=settings.gc_freeze_s)
        self._stop = threading.Event()
        self._tick_s = min(settings.heartbeat_ms, settings.lease_renew_ms) / 1000
        self._renewed_at = 0.0
        self._lag_at = 0.0
        self._durability = Durability.of(settings.durability, settings.durability_replicas,
                                         settings.durability_timeout_ms)
        self._checked_at = -CHECK_EVERY_S  # the last `local` check of the servers' fsync policy
        self._meta_at = -META_EVERY_S  # the last check of `{prefix}:meta`
        self._on_serving = on_serving
        self._releasing: list[threading.Thread] = []

    @property
    def partitions(self) -> list[int]:
        """The partitions this pool currently holds."""
        return sorted(self._held)

    def stop(self) -> None:
        """Ask `run()` to hand over and return."""
        self._stop.set()

    def run(self) -> None:
        """Serve partitions until `stop()`; then finish entries in hand and release every lease.

        Redis being unreachable, at start-up as later, is retried with back-off; a mismatched
        `{prefix}:meta` (`MetaMismatch`) or servers that cannot keep the `local` durability promise
        (`DurabilityUnmet`, checked again after every outage) end the run; at start, before the
        process wrote anything (`{prefix}:meta` included).
        """
        backoff = Backoff(limit=self._settings.lease_renew_ms / 1000)  # a retry never outlasts a renewal
        serving = False
        self._dispatcher.start()
        try:
            while not self._stop.is_set():
                try:
                    if not serving:
                        self._scripts.load()  # before the first batch (also after Redis came up)
                    self.tick()
                    backoff.reset()
                    if not serving:
                        self._heap.start()
                        if self._on_serving is not None:
                            self._on_serving()
                    serving = True
                    self._heap.maybe_freeze()
                    self._stop.wait(self._tick_s)
                except TRANSIENT_ERRORS as error:
                    self._metrics.redis_errors.inc()
                    self._checked_at = -CHECK_EVERY_S  # a restarted server may run another fsync policy
                    self._meta_at = -META_EVERY_S  # and may have lost `{prefix}:meta`
                    log.warning("pool %s: redis unavailable (%s); retrying", self.worker_id, error)
                    self._stop.wait(backoff.next())
        finally:
            self.shutdown()

    def tick(self) -> None:
        """One heartbeat: renew, announce, rebalance, report lag (and every `META_EVERY_S` check
        `{prefix}:meta`)."""
        self._check_durability()  # first: a worker that refuses to serve writes nothing (not even the meta)
        self._check_meta()
        self._reap()
        self._renew()
        live = self._heartbeat()
        share = math.ceil(self._settings.partitions / max(1, len(live)))
        if len(self._held) > share:
            self._release_extras(share, live)
        elif len(self._held) < share:
            self._acquire(share, live)
        self._report_lag()

    def _check_meta(self) -> None:
        """`check_meta` at the first tick, after an outage and every `META_EVERY_S` (also after a
        restart that lost the keys, as the durability check)."""
        if time.monotonic() - self._meta_at < META_EVERY_S:
            return
        check_meta(self._scripts, self._keys, self._settings.partitions, self._durability,
                   streaming=self._settings.streaming_enabled)
        self._meta_at = time.monotonic()

    def _check_durability(self) -> None:
        """`local`: refuse to serve (DurabilityUnmet ends the run) unless every master fsyncs every write."""
        if self._durability.mode is not Mode.LOCAL or time.monotonic() - self._checked_at < CHECK_EVERY_S:
            return
        check_server(self._redis)
        self._checked_at = time.monotonic()

    def shutdown(self) -> None:
        """Stop every consumer after its entry in hand, release the leases, leave the pool."""
        self._release_all(list(self._held))
        for thread in self._releasing:
            thread.join()
        self._dispatcher.stop()
        with contextlib.suppress(*TRANSIENT_ERRORS):  # else the heartbeat expires by itself
            self._redis.zrem(self._keys.workers, self.worker_id)

    # -- membership -----------------------------------------------------------------------

    def _heartbeat(self) -> list[str]:
        return self._scripts.heartbeat(self._keys.workers, self.worker_id, self._settings.lease_ttl_ms)

    def _preferred(self, live: list[str]) -> list[int]:
        """All partitions, this worker's own stripe first, so workers rarely contend; the others
        from an offset of its own, so that survivors taking a dead worker's stripe start apart."""
        count = max(1, len(live))
        rank = live.index(self.worker_id) if self.worker_id in live else 0
        every = range(self._settings.partitions)
        others = [p for p in every if p % count != rank]
        start = rank * len(others) // count
        return [p for p in every if p % count == rank] + others[start:] + others[:start]

    # -- leases ---------------------------------------------------------------------------

    def _reap(self) -> None:
        """Forget consumers that stopped because a script found their fence gone, saying who holds it."""
        for partition, consumer in list(self._held.items()):
            if consumer.fenced:
                owner, epoch = self._redis.hmget(self._keys.lease(partition), "owner", "epoch")
                self._lose(partition, consumer, LostLease(text(owner), text(epoch)))

    def _valid_leases(self) -> int:
        now = time.monotonic()
        return sum(1 for consumer in list(self._held.values()) if consumer.valid_until > now)

    def _renew(self) -> None:
        now = time.monotonic()
        if now - self._renewed_at < self._settings.lease_renew_ms / 1000 or not self._held:
            return
        self._renewed_at = now
        held_now = list(self._held.items())
        leases = [(self._keys.lease(partition), consumer.fence, self._keys.input(partition))
                  for partition, consumer in held_now]
        renewals = self._scripts.renew(leases, self._settings.lease_ttl_ms)
        for (partition, consumer), renewal in zip(held_now, renewals, strict=True):
            if isinstance(renewal, LostLease):
                self._lose(partition, consumer, renewal)
                continue
            consumer.valid_until = now + self._settings.lease_ttl_ms / 1000  # `now`: before the renewal was sent
            if renewal.pending:  # in hand, or moved there by a paused process: a replay finds out
                consumer.request_replay()

    def _lose(self, partition: int, consumer: PartitionConsumer, lost: LostLease) -> None:
        """Stop serving a partition whose lease expired or another worker holds, at once."""
        consumer.stop()  # its commits are fenced already; no need to wait for it
        self._dispatcher.detach([partition])
        del self._held[partition]
        self._metrics.leases_lost.inc()
        self._forget_lag(partition)
        if not lost.holder:
            log.warning("pool %s: lease of partition %d expired (epoch %d); stopped serving it",
                        self.worker_id, partition, consumer.epoch)
            return
        self._metrics.leases_taken.inc()
        log.error("pool %s: partition %d is held by %s (epoch %s), not by this process (epoch %d); "
                  "stopped serving it", self.worker_id, partition, lost.holder, lost.epoch, consumer.epoch)

    def _acquire(self, share: int, live: list[str]) -> None:
        """Take free partitions up to the share: one round trip finds the free leases, one more
        takes them; a lease another worker took first sends this one on to the next free ones in
        the same tick (waiting a tick instead made a take-over last one tick longer)."""
        candidates = [p for p in self._preferred(live) if p not in self._held]
        pipe = self._redis.pipeline(transaction=False)
        for partition in candidates:
            pipe.exists(self._keys.lease(partition))
        free = [p for p, taken in zip(candidates, pipe.execute(), strict=False) if not taken]
        for _ in range(ACQUIRE_ROUNDS):
            wanted, free = free[: share - len(self._held)], free[share - len(self._held):]
            if not wanted or self._stop.is_set():
                break
            sent = time.monotonic()
            attempts = self._scripts.acquire_many([(self._keys.lease(p), self._keys.epoch(p)) for p in wanted],
                                                  self.worker_id, self._settings.lease_ttl_ms)
            # attached together: the loop's first round after a start or a take-over serves every partition
            # taken here, its cold sessions' reads sent together (attached one by one, a loop woken by the
            # first could decide it alone before the next was built)
            self._dispatcher.attach(*[self._start(partition, attempt.epoch, attempt.fence,
                                                  sent + self._settings.lease_ttl_ms / 1000)
                                      for partition, attempt in zip(wanted, attempts, strict=False)
                                      if attempt.outcome is Acquired.ACQUIRED])

    def _start(self, partition: int, epoch: int, fence: str, valid_until: float) -> PartitionConsumer:
        """The consumer of a newly leased partition, held (attached to the loop by the caller)."""
        consumer = PartitionConsumer(redis=self._redis, settings=self._settings, keys=self._keys,
                                     scripts=self._scripts, metrics=self._metrics, partition=partition, epoch=epoch,
                                     fence=fence,
                                     actions=self._actions, cache=self._cache, valid_until=valid_until,
                                     heap=self._heap, seal=self._seal, snapshots=self._snapshots)
        self._held[partition] = consumer
        self._metrics.leases_acquired.inc()
        return consumer

    def _release_extras(self, share: int, live: list[str]) -> None:
        """Hand extras over in the background, so the tick keeps renewing the leases it keeps."""
        order = self._preferred(live)
        extras = self._detach(sorted(self._held, key=order.index, reverse=True)[: len(self._held) - share])
        self._releasing = [t for t in self._releasing if t.is_alive()]
        thread = threading.Thread(target=self._hand_over, args=(extras,), name="iui-release", daemon=True)
        self._releasing.append(thread)
        thread.start()

    def _release_all(self, partitions: list[int]) -> None:
        self._hand_over(self._detach(partitions))

    def _detach(self, partitions: list[int]) -> list[PartitionConsumer]:
        """Stop counting partitions as held (in the tick's thread, the only one that edits `_held`)."""
        held = [self._held.pop(partition) for partition in partitions if partition in self._held]
        return held

    def _hand_over(self, held: list[PartitionConsumer]) -> None:
        """Wait for the batches in hand, then release the leases in one round trip."""
        self._dispatcher.detach([consumer.partition for consumer in held], wait_read=True)
        try:
            released = self._scripts.release_many([(self._keys.lease(c.partition), c.fence) for c in held])
            self._metrics.leases_released.inc(sum(released))
        except TRANSIENT_ERRORS:
            pass  # the leases expire by themselves
        for consumer in held:
            self._forget_lag(consumer.partition)

    # -- lag ------------------------------------------------------------------------------

    def _forget_lag(self, partition: int) -> None:
        for gauge in (self._metrics.lag, self._metrics.queued_oldest):  # another owner reports it now
            with contextlib.suppress(KeyError):
                gauge.remove(str(partition))

    def _report_lag(self) -> None:
        if not self._held or time.monotonic() - self._lag_at < LAG_EVERY_S:
            return
        self._lag_at = time.monotonic()
        pipe = self._redis.pipeline(transaction=False)
        partitions = list(self._held)
        for partition in partitions:
            pipe.xinfo_groups(self._keys.input(partition))
        for partition, groups in zip(partitions, pipe.execute(raise_on_error=False), strict=False):
            group = None if isinstance(groups, Exception) else own_group(groups)
            if group is not None:
                lag = integer(group.get("lag") or 0) + integer(group.get("pending") or 0)
                self._metrics.lag.labels(str(partition)).set(lag)
