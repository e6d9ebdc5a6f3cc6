"""Validator rules compiled from the catalog, plus the cross-field rules of four components.

Each rule takes one decoded value and yields `Issue`s with paths local to that value; the
walkers prepend segments (`descend`), as in `core._rules`.  Rules never raise for
any input and never echo a key or a value in a message.  They only follow known keys, so
their depth is fixed by the catalog whatever the input's nesting, and they compare types
by identity (as `core._rules` does), so a subclass of a JSON type never runs a method.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from itertools import islice
from types import MappingProxyType
from typing import Any

from core._rules import (
    Issues,
    Rule,
    boolean,
    closed_object,
    identifier,
    integer,
    one_of,
    plain_keys,
)
from core.answer._catalog import (
    CATALOG,
    MAX_CHILDREN,
    Array,
    Bool,
    Choice,
    Component,
    Either,
    Ident,
    Int,
    Num,
    Record,
    Spec,
    Str,
)
from core.errors import (
    MAX_ISSUES,
    UNKNOWN_PROPERTY,
    Issue,
    UISchemaError,
    escape_pointer,
)
from core.json._frozen import ARRAY_KINDS, OBJECT_KINDS
from core.json._text import utf16_length
from core.json.safe import assert_safe_json
from core.limits import UI_LIMITS

MAGNITUDE = UI_LIMITS["maxNumberMagnitude"]

# Components consume plain text only: a link, a script or a data URI in any string is refused
# (the seed: "没有动态代码、网络 URL 或任意动作 DSL").
# A scheme name counts where a word starts ("metadata:text/csv" is prose), and `javascript:` or
# `vbscript:` unless a plain space follows ("JavaScript: the basics" is prose; a tab or a line end
# does not make it so: a URL parser deletes both, so "javascript:<tab>alert(1)" still runs);
# any `x://` counts wherever it is.  Tabs and line ends count as nothing inside a scheme name, its
# colon and slashes too ("java<tab>script:", "ht<tab>tp://", "data:<tab>text/html"): a URL parser
# deletes them anywhere.
# Linear time: a `x://` is matched from the start of its run of scheme characters only (the
# lookbehind), where a search from every letter of a 4,096-letter word took 0.1 s a string,
# 1.3 s for one block of them (issue 24, its twenty-first pass).
_GAP = r"[\t\n\r]*"  # what a URL parser deletes
_RUN = r"a-z0-9+.\-\t\n\r"  # a scheme's characters, with what a URL parser deletes among them


def _spelled(word: str) -> str:
    """`word`'s letters with any tabs and line ends between them."""
    return _GAP.join(word)


_ACTIVE_CONTENT = re.compile(
    rf"(?<![{_RUN}])[0-9+.\-\t\n\r]*[a-z][{_RUN}]*:{_GAP}/{_GAP}/"
    rf"|(?<![a-z0-9+.-])(?:(?:{_spelled('javascript')}|{_spelled('vbscript')}){_GAP}:(?=[^ ])"
    rf"|{_spelled('data')}{_GAP}:{_GAP}[a-z][a-z\t\n\r]*/)"
    r"|<\s*script", re.IGNORECASE)
ACTIVE_CONTENT_MESSAGE = "links, scripts and data URIs are not allowed in text"
# Checked here so the issue points at the string; the safe-JSON pass can only say "somewhere".
_SURROGATE = re.compile(r"[\ud800-\udfff]")  # `re` reads the escapes: mypyc takes no surrogate literal


def descend(issues: Iterable[Issue], segment: str | int) -> Issues:
    """`core._rules.descend`, building the prefix only when an issue arrives.

    Valid values are the common case and most of them have no issue to locate.
    """
    prefix = None
    for issue in issues:
        prefix = prefix or "/" + escape_pointer(segment)
        yield issue.prefixed(prefix)


def checked(value: Any, rule: Rule, *, max_bytes: int) -> tuple[int, list[Issue]]:
    """(JSON byte size, problems): the closed structure first, then the safe-JSON pre-check.

    The structure rules follow catalog keys only, so they report an unknown key at its
    holder before the pre-check could name it in a path; once the structure holds, every
    path the pre-check reports is made of known keys and validated ids.
    """
    try:
        size, unsafe = assert_safe_json(value, max_bytes=max_bytes), []
    except UISchemaError as error:
        size, unsafe = 0, error.issues
    problems = list(islice(rule(value), MAX_ISSUES))
    return size, problems or unsafe


