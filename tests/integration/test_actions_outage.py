"""Action jobs through a Redis restart: a report is added again until Redis takes it (docs/wire.md)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.integration.actions_support import VALUES, RQWorkers, actions_document, configure, plain_ref, wait_status
from tests.integration.conftest import Runtime, own_redis, wait_ping

pytestmark = [pytest.mark.integration, pytest.mark.slow]
SESSION = "outage-s1"
FINAL = {"succeeded", "failed", "cancelled", "unknown"}


def test_a_job_whose_report_meets_a_redis_restart_sends_it_again_and_the_operation_succeeds(tmp_path: Path) -> None:
    # an audit: the outcome report was one XADD; a Redis restart while the capability ran lost it,
    # and the reaper ruled `unknown` for a capability that had run and finished (under `local` durability)
    with own_redis() as redis:
        rt = Runtime(redis.url)
        workers = RQWorkers(rt)
        try:
            wait_ping(rt)
            configure(rt, tmp_path, job_heartbeat_ms=3_000).start()
            assert rt.call(SESSION, "intelligent_ui", {"document": actions_document()}, call="plain-1")["ok"]
            reply = rt.client.reserve(SESSION, plain_ref("plain-1"), "count",
                                      {**VALUES, "key": "outage", "seconds": 1.5}, timeout=10)
            op = reply["result"]["receipt"]["operationId"]
            workers.start()
            wait_status(rt, SESSION, op, {"running"})
            time.sleep(0.5)
            redis.stop()  # while the capability sleeps, until after it reported
            time.sleep(2.5)
            redis.start()
            wait_ping(rt)
            done = wait_status(rt, SESSION, op, FINAL, timeout=30)
            assert done["status"] == "succeeded", done
            assert done["result"] == {"count": 1}
            assert int(rt.redis.get("test:side-effect:outage") or 0) == 1
        finally:
            workers.stop()
            rt.stop()
