"""The floors `bench workers` compares the worker with must answer every call they are sent.

A floor that stops answering (a script it never loaded, a changed commit signature) makes the
bench fail with "replies missing" only in a full run, long after the change that broke it.
"""

from __future__ import annotations

import tempfile
import threading
import time

import pytest
import redis

from bench.minimum import minimum_floor
from bench.workers import FrameStamps, floor, start_redis
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
