"""A fixed-seed slice of the HTTP fuzzer (`python -m bench fuzz-http` runs it long) against a real
`iui gateway`, and one regression test for each defect it found."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from starlette.requests import Request

from bench.fuzz_http import FAILURES, Answer, healthy, open_streams, prepare, send_raw, storm
from gateway.bodies import read_capped
from gateway.cursor import BadCursor, Cursor
from gateway.problems import Problem
from tests.gateway.conftest import SECRET, GatewayProcess, auth, sample
from tests.gateway.test_api import open_ui
from tests.integration.conftest import Runtime

pytestmark = pytest.mark.integration
MARKER = "ZqMARKERQX"
SECURITY = ("x-content-type-options", "x-frame-options", "content-security-policy")


def problem_of(reply: httpx.Response | Answer, status: int, code: str) -> dict[str, Any]:
    """The reply's problem, checked to be the documented shape of `status` and `code`."""
    headers = dict(reply.headers)
    body = reply.content if isinstance(reply, httpx.Response) else reply.body
    assert (reply.status_code if isinstance(reply, httpx.Response) else reply.status) == status, body
    assert headers["content-type"] == "application/problem+json", headers
    assert all(name in headers for name in SECURITY), headers
    page = isinstance(reply, httpx.Response) and reply.request.url.path.startswith("/app")
    assert page or headers["cache-control"] == "no-store", headers  # API answers are never cached
    problem: dict[str, Any] = httpx.Response(200, content=body).json()
    assert problem["code"] == code and problem["status"] == status and problem["type"] == "about:blank"
    return problem


def test_a_short_storm_breaks_no_promise(stack: tuple[Runtime, GatewayProcess]) -> None:
    gateway = stack[1]
    target = prepare(gateway.url, SECRET.encode())
    tally = asyncio.run(storm(gateway.url, target, seconds=4, seed=5, concurrency=4, max_requests=1_500))
    assert tally.counts["requests"] >= 200
    assert {name: tally.counts[name] for name in FAILURES} == dict.fromkeys(FAILURES, 0), tally.examples
    assert gateway.process is not None and gateway.process.poll() is None
    assert open_streams(gateway.url) == 0
    assert healthy(gateway.url, SECRET.encode())


# -- one regression test per defect the fuzzer found ---------------------------------------------


def test_a_trailing_slash_is_404_and_its_path_is_never_repeated_in_a_redirect(http: httpx.Client) -> None:
    for path in (f"/v1/sessions/{MARKER}/events/", "/v1/catalog/"):
        reply = http.get(path, headers={**auth("viewer"), "host": f"{MARKER}.example"})
        problem_of(reply, 404, "not_found")
        assert "location" not in reply.headers and MARKER not in reply.text


@pytest.mark.parametrize("path", ["/v1%2Fsessions%2Fs1", "/v1/sessions/s1%2Fevents", "/v1/sessions/s1%2fcalls",
                                  "/app%2Fstatic%2Fapp.js"])
def test_an_encoded_slash_is_no_slash_and_names_no_route(http: httpx.Client, path: str) -> None:
    for method in ("GET", "POST", "DELETE"):
        reply = http.request(method, path, headers={**auth("user"), "content-type": "application/json"},
                             content=b"{}" if method == "POST" else None)
        problem_of(reply, 404, "not_found")


def test_a_body_without_a_content_type_is_refused_415_and_an_empty_one_is_not(http: httpx.Client) -> None:
    headers = {**auth("agent")}
    reply = http.post("/v1/sessions/s1/calls", headers=headers, content=b'{"tool": "x", "arguments": {}}')
    assert "content-type" not in reply.request.headers
    problem_of(reply, 415, "unsupported_media_type")
    assert http.post("/v1/sessions/s1/calls", headers=headers).status_code != 415  # no body: `{}`


@pytest.mark.parametrize("raw", [
    b"BREW /v1/catalog HTTP/1.1\r\nhost: x\r\n\r\n",
    b"GET /v1/catalog HTTP/9.9\r\nhost: x\r\n\r\n",
    b"GET /v1/catalog HTTP/1.1\r\nhost: x\r\nbad header: " + MARKER.encode() + b"\r\n\r\n",
    b"POST /v1/sessions/s1/calls HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n" + MARKER.encode(),
])
def test_bytes_that_are_not_http_get_the_bad_request_problem(http: httpx.Client, raw: bytes) -> None:
    url = str(http.base_url).rstrip("/")
    before = sample(url, "iui_gateway_protocol_refused_total", code="bad_request")
    answer = asyncio.run(send_raw(raw, int(url.rsplit(":", 1)[1])))
    assert isinstance(answer, Answer), answer
    problem_of(answer, 400, "bad_request")
    assert MARKER.encode() not in answer.body
    # the application never sees these requests: the protocol counts them
    assert sample(url, "iui_gateway_protocol_refused_total", code="bad_request") == before + 1


def test_a_websocket_upgrade_is_served_as_plain_http(http: httpx.Client) -> None:
    reply = http.get("/v1/catalog", headers={"connection": "upgrade", "upgrade": "websocket",
                                            "sec-websocket-version": "13",
                                            "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ=="})
    problem_of(reply, 401, "unauthorized")
    reply = http.request("PROPFIND", "/v1/catalog", headers={"connection": "upgrade", "upgrade": "websocket"})
    problem_of(reply, 405, "method_not_allowed")


