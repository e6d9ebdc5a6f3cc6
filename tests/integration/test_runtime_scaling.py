"""Planned scale-out and scale-in under load: no kept lease is lost, no partition is held twice."""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import pytest

from tests.integration.conftest import Runtime, cursor_args, example
from workers.runtime.pool import WorkerPool

pytestmark = [pytest.mark.integration, pytest.mark.slow]
PARTITIONS = 16


class Sampler:
    """Samples the partitions every pool believes it holds, to find the peak of their sum."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(len(pool.partitions) for pool, _ in self.rt.pools))
            time.sleep(0.005)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()


def _settled(rt: Runtime, pools: list[WorkerPool]) -> bool:
    share = math.ceil(PARTITIONS / len(pools))
    held = [set(pool.partitions) for pool in pools]
    owned = set().union(*held)
    return len(owned) == PARTITIONS and sum(map(len, held)) == PARTITIONS and max(map(len, held)) <= share


def _settle_time(rt: Runtime, pools: list[WorkerPool], timeout: float) -> float:
    started = time.monotonic()
    while not _settled(rt, pools):
        assert time.monotonic() - started < timeout, [pool.partitions for pool in pools]
        time.sleep(0.01)
    return time.monotonic() - started


def _load(rt: Runtime, sessions: list[str], stop: threading.Event, failures: list[Any]) -> None:
    frames = {}
    for session in sessions:
        reply = rt.call(session, "intelligent_ui_open", {"document": example("stream-initial.json")},
                        call=f"open-{session}")
        frames[session] = reply["result"]["frame"]
    i = 0
    while not stop.is_set() and i < 240:
        for session in sessions:
            mutation = {"type": "update", "nodeId": "summary-card", "props": {"title": f"T{i}", "gap": "sm"}}
            reply = rt.call(session, "intelligent_ui_patch", {**cursor_args(frames[session]), "mutation": mutation},
                            call=f"{session}-{i}")
            if not reply["ok"]:
                failures.append(reply)
                return
            frames[session] = reply["result"]["frame"]
        i += 1


def test_scaling_one_to_three_to_one_under_load_loses_no_lease(runtime: Runtime) -> None:
    runtime.configure(partitions=PARTITIONS)
    ttl = runtime.settings.lease_ttl_ms / 1000
    runtime.start(1)
    stop, failures = threading.Event(), []
    load = threading.Thread(target=_load, args=(runtime, [f"scale-{n}" for n in range(6)], stop, failures))
    with Sampler(runtime) as sampler:
        load.start()
        time.sleep(0.3)
        runtime.start(2)  # scale out 1 -> 3
        out = _settle_time(runtime, [pool for pool, _ in runtime.pools], timeout=2 * ttl)
        time.sleep(0.5)
        leaving = runtime.pools[1:]
        for pool, _ in leaving:
            pool.stop()  # scale in 3 -> 1: a planned hand-over
        for _, thread in leaving:
            thread.join(timeout=10)
        del runtime.pools[1:]
        back = _settle_time(runtime, [runtime.pools[0][0]], timeout=2 * ttl)
        time.sleep(0.3)
        stop.set()
        load.join()
    assert not failures, failures[0]
    assert runtime.metrics.registry.get_sample_value("iui_leases_lost_total") == 0
    assert sampler.peak <= PARTITIONS
    assert out <= 2 * ttl and back <= 2 * ttl
