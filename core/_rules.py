"""Leaf rules and the object walker behind the Remote-protocol parsers of `core.remote.records`.

A rule takes one decoded value and yields `Issue`s whose paths are local to that value;
the walkers (`closed_object`, `flat_map`, `unique_identifiers`) prepend the property or
index segment, as jsonschema's `descend` does.  Rules never raise for any input: every
comparison is guarded by an exact type check first (a `bool` is never a number), and
types are compared by identity (`type(value) is str`), never by `isinstance`, so a
subclass of a JSON type fails its rule before any of its methods can run.  An object's
keys are checked to be exact strings before any of them is looked up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, TypeGuard

from core._identifier import IDENTIFIER_PATTERN, is_identifier
from core.errors import UNKNOWN_PROPERTY, Issue, UISchemaError, escape_pointer
from core.json._frozen import ARRAY_KINDS, OBJECT_KINDS
from core.json._number import is_js_safe_number, is_number_type
from core.json._text import utf16_length
from core.json.safe import assert_safe_json
from core.limits import UI_LIMITS

Issues = Iterator[Issue]
Rule = Callable[[Any], Issues]

MAX_STRING_LENGTH = UI_LIMITS["maxStringLength"]

_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]+")
_NO_RULES: Mapping[str, Rule] = MappingProxyType({})


def descend(issues: Iterable[Issue], segment: str | int) -> Issues:
    """The issues of a child value, located under the child's segment."""
    prefix = "/" + escape_pointer(segment)
    for issue in issues:
        yield issue.prefixed(prefix)


def is_integral(value: Any) -> TypeGuard[int | float]:
    """A JSON number with no fraction (`3` and `3.0` alike; never a bool)."""
    if type(value) is int:
        return True
    return is_js_safe_number(value) and float(value).is_integer()


def plain_keys(value: Mapping[Any, Any]) -> bool:
    """Whether every key of an exact JSON object is an exact `str` (iterating it calls nothing)."""
    return all(type(key) is str for key in value)


def identifier(value: Any) -> Issues:
    """An identifier of at most 64 characters that is not a reserved name."""
    if type(value) is not str:
        yield Issue("", "expected an identifier string", "type")
    elif not is_identifier(value):
        yield Issue(
            "",
            f"must match ^{IDENTIFIER_PATTERN}$ "
            "and not be __proto__, prototype or constructor",
            "format",
        )


def ascii_token(max_length: int) -> Rule:
    """A non-empty printable-ASCII string (0x20..0x7E) of at most `max_length` characters."""

    def rule(value: Any) -> Issues:
        if type(value) is not str:
            yield Issue("", "expected a string", "type")
        elif not 1 <= len(value) <= max_length:
            yield Issue("", f"length must be 1 to {max_length}", "length")
        elif _PRINTABLE_ASCII.fullmatch(value) is None:
            yield Issue("", "only printable ASCII characters (0x20 to 0x7E) are allowed", "format")

    return rule


def text(min_length: int, max_length: int) -> Rule:
    """A string whose length in UTF-16 code units is within the bounds."""

    def rule(value: Any) -> Issues:
        if type(value) is not str:
            yield Issue("", "expected a string", "type")
        elif not min_length <= utf16_length(value) <= max_length:
            yield Issue("", f"length must be {min_length} to {max_length} UTF-16 code units", "length")

    return rule


def integer(low: int, high: int) -> Rule:
    """An integral JSON number within `low..high` inclusive."""

    def rule(value: Any) -> Issues:
        if not is_integral(value):
            yield Issue("", "expected an integer", "type")
        elif not low <= value <= high:
            yield Issue("", f"must be between {low} and {high}", "range")

    return rule


def boolean(value: Any) -> Issues:
    """A real JSON boolean."""
    if type(value) is not bool:
        yield Issue("", "expected a boolean", "type")


def one_of(*choices: str) -> Rule:
    """One of a closed set of strings."""
    allowed = frozenset(choices)
    listing = ", ".join(choices)

    def rule(value: Any) -> Issues:
        if type(value) is not str or value not in allowed:
            yield Issue("", f"must be one of: {listing}", "enum")

    return rule


def lower_hex(length: int) -> Rule:
    """Exactly `length` lowercase hexadecimal digits."""
    pattern = re.compile(f"[0-9a-f]{{{length}}}")

    def rule(value: Any) -> Issues:
        if type(value) is not str or pattern.fullmatch(value) is None:
            yield Issue("", f"must be exactly {length} lowercase hexadecimal digits", "format")

    return rule


