"""The pre-check every untrusted value passes before any recursive validation.

`assert_safe_json` walks the value iteratively (no recursion, so no `RecursionError`)
and rejects anything that is not plain decoded JSON: other types, non-string keys,
non-finite or out-of-budget numbers, strings that cannot be UTF-8 (lone surrogates),
nesting deeper than `maxJsonDepth`, more than `maxJsonValues` values, or more UTF-8
bytes than the caller's budget.  Byte sizes are those of JavaScript's
`JSON.stringify`: compact, non-ASCII not escaped, JS number text.

Only the exact JSON types pass (and the library's own frozen containers), compared by
`type()` identity before anything of the value is touched: a subclass of `dict`, `str` or
`int` could override the methods every later check relies on (`__eq__`, `__hash__`,
`__len__`, `items`, ...), and `isinstance` itself may call a `__class__` it defines.
`json_type_problem` is the same type check alone, for callers that judge numbers and sizes
their own way.  An issue path never goes through a key the protocol does not define: the
pre-check knows no schema, so it stops at the object holding the first such key and never
echoes it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import cache
from typing import Any, Final

import orjson

from core._identifier import is_identifier
from core.errors import Issue, UISchemaError, escape_pointer
from core.json._frozen import ARRAY_KINDS, CONTAINER_KINDS, OBJECT_KINDS, SCALAR_KINDS
from core.json._number import float_is_plain, js_number_string
from core.json._text import is_utf8_text
from core.limits import UI_LIMITS

MAX_JSON_DEPTH = UI_LIMITS["maxJsonDepth"]
MAX_JSON_VALUES = UI_LIMITS["maxJsonValues"]
MAX_MAGNITUDE = UI_LIMITS["maxNumberMagnitude"]

NOT_JSON = "value is not a JSON type"
NON_STRING_KEY = "object keys must be strings"

_Path = tuple[Any, Any] | None  # a linked list (parent, segment); built only for containers


class SafeJson:
    """A value already proved safe JSON, with what `measure_safe_json` returns for it (UTF-8
    bytes of `JSON.stringify`, nesting depth): made by the walk that proved it
    (`canonical.canonical_json_measured`), so that a parse need not walk the value again.

    A plain class with `Final` attributes, not a frozen dataclass: one per tool call, and a
    compiled dataclass's `__init__` stays interpreted (core/document/_model.py)."""

    __slots__ = ("depth", "size", "value")

    def __init__(self, value: Any, size: int, depth: int) -> None:
        self.value: Final = value
        self.size: Final = size
        self.depth: Final = depth

    def __eq__(self, other: object) -> bool:
        if type(other) is not SafeJson:
            return NotImplemented
        return (self.value, self.size, self.depth) == (other.value, other.size, other.depth)

    def __repr__(self) -> str:
        return f"SafeJson(size={self.size}, depth={self.depth})"


