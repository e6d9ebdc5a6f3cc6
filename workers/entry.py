"""Input entries and replies: pydantic models and the one place that encodes/decodes JSON.

An input entry is a Redis Stream entry whose fields are all strings (see the README's wire
contract).  Replies are JSON texts pushed on the request's reply list.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Mapping

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import HostError, MalformedEntry

KINDS = ("tool", "action", "result")
SESSION_PATTERN = r"^[!-~]{1,128}$"  # printable ASCII without space, then no ':{}' (checked below)
REQUEST_PATTERN = r"^[ -~]{1,128}$"
CALL_PATTERN = r"^[ -~]{1,256}$"
NAME_PATTERN = r"^[A-Za-z0-9_.\-]{1,64}$"
_SESSION_FORBIDDEN = re.compile(r"[:{}]")


class InputEntry(BaseModel):
    """One decoded input entry (the JSON body is parsed separately, after the size check)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session: str = Field(pattern=SESSION_PATTERN)
    request: str = Field(pattern=REQUEST_PATTERN)
    kind: Literal["tool", "action", "result"]
    name: str = Field(pattern=NAME_PATTERN)
    call: str = Field(pattern=CALL_PATTERN)
    body: str


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def decode_fields(raw: Mapping[Any, Any]) -> dict[str, str]:
    """Entry fields as text (redis-py returns bytes)."""
    return {_text(k): _text(v) for k, v in raw.items()}


def address_of(fields: Mapping[str, str]) -> tuple[str, str] | None:
    """(session, request) if both are usable in key names, else None (no reply possible)."""
    session, request = fields.get("session", ""), fields.get("request", "")
    if not re.match(SESSION_PATTERN, session) or _SESSION_FORBIDDEN.search(session):
        return None
    if not re.match(REQUEST_PATTERN, request):
        return None
    return session, request


def parse_entry(fields: Mapping[str, str]) -> InputEntry:
    """Validate the entry fields or raise `MalformedEntry` naming the first bad field."""
    try:
        return InputEntry(**fields)
    except (ValidationError, TypeError) as error:
        errors = error.errors() if isinstance(error, ValidationError) else []
        field = str(errors[0]["loc"][0]) if errors and errors[0].get("loc") else "entry"
        kind = errors[0].get("type", "") if errors else ""
        if kind == "extra_forbidden":  # never echo a field name we do not know
            raise MalformedEntry("the entry has a field that is not part of the wire contract") from None
        what = "is missing" if kind == "missing" else "is invalid"
        raise MalformedEntry(f"entry field {field!r} {what}") from None


def parse_body(body: str, max_bytes: int) -> dict[str, Any]:
    """The JSON arguments object of a tool call, size-checked before parsing."""
    if len(body.encode("utf-8")) > max_bytes:
        raise MalformedEntry(f"entry body exceeds {max_bytes} bytes", code="oversize")
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise MalformedEntry("entry body is not valid JSON", code="invalid_json") from None
    if not isinstance(value, dict):
        raise MalformedEntry("entry body must be a JSON object", code="invalid_arguments")
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


def error_reply(request: str, error: HostError) -> str:
    """The JSON text of a rejected request's reply (at most 10 issues)."""
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.issues:
        body["issues"] = [{"path": i.path, "message": i.message} for i in error.issues]
    return dumps({"ok": False, "request": request, "error": body})