def inert_text(value: str) -> Issues:
    """Plain text that holds no URL, script or data URI."""
    # Every pattern needs a colon or a '<': most text is cleared without the regex.
    if (":" in value or "<" in value) and _ACTIVE_CONTENT.search(value):
        yield Issue("", ACTIVE_CONTENT_MESSAGE, "active_content")


def _string(spec: Str) -> Rule:
    pattern = re.compile(spec.pattern) if spec.pattern else None

    def rule(value: Any) -> Issues:
        if type(value) is not str:
            yield Issue("", "expected a string", "type")
        elif not spec.min_length <= utf16_length(value) <= spec.max_length:
            yield Issue("", f"length must be {spec.min_length} to {spec.max_length} UTF-16 code units", "length")
        elif pattern is not None and pattern.fullmatch(value) is None:
            yield Issue("", f"must match ^{spec.pattern}$", "format")
        elif not value.isascii() and _SURROGATE.search(value):
            yield Issue("", "strings must be valid Unicode (no lone surrogates)", "unsafe_json")
        else:
            yield from inert_text(value)

    return rule


def _number(spec: Num) -> Rule:
    def rule(value: Any) -> Issues:
        if value is None and spec.nullable:
            return
        if type(value) is not int and type(value) is not float:
            yield Issue("", "expected a number or null" if spec.nullable else "expected a number", "type")
        elif type(value) is float and not math.isfinite(value):
            yield Issue("", "number must be finite", "non_finite")
        elif not -MAGNITUDE <= value <= MAGNITUDE:
            yield Issue("", "number must be at most 1e15 in magnitude", "range")

    return rule


def _either(spec: Either) -> Rule:
    options = tuple(compile_spec(option) for option in spec.options)

    def rule(value: Any) -> Issues:
        attempts = []
        for option in options:
            issues = list(option(value))
            if not issues:
                return
            attempts.append(issues)
        # The closest option (same JSON type) explains the problem best.
        typed = [issues for issues in attempts if issues[0].code != "type"]
        yield from typed[0] if typed else [Issue("", "value has the wrong type", "type")]

    return rule


def _plain_number(nullable: bool) -> Callable[[Any], bool]:
    kinds = (int, float, type(None)) if nullable else (int, float)

    def passes(item: Any) -> bool:
        return type(item) in kinds and (item is None or -MAGNITUDE <= item <= MAGNITUDE)

    return passes


def _plain_string(spec: Str) -> Callable[[Any], bool]:
    def passes(item: Any) -> bool:
        return (
            type(item) is str
            and item.isascii()
            and spec.min_length <= len(item) <= spec.max_length
            and ":" not in item
            and "<" not in item
        )

    return passes


def _fast_pass(spec: Spec) -> Callable[[Any], bool] | None:
    """A cheap test that an item certainly has no issue (chart values, labels, cells).

    NaN fails the range comparison and every doubtful item takes the full rule instead.
    """
    if isinstance(spec, Num):
        return _plain_number(spec.nullable)
    if isinstance(spec, Str) and spec.pattern is None:
        return _plain_string(spec)
    if isinstance(spec, Either):
        options = [_fast_pass(option) for option in spec.options]
        if all(option is not None for option in options):
            return lambda item: any(option(item) for option in options if option is not None)
    return None


def _array(spec: Array) -> Rule:
    item_rule = compile_spec(spec.item)
    fast_pass = _fast_pass(spec.item)

    def rule(value: Any) -> Issues:
        if type(value) not in ARRAY_KINDS:
            yield Issue("", "expected an array", "type")
        elif len(value) > spec.max_items:
            yield Issue("", f"at most {spec.max_items} items are allowed", "too_many")
        elif len(value) < spec.min_items:
            yield Issue("", f"at least {spec.min_items} items are required", "too_few")
        elif fast_pass is not None and all(fast_pass(item) for item in value):
            return
        else:
            for index, item in enumerate(value):
                yield from descend(item_rule(item), index)

    return rule


def _record(spec: Record) -> Rule:
    required = {prop.name: compile_spec(prop.spec) for prop in spec.props if prop.required}
    optional = {prop.name: compile_spec(prop.spec) for prop in spec.props if not prop.required}
    return closed_object(required, optional)


def compile_spec(spec: Spec) -> Rule:
    """The validator rule of one catalog spec."""
    if isinstance(spec, Str):
        return _string(spec)
    if isinstance(spec, Ident):
        return identifier
    if isinstance(spec, Choice):
        return one_of(*spec.values)
    if isinstance(spec, Int):
        return integer(spec.low, spec.high)
    if isinstance(spec, Bool):
        return boolean
    if isinstance(spec, Num):
        return _number(spec)
    if isinstance(spec, Either):
        return _either(spec)
    if isinstance(spec, Array):
        return _array(spec)
    return _record(spec)


