"""Redis on the same host through its Unix socket (`IUI_REDIS_URL=unix:///path/redis.sock`): a
real `iui worker` and a real `iui gateway` serve an agent's calls over it, end to end."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.gateway.conftest import GatewayProcess, auth
from tests.integration.conftest import FAST, example
from workers.redisio.connection import connect, socket_options
from workers.redisio.keys import Keys
from workers.redisio.local_server import start_redis_socket

pytestmark = pytest.mark.integration
OPEN, PATCH = "intelligent_ui_open", "intelligent_ui_patch"


@pytest.fixture(scope="module")
def unix_url() -> Iterator[str]:
    """A private redis-server that also listens on a Unix socket; its `unix://` URL."""
    with tempfile.TemporaryDirectory() as directory:
        process, url = start_redis_socket(directory)
        try:
            yield url
        finally:
            process.kill()
            process.wait()


def test_a_unix_socket_url_connects_without_the_tcp_only_keepalive(unix_url: str) -> None:
    assert socket_options(unix_url) == {}
    assert socket_options("redis://127.0.0.1:6379/0") == {"socket_keepalive": True}
    assert socket_options("rediss://cache.example:6380/0") == {"socket_keepalive": True}
    client = connect(unix_url)
    try:
        assert client.ping() is True  # redis-py refused `socket_keepalive` for a Unix socket before
    finally:
        client.close()


def _worker(url: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "IUI_REDIS_URL": url, "IUI_WORKER_ID": "unix-worker", "IUI_METRICS_PORT": "0",
           **{f"IUI_{k.upper()}": str(v) for k, v in FAST.items()}}  # 4 partitions, as the gateway's
    return subprocess.Popen([sys.executable, "-m", "workers.cli", "worker"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_a_worker_and_a_gateway_serve_an_agent_over_the_unix_socket(unix_url: str) -> None:
    client = connect(unix_url)
    client.flushall()
    worker = _worker(unix_url)
    gateway = GatewayProcess(unix_url)
    try:
        deadline = time.monotonic() + 20
        while {client.hget(Keys("iui").lease(p), "owner") for p in range(4)} != {b"unix-worker"}:
            assert worker.poll() is None, worker.stderr.read().decode() if worker.stderr else "the worker exited"
            assert time.monotonic() < deadline, "the worker did not lease its partitions over the socket"
            time.sleep(0.05)
        gateway.start()  # ready: /readyz pinged Redis and its pub/sub subscription is up
        with httpx.Client(base_url=gateway.url, timeout=20) as http:
            opened = http.post("/v1/sessions/ux/calls", headers=auth("agent"),
                               json={"tool": OPEN, "arguments": {"document": example("stream-initial.json")},
                                     "call": "open-ux"})
            assert opened.status_code == 200, opened.text
            frame = opened.json()["frame"]
            mutation = {"type": "update", "nodeId": "summary-card", "props": {"title": "Over the socket", "gap": "sm"}}
            patched = http.post("/v1/sessions/ux/calls", headers=auth("agent"),
                                json={"tool": PATCH, "call": "patch-ux",
                                      "arguments": {"sourceCallId": frame["sourceCallId"],
                                                    "generation": frame["generation"], "baseRevision": 0,
                                                    "mutation": mutation}})
            assert patched.status_code == 200, patched.text
            assert patched.json()["frame"]["revision"] == 1
            assert http.get("/readyz").json() == {"status": "ready", "redis": True, "subscription": True}
    finally:
        gateway.stop()
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        client.close()