def scalar(*, allow_null: bool) -> Rule:
    """A string of at most 4,096 UTF-16 units, a finite number within 1e15, a boolean (or null)."""
    kinds = "string, number, boolean or null" if allow_null else "string, number or boolean"

    def rule(value: Any) -> Issues:
        if type(value) is str:
            if utf16_length(value) > MAX_STRING_LENGTH:
                yield Issue("", f"string exceeds {MAX_STRING_LENGTH} UTF-16 code units", "length")
        elif is_number_type(value):
            if not is_js_safe_number(value):
                yield Issue("", "number must be finite and at most 1e15 in magnitude", "range")
        elif type(value) is bool or (value is None and allow_null):
            return
        else:
            yield Issue("", f"expected a {kinds}", "type")

    return rule


def json_object(value: Any) -> Issues:
    """Any JSON object (its contents are data, checked by the safe-JSON pass only)."""
    if type(value) not in OBJECT_KINDS:
        yield Issue("", "expected an object", "type")


def safe_json_issues(value: Any, **limits: Any) -> list[Issue]:
    """`assert_safe_json` as a rule: its one issue, or nothing."""
    try:
        assert_safe_json(value, **limits)
    except UISchemaError as error:
        return error.issues
    return []


def budgeted(rule: Rule, **limits: Any) -> Rule:
    """A nested value with its own safe-JSON budget, checked before its structure."""

    def checked(value: Any) -> Issues:
        problems = safe_json_issues(value, **limits)
        if problems:
            yield from problems
        else:
            yield from rule(value)

    return checked


def closed_object(required: Mapping[str, Rule], optional: Mapping[str, Rule] = _NO_RULES) -> Rule:
    """An object with exactly the listed properties (unknown ones reported without echo)."""
    # Each property with its rule and its pointer segment, escaped once: a rule runs for every
    # object of its kind (every stored envelope a cold session restores), and `descend`'s
    # generator and escape per property were most of an envelope's check.
    properties = [(key, child_rule, "/" + escape_pointer(key), True) for key, child_rule in required.items()]
    properties += [(key, child_rule, "/" + escape_pointer(key), False) for key, child_rule in optional.items()]

    def rule(value: Any) -> Issues:
        if type(value) not in OBJECT_KINDS:
            yield Issue("", "expected an object", "type")
            return
        if not plain_keys(value):  # a lookup would call a subclass key's `__eq__`
            yield Issue("", UNKNOWN_PROPERTY, "unknown_property")
            return
        if any(key not in required and key not in optional for key in value):
            yield Issue("", UNKNOWN_PROPERTY, "unknown_property")
        for key, child_rule, segment, needed in properties:  # the required ones first, as listed
            if key in value:
                for issue in child_rule(value[key]):  # `descend`, its segment escaped once
                    yield issue.prefixed(segment)
            elif needed:
                yield Issue(segment, "required property is missing", "required")

    return rule


def all_of(*rules: Rule) -> Rule:
    """Every rule in order (cross-field rules follow the shape rule they rely on)."""

    def rule(value: Any) -> Issues:
        for each in rules:
            yield from each(value)

    return rule


def flat_map(value_rule: Rule, max_entries: int) -> Rule:
    """An object keyed by identifiers, at most `max_entries` entries, each value checked."""

    def rule(value: Any) -> Issues:
        if type(value) not in OBJECT_KINDS:
            yield Issue("", "expected an object", "type")
            return
        if len(value) > max_entries:
            yield Issue("", f"at most {max_entries} entries are allowed", "too_many")
            return
        # A bad key is reported at the holder: the key itself is never echoed.
        if not all(is_identifier(key) for key in value):
            yield Issue("", "every key must be an identifier", "format")
        for key, item in value.items():
            if is_identifier(key):
                yield from descend(value_rule(item), key)

    return rule


def unique_identifiers(max_items: int, what: str) -> Rule:
    """An array of distinct identifiers, at most `max_items` long."""

    def rule(value: Any) -> Issues:
        if type(value) not in ARRAY_KINDS:
            yield Issue("", "expected an array", "type")
            return
        if len(value) > max_items:
            yield Issue("", f"at most {max_items} {what}s are allowed", "too_many")
            return
        seen: set[str] = set()
        for index, item in enumerate(value):
            problems = list(identifier(item))
            if problems:
                yield from descend(problems, index)
            elif item in seen:
                yield Issue(f"/{index}", f"duplicate {what}", "duplicate")
            else:
                seen.add(item)

    return rule
