"""Errors as RFC 9457 problem details, with the runtime's stable codes.

A problem never repeats anything the client sent: its `detail` is the runtime's message (which
names only the host's own values) or a fixed sentence of the gateway's.  Every session the
caller may not see, whether foreign or missing, is the same 404.
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

import orjson
from starlette.responses import Response

from workers.wire.errors import ErrorCode

PROBLEM = "application/problem+json"

# The HTTP status of each runtime error code (the README's error table says when each arises).
STATUS: Mapping[str, int] = {
    **dict.fromkeys((ErrorCode.MALFORMED_ENTRY, ErrorCode.INVALID_JSON, ErrorCode.WRONG_PARTITION), 400),
    **dict.fromkeys((ErrorCode.UNKNOWN_SESSION, ErrorCode.UNKNOWN_SOURCE, ErrorCode.UNKNOWN_DOCUMENT,
                     ErrorCode.UNKNOWN_OPERATION, ErrorCode.UNKNOWN_BLOCK), 404),
    **dict.fromkeys((ErrorCode.CURSOR_CONFLICT, ErrorCode.STREAM_CLOSED, ErrorCode.CALL_ID_REUSED,
                     ErrorCode.REQUEST_ID_REUSED, ErrorCode.STALE_DOCUMENT, ErrorCode.DOCUMENT_NOT_COMPLETE,
                     ErrorCode.NOT_CANCELLABLE, ErrorCode.NOT_AWAITING_CONFIRMATION, ErrorCode.INVALID_TRANSITION,
                     ErrorCode.FORGED_RESULT, ErrorCode.TURN_CLOSED, ErrorCode.PHASE_CHANGED, ErrorCode.CONFLICT,
                     ErrorCode.FRAME_BUDGET, ErrorCode.BYTE_BUDGET, ErrorCode.GENERATION_CAPACITY,
                     ErrorCode.PLAIN_CAPACITY, ErrorCode.ANSWER_CAPACITY, ErrorCode.LEDGER_FULL,
                     ErrorCode.OPERATION_CAPACITY), 409),
    ErrorCode.SESSION_DELETED: 410,
    **dict.fromkeys((ErrorCode.OVERSIZE, ErrorCode.DOCUMENT_TOO_LARGE, ErrorCode.TOO_LARGE), 413),
    **dict.fromkeys((ErrorCode.INVALID_ARGUMENTS, ErrorCode.UNKNOWN_TOOL, ErrorCode.STREAMING_DISABLED,
                     ErrorCode.INVALID_DOCUMENT, ErrorCode.INVALID_MUTATION, ErrorCode.INVALID_SOURCE_CALL_ID,
                     ErrorCode.UNKNOWN_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_VALUES,
                     ErrorCode.UNKNOWN_ACTION, ErrorCode.INVALID_ACTION, ErrorCode.UNKNOWN_CAPABILITY,
                     ErrorCode.ARGUMENT_MISMATCH, ErrorCode.INVALID_BLOCK, ErrorCode.INVALID_FINAL_ANSWER,
                     ErrorCode.INVALID_VIEW_STATE), 422),
    **dict.fromkeys((ErrorCode.INVALID_RECEIPT, ErrorCode.DEAD_LETTER), 500),
}
# The gateway's own codes.
GATEWAY_CODES: Mapping[str, int] = {
    "bad_request": 400, "invalid_json": 400, "bad_cursor": 400, "unauthorized": 401, "forbidden": 403,
    "not_found": 404, "method_not_allowed": 405, "request_timeout": 408, "payload_too_large": 413,
    "unsupported_media_type": 415, "backpressure": 429, "headers_too_large": 431, "unavailable": 503,
    "overloaded": 503,
    "timeout": 504,
}
NOT_FOUND_DETAIL = "no such session, or not yours"


class Problem(Exception):
    """An error response: a code, its status, a fixed detail and optional extra members."""

    def __init__(self, code: str, detail: str, *, extra: Mapping[str, Any] | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(detail)
        self.code = code
        self.status = GATEWAY_CODES.get(code) or STATUS.get(code, 500)
        self.detail = detail
        self.extra = dict(extra or {})
        self.headers = dict(headers or {})

    def response(self) -> Response:
        """The problem+json response."""
        body = {"type": "about:blank", "title": HTTPStatus(self.status).phrase, "status": self.status,
                "code": self.code, "detail": self.detail, **self.extra}
        return Response(orjson.dumps(body), status_code=self.status, media_type=PROBLEM, headers=self.headers)


def not_found() -> Problem:
    """The one answer for a session the caller may not see, whether it exists or not."""
    return Problem("not_found", NOT_FOUND_DETAIL)


def from_reply(error: Mapping[str, Any]) -> Problem:
    """The problem of a runtime error reply (its code, message, issues and details; an unknown
    session becomes the gateway's one 404)."""
    code = str(error.get("code", ""))
    if code == ErrorCode.UNKNOWN_SESSION:
        return not_found()
    extra = {key: value for key, value in error.items() if key not in ("code", "message")}
    return Problem(code if code in STATUS else "unavailable", str(error.get("message", "")), extra=extra)
