"""RFC 8785 canonical JSON (JCS): the text both sides hash to bind content.

Keys are sorted by UTF-16 code units, numbers are printed as JavaScript's `String(n)`
and strings are escaped as `JSON.stringify` escapes them; no whitespace, non-ASCII raw.

Two serializers produce the same text.  `orjson` with sorted keys is the fast path and
is used only when one walk over the value proves its bytes are already canonical:

- every float is non-integral and outside [1e-6, 1e-5) in magnitude (orjson prints `1.0`
  and `1e-6` where JavaScript prints `1` and `0.000001`; elsewhere both print the shortest
  round-trip digits in the same notation),
- every int is within +-2**53 (beyond it JavaScript prints the nearest double),
- every object sorts its keys the same by code point (orjson) and by UTF-16 code unit,
  which can differ only when a key holds a character in U+E000..U+FFFF and another an
  astral character,
- every value is of an exact JSON type (a subclass never passes, see below); orjson escapes
  strings exactly as `JSON.stringify` does (`\\b \\t \\n \\f \\r \\" \\\\`, other
  controls as lowercase `\\u00xx`, DEL and U+2028/U+2029 raw).

Otherwise the plain Python reference serializer runs (the tests compare both paths); it
also validates, with located issues as `assert_safe_json` reports them: exact JSON types
only, string keys, no lone surrogates, depth <= maxJsonDepth, at most maxJsonValues values.
Both walks compare `type()` identities before they touch a value, so a subclass of a JSON
type (an `IntEnum`, a `str` with its own `__eq__`) is refused before any of its methods
runs, as `assert_safe_json` refuses it.  Unlike `assert_safe_json` it accepts every finite
double (RFC 8785 covers the binary64 range); NaN, Infinity and ints beyond the double range
raise `UISchemaError`.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

import orjson

from core.errors import Issue, UISchemaError
from core.json._frozen import ARRAY_KINDS, CONTAINER_KINDS, OBJECT_KINDS
from core.json._number import float_is_plain, js_number_string
from core.json._text import utf16_sort_key
from core.json.safe import MAX_MAGNITUDE, NON_STRING_KEY, NOT_JSON, SafeJson, held_pointer, linked_segments
from core.limits import UI_LIMITS

MAX_JSON_DEPTH = UI_LIMITS["maxJsonDepth"]
MAX_JSON_VALUES = UI_LIMITS["maxJsonValues"]
_SAFE_INTEGER = 2**53
_OVERFLOW_INT = 2**1024 - 2**970  # from here on float(n) rounds to Infinity (ties to even)

_Path = tuple[Any, Any] | None  # a linked list (parent, key), built only for containers
_Counter = list[int]  # one mutable int: values seen so far
_PLAIN_KINDS = frozenset({str, bool, type(None)})


def canonical_json_string(value: Any) -> str:
    """The RFC 8785 canonical JSON text of decoded JSON (UTF-16 key order, JS numbers)."""
    return canonical_json_measured(value)[0]


def hash_canonical_json(value: Any) -> str:
    """Lowercase hex SHA-256 of the UTF-8 of `canonical_json_string(value)`."""
    return hashlib.sha256(canonical_json_string(value).encode()).hexdigest()


# ---------------------------------------------------------------------------------------
# The fast check: True only when orjson's sorted bytes are provably canonical.  It never
# raises; anything unusual answers False and the reference serializer decides.


def _is_orjson_canonical(value: Any) -> bool:
    """Whether `orjson.dumps(value, OPT_SORT_KEYS)` is exactly the canonical text."""
    return _orjson_walk(value)[0]


def _orjson_walk(value: Any) -> tuple[bool, bool, int]:
    """(orjson's sorted bytes are the canonical text; if so, whether the value is also safe
    JSON as `measure_safe_json` checks it, save lone surrogates, which make orjson raise;
    nesting depth as `json_measure` counts it).  Safe needs exact JSON types and numbers
    within maxNumberMagnitude; canonical floats print as JavaScript prints them, so the byte
    size is the canonical text's."""
    if type(value) not in CONTAINER_KINDS:
        return _scalar_is_plain(value), False, 0
    count, deepest, safe = 1, 1, True
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        container, depth = stack.pop()
        count += len(container)
        if depth > MAX_JSON_DEPTH or count > MAX_JSON_VALUES:
            return False, False, 0
        deepest = depth if depth > deepest else deepest
        if type(container) in OBJECT_KINDS:
            if not _keys_are_plain(container):
                return False, False, 0
            container = container.values()
        # The common kinds are tested inline: this loop runs once per value of every frame.
        for item in container:
            kind = type(item)
            if kind in _PLAIN_KINDS:
                continue
            if kind is int:
                if -_SAFE_INTEGER <= item <= _SAFE_INTEGER:
                    safe = safe and -MAX_MAGNITUDE <= item <= MAX_MAGNITUDE
                    continue
                return False, False, 0
            if kind is float:
                if float_is_plain(item):
                    safe = safe and -MAX_MAGNITUDE <= item <= MAX_MAGNITUDE
                    continue
                return False, False, 0
            if kind in CONTAINER_KINDS:
                stack.append((item, depth + 1))
            else:  # not JSON, or a subclass: the reference refuses it before it can run
                return False, False, 0
    return True, safe, deepest


