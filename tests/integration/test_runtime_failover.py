"""Ordering, crash fail-over, restart and pub/sub loss with real worker processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Any

import pytest

from tests.integration.conftest import FAST, Runtime, cursor_args, example
from workers.redisio.local_server import free_port

pytestmark = pytest.mark.integration
OPEN, PATCH = "intelligent_ui_open", "intelligent_ui_patch"


def update(i: int) -> dict[str, Any]:
    return {"type": "update", "nodeId": "summary-card", "props": {"title": f"Summary {i}", "gap": "sm"}}


def open_session(rt: Runtime, session: str) -> dict[str, Any]:
    reply = rt.call(session, OPEN, {"document": example("stream-initial.json")}, call=f"open-{session}")
    assert reply["ok"], reply
    return reply["result"]["frame"]


def logged(rt: Runtime, session: str) -> list[dict[str, Any]]:
    return [frame for _, frame in rt.client.frame_log(session)]


def assert_contiguous(rt: Runtime, session: str, patches: int) -> None:
    frames = logged(rt, session)
    assert [f["seq"] for f in frames] == list(range(1, patches + 2))
    assert [f["revision"] for f in frames] == list(range(0, patches + 1))


def produce(rt: Runtime, session: str, frame: dict[str, Any], count: int, pace: float,
            requests: list[str]) -> None:
    """Submit `count` patches with precomputed cursors, without waiting for replies."""
    for i in range(count):
        args = {**cursor_args(frame), "baseRevision": frame["revision"] + i, "mutation": update(i)}
        requests.append(rt.client.submit(session, PATCH, args, call=f"{session}-patch-{i}"))
        if pace:
            time.sleep(pace)


def collect(rt: Runtime, session: str, requests: list[str]) -> None:
    """Every request has exactly one reply, and it accepted the patch."""
    for request in requests:
        reply = rt.client.reply(session, request, timeout=20)
        assert reply["ok"], reply
        assert rt.client.peek_reply(session, request) is None  # exactly one reply


def test_concurrent_producers_on_many_sessions_keep_each_session_contiguous(runtime: Runtime) -> None:
    runtime.start(2)
    sessions = [f"order-{n}" for n in range(12)]
    frames = {s: open_session(runtime, s) for s in sessions}
    requests: dict[str, list[str]] = {s: [] for s in sessions}
    threads = [threading.Thread(target=produce, args=(runtime, s, frames[s], 25, 0, requests[s])) for s in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for session in sessions:
        collect(runtime, session, requests[session])
        assert_contiguous(runtime, session, 25)


def _worker_process(redis_url: str, worker_id: str, metrics_port: int = 0) -> subprocess.Popen:
    env = {**os.environ, "IUI_REDIS_URL": redis_url, "IUI_WORKER_ID": worker_id, "IUI_METRICS_PORT": str(metrics_port),
           "IUI_METRICS_ADDR": "127.0.0.1", **{f"IUI_{k.upper()}": str(v) for k, v in FAST.items()}}
    return subprocess.Popen([sys.executable, "-m", "workers.cli", "worker"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _owners(rt: Runtime) -> set[str]:
    owners = set()
    for p in range(rt.settings.partitions):
        owner = rt.redis.hget(rt.client.keys.lease(p), "owner")
        owners.add(owner.decode() if owner else "")
    return owners


def _wait(predicate: Any, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


@pytest.mark.slow
def test_a_worker_killed_under_load_is_replaced_without_loss_or_duplicates(runtime: Runtime) -> None:
    victim = _worker_process(runtime.redis_url, "victim")
    survivor = _worker_process(runtime.redis_url, "survivor")
    try:
        _wait(lambda: _owners(runtime) == {"victim", "survivor"})
        sessions = [f"crash-{n}" for n in range(8)]
        frames = {s: open_session(runtime, s) for s in sessions}
        requests: dict[str, list[str]] = {s: [] for s in sessions}
        threads = [threading.Thread(target=produce, args=(runtime, s, frames[s], 60, 0.01, requests[s]))
                   for s in sessions]
        for thread in threads:
            thread.start()
        time.sleep(0.3)
        held = {p for p in range(runtime.settings.partitions)
                if runtime.redis.hget(runtime.client.keys.lease(p), "owner") == b"victim"}
        assert any(runtime.client.partition(s) in held for s in sessions)  # the victim has work in hand
        victim.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        _wait(lambda: _owners(runtime) == {"survivor"})
        # The README's bound: TTL + one pool tick + the acquisition round trips, below 2 x TTL.
        assert time.monotonic() - killed_at <= 2 * runtime.settings.lease_ttl_ms / 1000
        for thread in threads:
            thread.join()
        for session in sessions:
            collect(runtime, session, requests[session])
            assert_contiguous(runtime, session, 60)
    finally:
        for process in (victim, survivor):
            process.kill()
            process.wait()


@pytest.mark.slow
def test_sigterm_hands_the_partitions_over_at_once(runtime: Runtime) -> None:
    port = free_port()
    first = _worker_process(runtime.redis_url, "first", metrics_port=port)
    try:
        _wait(lambda: _owners(runtime) == {"first"})
        _wait(lambda: "iui_leases_held 4.0" in _scrape(port))
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=10) == 0
        assert _owners(runtime) == {""}  # released, not left to expire
    finally:
        first.kill()
        first.wait()


def _scrape(port: int) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as response:
            return response.read().decode()
    except OSError:
        return ""


def test_a_generation_continues_after_every_worker_restarts(runtime: Runtime) -> None:
    runtime.start(2)
    frame = open_session(runtime, "restart")
    frame = runtime.call("restart", PATCH, {**cursor_args(frame), "mutation": update(1)}, call="p1")["result"]["frame"]
    runtime.stop()
    fresh = Runtime(runtime.redis_url).start(1)
    try:
        reply = fresh.call("restart", PATCH, {**cursor_args(frame), "mutation": update(2)}, call="p2")
        assert reply["ok"], reply
        assert (reply["result"]["frame"]["seq"], reply["result"]["frame"]["revision"]) == (3, 2)
        resent = fresh.call("restart", PATCH, {**cursor_args(frame), "mutation": update(2)}, call="p2")
        assert resent["result"] == reply["result"]
    finally:
        fresh.stop()


def test_a_subscriber_that_misses_frames_converges_through_the_frame_log(runtime: Runtime) -> None:
    runtime.start()
    session = "pubsub"
    with runtime.client.follow(session) as feed:
        frame = open_session(runtime, session)
        for i in range(4):
            frame = runtime.call(session, PATCH, {**cursor_args(frame), "mutation": update(i)},
                                 call=f"p{i}")["result"]["frame"]
        done = runtime.call(session, "intelligent_ui_complete", cursor_args(frame), call="done")["result"]["frame"]
        feed._pubsub.get_message(timeout=1)  # the first frame arrives; the rest are "lost"
        while feed._pubsub.get_message(timeout=0.2) is not None:
            pass
        assert feed.views == {}
        feed.catch_up()
        view = feed.views["sales-report"]
        assert view.status == "complete" and view.checkpoint["seq"] == done["seq"]
        assert json.loads(json.dumps(view.checkpoint)) == done
    with runtime.client.follow(session) as late:  # a late subscriber gets the whole history
        states = list(late.states(timeout=0.3, idle=0.1))
        assert [s.checkpoint["seq"] for s in states] == [1, 2, 3, 4, 5, 6]
