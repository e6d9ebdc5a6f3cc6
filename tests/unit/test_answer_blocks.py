"""`parse_answer_block`: the catalog's closed props, the element tree, the limits, no echo."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import UISchemaError, parse_answer_block
from core.json._frozen import FrozenDict

from .answer_documents import (
    SECRET,
    block,
    chart,
    clone,
    every_component,
    evidence,
    form,
    leaf,
    sized_block,
    stack,
    table,
    text,
)


def _one(kind: str, **props: Any) -> dict[str, Any]:
    return block({"root": leaf(kind, **props)})


def _nested(depth: int) -> dict[str, Any]:
    """A chain of `depth` elements: n0 (the root) holds n1, which holds n2, ..."""
    elements = {f"n{i}": stack(f"n{i + 1}") for i in range(depth - 1)}
    elements[f"n{depth - 1}"] = text()
    return block(elements, root="n0")


def _wide(count: int) -> dict[str, Any]:
    """A root Stack and `count - 1` Text leaves under it."""
    leaves = {f"t{i}": text() for i in range(count - 1)}
    return block({"root": stack(*leaves), **leaves})


def _with(base: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    value = clone(base)
    change(value)
    return value


def _deep_junk(levels: int) -> Any:
    value: Any = SECRET
    for _ in range(levels):
        value = {SECRET: [value]}
    return value


EL = "/spec/elements"
REJECTED: list[tuple[str, dict[str, Any], str, str]] = [
    ("unknown envelope key", block({"root": text()}, **{SECRET: SECRET}), "", "unknown_property"),
    ("wrong version", block({"root": text()}, version=SECRET), "/version", "unsupported_version"),
    ("unknown phase", block({"root": text()}, phase=SECRET), "/phase", "enum"),
    ("block id not an identifier", block({"root": text()}, block_id=SECRET + " x"), "/block_id", "format"),
    ("missing fallback text", _with(block({"root": text()}), lambda b: b.pop("fallback_text")), "/fallback_text", "required"),
    ("unknown component", block({"root": {"type": SECRET, "props": {SECRET: SECRET}, "children": []}}), f"{EL}/root/type", "unknown_component"),
    ("unknown element key", block({"root": {**text(), SECRET: 1}}), f"{EL}/root", "unknown_property"),
    ("extra prop", _one("Text", text="x", **{SECRET: SECRET}), f"{EL}/root/props", "unknown_property"),
    ("event handler", _one("Text", text="x", onClick=f"alert('{SECRET}')"), f"{EL}/root/props", "unknown_property"),
    ("action DSL", _one("Metric", label="x", value=1, action={"type": "invoke", "id": SECRET}), f"{EL}/root/props", "unknown_property"),
    ("style prop", _one("Stack", color=SECRET), f"{EL}/root/props", "unknown_property"),
    ("URL in text", _one("Text", text=f"see https://{SECRET}.example/x"), f"{EL}/root/props/text", "active_content"),
    ("script in a title", _one("Text", text="x", title=f"<script>{SECRET}</script>"), f"{EL}/root/props/title", "active_content"),
    ("javascript URI in a source", _one("Metric", label="x", value=1, source=f"javascript:{SECRET}"), f"{EL}/root/props/source", "active_content"),
    ("data URI in fallback", block({"root": text()}, fallback_text=f"data:text/html,{SECRET}"), "/fallback_text", "active_content"),
    ("a javascript URI after other text", _one("Text", text=f"click javascript:{SECRET}"), f"{EL}/root/props/text", "active_content"),
    ("a data URI after a parenthesis", _one("Text", text=f"(data:image/png;base64,{SECRET})"), f"{EL}/root/props/text", "active_content"),
    ("a URL whose scheme follows a digit", _one("Text", text=f"1http://{SECRET}.example"), f"{EL}/root/props/text", "active_content"),
    ("a javascript URI with a tab after its colon", _one("Text", text=f"javascript:\talert({SECRET})"), f"{EL}/root/props/text", "active_content"),
    ("a javascript URI with a line end after its colon", _one("Text", text=f"javascript:\nalert({SECRET})"), f"{EL}/root/props/text", "active_content"),
    # a URL parser deletes tabs and line ends anywhere: each of these is the URI it spells
    ("a javascript URI with a tab inside its scheme", _one("Text", text=f"java\tscript:alert({SECRET})"), f"{EL}/root/props/text", "active_content"),
    ("a vbscript URI with line ends inside its scheme", _one("Text", text=f"vb\r\nscript:msgbox({SECRET})"), f"{EL}/root/props/text", "active_content"),
    ("a URL with a tab inside its scheme", _one("Text", text=f"ht\ttps://{SECRET}.example"), f"{EL}/root/props/text", "active_content"),
    ("a URL with a tab between its slashes", _one("Text", text=f"see https:/\t/{SECRET}.example"), f"{EL}/root/props/text", "active_content"),
    ("a URL with a line end after its colon", _one("Text", text=f"https:\n//{SECRET}.example"), f"{EL}/root/props/text", "active_content"),
    ("a data URI with a tab after its colon", _one("Text", text=f"data:\ttext/html,{SECRET}"), f"{EL}/root/props/text", "active_content"),
    ("a data URI with a tab inside its scheme", _one("Text", text=f"da\tta:text/html,{SECRET}"), f"{EL}/root/props/text", "active_content"),
    ("a URL after a long word", _one("Text", text="a" * 4000 + f" x1.b-c+d://{SECRET}"), f"{EL}/root/props/text", "active_content"),
    ("NaN under an unknown key", _one("Text", text="x", **{SECRET: [math.nan]}), f"{EL}/root/props", "unknown_property"),
    ("deep nesting under an unknown key", block({"root": text()}, **{SECRET: _deep_junk(300)}), "", "unknown_property"),
    ("non-string prop key", block({"root": {"type": "Text", "props": {1: SECRET, "text": "x"}}}), f"{EL}/root/props", "unknown_property"),
    ("element id not an identifier", block({"root": text(), f"{SECRET} x": text()}), EL, "format"),
    ("missing root", block({"root": text()}, root="elsewhere"), "/spec/root", "missing_reference"),
    ("missing child", block({"root": stack("ghost")}), f"{EL}/root/children/0", "missing_reference"),
    ("cycle through the root", block({"root": stack("a"), "a": stack("root")}), f"{EL}/a/children/0", "cycle"),
    ("self reference", block({"root": stack("root")}), f"{EL}/root/children/0", "cycle"),
    ("element referenced twice", block({"root": stack("a", "a"), "a": text()}), f"{EL}/root/children/1", "duplicate_reference"),
    ("element with two parents", block({"root": stack("a", "b"), "a": stack("c"), "b": stack("c"), "c": text()}), f"{EL}/b/children/0", "duplicate_reference"),
    ("orphan", block({"root": text(), "stray": text()}), f"{EL}/stray", "orphan"),
    ("detached cycle", block({"root": text(), "a": stack("b"), "b": stack("a")}), f"{EL}/a", "orphan"),
    ("leaf with children", block({"root": {**text(), "children": ["x"]}, "x": text()}), f"{EL}/root/children", "children_not_allowed"),
    ("too many elements", _wide(49), EL, "too_many"),
    ("too deep", _nested(13), f"{EL}/n12", "too_deep"),
    ("misaligned chart", block({"root": chart(series=[{"name": "a", "values": [1, 2]}])}), f"{EL}/root/props/series/0/values", "misaligned"),
    ("NaN in a chart", block({"root": chart(series=[{"name": "a", "values": [1, math.nan, 3]}])}), f"{EL}/root/props/series/0/values/1", "non_finite"),
    ("Infinity in a chart", block({"root": chart(series=[{"name": "a", "values": [1, 2, -math.inf]}])}), f"{EL}/root/props/series/0/values/2", "non_finite"),
    ("chart value beyond 1e15", block({"root": chart(series=[{"name": "a", "values": [1, 2, 10**16]}])}), f"{EL}/root/props/series/0/values/2", "range"),
    ("boolean chart value", block({"root": chart(series=[{"name": "a", "values": [1, True, 3]}])}), f"{EL}/root/props/series/0/values/1", "type"),
    ("duplicate series name", block({"root": chart(series=[{"name": "a", "values": [1, 2, 3]}] * 2)}), f"{EL}/root/props/series/1/name", "duplicate"),
    ("unknown chart view", block({"root": chart(view=SECRET)}), f"{EL}/root/props/view", "enum"),
    ("short table row", block({"root": table(rows=[["a", 1], ["b"]])}), f"{EL}/root/props/rows/1", "row_length"),
    ("long table row", block({"root": table(rows=[["a", 1, SECRET]])}), f"{EL}/root/props/rows/0", "row_length"),
    ("object in a table cell", block({"root": table(rows=[["a", {SECRET: 1}]])}), f"{EL}/root/props/rows/0/1", "type"),
    ("duplicate form field", block({"root": form({"name": "a", "label": "A", "type": "text"}, {"name": "a", "label": "B", "type": "date"})}), f"{EL}/root/props/fields/1/name", "duplicate"),
    ("select without options", block({"root": form({"name": "a", "label": "A", "type": "select"})}), f"{EL}/root/props/fields/0/options", "required"),
    ("options on a text field", block({"root": form({"name": "a", "label": "A", "type": "text", "options": ["x"]})}), f"{EL}/root/props/fields/0/options", "not_allowed"),
    ("unknown result status", _one("Result", title="t", summary="s", status=SECRET), f"{EL}/root/props/status", "enum"),
    ("missing required prop", _one("Result", title="t", summary="s"), f"{EL}/root/props/status", "required"),
    ("boolean metric value", _one("Metric", label="x", value=True), f"{EL}/root/props/value", "type"),
    ("feature id with spaces", _one("MapLocation", layer="valves", feature_id=f"{SECRET} V 3"), f"{EL}/root/props/feature_id", "format"),
    ("recorded time without offset", block({"root": evidence({"id": "e", "summary": "s", "source": "s", "recorded_at": "2026-10-29T05:00"})}), f"{EL}/root/props/items/0/recorded_at", "format"),
    ("duplicate evidence id", block({"root": evidence(*[{"id": "e", "summary": "s", "source": "s"}] * 2)}), f"{EL}/root/props/items/1/id", "duplicate"),
    ("stack with 5 columns", _one("Stack", columns=5), f"{EL}/root/props/columns", "range"),
    ("empty text", _one("Text", text=""), f"{EL}/root/props/text", "length"),
    ("lone surrogate in text", _one("Text", text="a\ud800b"), f"{EL}/root/props/text", "unsafe_json"),
    ("block over 100,000 UTF-16 units", sized_block(100_001), "", "too_large"),
    ("astral block over 100,000 UTF-16 units", sized_block(100_001, "\U0001f600"), "", "too_large"),
]


@pytest.mark.parametrize(("value", "path", "code"), [case[1:] for case in REJECTED], ids=[case[0] for case in REJECTED])
def test_rejected_block_names_the_exact_path_and_code_and_echoes_nothing(value, path, code):
    with pytest.raises(UISchemaError) as caught:
        parse_answer_block(value)
    first = caught.value.issues[0]
    assert (first.path, first.code) == (path, code), caught.value.issues
    assert SECRET not in str(caught.value)
    for issue in caught.value.issues:
        assert SECRET not in issue.path and SECRET not in issue.message


PROSE = ["Export the sensor metadata:text/csv columns", "bigdata:x/y and Metadata:image/png", "Learn JavaScript: the basics",
         "VBScript: a history", "Topic: JavaScript:", "比例 3:1，时间 08:00", "ratio a:b / c", "Input data: numbers/strings",
         "a/b: c//d"]


@pytest.mark.parametrize("prose", PROSE)
def test_prose_that_merely_holds_a_scheme_name_is_accepted(prose):
    """The seed refuses network URLs and dynamic code, not words: a scheme counts where a word
    starts, `javascript:` only with text right after it (a URI holds no space)."""
    parsed = parse_answer_block(_one("Text", text=prose))
    assert parsed["spec"]["elements"]["root"]["props"]["text"] == prose


def test_a_block_with_all_ten_components_is_accepted():
    parse_answer_block(every_component())


def test_the_parsed_block_is_deep_immutable():
    parsed = parse_answer_block(every_component())
    assert isinstance(parsed, FrozenDict)
    with pytest.raises(TypeError):
        parsed["spec"]["elements"]["root"]["children"].append("x")
    with pytest.raises(TypeError):
        parsed["spec"]["elements"]["chart"]["props"]["series"][0]["values"][0] = 1


def test_a_block_without_phase_comes_back_without_phase():
    parsed = parse_answer_block(block({"root": text()}))
    assert "phase" not in parsed
    assert parse_answer_block(block({"root": text()}, phase="final"))["phase"] == "final"


def test_exactly_48_elements_are_accepted_and_49_rejected():
    parse_answer_block(_wide(48))
    with pytest.raises(UISchemaError):
        parse_answer_block(_wide(49))


def test_depth_12_is_accepted_and_13_rejected():
    parse_answer_block(_nested(12))
    with pytest.raises(UISchemaError):
        parse_answer_block(_nested(13))


@pytest.mark.parametrize("filler", ["x", "\u58d3", "\U0001f600"])
def test_a_block_of_exactly_100000_utf16_units_is_accepted(filler):
    parse_answer_block(sized_block(100_000, filler))


def test_integral_floats_come_back_as_integers():
    parsed = parse_answer_block(_one("Stack", columns=2.0))
    assert type(parsed["spec"]["elements"]["root"]["props"]["columns"]) is int


def test_children_may_be_omitted_on_a_leaf():
    parse_answer_block(block({"root": {"type": "Text", "props": {"text": "x"}}}))


def test_issues_are_bounded_and_all_located():
    elements = {f"t{i}": leaf("Text", text="x", **{SECRET: i}) for i in range(40)}
    with pytest.raises(UISchemaError) as caught:
        parse_answer_block(block({"root": stack(*elements), **elements}))
    assert len(caught.value.issues) == 20
    assert all(issue.code == "unknown_property" for issue in caught.value.issues)


VOCABULARY = ["version", "block_id", "fallback_text", "spec", "root", "elements", "type", "props", "children",
              "phase", "text", "series", "values", "categories", "rows", "columns", "fields", "name", "Chart", SECRET]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | st.sampled_from(VOCABULARY),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(VOCABULARY) | st.text(max_size=4), inner, max_size=5),
    max_leaves=20,
)


def _replace_somewhere(value: Any, junk: Any, choice: int) -> Any:
    """`value` with the `choice`-th container's first entry (in walk order) replaced by `junk`."""
    containers = []
    stack_ = [value]
    while stack_:
        item = stack_.pop()
        if isinstance(item, (dict, list)) and item:
            containers.append(item)
            stack_.extend(item.values() if isinstance(item, dict) else item)
    target = containers[choice % len(containers)]
    target[next(iter(target)) if isinstance(target, dict) else 0] = junk
    return value


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_arbitrary_json_only_ever_raises_uischemaerror(value):
    try:
        parse_answer_block(value)
    except UISchemaError as error:
        assert all(SECRET not in issue.path + issue.message for issue in error.issues)


