"""A paused-then-resumed worker (SIGSTOP longer than the lease, then SIGCONT) under load.

The resumed process still believes it owns the partition until its pool notices the lost
lease.  Whatever it does in that window must not move entries into the partition's pending
list: the real owner would never replay them (no reply, or a reply out of order).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from tests.integration.conftest import FAST, Runtime, cursor_args, example
from workers.errors import Fenced
from workers.keys import GROUP, consumer_of
from workers.scripts import NEW, PENDING, Scripts

pytestmark = [pytest.mark.integration, pytest.mark.slow]
OPEN, PATCH = "intelligent_ui_open", "intelligent_ui_patch"
ONE_PARTITION = {**FAST, "partitions": 1}
MAX_PATCHES = 250  # per session: a generation holds 256 frames


def _worker(redis_url: str, worker_id: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "IUI_REDIS_URL": redis_url, "IUI_WORKER_ID": worker_id,
           **{f"IUI_{k.upper()}": str(v) for k, v in ONE_PARTITION.items()}}
    return subprocess.Popen([sys.executable, "-m", "workers.cli", "worker"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _owner(rt: Runtime) -> str:
    owner = rt.redis.hget(rt.client.keys.lease(0), "owner")
    return owner.decode() if owner else ""


def _wait(predicate: Any, timeout: float) -> float:
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout, "condition not reached in time"
        time.sleep(0.02)
    return time.monotonic() - started


class Feeder:
    """Round-robin patches over several sessions, cursors precomputed (order is checked by CAS)."""

    def __init__(self, rt: Runtime, sessions: list[str]) -> None:
        self.rt = rt
        self.frames = {s: self._open(s) for s in sessions}
        self.requests: dict[str, list[str]] = {s: [] for s in sessions}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _open(self, session: str) -> dict[str, Any]:
        reply = self.rt.call(session, OPEN, {"document": example("stream-initial.json")}, call=f"open-{session}")
        assert reply["ok"], reply
        return dict(reply["result"]["frame"])

    def _run(self) -> None:
        while not self._stop.is_set():
            for session, frame in self.frames.items():
                i = len(self.requests[session])
                if i >= MAX_PATCHES:
                    continue
                mutation = {"type": "update", "nodeId": "summary-card", "props": {"title": f"T{i}", "gap": "sm"}}
                args = {**cursor_args(frame), "baseRevision": frame["revision"] + i, "mutation": mutation}
                self.requests[session].append(self.rt.client.submit(session, PATCH, args, call=f"{session}-{i}"))
            time.sleep(0.4)  # longer than a blocking read: the owner is often idle when paused

    def __enter__(self) -> Feeder:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()


def test_a_fenced_read_moves_nothing_into_the_pending_list(runtime: Runtime) -> None:
    keys = runtime.client.keys
    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=1000, frame_log_max=100)
    zombie = scripts.acquire(keys.lease(0), keys.epoch(0), "zombie", 100)
    runtime.redis.xgroup_create(keys.input(0), GROUP, id="0", mkstream=True)
    first = runtime.redis.xadd(keys.input(0), {"session": "s", "n": "1"}).decode()
    read = scripts.read(keys.lease(0), keys.input(0), zombie.epoch, consumer_of(0), 10, NEW)
    assert [entry_id for entry_id, _ in read.entries] == [first] and read.cursor == first
    time.sleep(0.2)  # the zombie stalls past its lease; a successor takes the partition
    successor = scripts.acquire(keys.lease(0), keys.epoch(0), "successor", 10_000)
    second = runtime.redis.xadd(keys.input(0), {"session": "s", "n": "2"}).decode()
    with pytest.raises(Fenced):
        scripts.read(keys.lease(0), keys.input(0), zombie.epoch, consumer_of(0), 10, NEW)
    assert runtime.redis.xpending(keys.input(0), GROUP)["pending"] == 1  # only what it read while it owned
    replay = scripts.read(keys.lease(0), keys.input(0), successor.epoch, consumer_of(0), 10, PENDING)
    assert [entry_id for entry_id, _ in replay.entries] == [first] and replay.deliveries == {first: 2}
    fresh = scripts.read(keys.lease(0), keys.input(0), successor.epoch, consumer_of(0), 10, NEW)
    assert [(entry_id, fields) for entry_id, fields in fresh.entries] == [(second, {b"session": b"s", b"n": b"2"})]
    idle = scripts.read(keys.lease(0), keys.input(0), successor.epoch, consumer_of(0), 10, NEW)
    assert idle.entries == [] and idle.cursor == second  # a plain XREAD from here wakes on the next entry


def test_a_resumed_paused_worker_leaves_nothing_pending_and_every_call_in_order(runtime: Runtime) -> None:
    runtime.configure(**ONE_PARTITION)
    ttl = runtime.settings.lease_ttl_ms / 1000
    workers = {name: _worker(runtime.redis_url, name) for name in ("a", "b")}
    try:
        _wait(lambda: _owner(runtime) in workers, timeout=10)
        sessions = [f"pause-{n}" for n in range(8)]
        with Feeder(runtime, sessions) as feeder:
            for _ in range(5):
                victim = _owner(runtime)
                workers[victim].send_signal(signal.SIGSTOP)
                _wait(lambda: _owner(runtime) not in ("", victim), timeout=2 * ttl + 1)  # noqa: B023 - called at once
                time.sleep(1.5 * ttl)  # the other worker serves while the victim stays paused
                workers[victim].send_signal(signal.SIGCONT)
                time.sleep(ttl)  # the resumed victim runs into its lost lease under load
        # Nothing stays pending while the partition has a live owner (bounded by 2 x TTL).
        _wait(lambda: runtime.redis.xpending(runtime.client.keys.input(0), GROUP)["pending"] == 0,
              timeout=2 * ttl)
        for session in sessions:
            for request in feeder.requests[session]:
                reply = runtime.client.reply(session, request, timeout=2 * ttl)
                assert reply["ok"], reply  # applied, and in XADD order (cursors were precomputed)
                assert runtime.client.peek_reply(session, request) is None  # exactly one reply
            frames = [frame for _, frame in runtime.client.frame_log(session)]
            count = len(feeder.requests[session])
            assert [f["revision"] for f in frames] == list(range(count + 1))
    finally:
        for process in workers.values():
            process.send_signal(signal.SIGCONT)
            process.kill()
            process.wait()


def test_epochs_after_a_restart_that_lost_the_counter_exceed_every_earlier_epoch(runtime: Runtime) -> None:
    keys = runtime.client.keys
    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=1000, frame_log_max=100)
    before = scripts.acquire(keys.lease(0), keys.epoch(0), "before", 10_000)
    for _ in range(3):
        scripts.release(keys.lease(0), scripts.acquire(keys.lease(0), keys.epoch(0), "x", 10_000).epoch)
    runtime.redis.flushall()  # what a restart without persistence leaves
    time.sleep(0.01)
    after = scripts.acquire(keys.lease(0), keys.epoch(0), "after", 10_000)
    assert after.epoch > before.epoch + 3
    runtime.redis.xgroup_create(keys.input(0), GROUP, id="0", mkstream=True)
    with pytest.raises(Fenced):
        scripts.read(keys.lease(0), keys.input(0), before.epoch + 3, consumer_of(0), 10, NEW)
