"""A client that sends its request slowly, or never, is answered 408 and let go: against a real
`iui gateway` whose read timeouts are shortened to one second."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator

import httpx
import pytest

from bench.fuzz_http import Answer, Slow, read_answer, send_slowly
from tests.gateway.conftest import GatewayProcess, auth, sample
from tests.gateway.test_events import Agent
from tests.gateway.test_fuzz_http import problem_of
from tests.integration.conftest import Runtime

pytestmark = pytest.mark.integration
TIMEOUT_S = 1.0
MARKER = b"ZqSLOWMARKERQX"


@pytest.fixture(scope="module")
def gateway(redis_server: str) -> Iterator[GatewayProcess]:
    process = GatewayProcess(redis_server, gateway_header_timeout_s=TIMEOUT_S, gateway_body_timeout_s=TIMEOUT_S,
                             gateway_heartbeat_s=0.3).start()
    try:
        yield process
    finally:
        process.stop()


def slow(gateway: GatewayProcess, parts: list[tuple[float, bytes]]) -> Slow:
    return asyncio.run(send_slowly(gateway.port, parts, wait_s=10))


def assert_timed_out(slow: Slow, *, within: float) -> None:
    assert slow.answer is not None
    problem_of(slow.answer, 408, "request_timeout")
    assert MARKER not in slow.answer.body
    assert slow.elapsed < within, slow.elapsed
    assert slow.closed  # the connection is let go once the answer is read


def test_a_connection_that_sends_nothing_is_answered_408_and_closed(gateway: GatewayProcess) -> None:
    before = sample(gateway.url, "iui_gateway_protocol_refused_total", code="request_timeout")
    assert_timed_out(slow(gateway, []), within=TIMEOUT_S + 2)
    assert sample(gateway.url, "iui_gateway_protocol_refused_total", code="request_timeout") == before + 1


def test_a_request_head_sent_a_byte_at_a_time_is_not_kept_alive_by_its_trickle(gateway: GatewayProcess) -> None:
    head = b"GET /v1/catalog HTTP/1.1\r\nhost: x\r\nx-pad: " + MARKER + b"\r\n\r\n"
    assert_timed_out(slow(gateway, [(0.1, head[i:i + 1]) for i in range(len(head))]),  # ~6 s in all
                     within=TIMEOUT_S + 2)


def test_a_body_that_never_arrives_is_answered_408(gateway: GatewayProcess) -> None:
    head = (b"POST /v1/sessions/s1/calls HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            b"authorization: " + auth("agent")["authorization"].encode() + b"\r\ncontent-length: 100\r\n\r\n")
    assert_timed_out(slow(gateway, [(0, head), (0.2, b'{"tool": "' + MARKER)]), within=TIMEOUT_S + 2)


def test_a_kept_alive_connections_next_request_has_its_own_deadline(gateway: GatewayProcess) -> None:
    first = b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n"

    async def run() -> tuple[int, Slow]:
        reader, writer = await asyncio.open_connection("127.0.0.1", gateway.port)
        try:
            writer.write(first)
            ok = await asyncio.wait_for(read_answer(reader), 10)
            await asyncio.sleep(TIMEOUT_S * 1.5)  # idle past the head timeout: kept alive (uvicorn's 5 s)
            writer.write(b"GET /healthz HTTP/1.1\r\nho")  # the next request begins, and stalls
            started = time.monotonic()
            answer = await asyncio.wait_for(read_answer(reader), 10)
            elapsed = time.monotonic() - started
            return ok.status, Slow(answer, elapsed, await asyncio.wait_for(reader.read(), 10) == b"")
        finally:
            writer.close()

    status, timed_out = asyncio.run(run())
    assert status == 200
    assert_timed_out(timed_out, within=TIMEOUT_S + 2)


def test_prompt_requests_and_event_streams_outlive_the_timeouts(redis_url: str, gateway: GatewayProcess) -> None:
    runtime = Runtime(redis_url).start()
    try:
        Agent(runtime)
        with httpx.Client(base_url=gateway.url, timeout=10) as client:
            assert client.get("/healthz").status_code == 200
            time.sleep(TIMEOUT_S * 1.5)
            assert client.get("/healthz").status_code == 200  # the same connection, kept alive
            reply = client.post("/v1/sessions/s1/calls", json={"tool": "intelligent_ui_plain", "arguments": {}},
                                headers=auth("agent"))
            assert reply.status_code == 422, reply.text  # decided by the runtime, not cut off
            lines: list[str] = []
            started = time.monotonic()
            with client.stream("GET", "/v1/sessions/s1/events", headers=auth("viewer")) as stream:
                assert stream.status_code == 200
                for line in stream.iter_lines():
                    lines.append(line)
                    if time.monotonic() - started > TIMEOUT_S * 3:
                        break
            assert time.monotonic() - started > TIMEOUT_S * 3  # still open, heartbeats arriving
            assert lines[:2] == [": iui events", "retry: 3000"] and lines.count(": heartbeat") >= 2, lines
    finally:
        runtime.stop()


def test_a_request_sent_whole_while_the_gateway_was_stopped_is_served_not_timed_out(
        gateway: GatewayProcess) -> None:
    """A gateway stalled past a deadline (SIGSTOP, a long pause) runs its due timers before it
    reads its sockets: a request that arrived in time must still be served."""
    assert gateway.process is not None

    async def run() -> Answer:
        reader, writer = await asyncio.open_connection("127.0.0.1", gateway.port)
        try:
            await asyncio.sleep(0.3)  # accepted: the head's deadline runs
            gateway.process.send_signal(signal.SIGSTOP)
            try:
                writer.write(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")  # whole, well before the deadline
                await writer.drain()
                await asyncio.sleep(TIMEOUT_S * 1.5)
            finally:
                gateway.process.send_signal(signal.SIGCONT)
            return await asyncio.wait_for(read_answer(reader), 10)
        finally:
            writer.close()

    assert asyncio.run(run()).status == 200


def test_a_request_head_over_64_kib_is_answered_431_and_closed_while_others_are_served(
        gateway: GatewayProcess) -> None:
    head = b"GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: "
    filler = [(0, MARKER + b"Q" * 65_536) for _ in range(64)]  # 4 MiB in 64 KiB writes, never ended
    before = sample(gateway.url, "iui_gateway_protocol_refused_total", code="headers_too_large")
    refused = slow(gateway, [(0, head), *filler])
    assert refused.answer is not None
    problem_of(refused.answer, 431, "headers_too_large")
    assert MARKER not in refused.answer.body
    assert refused.closed
    assert sample(gateway.url, "iui_gateway_protocol_refused_total", code="headers_too_large") == before + 1
    started = time.monotonic()
    assert httpx.get(gateway.url + "/healthz", timeout=5).status_code == 200
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize("over", [1, 40_000])
def test_a_whole_head_over_64_kib_sent_at_once_is_431(gateway: GatewayProcess, over: int) -> None:
    # the head ends within the read that carries it past the bound: measured whole, not by reads
    line = b"GET /healthz HTTP/1.1\r\nhost: x\r\nx-pad: "
    head = line + b"Q" * (64 * 1024 + over - len(line) - 4) + b"\r\n\r\n"  # the pad's CRLF, the head's
    assert len(head) == 64 * 1024 + over
    problem_of(slow(gateway, [(0, head)]).answer, 431, "headers_too_large")


def test_a_request_head_of_exactly_64_kib_is_served(gateway: GatewayProcess) -> None:
    line = b"GET /healthz HTTP/1.1\r\nhost: x\r\nx-pad: "
    head = line + b"Q" * (64 * 1024 - len(line) - 4) + b"\r\n\r\n"
    assert len(head) == 64 * 1024
    assert slow(gateway, [(0, head)]).answer.status == 200


def test_a_request_head_just_under_64_kib_is_served(gateway: GatewayProcess) -> None:
    pad = "Q" * (64 * 1024 - 200)  # the request line and other headers fill the rest
    assert httpx.get(gateway.url + "/healthz", headers={"x-pad": pad}, timeout=5).status_code == 200
    # and a kept-alive connection's next request is counted from its own start
    with httpx.Client(base_url=gateway.url, timeout=5) as client:
        for _ in range(3):
            assert client.get("/healthz", headers={"x-pad": pad}).status_code == 200
