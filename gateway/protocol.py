"""The HTTP/1.1 protocol under uvicorn: a request its parser refuses is answered as a problem too.

uvicorn answers bytes that are not HTTP/1.1 (a malformed request line or header, an unknown
method, a bad chunk size, a second request smuggled behind a `Content-Length`) itself, before
the application sees them, with a `text/plain` 400.  The gateway promises every error as
`application/problem+json` with the security headers, so its protocol writes that refusal as
the same problem as any other `bad_request`, and closes the connection as uvicorn does.

The gateway speaks no other protocol (no WebSocket either): a request asking to upgrade is served
as plain HTTP.  But the parser stops at the refused upgrade, so a body still to come (chunked)
could never be read, and the request would wait for it for ever: that request is refused the
same way, and its connection closed.
"""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .headers import API_POLICY, COMMON
from .problems import PROBLEM, Problem

MALFORMED_DETAIL = "the request is not valid HTTP/1.1"
LINGER_S = 2.0  # how long the rest of a refused request is read and dropped before the connection closes


def malformed_response(default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The bytes of the 400 problem for a request the parser refuses (nothing of the request in it)."""
    body = bytes(Problem("bad_request", MALFORMED_DETAIL).response().body)
    headers = [*default_headers, *COMMON, (b"content-security-policy", API_POLICY.encode()),
               (b"cache-control", b"no-store"), (b"content-type", PROBLEM.encode()),
               (b"content-length", str(len(body)).encode()), (b"connection", b"close")]
    lines = b"".join(name + b": " + value + b"\r\n" for name, value in headers)
    return b"HTTP/1.1 400 Bad Request\r\n" + lines + b"\r\n" + body


class ProblemHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol, with its parser's refusal written as the gateway's problem."""

    _lingering = False

    def send_400_response(self, msg: str) -> None:
        self._refuse()

    def _unsupported_upgrade_warning(self) -> None:
        # Not a warning per hostile request (uvicorn's would also advise installing a WebSocket library).
        if self.cycle is not None and self.cycle.more_body:  # else the whole request was read: it is served
            self._refuse()

    def data_received(self, data: bytes) -> None:
        if not self._lingering:
            super().data_received(data)

    def _refuse(self) -> None:
        """Answer the problem unless an answer already began, end the application's request, close."""
        cycle = self.cycle
        if cycle is None or cycle.response_complete or not cycle.response_started:
            self.transport.write(malformed_response(self.server_state.default_headers))
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True  # the application's reads end, its answer goes nowhere
            cycle.message_event.set()
        # Close once the client had time to read the answer: closing while its unread bytes still
        # arrive would reset the connection, and the reset can destroy the answer before it is read.
        self._lingering = True
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_S, self.transport.close)
