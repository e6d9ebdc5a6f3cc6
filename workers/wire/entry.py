"""Input entries and replies: the entry's checked fields and the one place that encodes/decodes JSON.

An input entry is a Redis Stream entry whose fields are all strings (see the README's wire
contract).  Replies are JSON texts pushed on the request's reply list.

`InputEntry` is a plain class and `parse_entry` checks its fields one by one, in the order
below, with the same messages a pydantic model gave them: this module is compiled with the
worker's hot path (setup.py), where a pydantic model's Python validators cost every entry
~4 µs (docs/decisions.md, "The compiled worker hot path").
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

import orjson

from .errors import ErrorCode, HostError, MalformedEntry
from .names import KINDS

# Always applied with `fullmatch`: `re.match(...$)` also accepts a final "\n".
_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_KINDS = frozenset(KINDS)  # names.KINDS, for membership


def _printable_ascii(value: str, longest: int) -> bool:
    """1..`longest` characters, each within " " .. "~" (`[ -~]{1,longest}`).

    The ids are checked with str's own predicates, not regular expressions: every entry checks four
    of them (its session twice), and a compiled `fullmatch` costs 2-3x these (issue 24).  ASCII text
    is printable exactly within " " .. "~" (tests/unit/test_workers_keys.py holds the ids to the
    patterns `[!-~]{1,128}` without ":{}", `[ -~]{1,128}` and `[ -~]{1,256}`)."""
    return 0 < len(value) <= longest and value.isascii() and value.isprintable()


def is_session_id(value: str) -> bool:
    """A session id usable in key names: 1-128 printable ASCII, no space, ':', '{' or '}'."""
    return (_printable_ascii(value, 128) and " " not in value and ":" not in value and "{" not in value
            and "}" not in value)


def is_request_id(value: str) -> bool:
    """A request id usable in the reply key: 1-128 printable ASCII."""
    return _printable_ascii(value, 128)


def is_call_id(value: str) -> bool:
    """A tool call id (also every `sourceCallId`): 1-256 printable ASCII."""
    return _printable_ascii(value, 256)


def _is_name(value: str) -> bool:
    return _NAME.fullmatch(value) is not None


def _is_kind(value: str) -> bool:
    return value in _KINDS


def _is_text(value: str) -> bool:
    return True


# The fields in the order they are checked (the first bad one is named), each with its rule.
_REQUIRED: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("session", is_session_id), ("request", is_request_id), ("kind", _is_kind), ("name", _is_name),
    ("call", is_call_id), ("body", _is_text))
# Set by the trusted producer (never taken from the body); used only by `kind=view` requests.
_OPTIONAL: tuple[tuple[str, Callable[[str], bool]], ...] = (("principal", is_session_id), ("project", is_session_id))
_FIELDS: Final = frozenset(name for name, _ in _REQUIRED + _OPTIONAL)


class InputEntry:
    """One decoded input entry (the JSON body is parsed separately, after the size check).

    `parse_entry` makes one from a stream entry's fields and checks each; the constructor trusts
    its caller (a test, or a producer that checked the values)."""

    __slots__ = ("body", "call", "kind", "name", "principal", "project", "request", "session")

    def __init__(self, *, session: str, request: str, kind: str, name: str, call: str, body: str,
                 principal: str | None = None, project: str | None = None) -> None:
        self.session: Final = session
        self.request: Final = request
        self.kind: Final = kind  # one of `names.KINDS`
        self.name: Final = name
        self.call: Final = call
        self.body: Final = body
        self.principal: Final = principal
        self.project: Final = project


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _body_text(value: object) -> str:
    # Bytes that are not UTF-8 stay as surrogate escapes, which `parse_body` refuses: replaced, they
    # would parse as a document other than the one sent.
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else str(value)


def decode_fields(raw: Mapping[object, object] | Mapping[str, str]) -> dict[str, str]:
    """Entry fields as text (a raw reply's are bytes): bad UTF-8 replaced, but in `body`, the JSON
    text, kept as surrogate escapes for `parse_body` to refuse (`invalid_json`)."""
    fields: dict[str, str] = {}
    for key, value in raw.items():
        name = _text(key)
        fields[name] = _body_text(value) if name == "body" else _text(value)
    return fields


def address_of(fields: Mapping[Any, Any]) -> tuple[str, str] | None:
    """(session, request) if both are usable in key names, else None (no reply possible)."""
    session, request = fields.get("session"), fields.get("request")
    if not (isinstance(session, str) and isinstance(request, str)):
        return None
    if not is_session_id(session) or not is_request_id(request):
        return None
    return session, request


def parse_entry(fields: Mapping[Any, Any]) -> InputEntry:
    """Check the entry fields or raise `MalformedEntry` naming the first bad field (never one
    that is not part of the wire contract, nor any value).  `fields` is untrusted: typed `Any`,
    as the compiled build checks a declared type at run time (a `TypeError`, not this error)."""
    if type(fields) is not dict and not isinstance(fields, Mapping):  # a dict first: `Mapping`'s check is Python
        raise MalformedEntry("the entry is not a set of fields")
    values: list[str] = []
    for name, rule in _REQUIRED:
        if name not in fields:
            raise MalformedEntry(f"entry field {name!r} is missing")
        values.append(_checked(fields[name], name, rule))
    extras: list[str | None] = []
    for name, rule in _OPTIONAL:
        value = fields.get(name)
        extras.append(None if value is None else _checked(value, name, rule))
    if len(fields) > len(_REQUIRED) and any(key not in _FIELDS for key in fields):
        raise MalformedEntry("the entry has a field that is not part of the wire contract")
    return InputEntry(session=values[0], request=values[1], kind=values[2], name=values[3], call=values[4],
                      body=values[5], principal=extras[0], project=extras[1])


def _checked(value: object, name: str, rule: Callable[[str], bool]) -> str:
    if not isinstance(value, str) or not rule(value):
        raise MalformedEntry(f"entry field {name!r} is invalid")  # the value is never echoed
    return value


BODY_MARGIN = 4_096  # envelope room above the document budget for one tool call body


def parse_body(body: str, max_bytes: int) -> dict[str, Any]:
    """The JSON arguments object of a tool call, size-checked before parsing; a body that was not
    UTF-8 (`decode_fields` kept its bad bytes escaped) is not a JSON text (RFC 8259 section 8.1)."""
    try:
        size = len(body.encode("utf-8"))
    except UnicodeEncodeError:
        raise MalformedEntry("entry body is not valid JSON: it is not UTF-8", code=ErrorCode.INVALID_JSON) from None
    if size > max_bytes:
        raise MalformedEntry(f"entry body exceeds {max_bytes} bytes", code=ErrorCode.OVERSIZE)
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise MalformedEntry("entry body is not valid JSON", code=ErrorCode.INVALID_JSON) from None
    if not isinstance(value, dict):
        raise MalformedEntry("entry body must be a JSON object", code=ErrorCode.INVALID_ARGUMENTS)
    return value


def json_integer(value: object, low: int) -> int | None:
    """`value` as an integer when it is a JSON number with no fraction, at least `low` (`0.0` is the
    JavaScript number 0, as `0` is); None for anything else (a boolean included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        value = int(value) if math.isfinite(value) and value.is_integer() else None
    return value if isinstance(value, int) and value >= low else None


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
