"""Equality of decoded JSON values as JavaScript's `===` sees them, element by element.

Python's `==` says `True == 1` and `False == 0.0` (a `bool` is an `int`), and it compares
strings by code point, so two halves of a surrogate pair differ from the character they
form.  JavaScript's `===` says neither: a boolean is never a number, `1 === 1.0` and
`0 === -0` hold, and strings are compared by UTF-16 code units.
"""

from __future__ import annotations

from typing import Any

from core.json._frozen import ARRAY_KINDS, OBJECT_KINDS
from core.json._text import joined_text, same_text

_NULL, _BOOL, _STR, _NUM, _OBJECT, _ARRAY, _OTHER = range(7)


def _kind(value: Any) -> int:
    kind = type(value)
    if value is None:
        return _NULL
    if kind is bool:
        return _BOOL
    if kind is str:
        return _STR
    if kind is int or kind is float:
        return _NUM
    if kind in OBJECT_KINDS:
        return _OBJECT
    return _ARRAY if kind in ARRAY_KINDS else _OTHER


def _same_keys(a: Any, b: Any) -> bool:
    if a.keys() == b.keys():
        return True
    return {joined_text(key) for key in a} == {joined_text(key) for key in b}


def _value_of(holder: Any, key: str) -> Any:
    """`holder[key]`, or the value of the key that is `key` in UTF-16 (a pair kept as halves)."""
    if key in holder:
        return holder[key]
    wanted = joined_text(key)
    return next(value for name, value in holder.items() if joined_text(name) == wanted)


def json_equal(left: Any, right: Any) -> bool:
    """Deep equality of two JSON values as JavaScript compares them (`1 == 1.0`, `true != 1`)."""
    stack = [(left, right)]
    while stack:
        a, b = stack.pop()
        if a is b:
            continue
        kind = _kind(a)
        if kind != _kind(b) or kind == _OTHER:
            return False
        if kind == _OBJECT:
            if len(a) != len(b) or not _same_keys(a, b):
                return False
            stack.extend((value, _value_of(b, key)) for key, value in a.items())
        elif kind == _ARRAY:
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b, strict=True))
        elif kind == _STR:
            if not same_text(a, b):
                return False
        elif a != b:
            return False
    return True
