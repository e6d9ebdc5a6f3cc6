"""Input entries and replies: pydantic models and the one place that encodes/decodes JSON.

An input entry is a Redis Stream entry whose fields are all strings (see the README's wire
contract).  Replies are JSON texts pushed on the request's reply list.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

import orjson
from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from .errors import ErrorCode, HostError, MalformedEntry

# Always applied with `fullmatch`: `re.match(...$)` also accepts a final "\n", and pydantic's
# Rust-regex `pattern` gives `$` another meaning again, so one predicate serves both checks.
_SESSION = re.compile(r"[!-~]{1,128}")  # printable ASCII without space, then no ':{}' (checked below)
_REQUEST = re.compile(r"[ -~]{1,128}")
_CALL = re.compile(r"[ -~]{1,256}")
_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_SESSION_FORBIDDEN = re.compile(r"[:{}]")


def is_session_id(value: str) -> bool:
    """A session id usable in key names: 1-128 printable ASCII, no space, ':', '{' or '}'."""
    return _SESSION.fullmatch(value) is not None and _SESSION_FORBIDDEN.search(value) is None


def is_request_id(value: str) -> bool:
    """A request id usable in the reply key: 1-128 printable ASCII."""
    return _REQUEST.fullmatch(value) is not None


def is_call_id(value: str) -> bool:
    """A tool call id (also every `sourceCallId`): 1-256 printable ASCII."""
    return _CALL.fullmatch(value) is not None


def _checked(predicate: Callable[[str], bool]) -> AfterValidator:
    def check(value: str) -> str:
        if not predicate(value):
            raise ValueError("invalid")  # parse_entry names the field; the value is never echoed
        return value
    return AfterValidator(check)


class InputEntry(BaseModel):
    """One decoded input entry (the JSON body is parsed separately, after the size check)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session: Annotated[str, _checked(is_session_id)]
    request: Annotated[str, _checked(is_request_id)]
    kind: Literal["tool", "action", "result", "view"]
    name: Annotated[str, _checked(lambda value: _NAME.fullmatch(value) is not None)]
    call: Annotated[str, _checked(is_call_id)]
    body: str
    # Set by the trusted producer (never taken from the body); used only by `kind=view` requests.
    principal: Annotated[str, _checked(is_session_id)] | None = None
    project: Annotated[str, _checked(is_session_id)] | None = None


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def decode_fields(raw: Mapping[object, object] | Mapping[str, str]) -> dict[str, str]:
    """Entry fields as text (a raw reply's are bytes; bad UTF-8 replaced)."""
    return {_text(k): _text(v) for k, v in raw.items()}


def address_of(fields: Mapping[str, str]) -> tuple[str, str] | None:
    """(session, request) if both are usable in key names, else None (no reply possible)."""
    session, request = fields.get("session", ""), fields.get("request", "")
    if not is_session_id(session) or not is_request_id(request):
        return None
    return session, request


def parse_entry(fields: Mapping[str, str]) -> InputEntry:
    """Validate the entry fields or raise `MalformedEntry` naming the first bad field."""
    try:
        return InputEntry.model_validate(dict(fields))
    except (ValidationError, TypeError) as error:
        errors = error.errors() if isinstance(error, ValidationError) else []
        field = str(errors[0]["loc"][0]) if errors and errors[0].get("loc") else "entry"
        kind = errors[0].get("type", "") if errors else ""
        if kind == "extra_forbidden":  # never echo a field name we do not know
            raise MalformedEntry("the entry has a field that is not part of the wire contract") from None
        what = "is missing" if kind == "missing" else "is invalid"
        raise MalformedEntry(f"entry field {field!r} {what}") from None


BODY_MARGIN = 4_096  # envelope room above the document budget for one tool call body


def parse_body(body: str, max_bytes: int) -> dict[str, Any]:
    """The JSON arguments object of a tool call, size-checked before parsing."""
    if len(body.encode("utf-8")) > max_bytes:
        raise MalformedEntry(f"entry body exceeds {max_bytes} bytes", code=ErrorCode.OVERSIZE)
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise MalformedEntry("entry body is not valid JSON", code=ErrorCode.INVALID_JSON) from None
    if not isinstance(value, dict):
        raise MalformedEntry("entry body must be a JSON object", code=ErrorCode.INVALID_ARGUMENTS)
    return value


def dumps(value: Any) -> str:
    """Compact JSON text (non-ASCII kept) as stored and published."""
    return orjson.dumps(value).decode("utf-8")


def loads(text: str | bytes) -> Any:
    """Decode a JSON text written by this runtime."""
    return orjson.loads(text)


def ok_reply(request: str, result: Mapping[str, Any]) -> str:
    """The JSON text of an accepted request's reply."""
    return dumps({"ok": True, "request": request, "result": result})


def ok_reply_text(request: str, result: str) -> str:
    """`ok_reply` for a result that is already a JSON text (a stored frame or answer, spliced as is)."""
    return '{"ok":true,"request":' + dumps(request) + ',"result":' + result + "}"


def error_reply(request: str, error: HostError, details: Mapping[str, Any] | None = None) -> str:
    """The JSON text of a rejected request's reply (at most 10 issues; `details` added to the error)."""
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.issues:
        body["issues"] = [{"path": i.path, "message": i.message} for i in error.issues]
    if details:
        body.update(details)
    return dumps({"ok": False, "request": request, "error": body})
