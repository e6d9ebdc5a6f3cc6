"""A gateway at its connection limit refuses new requests with the `overloaded` problem (503) and
lets them go, and serves again once connections close: against a real `iui gateway` whose limit
is lowered to a few connections."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import redis

from bench.fuzz_http import Answer, Slow, read_answer, send_slowly
from config.settings import load_settings
from gateway.server import UNBOUNDED, connection_limit
from tests.gateway.conftest import GatewayProcess, auth, sample
from tests.gateway.test_api import open_ui
from tests.gateway.test_fuzz_http import problem_of
from tests.integration.conftest import Runtime

pytestmark = pytest.mark.integration
LIMIT = 3
MARKER = b"ZqLIMITMARKERQX"
CATALOG = b"GET /v1/catalog HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"  # the application: 401


@pytest.fixture(scope="module")
def gateway(redis_server: str) -> Iterator[GatewayProcess]:
    process = GatewayProcess(redis_server, gateway_max_connections=LIMIT, gateway_heartbeat_s=0.3,
                             nofile=(64, 4096)).start()
    try:
        yield process
    finally:
        process.stop()


@contextlib.asynccontextmanager
async def _holding(port: int, count: int) -> AsyncIterator[None]:
    """`count` connections that each got one answer and are kept alive while the block runs."""
    held = []
    try:
        for _ in range(count):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            held.append(writer)
            writer.write(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
            assert (await asyncio.wait_for(read_answer(reader), 10)).status == 200
        yield
    finally:
        for writer in held:
            writer.close()
            await writer.wait_closed()


async def _one(port: int, request: bytes) -> Answer:
    """The answer to one request sent whole on a new connection."""
    slow = await send_slowly(port, [(0, request)], wait_s=10)
    assert slow.answer is not None, "no answer"
    return slow.answer


def test_a_request_past_the_limit_is_answered_overloaded_and_let_go(gateway: GatewayProcess) -> None:
    before = sample(gateway.url, "iui_gateway_protocol_refused_total", code="overloaded")

    async def run() -> tuple[Slow, Answer]:
        async with _holding(gateway.port, LIMIT):
            request = b"GET /v1/catalog?" + MARKER + b" HTTP/1.1\r\nhost: x\r\n\r\n"
            refused = await send_slowly(gateway.port, [(0, request)], wait_s=10)
        await asyncio.sleep(0.3)  # the gateway sees them closed
        return refused, await _one(gateway.port, CATALOG)

    slow, served = asyncio.run(run())
    refused, closed = slow.answer, slow.closed
    assert refused is not None
    problem = problem_of(refused, 503, "overloaded")
    assert dict(refused.headers)["retry-after"] == "1"
    assert MARKER not in refused.body and "QX" not in str(problem)
    assert closed  # the refused connection is let go: it must not hold a slot
    problem_of(served, 401, "unauthorized")  # answered by the application again
    assert sample(gateway.url, "iui_gateway_protocol_refused_total", code="overloaded") == before + 1


def test_probes_and_metrics_are_served_past_the_limit(gateway: GatewayProcess) -> None:
    """A liveness probe failing at the limit would restart a gateway holding its streams, and
    Prometheus would see a full gateway as down."""
    async def run() -> list[Answer]:
        async with _holding(gateway.port, LIMIT):
            return [await _one(gateway.port, f"GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".encode())
                    for path in ("/healthz", "/readyz", "/metrics", "/healthz?x=1", "/v1/catalog")]

    *probes, catalog = asyncio.run(run())
    assert [answer.status for answer in probes] == [200, 200, 200, 200]
    assert b"iui_gateway_protocol_refused_total" in probes[2].body
    problem_of(catalog, 503, "overloaded")


def test_a_call_refused_at_the_limit_never_reaches_the_runtime(gateway: GatewayProcess, redis_server: str) -> None:
    client = redis.Redis.from_url(redis_server)
    streams = lambda: sorted(key.decode() for key in client.scan_iter("*"))  # noqa: E731
    keys = streams()
    body = b'{"tool": "intelligent_ui_open", "arguments": {}}'
    request = (b"POST /v1/sessions/limit1/calls HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
               b"authorization: " + auth("agent")["authorization"].encode() + b"\r\n"
               b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)

    async def run() -> Answer:
        async with _holding(gateway.port, LIMIT):
            return await _one(gateway.port, request)

    problem_of(asyncio.run(run()), 503, "overloaded")
    assert streams() == keys  # nothing was submitted, no session created


def test_event_streams_count_and_keep_streaming_while_others_are_refused(redis_url: str,
                                                                         gateway: GatewayProcess) -> None:
    runtime = Runtime(redis_url).start()
    try:
        with httpx.Client(base_url=gateway.url, timeout=10) as client:
            open_ui(client, session="limit2")
    finally:
        runtime.stop()

    async def run() -> Answer:
        async with _holding(gateway.port, LIMIT - 2):
            return await _one(gateway.port, CATALOG)

    with httpx.Client(base_url=gateway.url, timeout=10) as first, httpx.Client(base_url=gateway.url) as second, \
            first.stream("GET", "/v1/sessions/limit2/events", headers=auth("viewer")) as one, \
            second.stream("GET", "/v1/sessions/limit2/events", headers=auth("viewer")) as two:
        assert one.status_code == two.status_code == 200
        problem_of(asyncio.run(run()), 503, "overloaded")
        started, beats = time.monotonic(), 0
        for line in one.iter_lines():  # the stream in hand is not affected
            beats += line == ": heartbeat"
            if beats == 2:
                break
        assert time.monotonic() - started < 5


def test_the_gateway_raises_its_open_file_limit_to_the_hard_limit(gateway: GatewayProcess) -> None:
    assert gateway.process is not None
    with open(f"/proc/{gateway.process.pid}/limits") as file:
        limits = file.read().splitlines()
    files = next(line for line in limits if line.startswith("Max open files")).split()
    assert files[3:5] == ["4096", "4096"], files  # started with a soft limit of 64
    assert sample(gateway.url, "iui_gateway_connection_limit") == LIMIT


def test_open_connections_are_exported(gateway: GatewayProcess) -> None:
    deadline = time.monotonic() + 10  # the earlier tests' connections are gone: only the scrape's own
    while sample(gateway.url, "iui_gateway_connections") != 1:
        assert time.monotonic() < deadline
        time.sleep(0.1)

    async def run() -> float:
        async with _holding(gateway.port, LIMIT - 1):
            return sample(gateway.url, "iui_gateway_connections")  # the scrape's own connection counts

    assert asyncio.run(run()) == LIMIT


INF = resource.RLIM_INFINITY


@pytest.mark.parametrize(("limits", "configured", "expected", "set_to", "warned"), [
    ((1_024, 65_536), None, 65_536 - 256 - 64, (65_536, 65_536), False),  # raised; the files left
    ((1_024, 4_096), None, 4_096 - 256 - 64, (4_096, 4_096), False),
    ((1_024, 4_096), 10_000, 10_000, (4_096, 4_096), True),  # configured beyond the files: said so
    ((65_536, 65_536), 3, 3, None, False),  # already raised: left alone
    ((1_024, INF), None, 1_024 - 256 - 64, None, False),  # an infinite hard limit is the kernel's to cap
    ((INF, INF), None, UNBOUNDED, None, False),  # nothing to count
    ((200, 200), None, 1, None, True),  # no room after the Redis pool: one, and a warning
])
def test_the_connection_limit_is_configured_or_what_the_open_files_allow(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, limits: tuple[int, int],
        configured: int | None, expected: int, set_to: tuple[int, int] | None, warned: bool) -> None:
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(resource, "getrlimit", lambda kind: limits)
    monkeypatch.setattr(resource, "setrlimit", lambda kind, value: calls.append(value))
    settings = load_settings(gateway_max_connections=configured, gateway_redis_connections=256)
    with caplog.at_level(logging.WARNING, logger="gateway.server"):
        assert connection_limit(settings) == expected
    assert calls == ([] if set_to is None else [set_to])
    assert any("IUI_GATEWAY_MAX_CONNECTIONS" in record.getMessage() for record in caplog.records) is warned
