"""Fixtures of the gateway tests: real `iui gateway` processes (uvicorn) on free ports, worker pools
in threads, on the suite's redis-server."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gateway.identity import mint
from tests.integration.conftest import Runtime
from workers.redisio.local_server import free_port

SECRET = "test-secret-of-the-gateway-suite-0123456789"


class GatewayProcess:
    """One `iui gateway` process; `restart()` SIGKILLs it and starts it again on the same port."""

    def __init__(self, redis_url: str, port: int | None = None, *, nofile: tuple[int, int] | None = None,
                 log: Path | None = None, command: list[str] | None = None, **settings: Any) -> None:
        """`settings` become `IUI_*` variables; `nofile` is the (soft, hard) open-file limit it starts with;
        `log`, a file its standard error is appended to (else it is dropped); `command`, what runs
        instead of `iui gateway` (a launcher that instruments it)."""
        self.command = command or [sys.executable, "-m", "workers.cli", "gateway"]
        self.port = port or free_port()
        self.nofile = nofile
        self.log = log
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "IUI_REDIS_URL": redis_url, "IUI_GATEWAY_JWT_SECRET": SECRET,
                    "IUI_GATEWAY_PORT": str(self.port), "IUI_PARTITIONS": "4",
                    **{f"IUI_{k.upper()}": str(v) for k, v in settings.items()}}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> GatewayProcess:
        nofile = self.nofile
        limit = None if nofile is None else lambda: resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
        with contextlib.ExitStack() as files:
            stderr = subprocess.DEVNULL if self.log is None else files.enter_context(self.log.open("ab"))
            self.process = subprocess.Popen(self.command, env=self.env,
                                            stdout=subprocess.DEVNULL, stderr=stderr, preexec_fn=limit)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/readyz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            assert self.process.poll() is None, "the gateway exited"
            time.sleep(0.05)
        raise AssertionError("the gateway did not become ready")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def restart(self) -> None:
        self.kill()
        self.start()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


def token(sub: str = "alice", project: str = "demo", role: str = "user", ttl: int = 3600, **claims: Any) -> str:
    """A bearer token of the suite's secret."""
    return mint(secret=SECRET.encode(), principal=sub, project=project, role=role, ttl_s=ttl)


def sample(url: str, name: str, **labels: str) -> float:
    """One sample of a gateway's `/metrics` (0 when the series is absent)."""
    text = httpx.get(url + "/metrics", timeout=10).text
    for family in text_string_to_metric_families(text):
        for each in family.samples:
            if each.name == name and each.labels == labels:
                return float(each.value)
    return 0.0


def auth(role: str = "user", sub: str = "alice", project: str = "demo") -> dict[str, str]:
    """An Authorization header."""
    return {"authorization": f"Bearer {token(sub, project, role)}"}


@pytest.fixture(scope="module")
def gateway_process(redis_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    """One gateway process for a test module (its state is in Redis, flushed between tests); its
    standard error goes to `process.log` (a failing test can show it)."""
    process = GatewayProcess(redis_server, log=tmp_path_factory.mktemp("gateway") / "stderr.log").start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture()
def stack(redis_url: str, gateway_process: GatewayProcess) -> Iterator[tuple[Runtime, GatewayProcess]]:
    """Worker pools (threads) on the flushed server, and the module's gateway."""
    runtime = Runtime(redis_url).start()
    try:
        yield runtime, gateway_process
    finally:
        runtime.stop()
        runtime.redis.close()


@pytest.fixture()
def http(stack: tuple[Runtime, GatewayProcess]) -> Iterator[httpx.Client]:
    """An HTTP client of the module's gateway."""
    with httpx.Client(base_url=stack[1].url, timeout=15) as client:
        yield client
