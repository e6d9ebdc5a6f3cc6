"""Session fixture: a real `redis-server` on a free loopback port, flushed between tests.

Integration tests (marked `integration`) are skipped with a clear message only when the
`redis-server` binary is missing.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from typing import Iterator

import pytest

REDIS_BINARY = shutil.which("redis-server")


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_redis_server(directory: str) -> tuple[subprocess.Popen, int]:
    """Start redis-server on a free loopback port in `directory`; wait until it answers PING."""
    import redis

    port = free_port()
    process = subprocess.Popen(
        [REDIS_BINARY, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--daemonize", "no", "--dir", directory],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(host="127.0.0.1", port=port)
    for _ in range(200):
        try:
            if client.ping():
                return process, port
        except redis.ConnectionError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("redis-server did not answer PING")


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    """URL of a private redis-server for the whole test session."""
    if REDIS_BINARY is None:
        pytest.skip("redis-server binary not found: install redis-server to run integration tests")
    with tempfile.TemporaryDirectory() as directory:
        process, port = start_redis_server(directory)
        try:
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.kill()
            process.wait()


@pytest.fixture()
def redis_url(redis_server: str) -> Iterator[str]:
    """The server URL, flushed before each test."""
    import redis

    client = redis.Redis.from_url(redis_server)
    client.flushall()
    client.close()
    yield redis_server


@pytest.fixture()
def redis_client(redis_url: str) -> Iterator["object"]:
    """A redis-py client on the flushed server."""
    import redis

    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()
