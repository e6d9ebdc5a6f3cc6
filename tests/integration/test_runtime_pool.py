"""Fair share, rebalancing, trimming and the operator commands (status, submit, tail)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import redis

from tests.integration.conftest import Runtime, example
from workers.cli import main
from workers.redisio.keys import GROUP
from workers.redisio.scripts import Scripts
from workers.runtime import pool
from workers.runtime.partition import PartitionConsumer

pytestmark = pytest.mark.integration


def _wait(predicate, timeout: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def test_pools_share_the_partitions_fairly_and_rebalance_when_one_leaves(runtime: Runtime) -> None:
    runtime.start(1)
    first = runtime.pools[0][0]
    # `start` returns once Redis holds every lease; the pool counts a partition as held only after
    # it built its consumer, a moment later (a loaded CI machine saw 2 of 4 in between).
    _wait(lambda: len(first.partitions) == 4)
    runtime.start(1)
    second = runtime.pools[1][0]
    _wait(lambda: len(first.partitions) == 2 and len(second.partitions) == 2)
    assert set(first.partitions).isdisjoint(second.partitions)
    second.stop()
    runtime.pools[1][1].join(timeout=10)
    _wait(lambda: len(first.partitions) == 4)
    assert runtime.metrics.registry.get_sample_value("iui_leases_held") == 4


def test_trimming_keeps_pending_entries_and_drops_acked_ones(runtime: Runtime) -> None:
    runtime.start(1)
    for n in range(5):
        reply = runtime.call("trim", "intelligent_ui_open", {"document": example("stream-initial.json")}, call=f"o{n}")
        assert reply["ok"] or reply["error"]["code"] == "call_id_reused"
    runtime.stop()
    p = runtime.client.partition("trim")
    stream = runtime.client.keys.input(p)
    runtime.redis.xadd(stream, {"session": "trim"})
    runtime.redis.xreadgroup(GROUP, f"p{p}", {stream: ">"})  # one pending entry
    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=1000, frame_log_max=100)
    consumer = PartitionConsumer(redis=runtime.redis, settings=runtime.settings, keys=runtime.client.keys,
                                 scripts=scripts, metrics=runtime.metrics, partition=p, epoch=0, fence="0:test")
    consumer._last_trim = 0.0
    consumer._maybe_trim()
    assert runtime.redis.xlen(stream) == 1
    assert runtime.redis.xpending(stream, GROUP)["pending"] == 1


def test_status_lists_owners_epochs_and_pending_counts(runtime: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    runtime.start(1)
    assert main(["status", "--redis-url", runtime.redis_url, "--partitions", "4"]) == 0
    out = capsys.readouterr().out
    assert "meta: partitions=4 protocol=1" in out
    assert runtime.pools[0][0].worker_id in out
    assert "workers: 1 live" in out


def test_submit_and_tail_from_the_command_line(runtime: Runtime, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    runtime.start(1)
    arguments = tmp_path / "open.json"
    arguments.write_text(json.dumps({"document": example("stream-initial.json")}))
    common = ["--redis-url", runtime.redis_url]
    assert main(["submit", *common, "--session", "cli", "--tool", "intelligent_ui_open", "--call", "c1",
                 str(arguments)]) == 0
    reply = json.loads(capsys.readouterr().out)
    assert reply["ok"] and reply["result"]["frame"]["sourceCallId"] == "c1"
    assert main(["tail", *common, "cli", "--timeout", "0.3"]) == 0
    assert "uiId=sales-report sourceCallId=c1 generation=1 seq=1 revision=0 type=snapshot" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["submit", *common, "--session", "cli", "--tool", "intelligent_ui_open", str(bad)]) == 2


def test_a_serving_pool_has_loaded_every_script_before_its_first_batch(runtime: Runtime) -> None:
    runtime.redis.script_flush()
    runtime.start(1)
    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=1000, frame_log_max=100)
    shas = [script.sha for script in scripts._scripts.values()]
    assert all(runtime.redis.script_exists(*shas))  # else a first batch of EVALSHAs meets NOSCRIPT


def _lease_round(scripts: Scripts) -> tuple[bool, int, bool]:
    """Acquire, renew and release the lease of partition 0; whether each worked."""
    attempt = scripts.acquire("iui:{p0}:lease", "iui:{p0}:epoch", "w-test", 5_000)
    (renewal,) = scripts.renew([("iui:{p0}:lease", attempt.fence, "")], 5_000)
    released = scripts.release("iui:{p0}:lease", attempt.fence)
    return bool(attempt.fence), getattr(renewal, "pending", -1), released


def test_the_lease_scripts_are_loaded_again_after_the_server_lost_them(runtime: Runtime) -> None:
    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=1000, frame_log_max=100)
    assert _lease_round(scripts) == (True, 0, True)
    runtime.redis.script_flush()  # what a restart without persistence leaves
    assert _lease_round(scripts) == (True, 0, True)


def test_the_lease_scripts_cost_one_round_trip_without_a_script_exists(runtime: Runtime) -> None:
    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=1000, frame_log_max=100)
    scripts.load()
    runtime.redis.config_resetstat()
    assert _lease_round(scripts) == (True, 0, True)
    stats = runtime.redis.info("commandstats")
    assert "cmdstat_script|exists" not in stats and stats["cmdstat_evalsha"]["calls"] == 3


def test_the_meta_is_checked_at_start_after_an_outage_and_every_interval_not_every_tick(
        runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """`{prefix}:meta` costs the tick's thread a round trip (one script), while holding the GIL
    the dispatcher needs: a pool checks it at its first tick, after Redis was unreachable (a
    restarted server may have lost it) and every `META_EVERY_S`, not at every 100 ms heartbeat."""
    checks: list[float] = []
    check_meta = pool.check_meta
    monkeypatch.setattr(pool, "check_meta", lambda *args, **kwargs: (checks.append(time.monotonic()),
                                                                      check_meta(*args, **kwargs))[1])
    outage = {"left": 0}
    heartbeat = pool.WorkerPool._heartbeat

    def flaky_heartbeat(self: pool.WorkerPool) -> list[str]:
        if outage["left"]:
            outage["left"] -= 1
            raise redis.ConnectionError("the server went away")  # as a tick meets an outage
        return heartbeat(self)

    monkeypatch.setattr(pool.WorkerPool, "_heartbeat", flaky_heartbeat)
    runtime.start()
    time.sleep(0.6)  # ~6 ticks of the fast settings' 100 ms
    assert len(checks) == 1
    runtime.redis.hdel(runtime.client.keys.meta, "streaming")  # as a restart that lost it
    outage["left"] = 1
    _wait(lambda: len(checks) == 2, timeout=2.0)  # the tick after the outage checks (and writes) it again
    _wait(lambda: runtime.redis.hget(runtime.client.keys.meta, "streaming") == b"1")
    monkeypatch.setattr(pool, "META_EVERY_S", 0.2)
    _wait(lambda: len(checks) >= 4, timeout=2.0)


def test_a_heartbeat_announces_the_worker_on_redis_clock_and_lists_the_live_ones_in_one_round_trip(
        runtime: Runtime) -> None:
    """`heartbeat.lua`: the worker's deadline is Redis's now plus the TTL, lapsed workers are
    dropped, the live ones listed; one command (the pool's tick thread shares the GIL)."""
    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=1000, frame_log_max=10)
    workers = runtime.client.keys.workers
    seconds, micros = runtime.redis.time()
    now = int(seconds) * 1000 + int(micros) // 1000
    runtime.redis.zadd(workers, {"lapsed": now - 1, "other": now + 60_000})
    assert scripts.heartbeat(workers, "w1", 2_000) == ["w1", "other"]  # (and loads the script)
    runtime.redis.zadd(workers, {"lapsed": now - 1})
    runtime.redis.config_resetstat()
    assert scripts.heartbeat(workers, "w1", 2_000) == ["w1", "other"]
    commands = {name: stats["calls"] for name, stats in runtime.redis.info("commandstats").items()}
    assert commands["cmdstat_evalsha"] == 1 and "cmdstat_time" in commands
    deadline = runtime.redis.zscore(workers, "w1")
    seconds, micros = runtime.redis.time()
    assert deadline is not None and 0 < deadline - (int(seconds) * 1000 + int(micros) // 1000) <= 2_000
    assert deadline == int(deadline) and runtime.redis.zscore(workers, "lapsed") is None
