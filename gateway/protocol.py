"""The HTTP/1.1 protocol under uvicorn: a request its parser refuses is answered as a problem too.

uvicorn answers bytes that are not HTTP/1.1 (a malformed request line or header, an unknown
method, a bad chunk size, a second request smuggled behind a `Content-Length`) itself, before
the application sees them, with a `text/plain` 400.  The gateway promises every error as
`application/problem+json` with the security headers, so its protocol writes that refusal as
the same problem as any other `bad_request`, and closes the connection as uvicorn does.

The gateway speaks no other protocol (no WebSocket either): a request asking to upgrade is served
as plain HTTP.  But the parser reads nothing after the refused upgrade: a body still to come
(chunked) could never be read: the request would wait for it for ever, or be served as if it had
none, and the next request on the connection would be refused as malformed.  So a request whose
body is chunked or incomplete is refused the same way, one read whole is answered, and either way
the connection then closes.

A client must send a request's head within `IUI_GATEWAY_HEADER_TIMEOUT_S` (from the connection's
start, or from a kept-alive connection's first byte of the next request) and its body within
`IUI_GATEWAY_BODY_TIMEOUT_S` of the head (uvicorn has neither: a client sending a byte now and
then would hold its connection, and a worker's file descriptor, for ever).  Past either it is
answered `request_timeout` (408) and the connection closes.  An event stream is not affected: its
request is complete once its head is.  A deadline is judged once the loop has read what already
arrived, so a gateway that was itself stalled (SIGSTOP, a long pause) does not refuse a request
that came in time.

A request's head (request line and headers) holds at most `MAX_HEAD_BYTES` (64 KiB); a longer
one is answered `headers_too_large` (431) and the connection closes.  uvicorn sets no bound with
httptools, and the parser gathers a header value chunk by chunk at a cost that grows with the
square of its length: one client sending a 128 MiB header held the loop, and every other client,
for seconds.  The bound is checked after each read (so the parser never holds much more) and on
the head's end, where it is measured as written plainly: the request line, each `name: value`
line and the CRLFs (blanks around a value, which HTTP allows, are not counted).

A connection closed with bytes its client does not take (an event stream dropped for a client that
stopped reading) is aborted once the client took none of them for `IUI_GATEWAY_SEND_TIMEOUT_S`: a
transport's close waits for its buffer to drain, and a client that never reads held its
connection, one of the limit's slots and a file descriptor, for as long as it kept the socket
open.  A client still reading, however slowly, gets every byte.

A request on a connection past `IUI_GATEWAY_MAX_CONNECTIONS` (counting every open connection,
this one and event streams included) is answered `overloaded` (503) in place of the application,
and its connection closes; `/healthz`, `/readyz` and `/metrics` are still served.  Every request
the protocol answers itself is counted (`iui_gateway_protocol_refused_total`): the application's
metrics never see it.
"""

from __future__ import annotations

import asyncio
import functools
import weakref
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .headers import API_POLICY, COMMON
from .problems import PROBLEM, Problem

MALFORMED_DETAIL = "the request is not valid HTTP/1.1"
LINGER_S = 2.0  # how long the rest of a request answered early is read and dropped before the connection closes


TIMEOUT_DETAIL = "the request was not received in time"
MAX_HEAD_BYTES = 64 * 1024  # a request line and its headers (a browser sends a few KiB; a JWT ~1 KiB)
HEAD_DETAIL = f"the request's head (request line and headers) is over {MAX_HEAD_BYTES} bytes"
OVERLOADED_DETAIL = "the gateway is at its connection limit; retry later"
# Served past the connection limit: probes and Prometheus must still see a full gateway (a
# liveness probe failing at the limit would restart a gateway holding all its streams).
UNLIMITED = frozenset({b"/healthz", b"/readyz", b"/metrics"})
RETRY_AFTER_S = 1
CONFIRM_S = 0.05  # a passed deadline is refused this much later, once the loop has polled its sockets