@settings(max_examples=300, deadline=None)
@given(JSON, st.integers(min_value=0, max_value=200))
def test_a_valid_block_with_one_part_replaced_by_junk_only_raises_uischemaerror(junk, choice):
    value = _replace_somewhere(every_component(), junk, choice)
    try:
        parse_answer_block(value)
    except UISchemaError as error:
        assert all(SECRET not in issue.path + issue.message for issue in error.issues)


def test_the_longest_text_a_block_can_hold_is_checked_in_linear_time():
    """A search for `x://` from every letter of a long word took 0.1 s for one 4,096-unit string
    and 1.3 s for one block of 23 such strings (the worker holds the GIL meanwhile: a few such blocks
    would outlast its lease); from the start of each run of scheme characters only it takes a few
    milliseconds.  The bound is a generous multiple of that, far under the quadratic time."""
    import time

    words = ["a" * 4095 + ":", "a\t" * 2000 + ":", "a" * 4095 + ":", "1" * 4094 + "a:", "a" * 4095 + ":", "ja\t" * 1300 + ":"]
    elements: dict[str, Any] = {"root": {"type": "Stack", "props": {}, "children": [f"t{i}" for i in range(20)]}}
    for i in range(20):  # as many as the block's 100,000 units hold (a tab is written as two)
        elements[f"t{i}"] = leaf("Text", text=words[i % len(words)])
    value = block(elements)
    started = time.perf_counter()
    parse_answer_block(value)
    assert time.perf_counter() - started < 0.5
