"""`iui gateway` started before its Redis: it says it waits, binds nothing, then serves once Redis answers."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

import httpx

from workers.redisio.local_server import free_port, start_redis_server

from .conftest import SECRET


def _refused(url: str) -> bool:
    try:
        httpx.get(url, timeout=0.5)
    except httpx.ConnectError:
        return True
    return False


def test_a_gateway_started_before_redis_waits_then_serves() -> None:
    redis_port, port = free_port(), free_port()
    env = {**os.environ, "IUI_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0", "IUI_GATEWAY_JWT_SECRET": SECRET,
           "IUI_GATEWAY_PORT": str(port), "IUI_PARTITIONS": "4"}
    gateway = subprocess.Popen([sys.executable, "-m", "workers.cli", "gateway"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []

    def read() -> None:
        assert gateway.stderr is not None
        for line in gateway.stderr:
            lines.append(line.rstrip("\n"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    redis = None
    try:
        # Redis starts once the gateway found it unavailable (a fixed sleep was shorter than the
        # gateway's start-up on a busy machine: it then never saw Redis away)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any("Redis unavailable" in line for line in lines):
            time.sleep(0.05)
        assert gateway.poll() is None, "the gateway exited instead of waiting for Redis"
        assert _refused(f"http://127.0.0.1:{port}/healthz"), "the gateway bound its port before Redis answered"
        with tempfile.TemporaryDirectory() as directory:
            redis, _ = start_redis_server(directory, port=redis_port)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and _refused(f"http://127.0.0.1:{port}/healthz"):
                time.sleep(0.1)
            assert httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 200
            gateway.terminate()
            gateway.wait(timeout=10)
            reader.join(timeout=10)
    finally:
        if gateway.poll() is None:
            gateway.kill()
            gateway.wait()
        if redis is not None:
            redis.kill()
            redis.wait()
    waiting = next(i for i, line in enumerate(lines) if line.startswith("iui gateway: waiting for Redis at"))
    serving = next(i for i, line in enumerate(lines) if line.startswith("iui gateway: serving on"))
    assert waiting < serving
    assert re.fullmatch(rf"iui gateway: serving on http://127\.0\.0\.1:{port} \(at most [0-9,]+ client connections\)",
                        lines[serving]), lines[serving]
    assert any("Redis unavailable" in line for line in lines[waiting:serving])


def test_a_port_in_use_is_one_line_blaming_the_port_and_never_says_serving(redis_url: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        env = {**os.environ, "IUI_REDIS_URL": redis_url, "IUI_GATEWAY_JWT_SECRET": SECRET,
               "IUI_GATEWAY_PORT": str(port), "IUI_PARTITIONS": "4"}
        run = subprocess.run([sys.executable, "-m", "workers.cli", "gateway"], env=env, capture_output=True,
                             text=True, timeout=30, check=False)
    assert run.returncode == 1
    lines = run.stderr.splitlines()
    assert not any("serving on" in line for line in lines), lines
    assert lines[-1] == f"iui: error: invalid setting IUI_GATEWAY_PORT: cannot listen on 127.0.0.1 port {port}: " \
                        "Address already in use", lines


def test_an_invalid_origin_is_refused_before_waiting_for_redis(redis_url: str) -> None:
    env = {**os.environ, "IUI_REDIS_URL": redis_url, "IUI_GATEWAY_JWT_SECRET": SECRET,
           "IUI_GATEWAY_ORIGINS": "*", "IUI_PARTITIONS": "4"}
    run = subprocess.run([sys.executable, "-m", "workers.cli", "gateway"], env=env, capture_output=True,
                         text=True, timeout=30, check=False)
    assert run.returncode != 0 and run.stderr.count("\n") == 1, run.stderr
    assert run.stderr.startswith("iui: error: invalid setting IUI_GATEWAY_ORIGINS:") and "serving" not in run.stderr
