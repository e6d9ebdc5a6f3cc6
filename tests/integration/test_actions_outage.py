"""Action jobs through a Redis restart: a report is added again until Redis takes it (docs/wire.md)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pytest

from tests.integration.actions_support import VALUES, RQWorkers, actions_document, configure, plain_ref, wait_status
from tests.integration.conftest import Runtime, aof_server, wait_ping
from workers.redisio.local_server import REDIS_BINARY, free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]
SESSION = "outage-s1"
FINAL = {"succeeded", "failed", "cancelled", "unknown"}


def test_a_job_whose_report_meets_a_redis_restart_sends_it_again_and_the_operation_succeeds(tmp_path: Path) -> None:
    # an audit: the outcome report was one XADD; a Redis restart while the capability ran lost it,
    # and the reaper ruled `unknown` for a capability that had run and finished (under `local` durability)
    if REDIS_BINARY is None:
        pytest.skip("redis-server binary not found")
    port = free_port()
    with tempfile.TemporaryDirectory() as directory:
        server = aof_server(port, directory)
        rt = Runtime(f"redis://127.0.0.1:{port}/0")
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
            server.terminate()  # while the capability sleeps, until after it reported
            server.wait()
            time.sleep(2.5)
            server = aof_server(port, directory)
            wait_ping(rt)
            done = wait_status(rt, SESSION, op, FINAL, timeout=30)
            assert done["status"] == "succeeded", done
            assert done["result"] == {"count": 1}
            assert int(rt.redis.get("test:side-effect:outage") or 0) == 1
        finally:
            workers.stop()
            rt.stop()
            server.kill()
            server.wait()