@cache
def protocol_keys() -> frozenset[str]:
    """Every property name the protocol itself defines (read from the document schema)."""
    from core.document._schema import document_json_schema  # only on a rejection: the schema is large

    names: set[str] = set()
    stack: list[Any] = [document_json_schema()]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict):
                names.update(node["properties"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(names)


# Dictionaries whose keys declare names (fields, derived values, actions, arguments): an
# identifier there is the document's own declaration, as in `/state/amount/initial`.
DECLARING_KEYS = frozenset({"state", "derived", "actions", "arguments"})
MAX_ENCODABLE_DEPTH = 254  # orjson refuses to write deeper nesting ("Recursion limit reached")


def held_pointer(segments: Iterable[str | int]) -> str:
    """The JSON Pointer of `segments`, cut at the object holding the first foreign key."""

    known = protocol_keys()
    parts: list[str] = []
    parent: str | int | None = None
    for segment in segments:
        if type(segment) is not int and segment not in known and not (
                parent in DECLARING_KEYS and is_identifier(segment)):
            break
        parts.append(escape_pointer(segment))
        parent = segment
    return "/" + "/".join(parts) if parts else ""


def linked_segments(path: _Path) -> list[str | int]:
    """The segments of a linked (parent, segment) path, root first."""
    segments: list[str | int] = []
    while path is not None:
        path, key = path
        segments.append(key)
    segments.reverse()
    return segments


def _pointer(path: _Path, segment: str | int | None = None) -> str:
    segments = linked_segments(path)
    if segment is not None:
        segments.append(segment)
    return held_pointer(segments)


def _scalar_problem(value: Any) -> str | None:
    kind = type(value)
    if value is None or kind is str or kind is bool:
        return None
    if kind is int:
        return None if -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE else "number exceeds 1e15 in magnitude"
    if kind is float:
        if not math.isfinite(value):
            return "number must be finite"
        return None if abs(value) <= MAX_MAGNITUDE else "number exceeds 1e15 in magnitude"
    return NOT_JSON


def _walk(value: Any, max_depth: int, max_values: int) -> int:
    """Check shape and scalars; return the byte correction for JS number text."""
    return _measure(value, max_depth, max_values)[0]


def _measure(value: Any, max_depth: int, max_values: int) -> tuple[int, int, int]:
    """(byte correction for JS number text, deepest nesting level seen, values counted: each
    container and each of its members)."""
    correction = 0
    deepest = 1
    count = 1
    stack: list[tuple[Any, int, _Path]] = [(value, 1, None)]
    if type(value) not in CONTAINER_KINDS:
        problem = _scalar_problem(value)
        if problem:
            raise UISchemaError([Issue("", problem, "unsafe_json")])
        if type(value) is float:
            correction += _float_correction(value)
        return correction, 0, 1
    while stack:
        container, depth, path = stack.pop()
        deepest = depth if depth > deepest else deepest
        if depth > max_depth:
            raise UISchemaError([Issue(_pointer(path), f"JSON nesting exceeds {max_depth} levels", "unsafe_json")])
        is_list = isinstance(container, list)
        items = enumerate(container) if is_list else container.items()
        count += len(container)
        if count > max_values:
            raise UISchemaError([Issue(_pointer(path), f"JSON exceeds {max_values} values", "unsafe_json")])
        for key, item in items:
            if type(key) is not str and not is_list:
                raise UISchemaError([Issue(_pointer(path), NON_STRING_KEY, "unsafe_json")])
            kind = type(item)
            if kind is str or kind is int or item is None or kind is bool:
                if kind is int and not -MAX_MAGNITUDE <= item <= MAX_MAGNITUDE:
                    raise UISchemaError([Issue(_pointer(path, key), "number exceeds 1e15 in magnitude", "unsafe_json")])
                continue
            if kind in CONTAINER_KINDS:
                stack.append((item, depth + 1, (path, key)))
                continue
            problem = _scalar_problem(item)
            if problem:
                raise UISchemaError([Issue(_pointer(path, key), problem, "unsafe_json")])
            if kind is float:
                correction += _float_correction(item)
    return correction, deepest, count


def _float_correction(x: float) -> int:
    """How many more bytes JS's text of a finite float within 1e15 has than orjson's: 0 for most
    (a check of ~0.1 µs, where the exact texts cost ~1 µs: a body of 139,000 floats took the gateway
    178 ms to measure), `1` against `1.0` for an integral one (which `js_number_string` prints by its
    digits, without the shortest-digits search)."""
    return 0 if float_is_plain(x) else len(js_number_string(x)) - len(orjson.dumps(x))


def json_type_problem(value: Any) -> str | None:
    """Why `value` is not made of the exact JSON types alone, or None.

    Types only (numbers, strings and sizes are the caller's to judge), by `type()` identity,
    so nothing of the value runs; iterative and bounded like the safe walk, so a cycle or a
    huge value ends in a problem, not a hang.
    """
    kind = type(value)
    if kind not in CONTAINER_KINDS:
        return None if kind in SCALAR_KINDS else NOT_JSON
    count = 1
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        container, depth = stack.pop()
        count += len(container)
        if depth > MAX_JSON_DEPTH:
            return f"JSON nesting exceeds {MAX_JSON_DEPTH} levels"
        if count > MAX_JSON_VALUES:
            return f"JSON exceeds {MAX_JSON_VALUES} values"
        if type(container) not in ARRAY_KINDS:
            if any(type(key) is not str for key in container):
                return NON_STRING_KEY
            container = container.values()
        for item in container:
            kind = type(item)
            if kind in CONTAINER_KINDS:
                stack.append((item, depth + 1))
            elif kind not in SCALAR_KINDS:
                return NOT_JSON
    return None


def json_measure(value: Any) -> tuple[int, int]:
    """(UTF-8 bytes of `JSON.stringify(value)`, nesting depth) after the safety checks.

    Depth counts containers: a scalar is 0, `[]` is 1, `[[1]]` is 2.
    """
    correction, depth, _ = _measure(value, MAX_JSON_DEPTH, MAX_JSON_VALUES)
    return _encoded_size(value, correction), depth


def json_byte_size(value: Any) -> int:
    """UTF-8 bytes of `JSON.stringify(value)` for a value that passed `assert_safe_json`."""
    return _encoded_size(value, _walk(value, MAX_JSON_DEPTH, MAX_JSON_VALUES))


def _encoded_size(value: Any, correction: int) -> int:
    try:
        return len(orjson.dumps(value)) + correction
    except TypeError:  # a lone surrogate, or nesting past what orjson writes (a caller's max_depth)
        where = _lone_surrogate(value)
        if where is None:
            raise UISchemaError([Issue("", f"JSON nesting exceeds {MAX_ENCODABLE_DEPTH} levels",
                                       "unsafe_json")]) from None
        raise UISchemaError([Issue(held_pointer(where), "strings must be valid Unicode (no lone surrogates)",
                                   "unsafe_json")]) from None


def _lone_surrogate(value: Any) -> list[str | int] | None:
    """The segments to the first string (a value, or a key: then its object) that is not valid
    Unicode, in document order; only looked for once orjson refused the value."""
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        node, segments = stack.pop()
        if type(node) is str:
            if not is_utf8_text(node):
                return segments
            continue
        children: list[tuple[str | int, Any]] = []  # typed lists: mypyc compiles no comprehension over Any
        if type(node) in ARRAY_KINDS:
            array: list[Any] = node
            for index, item in enumerate(array):
                children.append((index, item))
        elif type(node) in OBJECT_KINDS:
            obj: dict[Any, Any] = node
            for key, item in obj.items():
                if not is_utf8_text(key):
                    return segments
                children.append((key, item))
        for position in range(len(children) - 1, -1, -1):  # the first child on top: document order
            segment, item = children[position]
            stack.append((item, segments + [segment]))  # noqa: RUF005  # mypyc fails on the star form
    return None


def assert_safe_json(
    value: Any,
    *,
    max_bytes: Any = None,  # `Any`, the three: a compiled build would raise TypeError before the check below
    max_depth: Any = MAX_JSON_DEPTH,
    max_values: Any = MAX_JSON_VALUES,
) -> int:
    """Reject unsafe JSON shapes before recursion; return the value's JSON byte size.  The limits
    are integers (`max_depth` at most 254, what the encoder writes; `max_bytes` may be None): any
    other limit is refused with a `type` issue at its name."""
    issue = _limit_issue(max_bytes, max_depth, max_values)
    if issue is not None:
        raise UISchemaError([issue])
    return measure_safe_json(value, max_bytes=max_bytes, max_depth=max_depth, max_values=max_values)[0]


def _limit_issue(max_bytes: Any, max_depth: Any, max_values: Any) -> Issue | None:
    """The issue of the first limit of `assert_safe_json` that is not an integer in its range (None: all are)."""
    if not (max_bytes is None or (type(max_bytes) is int and max_bytes >= 0)):
        return Issue("/max_bytes", "max_bytes must be None or an integer 0 or more", "type")
    if not (type(max_depth) is int and 0 <= max_depth <= MAX_ENCODABLE_DEPTH):
        return Issue("/max_depth", f"max_depth must be an integer 0-{MAX_ENCODABLE_DEPTH}", "type")
    if not (type(max_values) is int and max_values >= 0):
        return Issue("/max_values", "max_values must be an integer 0 or more", "type")
    return None


def measure_safe_json(
    value: Any,
    *,
    max_bytes: int | None = None,
    max_depth: int = MAX_JSON_DEPTH,
    max_values: int = MAX_JSON_VALUES,
) -> tuple[int, int]:
    """`assert_safe_json` that also returns the nesting depth (as `json_measure` counts it)."""
    size, depth, _ = count_safe_json(value, max_bytes=max_bytes, max_depth=max_depth, max_values=max_values)
    return size, depth


def count_safe_json(
    value: Any,
    *,
    max_bytes: int | None = None,
    max_depth: int = MAX_JSON_DEPTH,
    max_values: int = MAX_JSON_VALUES,
) -> tuple[int, int, int]:
    """`measure_safe_json` that also returns how many values it counted against `max_values`."""
    correction, depth, count = _measure(value, max_depth, max_values)
    size = _encoded_size(value, correction)
    if max_bytes is not None:
        check_budget(size, max_bytes)
    return size, depth, count


def check_budget(size: int, max_bytes: int) -> None:
    """Refuse JSON of `size` bytes beyond `max_bytes` (the issue is at the value itself)."""
    if size > max_bytes:
        raise UISchemaError([Issue("", f"JSON is {size} bytes; the limit is {max_bytes}", "too_large")])
