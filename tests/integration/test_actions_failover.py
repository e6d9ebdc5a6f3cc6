"""SIGKILL of a pool process while it commits reserves, confirmations and job reports: every
request still gets exactly one reply and every operation exactly one receipt change per status."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration import actions_support
from tests.integration.actions_support import VALUES, RQWorkers, actions_document, configure, plain_ref
from tests.integration.conftest import FAST, Runtime

rq_workers = actions_support.rq_workers  # the fixture, used by name
pytestmark = [pytest.mark.integration, pytest.mark.slow]
SESSIONS = [f"fo-{n}" for n in range(6)]
PER_SESSION = 20


def pool_process(rq: RQWorkers, worker_id: str) -> subprocess.Popen:
    env = {**rq.environment(), "IUI_WORKER_ID": worker_id, **{f"IUI_{k.upper()}": str(v) for k, v in FAST.items()},
           "IUI_REAPER_INTERVAL_MS": "100"}
    return subprocess.Popen([sys.executable, "-m", "workers.cli", "worker"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def owners(rt: Runtime) -> set[str]:
    values = [rt.redis.hget(rt.client.keys.lease(p), "owner") for p in range(rt.settings.partitions)]
    return {v.decode() if v else "" for v in values}


def wait(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def submit_all(rt: Runtime, bodies: dict[str, list[tuple[str, Any]]], name: str) -> dict[str, list[str]]:
    """Submit every session's requests from one thread per session, paced, without waiting."""
    requests: dict[str, list[str]] = {s: [] for s in bodies}

    def produce(session: str) -> None:
        for request, body in bodies[session]:
            rt.client.submit(session, name, body, call=request, request=request, kind="action")
            requests[session].append(request)
            time.sleep(0.01)

    threads = [threading.Thread(target=produce, args=(s,)) for s in bodies]
    for thread in threads:
        thread.start()
    return requests | {"__threads__": threads}  # type: ignore[dict-item]


def replies(rt: Runtime, requests: dict[str, Any]) -> dict[str, dict[str, Any]]:
    for thread in requests.pop("__threads__"):
        thread.join()
    out = {}
    for session, ids in requests.items():
        for request in ids:
            reply = rt.client.reply(session, request, timeout=30)
            assert reply["ok"], reply
            assert rt.client.peek_reply(session, request) is None  # exactly one reply
            out[request] = reply["result"]["receipt"]
    return out


def kill_during(process: subprocess.Popen, delay: float) -> None:
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)


def test_sigkill_of_a_pool_process_during_receipt_commits_changes_each_receipt_once(
        runtime: Runtime, tmp_path: Path, rq_workers: RQWorkers) -> None:
    configure(runtime, tmp_path)
    survivor = pool_process(rq_workers, "survivor")
    victim = pool_process(rq_workers, "victim-1")
    processes = [survivor, victim]
    try:
        wait(lambda: owners(runtime) == {"survivor", "victim-1"})
        for session in SESSIONS:
            assert runtime.call(session, "intelligent_ui", {"document": actions_document()}, call="plain")["ok"]
        reserves = {s: [(f"{s}-r{i}", {"documentRef": plain_ref("plain"), "requestId": f"{s}-r{i}",
                                       "actionId": "confirmed", "values": VALUES}) for i in range(PER_SESSION)]
                    for s in SESSIONS}
        pending = submit_all(runtime, reserves, "reserve")
        kill_during(victim, 0.1)
        reserved = replies(runtime, pending)
        assert {r["status"] for r in reserved.values()} == {"awaiting_confirmation"}

        victim = pool_process(rq_workers, "victim-2")
        processes.append(victim)
        wait(lambda: "victim-2" in owners(runtime))
        confirms = {s: [(f"{s}-c{i}", {"operationId": reserved[f"{s}-r{i}"]["operationId"], "decision": "approve"})
                        for i in range(PER_SESSION)] for s in SESSIONS}
        pending = submit_all(runtime, confirms, "confirm")
        kill_during(victim, 0.1)
        confirmed = replies(runtime, pending)
        assert {r["status"] for r in confirmed.values()} == {"queued"}

        victim = pool_process(rq_workers, "victim-3")
        processes.append(victim)
        wait(lambda: "victim-3" in owners(runtime))
        rq_workers.start(2)  # job reports now flow into the partitions while the victim dies
        kill_during(victim, 1.0)
        for session in SESSIONS:
            ops = [reserved[f"{session}-r{i}"]["operationId"] for i in range(PER_SESSION)]
            wait(lambda s=session, o=ops: all(  # type: ignore[misc]
                runtime.client.get(s, op)["result"]["receipt"]["status"] == "succeeded" for op in o), timeout=60)
            log = [(r["operationId"], r["status"]) for _, r in runtime.client.receipt_log(session)]
            for op in ops:
                assert [s for o, s in log if o == op] == ["awaiting_confirmation", "queued", "running", "succeeded"]
            key = runtime.client.keys.operations(runtime.client.partition(session), session)
            assert int(runtime.redis.hget(key, "count")) == PER_SESSION
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
