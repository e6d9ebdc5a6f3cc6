"""A Redis outage is retried with back-off: workers never exit and resume afterwards."""

from __future__ import annotations

import subprocess
import tempfile
import time

import pytest

from workers.local_redis import REDIS_BINARY
from tests.integration.conftest import Runtime, cursor_args, example

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _server(port: int, directory: str) -> subprocess.Popen:
    return subprocess.Popen([REDIS_BINARY, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "yes", "--appendfsync", "always", "--dir", directory],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait_ping(rt: Runtime) -> None:
    for _ in range(200):
        try:
            rt.redis.ping()
            return
        except Exception:  # noqa: BLE001 - still starting
            time.sleep(0.05)
    raise AssertionError("redis-server did not come back")


def test_workers_survive_a_redis_restart_and_the_generation_continues() -> None:
    if REDIS_BINARY is None:
        pytest.skip("redis-server binary not found")
    from workers.local_redis import free_port

    port = free_port()
    with tempfile.TemporaryDirectory() as directory:
        server = _server(port, directory)
        rt = Runtime(f"redis://127.0.0.1:{port}/0")
        try:
            _wait_ping(rt)
            rt.start(1)
            frame = rt.call("outage", "intelligent_ui_open", {"document": example("stream-initial.json")},
                            call="open-1")["result"]["frame"]
            server.terminate()
            server.wait()
            time.sleep(1.0)  # the pool and its consumers see connection errors meanwhile
            assert all(thread.is_alive() for _, thread in rt.pools)
            server = _server(port, directory)
            _wait_ping(rt)
            rt.wait_for_owners(timeout=20)
            mutation = example("stream-mutations.json")[0]
            reply = rt.call("outage", "intelligent_ui_patch", {**cursor_args(frame), "mutation": mutation},
                            call="patch-1")
            assert reply["ok"], reply
            assert reply["result"]["frame"]["seq"] == 2
            assert rt.metrics.registry.get_sample_value("iui_redis_errors_total") > 0
        finally:
            rt.stop()
            server.kill()
            server.wait()