def test_an_upgrade_request_with_a_chunked_body_is_answered_and_not_left_waiting(http: httpx.Client) -> None:
    def body() -> Iterator[bytes]:
        yield b'{"tool": "intelligent_ui_open", '
        yield b'"arguments": {}}'

    for upgrade in ("h2c", "websocket"):
        reply = http.post("/v1/sessions/s1/calls", content=body(), timeout=5,
                          headers={**auth("agent"), "connection": "upgrade", "upgrade": upgrade})
        problem_of(reply, 400, "bad_request")
    assert http.get("/healthz").status_code == 200


def test_a_cursor_past_redis_64_bit_ids_is_refused_400_not_a_broken_stream(http: httpx.Client) -> None:
    open_ui(http)
    with http.stream("GET", "/v1/sessions/s1/events", headers=auth("viewer"), timeout=5) as first:
        epoch = next(line for line in first.iter_lines() if line.startswith("id: ")).split(".")[1]
    for ids in (f"0-0.{2**64}-0.0-0", f"{2**64 - 1}-{2**64 - 1}.0-0.0-0", f"0-0.0-0.0-{'9' * 20}"):
        for route in ("events", "ag-ui"):
            cursor = {"last-event-id": f"v1.{epoch}.{ids}"}
            reply = http.get(f"/v1/sessions/s1/{route}", headers={**auth("viewer"), **cursor})
            problem_of(reply, 400, "bad_cursor")


def test_cursor_numbers_stop_below_the_largest_redis_id() -> None:
    assert Cursor.parse(f"v1.1.{2**64 - 2}-{2**64 - 2}.0-0.0-0").frame == (2**64 - 2, 2**64 - 2)
    with pytest.raises(BadCursor):
        Cursor.parse(f"v1.1.{2**64 - 1}-0.0-0.0-0")


def test_a_body_cut_off_by_the_client_is_a_problem_not_an_unexpected_error() -> None:
    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    request = Request({"type": "http", "method": "POST", "path": "/", "headers": []}, receive)
    with pytest.raises(Problem) as refused:
        asyncio.run(read_capped(request, 1_024))
    assert refused.value.code == "bad_request"


@pytest.mark.parametrize("value", ["bytes=abc", "bytes=999999-", "bytes=5-1", f"{MARKER}=1-2"])
def test_the_clients_files_ignore_a_range_and_are_served_whole(http: httpx.Client, value: str) -> None:
    whole = http.get("/app/static/styles.css")
    for path in ("/app/static/styles.css", "/app/"):
        reply = http.get(path, headers={"range": value, "if-range": MARKER})
        assert reply.status_code == 200 and "content-range" not in reply.headers
        assert MARKER not in reply.text
    assert http.get("/app/static/styles.css", headers={"range": value}).content == whole.content


def test_an_answer_given_before_the_body_is_read_reaches_a_client_whose_connection_closes(
        http: httpx.Client) -> None:
    async def body() -> AsyncIterator[bytes]:  # chunked, as the fuzzer sends it
        yield b'{"tool": "intelligent_ui_open", "arguments": {"pad": "'
        for _ in range(48):
            yield b"x" * 65_536
        yield b'"}}'

    async def post(extra: dict[str, str]) -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=str(http.base_url), timeout=10) as client:
            return [await client.post("/v1/sessions/s1/calls", content=body(), headers={**extra, "connection": "close"})
                    for _ in range(3)]  # a reset destroyed the answer most of the time, not every time

    for reply in asyncio.run(post(auth("agent"))):
        problem_of(reply, 413, "payload_too_large")
    for reply in asyncio.run(post({})):
        problem_of(reply, 401, "unauthorized")


def test_a_refused_cors_preflight_is_a_problem(redis_server: str) -> None:
    gateway = GatewayProcess(redis_server, gateway_origins="https://app.example").start()
    try:
        preflight = {"access-control-request-method": "POST", "access-control-request-headers": "authorization"}
        allowed = httpx.options(gateway.url + "/v1/sessions/s1/calls",
                                headers={**preflight, "origin": "https://app.example"})
        assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == "https://app.example"
        for origin, extra in ((f"https://{MARKER}.example", {}), ("https://app.example", {
                "access-control-request-headers": f"x-{MARKER}"})):
            refused = httpx.options(gateway.url + "/v1/sessions/s1/calls",
                                    headers={**preflight, "origin": origin, **extra})
            problem_of(refused, 400, "bad_request")
            assert MARKER not in refused.text and MARKER not in str(refused.headers)
    finally:
        gateway.stop()


@pytest.mark.parametrize(("method", "path", "allow"), [
    ("DELETE", "/v1/sessions/s1/operations", "GET, HEAD, POST"),
    ("POST", "/v1/sessions/s1/messages/m/blocks/b/state", "GET, HEAD, PUT"),
    ("GET", "/v1/sessions/s1", "DELETE"),
    ("POST", "/app/static/styles.css", "GET, HEAD"),
])
def test_a_405_names_every_method_of_the_path_in_allow(http: httpx.Client, method: str, path: str,
                                                       allow: str) -> None:
    reply = http.request(method, path, headers=auth("admin"))
    problem_of(reply, 405, "method_not_allowed")
    assert reply.headers["allow"] == allow