def problem_parts(code: str, detail: str) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Status, headers and body of a problem answered by the protocol itself (nothing of the
    request in it); its headers close the connection."""
    problem = Problem(code, detail)
    body = bytes(problem.response().body)
    headers = [*COMMON, (b"content-security-policy", API_POLICY.encode()), (b"cache-control", b"no-store"),
               (b"content-type", PROBLEM.encode()), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close")]
    return problem.status, headers, body


def problem_bytes(default_headers: list[tuple[bytes, bytes]], code: str, detail: str) -> bytes:
    """The bytes of a problem answered by the protocol itself, written on the socket."""
    status, headers, body = problem_parts(code, detail)
    lines = b"".join(name + b": " + value + b"\r\n" for name, value in [*default_headers, *headers])
    phrase = HTTPStatus(status).phrase
    return f"HTTP/1.1 {status} {phrase}\r\n".encode() + lines + b"\r\n" + body


async def overloaded(scope: Any, receive: Any, send: Any) -> None:
    """The ASGI application a request gets in place of the gateway's past the connection limit:
    the `overloaded` problem, closing the connection (nothing of the request is read)."""
    status, headers, body = problem_parts("overloaded", OVERLOADED_DETAIL)
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"retry-after", str(RETRY_AFTER_S).encode())]})
    await send({"type": "http.response.body", "body": body})


def uvicorn_protocols(*, header_timeout_s: float, body_timeout_s: float, send_timeout_s: float,
                      max_connections: int, refused: Callable[[str], None]) -> dict[str, Any]:
    """The `uvicorn.Config` options of every server of the gateway (`iui gateway`, `iui demo --serve`):
    this HTTP protocol with its read timeouts and connection limit, and no WebSocket layer (an
    upgrade request is served as plain HTTP, where uvicorn's WebSocket layer would answer it with a
    text 403 or 405).  `refused(code)` counts each request the protocol answers itself (the
    application never sees it)."""
    http = functools.partial(ProblemHttpTools, header_timeout_s=header_timeout_s, body_timeout_s=body_timeout_s,
                             send_timeout_s=send_timeout_s, max_connections=max_connections, refused=refused)
    return {"http": http, "ws": "none"}


class ProblemHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol: its parser's refusal written as the gateway's problem, refused
    upgrades never left waiting, and a connection closed only once the client could read its answer."""

    # Slots, not the instance dict: uvicorn's protocol already holds ~40 attributes, and three more
    # in its dict grew each connection by ~1 KiB (a resized dict; `python -m bench gateway --only idle`).
    __slots__ = ("_body_timeout_s", "_head_bytes", "_header_timeout_s", "_max_connections", "_read_deadline",
                 "_refused", "send_timeout_s")
    lingering = False  # the connection is closing: bytes that still arrive are read and dropped

    def __init__(self, *args: Any, header_timeout_s: float, body_timeout_s: float, send_timeout_s: float,
                 max_connections: int, refused: Callable[[str], None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timeout_s = header_timeout_s
        self._body_timeout_s = body_timeout_s
        self.send_timeout_s = send_timeout_s  # the transport's: how long a closed connection's last bytes may wait
        self._max_connections = max_connections
        self._refused = refused
        self._read_deadline: asyncio.TimerHandle | None = None  # the head or the body still to come, or its check
        self._head_bytes: int | None = 0  # bytes read of the head still incomplete (None: between heads)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn
        super().connection_made(transport)
        self.transport = LingeringTransport(self.transport, self)
        self._expect(self._header_timeout_s)

    def connection_lost(self, exc: Exception | None) -> None:
        self._expect(None)
        if isinstance(self.transport, LingeringTransport):
            self.transport.lost()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.lingering:
            return
        if self._head_bytes is not None:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._head_bytes is not None and self._head_bytes > MAX_HEAD_BYTES and not self.lingering:
            self._refuse("headers_too_large", HEAD_DETAIL)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._read_deadline is None:  # a kept-alive connection's next request (the first one's began at connect)
            self._expect(self._header_timeout_s)

    def on_headers_complete(self) -> None:
        self._head_bytes = None
        if _head_size(self.parser.get_method(), self.url, self.headers) > MAX_HEAD_BYTES:
            self._refuse("headers_too_large", HEAD_DETAIL)  # it ended within the read that took it over
            return
        if len(self.connections) > self._max_connections and self.url.partition(b"?")[0] not in UNLIMITED:
            # Answered by `overloaded` in place of the gateway's application, which never sees it.
            self._refused("overloaded")
            app, self.app = self.app, overloaded
            try:
                super().on_headers_complete()
            finally:
                self.app = app
        else:
            super().on_headers_complete()
        self._expect(self._body_timeout_s)  # cancelled at once by a request without a body

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._expect(None)
        self._head_bytes = 0  # a kept-alive connection's next head (what this read holds past it is not counted)

    def _expect(self, timeout_s: float | None) -> None:
        """Wait `timeout_s` for the rest of the request (None: nothing is awaited)."""
        if self._read_deadline is not None:
            self._read_deadline.cancel()
        self._read_deadline = None if timeout_s is None else self.loop.call_later(timeout_s, self._timed_out)

    def _timed_out(self) -> None:
        """The deadline passed: judged again once the loop has read what already arrived (a gateway
        stalled past it, by SIGSTOP or a long pause, runs its due timers before it reads its
        sockets, and a request that came in time would be refused)."""
        self._read_deadline = self.loop.call_later(CONFIRM_S, self._refuse_late)

    def _refuse_late(self) -> None:
        self._read_deadline = None
        if self.lingering or self.transport.is_closing():
            return
        if self.pipeline:  # a pipelined request is not read until the one before it is answered
            self._expect(self._body_timeout_s)
            return
        self._refuse("request_timeout", TIMEOUT_DETAIL)

    def send_400_response(self, msg: str) -> None:
        self._refuse("bad_request", MALFORMED_DETAIL)

    def _unsupported_upgrade_warning(self) -> None:
        # Not a warning per hostile request (uvicorn's would also advise installing a WebSocket library).
        # The parser reads nothing after a refused upgrade: what follows on the connection is dropped.
        cycle = self.cycle
        chunked = any(name == b"transfer-encoding" for name, _ in self.headers)
        if cycle is not None and (cycle.more_body or chunked):
            # the body can never be read (a chunked one is not even announced to the application)
            self._refuse("bad_request", MALFORMED_DETAIL)
        elif cycle is None or cycle.response_complete:
            self.lingering = True
            self.transport.close()
        else:
            self.lingering = True
            cycle.keep_alive = False  # the request was read whole: it is answered, then the connection closes

    def _refuse(self, code: str, detail: str) -> None:
        """Answer the problem `code` unless an answer already began, end the application's request,
        close; counted either way (the request was cut short)."""
        self._refused(code)
        cycle = self.cycle
        if cycle is None or cycle.response_complete or not cycle.response_started:
            self.transport.write(problem_bytes(self.server_state.default_headers, code, detail))
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True  # the application's reads end, its answer goes nowhere
            cycle.message_event.set()
        self.lingering = True
        self.transport.close()


def _head_size(method: bytes, url: bytes, headers: list[tuple[bytes, bytes]]) -> int:
    """The bytes of a parsed head written plainly: `METHOD url HTTP/1.1`, `name: value` lines, CRLFs."""
    return len(method) + len(url) + 12 + sum(len(name) + len(value) + 4 for name, value in headers) + 2


class LingeringTransport(asyncio.Transport):
    """The connection's transport, whose `close` waits while the client may still be sending.

    uvicorn closes a connection that is not kept alive (`Connection: close`, a refused upgrade, a
    malformed request) as soon as the answer is written, even when it was given before the body
    was read (401, 404, 413).  Closing a socket with unread bytes resets the connection, and the
    reset can destroy the answer before the client reads it: the client sees a dropped connection
    instead of its 413.  So while a body is still arriving, this shuts the writing side, reads
    and drops what still comes, and closes after `LINGER_S`.
    """

    def __init__(self, transport: asyncio.Transport, protocol: ProblemHttpTools) -> None:
        super().__init__()
        self._transport = transport
        # Weakly: the protocol holds this as its transport, and the pair made a cycle, which kept
        # each ended connection's protocol, request cycle and transports until a full collection.
        self._protocol = weakref.ref(protocol)
        self._send_timeout_s = protocol.send_timeout_s
        self._closing = False
        self._lost = False  # the connection is gone: nothing is left to close or abort
        self._abort_check: asyncio.TimerHandle | None = None

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        protocol = self._protocol()
        if protocol is None or self._lost:
            return  # the connection is gone already
        cycle = protocol.cycle
        if not protocol.lingering and (cycle is None or not cycle.more_body):
            self._close()
            return
        protocol.lingering = True
        if self._transport.can_write_eof():
            self._transport.write_eof()
        self._transport.resume_reading()
        asyncio.get_running_loop().call_later(LINGER_S, self._close)

    def _close(self) -> None:
        """Close; a transport's close lasts until its buffer drains: for ever, for a client that
        stopped reading, so one that takes none of the bytes still to send for the send timeout is
        aborted (`_watch`).  A client still reading, however slowly, keeps its connection."""
        if self._lost:
            return
        self._transport.close()
        self._watch(self._transport.get_write_buffer_size())

    def _watch(self, pending: int) -> None:
        if pending:  # `lost` cancels the check
            loop = asyncio.get_running_loop()
            self._abort_check = loop.call_later(self._send_timeout_s, self._judge, pending)

    def _judge(self, before: int) -> None:
        self._abort_check = None
        pending = self._transport.get_write_buffer_size()
        if pending and pending >= before:
            self._transport.abort()  # no byte taken for the whole send timeout
        else:
            self._watch(pending)

    def lost(self) -> None:
        """The connection is gone (its protocol's `connection_lost`): the abort check ends with it
        (asyncio's transport, once lost, cannot be aborted; the timer held it alive)."""
        self._lost = True
        if self._abort_check is not None:
            self._abort_check.cancel()
            self._abort_check = None

    def is_closing(self) -> bool:
        return self._closing or self._transport.is_closing()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._closing:
            self._transport.write(data)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def write_eof(self) -> None:
        self._transport.write_eof()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()

    def abort(self) -> None:
        self._transport.abort()
