"""The one thread of a pool process that reads and processes every partition it holds.

While every held partition is idle it sends one blocking `XREAD` over all their input
streams, from the last id each one saw (a plain XREAD moves nothing into a pending list, so
a paused-then-resumed process cannot steal entries; the fenced read script does the real
delivery).  When entries arrive, each woken partition takes one batch in turn, so a busy
partition cannot starve the others.  One thread instead of one per partition: the GIL lets
only one run anyway, and 64 threads contending for it cost more than they overlap.

On a Redis Cluster one XREAD cannot name streams of different slots (CROSSSLOT), and every
partition is its own slot, so the loop polls instead: one non-blocking `XREAD COUNT 1` per
idle partition, pipelined per node (`redisio.poll_streams`), then a sleep when nothing
arrived: POLL_MS after activity, doubling to POLL_MAX_MS while the pool stays idle.  That
bounds the added wake-up latency by POLL_MAX_MS and costs, per pool process, about
(held partitions) x (1000 / POLL_MAX_MS) XREADs a second while idle (README, Redis Cluster).

The pool's tick thread attaches and detaches consumers; `detach` returns once the loop has
finished the batch in hand of those partitions, so their leases can be released at once.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from .partition import PartitionConsumer
from .redisio import is_cluster, poll_streams

log = logging.getLogger(__name__)
BLOCK_MS = 250  # bounds how long a newly attached partition may wait for the loop
POLL_MS = 10  # Redis Cluster: the sleep between two polls of the idle partitions after activity,
POLL_MAX_MS = 50  # doubling up to this while nothing arrives


class Dispatcher:
    """Serves the attached partition consumers from one thread."""

    def __init__(self, *, redis: Any, block_ms: int = BLOCK_MS) -> None:
        self._redis = redis
        self._block_ms = block_ms
        self._cluster = is_cluster(redis)
        self._poll_ms = POLL_MS
        self._consumers: dict[int, PartitionConsumer] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="iui-dispatcher", daemon=True)

    def start(self) -> None:
        """Start the loop thread."""
        self._thread.start()

    def stop(self) -> None:
        """End the loop after the batch in hand (consumers still attached are left as they are)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def attach(self, consumer: PartitionConsumer) -> None:
        """Serve a newly leased partition (its pending entries are replayed first)."""
        with self._lock:
            self._consumers[consumer.partition] = consumer

    def detach(self, partitions: list[int]) -> list[PartitionConsumer]:
        """Stop serving `partitions`; returns their consumers once no batch of theirs is in hand."""
        with self._lock:
            detached = [self._consumers.pop(p) for p in partitions if p in self._consumers]
        for consumer in detached:
            consumer.stop()
            with consumer.busy:  # the loop holds it while the consumer works
                pass
        return detached

    def _attached(self) -> list[PartitionConsumer]:
        with self._lock:
            return list(self._consumers.values())

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if not self._serve_ready():
                    self._wait()
            except Exception:
                log.exception("dispatcher: unexpected error; continuing")
                self._stop.wait(0.1)

    def _serve_ready(self) -> bool:
        """One batch for each ready partition; True if any took entries (more may be waiting)."""
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

    def _wait(self) -> None:
        """Block until an entry arrives on any idle partition (or the block time passes)."""
        idle = [c for c in self._attached() if c.cursor is not None and not c.stopping]
        if not idle:
            self._stop.wait(self._block_ms / 1000)
            return
        if self._cluster:
            self._poll(idle)
            return
        streams = {c.input_key: c.cursor for c in idle}
        by_stream = {c.input_key: c for c in idle}
        try:
            reply = self._redis.xread(streams, count=1, block=self._block_ms)
        except Exception as error:
            log.warning("dispatcher: blocking read failed (%s)", error)
            for consumer in idle:
                consumer.wake()
            self._stop.wait(self._block_ms / 1000)
            return
        pairs = reply.items() if isinstance(reply, dict) else (reply or ())  # RESP3 answers a map
        for stream, _ in pairs:
            key = stream.decode() if isinstance(stream, bytes) else str(stream)
            if key in by_stream:
                by_stream[key].wake()

    def _poll(self, idle: list[PartitionConsumer]) -> None:
        """Redis Cluster: one non-blocking XREAD per idle partition (pipelined per node), then sleep if none woke."""
        replies = poll_streams(self._redis, {c.input_key: c.cursor for c in idle if c.cursor is not None})
        woke = False
        for consumer in idle:
            if replies.get(consumer.input_key):  # entries, or an error the consumer meets on its own read
                consumer.wake()
                woke = True
        if woke:
            self._poll_ms = POLL_MS
        else:
            self._stop.wait(self._poll_ms / 1000)
            self._poll_ms = min(POLL_MAX_MS, self._poll_ms * 2)
