"""Redis losing its last writes must not hand one fence to two owners.

A Redis crash with `appendfsync everysec` can lose a lease acquisition together with its
epoch counter update.  The next acquisition must still get a fence the lost owner does not
hold: epochs are at least the Redis clock in milliseconds and above the counter, and every
fenced script compares the whole fence (`<epoch>:<owner>`).  The rollback is reproduced
exactly: the lease key deleted and the counter set back to its value before the lost
acquisition, which is what Redis holds after replaying an AOF that ends before them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import FAST, Runtime, cursor_args, example
from workers.redisio.keys import CONSUMER, GROUP
from workers.redisio.scripts import NEW, Acquired, LostLease, Renewal, Scripts
from workers.wire.errors import Fenced

pytestmark = [pytest.mark.integration, pytest.mark.slow]
OPEN, PATCH = "intelligent_ui_open", "intelligent_ui_patch"
ONE_PARTITION = {**FAST, "partitions": 1}


def _roll_back(rt: Runtime, counter: bytes) -> None:
    """What Redis holds after losing the last acquisition: no lease, the counter of before."""
    keys = rt.client.keys
    rt.redis.delete(keys.lease(0))
    rt.redis.set(keys.epoch(0), counter)


def test_an_acquisition_after_a_lost_one_never_repeats_its_fence(runtime: Runtime) -> None:
    keys = runtime.client.keys
    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=1000, frame_log_max=100)
    first = scripts.acquire(keys.lease(0), keys.epoch(0), "a", 60_000)
    scripts.release(keys.lease(0), first.fence)
    before = runtime.redis.get(keys.epoch(0))
    lost = scripts.acquire(keys.lease(0), keys.epoch(0), "b", 60_000)
    _roll_back(runtime, before)
    time.sleep(0.002)  # a restart takes longer than a millisecond
    again = scripts.acquire(keys.lease(0), keys.epoch(0), "b", 60_000)  # even the same owner id
    assert again.outcome is Acquired.ACQUIRED and again.epoch > lost.epoch and again.fence != lost.fence
    runtime.redis.xgroup_create(keys.input(0), GROUP, id="0", mkstream=True)
    with pytest.raises(Fenced):
        scripts.read(keys.lease(0), keys.input(0), lost.fence, CONSUMER, 10, NEW)
    assert scripts.renew([(keys.lease(0), lost.fence, ""), (keys.lease(0), again.fence, "")], 1000) == [
        LostLease("b", str(again.epoch)), Renewal(pending=0)]


def test_equal_epochs_of_two_owners_are_two_fences(runtime: Runtime) -> None:
    keys = runtime.client.keys
    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=1000, frame_log_max=100)
    mine = scripts.acquire(keys.lease(0), keys.epoch(0), "mine", 60_000)
    runtime.redis.hset(keys.lease(0), mapping={"owner": "other", "fence": f"{mine.epoch}:other"})
    runtime.redis.xgroup_create(keys.input(0), GROUP, id="0", mkstream=True)
    with pytest.raises(Fenced):
        scripts.read(keys.lease(0), keys.input(0), mine.fence, CONSUMER, 10, NEW)
    assert not scripts.release(keys.lease(0), mine.fence)


def _worker(rt: Runtime, worker_id: str, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "IUI_REDIS_URL": rt.redis_url, "IUI_WORKER_ID": worker_id,
           **{f"IUI_{k.upper()}": str(v) for k, v in ONE_PARTITION.items()}}
    return subprocess.Popen([sys.executable, "-m", "workers.cli", "worker"], env=env,
                            stdout=subprocess.DEVNULL, stderr=log.open("wb"))


def _owner(rt: Runtime) -> str:
    owner = rt.redis.hget(rt.client.keys.lease(0), "owner")
    return owner.decode() if owner else ""


def _wait(predicate: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def test_a_paused_owner_whose_acquisition_redis_lost_never_serves_beside_the_new_owner(
        runtime: Runtime, tmp_path: Path) -> None:
    runtime.configure(**ONE_PARTITION)
    ttl = runtime.settings.lease_ttl_ms / 1000
    logs = {name: tmp_path / f"{name}.log" for name in ("a", "b", "c")}
    workers = {"a": _worker(runtime, "a", logs["a"])}
    try:
        _wait(lambda: _owner(runtime) == "a", timeout=10)
        frame = runtime.call("r", OPEN, {"document": example("stream-initial.json")}, call="open-r")["result"]["frame"]
        workers["a"].send_signal(signal.SIGSTOP)  # a stays paused from here on
        counter = runtime.redis.get(runtime.client.keys.epoch(0))
        workers["b"] = _worker(runtime, "b", logs["b"])
        _wait(lambda: _owner(runtime) == "b", timeout=2 * ttl + 10)
        workers["b"].send_signal(signal.SIGSTOP)  # paused over the "restart" below
        _roll_back(runtime, counter)  # Redis lost b's acquisition and its epoch
        workers["c"] = _worker(runtime, "c", logs["c"])
        _wait(lambda: _owner(runtime) == "c", timeout=10)
        workers["b"].send_signal(signal.SIGCONT)  # b still believes it holds the partition
        requests = []
        for i in range(40):  # cursors precomputed: a second owner shows as cursor_conflict or a second reply
            mutation = {"type": "update", "nodeId": "summary-card", "props": {"title": f"T{i}", "gap": "sm"}}
            args = {**cursor_args(frame), "baseRevision": frame["revision"] + i, "mutation": mutation}
            requests.append(runtime.client.submit("r", PATCH, args, call=f"r-{i}"))
            time.sleep(0.05)
        replies = [runtime.client.reply("r", request, timeout=2 * ttl + 5) for request in requests]
        assert [reply.get("error", {}).get("code") for reply in replies] == [None] * len(requests)
        time.sleep(2 * runtime.settings.lease_renew_ms / 1000)
        assert all(runtime.client.peek_reply("r", request) is None for request in requests)  # one reply each
        revisions = [f["revision"] for _, f in runtime.client.frame_log("r")]
        assert revisions == list(range(len(requests) + 1))
        assert _owner(runtime) == "c"
    finally:
        for process in workers.values():
            process.send_signal(signal.SIGCONT)
            process.kill()
            process.wait()
    assert "partition 0 is held by c" in logs["b"].read_text("utf-8")