def canonical_json_measured(value: Any) -> tuple[str, SafeJson | None]:
    """The canonical text (orjson's sorted bytes when the walk proves them canonical, else the
    reference serializer's) and, when the same walk proved the value safe JSON, its
    `SafeJson` (what `measure_safe_json` would return, without walking it again); else None,
    and whoever needs the measure walks the value with `measure_safe_json` (which reports
    each problem at its path)."""
    canonical, safe, depth = _orjson_walk(value)
    if canonical:
        try:
            text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            pass  # a lone surrogate or a str-subclass key (orjson calls nothing of it): the reference says which
        else:
            return text.decode(), SafeJson(value, len(text), depth) if safe else None
    return "".join(_write(value, None, None, 1, [1], [])), None


def _keys_are_plain(obj: dict[str, Any]) -> bool:
    """String keys whose code-point order (orjson's) is their UTF-16 order.

    A `str` subclass key passes the join (it reads the characters, calling nothing) and then
    makes orjson raise: orjson takes exact `str` keys only, by type, as the reference does.
    """
    try:
        joined = "".join(obj)  # one C-level pass: non-str keys raise TypeError
    except TypeError:
        return False
    if joined.isascii() or max(joined) < "\ue000":
        return True
    if any(type(key) is not str for key in obj):  # sorting would call a subclass's `__lt__`
        return False
    return sorted(obj) == sorted(obj, key=utf16_sort_key)


def _scalar_is_plain(item: Any) -> bool:
    """A str, null, bool, int within +-2**53, or float that orjson prints as JS does."""
    if type(item) is float:
        return float_is_plain(item)
    if type(item) is int:
        return -_SAFE_INTEGER <= item <= _SAFE_INTEGER
    return item is None or type(item) is str or type(item) is bool


# ---------------------------------------------------------------------------------------
# The reference serializer (RFC 8785 section 3.2, written from the spec); it validates too.

_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')
_SURROGATE = re.compile(r"[\ud800-\udfff]")  # `re` reads the escapes: mypyc takes no surrogate literal


def _fail(path: _Path, message: str) -> UISchemaError:
    return UISchemaError([Issue(held_pointer(linked_segments(path)), message, "unsafe_json")])


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _quote(text: str, path: _Path) -> str:
    """`JSON.stringify` of a string; lone surrogates are not valid Unicode and are refused."""
    if _SURROGATE.search(text):
        raise _fail(path, "strings must be valid Unicode (no lone surrogates)")
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def _number(value: int | float, path: _Path) -> str:
    if type(value) is int:
        if -_SAFE_INTEGER <= value <= _SAFE_INTEGER:
            return str(value)
        if not -_OVERFLOW_INT < value < _OVERFLOW_INT:
            raise _fail(path, "number must be finite")
    if not math.isfinite(value):
        raise _fail(path, "number must be finite")
    return js_number_string(float(value))  # float() rounds ties to even, as JS parses


def _write(value: Any, path: _Path, key: str | int | None, depth: int, count: _Counter, out: list[str]) -> list[str]:
    """Append the canonical text of `value` (found at `key` under `path`) to `out`."""
    here = path if key is None else (path, key)
    kind = type(value)  # exact types only: nothing of a subclass may run
    if kind in CONTAINER_KINDS:
        count[0] += len(value)
        if depth > MAX_JSON_DEPTH:
            raise _fail(here, f"JSON nesting exceeds {MAX_JSON_DEPTH} levels")
        if count[0] > MAX_JSON_VALUES:
            raise _fail(here, f"JSON exceeds {MAX_JSON_VALUES} values")
        if kind in ARRAY_KINDS:
            out.append("[")
            for index, item in enumerate(value):
                out.append("," if index else "")
                _write(item, here, index, depth + 1, count, out)
            out.append("]")
        else:
            _write_object(value, here, depth, count, out)
    elif kind is str:
        out.append(_quote(value, here))
    elif value is None or kind is bool:
        out.append("null" if value is None else "true" if value else "false")
    elif kind is int or kind is float:
        out.append(_number(value, here))
    else:
        raise _fail(here, NOT_JSON)
    return out


def _write_object(obj: dict[Any, Any], here: _Path, depth: int, count: _Counter, out: list[str]) -> None:
    if any(type(name) is not str for name in obj):
        raise _fail(here, NON_STRING_KEY)
    out.append("{")
    for index, name in enumerate(sorted(obj, key=utf16_sort_key)):
        out.append("," if index else "")
        out.append(_quote(name, (here, name)) + ":")
        _write(obj[name], here, name, depth + 1, count, out)
    out.append("}")