# ---------------------------------------------------------------- cross-field rules
# They run only on props whose shape already passed, so they may index without guards.


def _unique(items: list[Any], key: str, what: str) -> Issues:
    seen: set[str] = set()
    for index, item in enumerate(items):
        if item[key] in seen:
            yield Issue(f"/{index}/{key}", f"duplicate {what}", "duplicate")
        seen.add(item[key])


def _chart_aligned(props: Any) -> Issues:
    """Every series has one value per category; series names are distinct."""
    width = len(props["categories"])
    for index, series in enumerate(props["series"]):
        if len(series["values"]) != width:
            yield Issue(f"/series/{index}/values", "a series needs exactly one value per category", "misaligned")
    yield from descend(_unique(props["series"], "name", "series name"), "series")


def _table_rectangular(props: Any) -> Issues:
    """Every row has one cell per column."""
    width = len(props["columns"])
    for index, row in enumerate(props["rows"]):
        if len(row) != width:
            yield Issue(f"/rows/{index}", "a row needs exactly one cell per column", "row_length")


def _form_fields_consistent(props: Any) -> Issues:
    """Field names are distinct; a select, and only a select, lists its options."""
    fields = props["fields"]
    for index, field in enumerate(fields):
        if field["type"] == "select" and "options" not in field:
            yield Issue(f"/fields/{index}/options", "a select field needs its options", "required")
        elif field["type"] != "select" and "options" in field:
            yield Issue(f"/fields/{index}/options", "only a select field has options", "not_allowed")
    yield from descend(_unique(fields, "name", "field name"), "fields")


def _evidence_ids_unique(props: Any) -> Issues:
    """Evidence items are told apart by id (the view state expands them by id)."""
    yield from descend(_unique(props["items"], "id", "evidence id"), "items")


_CROSS_FIELD: Mapping[str, Callable[[Any], Issues]] = MappingProxyType(
    {
        "Chart": _chart_aligned,
        "Table": _table_rectangular,
        "FollowUpForm": _form_fields_consistent,
        "Evidence": _evidence_ids_unique,
    }
)


def _props_rule(component: Component) -> Rule:
    shape = _record(component.props)
    cross = _CROSS_FIELD.get(component.name)

    def rule(value: Any) -> Issues:
        problems = list(shape(value))
        if problems or cross is None:
            yield from problems
        else:
            yield from cross(value)

    return rule


PROPS_RULES: Mapping[str, Rule] = MappingProxyType({name: _props_rule(c) for name, c in CATALOG.items()})
_ELEMENT_KEYS = frozenset({"type", "props", "children"})


def _children(container: bool) -> Rule:
    def rule(value: Any) -> Issues:
        if type(value) not in ARRAY_KINDS:
            yield Issue("", "expected an array", "type")
        elif value and not container:
            yield Issue("", "this component holds no children", "children_not_allowed")
        elif len(value) > MAX_CHILDREN:
            yield Issue("", f"at most {MAX_CHILDREN} children are allowed", "too_many")
        else:
            for index, item in enumerate(value):
                yield from descend(identifier(item), index)

    return rule


_CHILDREN = _children(container=True)
_LEAF_CHILDREN = _children(container=False)


def element(value: Any) -> Issues:
    """One `{type, props, children?}` element of a known component with closed props."""
    if type(value) not in OBJECT_KINDS:
        yield Issue("", "expected an object", "type")
        return
    if not plain_keys(value):  # a lookup would call a subclass key's `__eq__`
        yield Issue("", UNKNOWN_PROPERTY, "unknown_property")
        return
    if any(key not in _ELEMENT_KEYS for key in value):
        yield Issue("", UNKNOWN_PROPERTY, "unknown_property")
    kind = value.get("type")
    component = CATALOG.get(kind) if type(kind) is str else None
    if "type" not in value:
        yield Issue("/type", "required property is missing", "required")
    elif component is None:
        yield Issue("/type", "unknown component type", "unknown_component")
    if "props" not in value:
        yield Issue("/props", "required property is missing", "required")
    elif component is not None:
        yield from descend(PROPS_RULES[component.name](value["props"]), "props")
    if "children" in value:
        # An unknown component's children are still checked as references, not as a leaf's.
        children = _LEAF_CHILDREN if component is not None and not component.container else _CHILDREN
        yield from descend(children(value["children"]), "children")
