"""A paused-then-resumed worker (SIGSTOP longer than the lease, then SIGCONT) under load.

The resumed process still believes it owns the partition until its pool notices the lost
lease.  A read it sends in that window can move entries into the partition's pending list
after the real owner replayed it: the owner must still apply them, before anything newer
(its next write is refused while an older entry is pending) and even when nothing newer
arrives (its lease renewal counts the pending entries).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from tests.integration.conftest import FAST, Runtime, cursor_args, example
from workers.redisio.keys import CONSUMER, GROUP
from workers.redisio.scripts import NEW, PENDING, Scripts
from workers.runtime.partition import PartitionConsumer
from workers.wire.errors import Fenced

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
    read = scripts.read(keys.lease(0), keys.input(0), zombie.fence, CONSUMER, 10, NEW)
    assert [entry_id for entry_id, _ in read.entries] == [first] and read.cursor == first
    time.sleep(0.2)  # the zombie stalls past its lease; a successor takes the partition
    successor = scripts.acquire(keys.lease(0), keys.epoch(0), "successor", 10_000)
    second = runtime.redis.xadd(keys.input(0), {"session": "s", "n": "2"}).decode()
    with pytest.raises(Fenced):
        scripts.read(keys.lease(0), keys.input(0), zombie.fence, CONSUMER, 10, NEW)
    assert runtime.redis.xpending(keys.input(0), GROUP)["pending"] == 1  # only what it read while it owned
    replay = scripts.read(keys.lease(0), keys.input(0), successor.fence, CONSUMER, 10, PENDING)
    assert [entry_id for entry_id, _ in replay.entries] == [first] and replay.deliveries == {first: 2}
    fresh = scripts.read(keys.lease(0), keys.input(0), successor.fence, CONSUMER, 10, NEW)
    assert [(entry_id, fields) for entry_id, fields in fresh.entries] == [(second, {b"session": b"s", b"n": b"2"})]
    idle = scripts.read(keys.lease(0), keys.input(0), successor.fence, CONSUMER, 10, NEW)
    assert idle.entries == [] and idle.cursor == second  # a plain XREAD from here wakes on the next entry


def _patch(rt: Runtime, frame: dict[str, Any], i: int) -> tuple[str, dict[str, Any]]:
    mutation = {"type": "update", "nodeId": "summary-card", "props": {"title": f"T{i}", "gap": "sm"}}
    return PATCH, {**cursor_args(frame), "baseRevision": frame["revision"] + i, "mutation": mutation}


def _delivered(rt: Runtime, stream: str, count: int) -> list[tuple[Any, Any]]:
    """What one XREADGROUP moves into the pending list (as the dispatcher, or a zombie, reads)."""
    reply = rt.redis.xreadgroup(GROUP, CONSUMER, {stream: ">"}, count=count)
    return list(reply[0][1]) if reply else []


def test_an_entry_a_zombie_moved_to_the_pending_list_is_applied_before_newer_ones(runtime: Runtime) -> None:
    runtime.configure(**ONE_PARTITION)
    keys, stream = runtime.client.keys, runtime.client.keys.input(0)
    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=60_000, frame_log_max=100)
    lease = scripts.acquire(keys.lease(0), keys.epoch(0), "owner", 60_000)
    owner = PartitionConsumer(redis=runtime.redis, settings=runtime.settings, keys=keys, scripts=scripts,
                              metrics=runtime.metrics, partition=0, epoch=lease.epoch, fence=lease.fence)
    owner.step()  # creates the group, replays nothing
    opened = runtime.client.submit("z", OPEN, {"document": example("stream-initial.json")}, call="open-z")
    owner.take(_delivered(runtime, stream, 10))
    frame = runtime.client.reply("z", opened, timeout=1)["result"]["frame"]
    first, second = (runtime.client.submit("z", *_patch(runtime, frame, i), call=f"z-{i}") for i in range(2))
    assert len(_delivered(runtime, stream, 1)) == 1  # a resumed zombie's read takes the first patch
    owner.take(_delivered(runtime, stream, 10))  # the owner's next read brings the second one
    assert runtime.client.peek_reply("z", second) is None  # refused: the first one is still pending
    assert runtime.redis.xpending(stream, GROUP)["pending"] == 2
    assert owner.ready(time.monotonic()) and not owner.readable(time.monotonic(), time.monotonic())  # it replays first
    assert owner.step()
    assert [runtime.client.reply("z", r, timeout=1)["ok"] for r in (first, second)] == [True, True]
    assert [f["revision"] for _, f in runtime.client.frame_log("z")] == [0, 1, 2]
    assert runtime.redis.xpending(stream, GROUP)["pending"] == 0


def test_an_entry_a_zombie_moved_to_the_pending_list_is_applied_when_nothing_newer_arrives(
        runtime: Runtime) -> None:
    runtime.configure(**ONE_PARTITION).start(1)
    runtime.wait_for_owners()
    stream = runtime.client.keys.input(0)
    reply = runtime.call("y", OPEN, {"document": example("stream-initial.json")}, call="open-y")
    tool, arguments = _patch(runtime, reply["result"]["frame"], 0)
    pipe = runtime.redis.pipeline(transaction=True)  # the zombie's read lands before the owner's
    pipe.xadd(stream, {"session": "y", "request": "zombie-read", "kind": "tool", "name": tool, "call": "y-0",
                       "body": json.dumps(arguments)})
    pipe.xreadgroup(GROUP, CONSUMER, {stream: ">"}, count=1)
    assert pipe.execute()[1]
    renew_s = runtime.settings.lease_renew_ms / 1000
    assert runtime.client.reply("y", "zombie-read", timeout=2 * renew_s + 1)["ok"]  # found by the renewal
    assert runtime.redis.xpending(stream, GROUP)["pending"] == 0


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
        scripts.release(keys.lease(0), scripts.acquire(keys.lease(0), keys.epoch(0), "x", 10_000).fence)
    runtime.redis.flushall()  # what a restart without persistence leaves
    time.sleep(0.01)
    after = scripts.acquire(keys.lease(0), keys.epoch(0), "after", 10_000)
    assert after.epoch > before.epoch + 3
    runtime.redis.xgroup_create(keys.input(0), GROUP, id="0", mkstream=True)
    with pytest.raises(Fenced):
        scripts.read(keys.lease(0), keys.input(0), f"{before.epoch + 3}:x", CONSUMER, 10, NEW)
