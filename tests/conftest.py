"""Session fixture: a real `redis-server` on a free loopback port, flushed between tests.

Integration tests (marked `integration`) are skipped with a clear message only when the
`redis-server` binary is missing.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest

from workers.redisio.local_server import REDIS_BINARY, start_redis_server


def pytest_sessionstart(session: pytest.Session) -> None:
    """With `IUI_EXPECT_CORE=compiled` (or `pure`), refuse to run against the other build of
    `core` or of the worker's hot path: `.ci/run` runs the unit and integration tests against an
    installed compiled build, and a source tree earlier on `sys.path` would silently test the pure
    one instead."""
    expected = os.environ.get("IUI_EXPECT_CORE")
    if expected is None:
        return
    import core
    import workers.runtime.build as worker

    for name, module, compiled in (("core", core, core.COMPILED), ("worker", worker, worker.COMPILED)):
        running = "compiled" if compiled else "pure"
        if running != expected:
            raise pytest.UsageError(f"IUI_EXPECT_CORE={expected} but the {running} {name} runs ({module.__file__})")


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
def redis_client(redis_url: str) -> Iterator[object]:
    """A redis-py client on the flushed server."""
    import redis

    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()
