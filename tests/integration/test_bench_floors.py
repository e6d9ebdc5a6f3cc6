"""The floors `bench workers` compares the worker with must answer every call they are sent,
and the pre-submitted ruler (`bench.workers.drain`) must really stop the consumers meanwhile.

A floor that stops answering (a script it never loaded, a changed commit signature) makes the
bench fail with "replies missing" only in a full run, long after the change that broke it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import redis

from bench import workers as bench_workers
from bench.minimum import minimum_floor
from bench.workers import FrameStamps, drain, floor, start_redis
from workers.redisio.keys import Keys

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("batched", [False, True])
def test_the_commit_script_floor_answers_every_call(redis_url: str, batched: bool) -> None:
    assert floor(redis_url, 600, sessions=4, per_session=5, run=0, batched=batched) > 0


def test_the_contract_minimum_answers_every_call(redis_url: str) -> None:
    assert minimum_floor(redis_url, 600, sessions=4, per_session=5, run=0) > 0


@pytest.mark.parametrize("unix", [False, True])
def test_the_latency_subscriber_reaches_the_benchs_own_server_over_tcp_or_its_unix_socket(unix: bool) -> None:
    """`bench workers --unix-socket`: the frame subscriber must listen on the same server as the
    load (before, a unix:// URL sent it to 127.0.0.1:6379, where no frame ever came)."""
    with tempfile.TemporaryDirectory() as directory:
        server, url = start_redis(directory, unix=unix)
        try:
            assert url.startswith("unix://" if unix else "redis://")
            client = redis.Redis.from_url(url)
            keys = Keys("iui")
            stamps = FrameStamps(client, keys)
            sent, samples = {("s", 1): time.perf_counter()}, []
            collector = threading.Thread(target=stamps.collect, args=(sent, samples, 1))
            collector.start()
            client.publish(keys.channel(0, "s"), '{"revision":1}')
            collector.join(10)
            stamps.close()
            assert len(samples) == 1 and sent == {}
        finally:
            server.kill()
            server.wait()


@pytest.mark.parametrize("floor_of", ["commit script", "contract minimum"])
def test_a_presubmitted_floor_answers_every_call_after_the_same_runs_first_ruler(redis_url: str,
                                                                                 floor_of: str) -> None:
    """`bench compare` drains each floor by both rulers in one round, on one server (the second
    run's sessions once collided with the first's: 6,400 replies missing)."""
    if floor_of == "commit script":
        assert floor(redis_url, 600, sessions=4, per_session=5, run=0, batched=True) > 0
        assert floor(redis_url, 600, sessions=4, per_session=5, run=0, batched=True, presubmitted=True) > 0
    else:
        assert minimum_floor(redis_url, 600, sessions=4, per_session=5, run=0) > 0
        assert minimum_floor(redis_url, 600, sessions=4, per_session=5, run=0, presubmitted=True) > 0


def _state(process: subprocess.Popen) -> str:
    """The process's state letter in /proc (T: stopped)."""
    return Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _one_call(keys: Keys, seen: list[str], consumer: subprocess.Popen, wait_s: float = 0.0):
    """A `submit` for `drain` that notes the consumer's state, then queues one frame and its reply."""
    def submit(pipe) -> list[str]:
        seen.append(_state(consumer))
        time.sleep(wait_s)
        pipe.publish(keys.channel(0, "s"), '{"revision":1}')
        pipe.rpush(keys.reply(0, "s", "r"), b'{"ok":true}')
        return [keys.reply(0, "s", "r")]
    return submit


def test_a_presubmitted_drain_stops_the_consumers_while_it_submits_and_continues_them(redis_url: str) -> None:
    client, keys, seen = redis.Redis.from_url(redis_url), Keys("drain"), []
    consumer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        rate, replies = drain(client, keys, _one_call(keys, seen, consumer), [consumer])
        assert seen == ["T"] and _state(consumer) != "T"
        assert replies == [b'{"ok":true}'] and rate > 0
    finally:
        consumer.kill()
        consumer.wait()


def test_a_pause_longer_than_the_limit_fails_the_drain_and_still_continues_the_consumers(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench_workers, "PAUSE_LIMIT_S", 0.01)
    client, keys, seen = redis.Redis.from_url(redis_url), Keys("drain-slow"), []
    consumer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with pytest.raises(RuntimeError, match=r"the consumers were stopped 0\.\d\d s .* \(at most 0\.01 s"):
            drain(client, keys, _one_call(keys, seen, consumer, wait_s=0.05), [consumer])
        assert seen == ["T"] and _state(consumer) != "T"
    finally:
        consumer.kill()
        consumer.wait()


def test_waiting_for_a_process_that_was_never_stopped_fails_with_its_thread_states() -> None:
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with pytest.raises(RuntimeError, match=rf"process {running.pid} did not stop within 0.05 s \(thread states"):
            bench_workers.wait_stopped(running.pid, timeout_s=0.05)
    finally:
        running.kill()
        running.wait()


def test_a_presubmitted_scenario_drains_real_workers_and_paces_them(redis_url: str) -> None:
    """`bench workers --presubmitted`: the worker processes stopped while each drain is submitted."""
    server = redis.Redis.from_url(redis_url).info("server")["process_id"]
    args = argparse.Namespace(sessions=2, per_session=3, repeat=1, latency_runs=1, latency_calls=20, rate=50.0,
                              presubmitted=True, redis_pid=int(server))
    result = bench_workers.scenario(redis_url, "small", bench_workers.small_document(), 1, args)
    assert result["rate"] > 0 and result["half"] == 50.0 and result["p99"] > 0
