"""Fixtures of the runtime tests: worker pools in threads on the suite's redis-server."""

from __future__ import annotations

import contextlib
import copy
import json
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from config.settings import Settings, load_settings
from workers.client import Client
from workers.observability.metrics import Metrics
from workers.redisio.connection import connect
from workers.redisio.keys import generation_field
from workers.redisio.local_server import REDIS_BINARY, free_port
from workers.runtime.pool import WorkerPool

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FAST = {"partitions": 4, "lease_ttl_ms": 1_000, "lease_renew_ms": 200, "heartbeat_ms": 100}


def example(name: str) -> Any:
    """A decoded example file."""
    return json.loads((EXAMPLES / name).read_text("utf-8"))


class Runtime:
    """Worker pools running in threads of the test process, and a client."""

    def __init__(self, redis_url: str) -> None:
        self.redis_url = redis_url
        self.redis = connect(redis_url)
        self.settings: Settings = load_settings(redis_url=redis_url, **FAST)
        self.metrics = Metrics(registry=CollectorRegistry())
        self.pools: list[tuple[WorkerPool, threading.Thread]] = []
        self._client: Client | None = None

    def configure(self, **overrides: Any) -> Runtime:
        """Change settings before `start()`."""
        self.settings = load_settings(redis_url=self.redis_url, **{**FAST, **overrides})
        return self

    def start(self, count: int = 1) -> Runtime:
        """Start `count` pools and wait until every partition is held."""
        for _ in range(count):
            pool = WorkerPool(settings=self.settings, redis=connect(self.redis_url), metrics=self.metrics)
            thread = threading.Thread(target=pool.run, daemon=True)
            thread.start()
            self.pools.append((pool, thread))
        self.wait_for_owners()
        return self

    def wait_for_owners(self, timeout: float = 10.0) -> None:
        """Wait until every partition has a lease holder."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(self.redis.exists(self.client.keys.lease(p)) for p in range(self.settings.partitions)):
                return
            time.sleep(0.02)
        raise AssertionError("partitions were not all leased in time")

    def stop(self) -> None:
        """Stop every pool (hand-over) and join their threads."""
        for pool, _ in self.pools:
            pool.stop()
        for _, thread in self.pools:
            thread.join(timeout=15)
        self.pools.clear()

    @property
    def client(self) -> Client:
        if self._client is None:
            self._client = Client(redis=self.redis, prefix=self.settings.key_prefix,
                                  partitions=self.settings.partitions)
        return self._client

    def call(self, session: str, tool: str, arguments: Any, call: str | None = None) -> dict[str, Any]:
        """Submit a tool call and wait for its reply."""
        return self.client.call(session, tool, arguments, call=call, timeout=10)

    def generation(self, session: str, ui_id: str, generation: int) -> dict[str, str]:
        """The stored fields of one generation (names without the `<uiId>:<generation>:` prefix), as text."""
        key = self.client.keys.generations(self.client.partition(session), session)
        prefix = generation_field(ui_id, generation, "").encode()
        return {k[len(prefix):].decode(): v.decode() for k, v in self.redis.hgetall(key).items()
                if k.startswith(prefix)}

    def log_length(self, session: str) -> int:
        """How many frames the session's frame log holds."""
        return self.redis.xlen(self.client.keys.frame_log(self.client.partition(session), session))

    def rejections(self, reason: str) -> float:
        """The rejection counter of one reason."""
        value = self.metrics.registry.get_sample_value("iui_rejections_total", {"reason": reason})
        return value or 0.0


@pytest.fixture()
def runtime(redis_url: str) -> Iterator[Runtime]:
    """A runtime on the flushed server; pools are stopped at the end."""
    rt = Runtime(redis_url)
    yield rt
    rt.stop()
    rt.redis.close()


def cursor_args(frame: dict[str, Any]) -> dict[str, Any]:
    """The cursor arguments the next call must present."""
    return {"sourceCallId": frame["sourceCallId"], "generation": frame["generation"],
            "baseRevision": frame["revision"]}


def big_document(text_bytes: int) -> dict[str, Any]:
    """The initial stream example with a long Text node (for document budgets)."""
    document = copy.deepcopy(example("stream-initial.json"))
    document["root"]["children"].append({"id": "filler", "type": "Text", "props": {"text": "x" * text_bytes}})
    return document


def aof_server(port: int, directory: str, *, persistent: bool = True) -> subprocess.Popen:
    """A redis-server of a test's own (which it may kill and restart on its AOF in `directory`)."""
    aof = ["--appendonly", "yes", "--appendfsync", "always"] if persistent else ["--appendonly", "no"]
    assert REDIS_BINARY is not None
    return subprocess.Popen([REDIS_BINARY, "--port", str(port), "--bind", "127.0.0.1", "--save", "", *aof,
                             "--dir", directory], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class OwnRedis:
    """A redis-server of a test's own on a free port (`own_redis`), which it stops and starts again
    on its AOF (or, not `persistent`, empty)."""

    def __init__(self, directory: str, persistent: bool) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._directory = directory
        self._persistent = persistent
        self.server: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.server = aof_server(self.port, self._directory, persistent=self._persistent)

    def stop(self, *, kill: bool = False) -> None:
        """SIGTERM (or SIGKILL) the server and wait for it."""
        if self.server is not None:
            if kill:
                self.server.kill()
            else:
                self.server.terminate()
            self.server.wait()
            self.server = None


@contextlib.contextmanager
def own_redis(*, persistent: bool = True, started: bool = True) -> Iterator[OwnRedis]:
    """A test's own redis-server in a temporary directory, killed at the end (skips without the binary)."""
    if REDIS_BINARY is None:
        pytest.skip("redis-server binary not found")
    with tempfile.TemporaryDirectory() as directory:
        redis = OwnRedis(directory, persistent)
        if started:
            redis.start()
        try:
            yield redis
        finally:
            redis.stop(kill=True)


def wait_ping(rt: Runtime) -> None:
    """Wait until the runtime's Redis answers (after a start or a restart)."""
    for _ in range(200):
        try:
            rt.redis.ping()
            return
        except Exception:
            time.sleep(0.05)
    raise AssertionError("redis-server did not come back")
