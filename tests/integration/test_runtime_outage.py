"""A Redis outage is retried with back-off: workers never exit and resume afterwards."""

from __future__ import annotations

import threading
import time

import pytest

from tests.integration.conftest import Runtime, cursor_args, example, own_redis, wait_ping
from workers.redisio.connection import connect
from workers.runtime.pool import WorkerPool

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_workers_survive_a_redis_restart_and_the_generation_continues() -> None:
    with own_redis() as redis:
        rt = Runtime(redis.url)
        try:
            wait_ping(rt)
            rt.start(1)
            frame = rt.call("outage", "intelligent_ui_open", {"document": example("stream-initial.json")},
                            call="open-1")["result"]["frame"]
            assert rt.metrics.registry.get_sample_value("iui_leases_held") == rt.settings.partitions
            redis.stop()
            time.sleep(1.0)  # the pool and its consumers see connection errors meanwhile
            assert all(thread.is_alive() for _, thread in rt.pools)
            # an audit: the gauge counted the leases it could no longer renew for the whole outage
            deadline = time.monotonic() + rt.settings.lease_ttl_ms / 1000 + 2
            while rt.metrics.registry.get_sample_value("iui_leases_held") != 0:
                assert time.monotonic() < deadline, "leases past their TTL still counted as held"
                time.sleep(0.05)
            redis.start()
            wait_ping(rt)
            rt.wait_for_owners(timeout=20)
            mutation = example("stream-mutations.json")[0]
            reply = rt.call("outage", "intelligent_ui_patch", {**cursor_args(frame), "mutation": mutation},
                            call="patch-1")
            assert reply["ok"], reply
            assert reply["result"]["frame"]["seq"] == 2
            assert rt.metrics.registry.get_sample_value("iui_redis_errors_total") > 0
        finally:
            rt.stop()


def _owned_within(rt: Runtime, seconds: float) -> float:
    started = time.monotonic()
    rt.wait_for_owners(timeout=seconds)
    return time.monotonic() - started


def test_after_a_restart_that_lost_every_lease_all_partitions_are_owned_again_within_two_ttl() -> None:
    with own_redis(persistent=False) as redis:
        rt = Runtime(redis.url).configure(partitions=16)
        try:
            wait_ping(rt)
            rt.start(2)
            redis.stop()
            time.sleep(1.0)
            redis.start()  # empty: no lease, no group, no meta
            wait_ping(rt)
            ttl = rt.settings.lease_ttl_ms / 1000
            assert _owned_within(rt, 2 * ttl) <= 2 * ttl
            reply = rt.call("after", "intelligent_ui_open", {"document": example("stream-initial.json")}, call="o")
            assert reply["ok"], reply
        finally:
            rt.stop()


def test_a_pool_started_while_redis_is_down_waits_and_serves_once_it_is_up() -> None:
    with own_redis(started=False) as redis:
        rt = Runtime(redis.url)
        serving = threading.Event()
        pool = WorkerPool(settings=rt.settings, redis=connect(rt.redis_url), metrics=rt.metrics,
                          on_serving=serving.set)
        thread = threading.Thread(target=pool.run, daemon=True)
        thread.start()
        try:
            time.sleep(1.0)
            assert thread.is_alive() and not serving.is_set()  # retrying, not exited, not "serving"
            redis.start()
            wait_ping(rt)
            ttl = rt.settings.lease_ttl_ms / 1000
            assert serving.wait(2 * ttl)
            assert _owned_within(rt, 2 * ttl) <= 2 * ttl
        finally:
            pool.stop()
            thread.join(timeout=10)
