"""The one thread of a pool process that reads and processes every partition it holds.

Each round it gives a `step` turn to the consumers that need one (a replay of their pending
list, the reaper, the trim), then finishes one round trip (`redisio.RoundTrip`, a pipeline
without redis-py's per-command bookkeeping): the writes the previous round decided (every woken
partition's, each still one atomic fenced script, sent on the round's connection before the
next partition is decided, so Redis runs them meanwhile; the last partition's go in one write
with the read) followed by one `XREADGROUP GROUP workers owner COUNT n
[BLOCK ms] STREAMS ... > ...` over every readable partition, blocking only when the previous
round had nothing more to do; then every reply is read. So a round costs one round trip however
many partitions it served, an idle pool one blocking read per process, and an entry arriving
alone two round trips (the read that brings it, the pipeline that writes it and waits for the
next) and two socket writes. The replies of the writes are settled before the new entries are
decided; each woken partition takes its entries in turn (a busy partition cannot starve the
others), after the reads that every woken partition's cold sessions need were sent, all on one
connection (`_prefetch`: Redis runs the later partitions' reads while the earlier ones are
decided). One thread instead of one per partition: the GIL lets only one run anyway, and 64
threads contending for it cost more than they overlap.

Entries the read moves into a partition's pending list belong to that partition's owner
whoever issued the read: a partition is read only while its lease is surely held
(`PartitionConsumer.readable`), and what a read races past a lost lease (a process paused
between the check and the send) is found by the owner's next write or renewal and replayed in
order (`workers/partition.py`).

A decided write holds its entry's new stream state until its reply is settled, and a round
may decide up to `IUI_BATCH_SIZE` entries of every held partition (2,048 by default): many
states parsed again after a cache miss, or many opens of a large document, held ~300 KiB
each, so a worker with a 128 MiB cache reached 470 MiB RSS.  So a round holds decided writes
of at most `held_bytes` (an eighth of `IUI_CACHE_BYTES`, estimated as the cache estimates a
state: `PARSED_FACTOR` times the longest text argument, the reply holding the frame, of each
write); beyond that the writes held are
sent and their replies read and settled before the next partition is decided (one round trip
more, without a read).

On a Redis Cluster one XREADGROUP cannot name streams of different slots (CROSSSLOT), and
every partition is its own slot, so the loop polls instead: one non-blocking `XREADGROUP` per
readable partition, pipelined per node (`redisio.poll_groups`), then a sleep when nothing
arrived: POLL_MS after activity, doubling to POLL_MAX_MS while the pool stays idle.  That
bounds the added wake-up latency by POLL_MAX_MS and costs, per pool process, about
(held partitions) x (1000 / POLL_MAX_MS) reads a second while idle (README, Redis Cluster).

The pool's tick thread attaches and detaches consumers; `attach` wakes the loop at once, ending its
idle sleep or blocking read (`runtime/wake.py`), so a partition leased by a start or a fail-over is
replayed now, not after a block time; `detach` returns once the loop has
finished the batch in hand of those partitions (and, with `wait_read`, sent their decided
writes and finished the read in flight), so their leases can be released at once.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import TypeAlias

from redis.connection import Connection
from redis.typing import EncodableT

from ..redisio.client import ClusterClient, RedisClient, Reply, ServerClient
from ..redisio.connection import (
    Command,
    Entry,
    RoundTrip,
    SharedRoundTrip,
    integer,
    is_cluster,
    pack,
    poll_groups,
    stream_entries,
    wire,
)
from ..redisio.keys import CONSUMER, GROUP
from ..sessions.cache import PARSED_FACTOR
from .partition import PartitionConsumer
from .wake import Waker

log = logging.getLogger(__name__)
BLOCK_MS = 250  # an idle loop's read; a newly attached partition ends it at once (runtime/wake.py)
WRITES_BLOCK_MS = 5  # a read that rides behind writes blocks this long at most: a failed write is
# decided again only once the read returned, and its entry must not wait a whole BLOCK_MS
LEASE_MARGIN_S = 0.05  # a partition is read only while its lease outlasts the read by this much
TURNS_EVERY_S = 0.01  # `step` turns (replays asked by a renewal, retries, reaper, trim) at most this late
POLL_MS = 10  # Redis Cluster: the sleep between two polls of the idle partitions after activity,
POLL_MAX_MS = 50  # doubling up to this while nothing arrives
Settled: TypeAlias = tuple[PartitionConsumer, list[Reply] | BaseException]  # a consumer's write replies, or why none


class Dispatcher:
    """Serves the attached partition consumers from one thread."""

    def __init__(self, *, redis: RedisClient, held_bytes: int, batch_size: int = 32, block_ms: int = BLOCK_MS) -> None:
        self._redis = redis
        self._server: ServerClient | None = None if is_cluster(redis) else redis  # None: a cluster, polled
        self._batch_size = batch_size
        self._held_budget = held_bytes
        self._held = 0  # estimated bytes of the states the unsettled writes hold
        self._block_ms = block_ms
        self._cluster = self._server is None
        self._poll_ms = POLL_MS
        self._more = True  # the last read filled a batch (or none happened yet): do not block
        self._round: RoundTrip | None = None  # the writes sent since the last read, replies unread
        self._waiting: list[Command] = []  # decided writes not sent yet (see `_hold`)
        self._connection: Connection | None = None  # the loop's own connection (single server), taken on first use
        self._unsettled: list[tuple[PartitionConsumer, int]] = []  # their consumers, with their writes' count
        self._turns_at = 0.0  # when `_serve_turns` runs next (sooner when `_turns_due`)
        self._turns_due = True
        self._read_streams: tuple[str, ...] = ()  # the streams of the packed reads, by block time:
        self._read_packed: dict[int, bytes | tuple[EncodableT, ...]] = {}
        self._consumers: dict[int, PartitionConsumer] = {}
        self._lock = threading.Lock()
        self._reading = threading.Lock()  # held while a read is in flight
        self._stop = threading.Event()
        self._waker = Waker(redis=redis)  # `attach` ends an idle sleep or blocking read at once (runtime/wake.py)
        # not `_thread`: mypyc names the C field of an attribute after it, and `__thread` is a C keyword
        self._loop = threading.Thread(target=self._run, name="iui-dispatcher", daemon=True)

    def start(self) -> None:
        """Start the loop thread."""
        self._loop.start()

    def stop(self) -> None:
        """End the loop after the batch in hand (consumers still attached are left as they are)."""
        self._stop.set()
        self._waker.wake()
        if self._loop.is_alive():
            self._loop.join()

    def attach(self, *consumers: PartitionConsumer) -> None:
        """Serve newly leased partitions, together from the next round on (their pending entries are
        replayed first)."""
        if not consumers:
            return
        with self._lock:
            for consumer in consumers:
                self._consumers[consumer.partition] = consumer
        self._turns_due = True  # their replays come first
        self._waker.wake()  # now, not after the loop's block time

    def detach(self, partitions: list[int], *, wait_read: bool = False) -> list[PartitionConsumer]:
        """Stop serving `partitions`; returns their consumers once no batch of theirs is in hand.

        `wait_read` also waits until the writes they decided were settled and the read
        in flight returned (about one block time at most), so that their leases are released
        only after every write of theirs reached Redis and every entry that read moved into
        their pending lists is there for the next owner.
        """
        with self._lock:
            detached = [self._consumers.pop(p) for p in partitions if p in self._consumers]
        for consumer in detached:
            consumer.stop()
        for consumer in detached:
            with consumer.busy:  # the loop holds it while the consumer works
                pass
        if wait_read:
            deadline = time.monotonic() + 2 * self._block_ms / 1000 + 1
            while any(c.unsettled for c in detached) and time.monotonic() < deadline:
                time.sleep(0.002)  # sent already: the round's read returns (a block at most) and settles them
            with self._reading:
                pass
            for consumer in detached:
                with consumer.busy:
                    pass
        return detached

    def _attached(self) -> list[PartitionConsumer]:
        with self._lock:
            return list(self._consumers.values())

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                worked = False
                now = time.monotonic()
                if self._turns_due or now >= self._turns_at:  # not every round: 64 checks outweigh one write
                    self._turns_due, self._turns_at = False, now + TURNS_EVERY_S
                    worked = self._serve_turns()
                self._deliver(block=not (worked or self._more))
            except Exception:
                log.exception("dispatcher: unexpected error; continuing")
                self._stop.wait(0.1)
        if self._connection is not None and self._server is not None:
            if self._round is not None:  # writes sent, replies unread: the connection cannot be reused
                wire(self._connection).disconnect()
            self._server.connection_pool.release(self._connection)

    def _round_trip(self) -> RoundTrip:
        server = self._server
        assert server is not None, "a cluster is polled: it sends no round trip of its own"
        if self._connection is None:
            self._connection = server.connection_pool.get_connection()
        return RoundTrip(server, self._connection)

    def _serve_turns(self) -> bool:
        """A `step` for each consumer that needs one; True if any read entries (more may wait)."""
        worked = False
        now = time.monotonic()
        for consumer in self._attached():
            if self._stop.is_set():
                break
            if not consumer.ready(now):
                continue
            with consumer.busy:
                if not consumer.stopping:
                    worked = consumer.step() or worked
        return worked

    def _deliver(self, *, block: bool) -> None:
        """Send the decided writes and read new entries (blocking if `block`); settle, then hand out."""
        now, epoch = time.monotonic(), self._waker.epoch()
        block_ms = (WRITES_BLOCK_MS if self._unsettled else self._block_ms) if block else 0
        until = now + block_ms / 1000 + LEASE_MARGIN_S
        readers = {c.input_key: c for c in self._attached() if c.readable(now, until)}
        if not readers and not self._unsettled:
            self._more = False
            if block:
                self._waker.sleep(block_ms / 1000)
            return
        if block_ms == self._block_ms and not self._cluster and self._round is None and not self._blocking(epoch):
            block_ms = 0  # a partition was attached meanwhile: its replay comes first
        with self._reading:
            try:
                settled, replies = self._exchange(readers, block_ms)
            finally:
                self._waker.unblocked()
        self._settle(settled)
        self._more = False
        taken = [(readers[key], entries) for key, entries in replies if key in readers and entries]
        shared = self._prefetch(taken)
        try:
            for consumer, entries in taken:
                with consumer.busy:
                    if not consumer.stopping:  # else left pending: the next owner (or this one's replay) takes them
                        self._take(consumer, entries)
        finally:
            if shared is not None:
                self._after_prefetch(taken, shared)

    def _prefetch(self, taken: list[tuple[PartitionConsumer, list[Entry]]]) -> SharedRoundTrip | None:
        """Send the read-ahead of every partition of the round before the first is decided, all on
        one connection in the order the partitions are taken: Redis runs the later partitions'
        reads (a cold session's stored generation) while this thread decides the earlier ones'
        entries, where each partition waited for its own read in turn.  Not on a cluster (its reads
        are made at once, one pipeline per node), nor for one partition (nothing to overlap)."""
        server = self._server
        if server is None or len(taken) < 2:
            return None
        shared = SharedRoundTrip(server)
        for consumer, entries in taken:
            with consumer.busy:
                if not consumer.stopping:
                    consumer.prefetch(entries, shared)
        return shared

    def _after_prefetch(self, taken: list[tuple[PartitionConsumer, list[Entry]]], shared: SharedRoundTrip) -> None:
        """Forget what a partition that stopped meanwhile never read, then end the shared round trip
        (its connection closed if replies were left unread)."""
        for consumer, _ in taken:
            with consumer.busy:
                consumer.abandon_prefetch()
        with contextlib.suppress(Exception):  # a connection that fails to close is dropped all the same
            shared.close()

    def _blocking(self, epoch: int) -> bool:
        """Register the coming blocking read with the waker (the loop's client id, asked on its own
        connection: one round trip per idle block time); False when the loop was woken since
        `epoch` and must not block.  Without an id (a server that refuses `CLIENT ID`, a broken
        connection) the read blocks as it always did: only an attach then waits for it."""
        trip = self._round_trip()
        trip.send([("CLIENT", "ID")])
        try:
            client = integer(trip.finish()[0])
        except Exception:  # whatever it was, the read that follows meets it again and says so
            return self._waker.epoch() == epoch
        return self._waker.blocking(client, epoch)

    def _take(self, consumer: PartitionConsumer, entries: list[Entry]) -> None:
        """Hand a woken partition its entries (holding its `busy` lock) and keep its decided writes."""
        self._flush()
        if self._held > self._held_budget:
            self._settle(self._exchange({}, 0)[0])  # the round holds enough: confirm it first
        if consumer.take(entries, defer=not self._cluster) is not None:
            self._hold(consumer)
        self._turns_due = self._turns_due or consumer.replaying
        self._more = self._more or len(entries) >= self._batch_size

    def _settle(self, settled: list[Settled]) -> None:
        """Hand each consumer the replies of its writes (or the error that kept them from Redis)."""
        for written, results in settled:
            with written.busy:
                written.settle(results)
            self._turns_due = self._turns_due or written.replaying

    def _hold(self, consumer: PartitionConsumer) -> None:
        """Keep a consumer's decided writes for the next send (`_flush`, else the round's read)."""
        writes = consumer.commands()
        self._waiting.extend(writes)
        self._unsettled.append((consumer, len(writes)))
        # a commit carries its frame twice (the frame and the reply that holds it): count the larger
        self._held += PARSED_FACTOR * sum(max((len(arg) for arg in write if type(arg) is str), default=0)
                                          for write in writes)

    def _flush(self) -> None:
        """Before the next partition is decided, send the writes held: Redis runs them (and
        answers their callers) meanwhile.  Their replies are read, and settled, after the round's
        read.  Not held back to share one socket write: that saved a write and a Redis wake-up
        per partition of a burst, but made every entry of a round wait for its last decision
        (docs/decisions.md, "A partition's writes are sent before the next is decided")."""
        if not self._waiting:
            return
        if self._round is None:
            self._round = self._round_trip()
        self._round.send(self._waiting)  # a failed send is raised by finish and settles every consumer
        self._waiting = []

    def _exchange(self, readers: dict[str, PartitionConsumer],
                  block_ms: int) -> tuple[list[Settled], list[tuple[str, list[Entry]]]]:
        """Finish the round trip: the read (blocking up to `block_ms`, 0: not) behind the writes
        already sent; (consumer, replies) and (stream, entries)."""
        if is_cluster(self._redis):
            return [], self._poll(self._redis, readers, block_ms > 0)
        trip, self._round = self._round or self._round_trip(), None
        counts, self._unsettled, self._held = self._unsettled, [], 0
        writes, self._waiting = self._waiting, []
        trip.send([*writes, self._read_command(tuple(readers), block_ms)] if readers else writes)
        try:
            results = trip.finish()
        except Exception as error:
            log.warning("dispatcher: round trip failed (%s)", error)
            for consumer in readers.values():
                consumer.reset()
            self._turns_due = True
            self._stop.wait(self._block_ms / 1000)
            return [(consumer, error) for consumer, _ in counts], []
        settled: list[Settled] = []
        at = 0
        for consumer, count in counts:
            settled.append((consumer, results[at:at + count]))
            at += count
        return settled, self._entries(results[at], readers) if readers else []

    def _read_command(self, streams: tuple[str, ...], block_ms: int) -> bytes | tuple[EncodableT, ...]:
        """The round's XREADGROUP, packed once for as long as the readable partitions and the block stay."""
        if streams != self._read_streams:
            self._read_streams, self._read_packed = streams, {}
        packed = self._read_packed.get(block_ms)
        if packed is None:
            blocking = ("BLOCK", block_ms) if block_ms else ()
            packed = self._read_packed[block_ms] = pack(
                ("XREADGROUP", "GROUP", GROUP, CONSUMER, "COUNT", self._batch_size, *blocking,
                 "STREAMS", *streams, *(">",) * len(streams)))
        return packed

    def _entries(self, reply: Reply, readers: dict[str, PartitionConsumer]) -> list[tuple[str, list[Entry]]]:
        """(stream key, entries) pairs of a raw XREADGROUP reply; a failed read makes every reader replay."""
        if isinstance(reply, BaseException):
            log.warning("dispatcher: read failed (%s)", reply)
            for consumer in readers.values():
                consumer.reset()  # the group may be gone (a Redis restart): created again by the replay
            self._turns_due = True
            return []
        return stream_entries(reply)

    def _poll(self, cluster: ClusterClient, readers: dict[str, PartitionConsumer],
              block: bool) -> list[tuple[str, list[Entry]]]:
        """Redis Cluster: one non-blocking XREADGROUP per partition (pipelined per node); sleep if none had any."""
        replies = poll_groups(cluster, GROUP, CONSUMER, list(readers), self._batch_size)
        delivered = []
        for key, reply in replies.items():
            if isinstance(reply, BaseException):
                readers[key].reset()
                self._turns_due = True
            elif reply:
                delivered.append((key, reply))
        if delivered:
            self._poll_ms = POLL_MS
        elif block:
            self._waker.sleep(self._poll_ms / 1000)
            self._poll_ms = min(POLL_MAX_MS, self._poll_ms * 2)
        return delivered
