"""Accepting edge cases at every limit, the next step over each, and hostile shapes."""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.document.model import parse_document
from core.errors import UISchemaError
from core.json.canonical import canonical_json_measured, canonical_json_string
from core.json.safe import SafeJson
from core.limits import UI_LIMITS
from core.stream.lifecycle import start_ui_stream

from .documents import base_document


def doc(root, **extra):
    return {"version": "1.0", "id": "limits", "mode": "structured_ui", "title": "Limits",
            "state": {}, "derived": {}, "root": root, **extra}


def text(node_id, value="x"):
    return {"id": node_id, "type": "Text", "props": {"text": value}}


def column(node_id, children):
    return {"id": node_id, "type": "Column", "props": {}, "children": children}


def nested(depth):
    node = text("leaf")
    for level in range(depth - 1, 0, -1):
        node = column(f"c{level}", [node])
    return node


def reject_path(document):
    with pytest.raises(UISchemaError) as caught:
        parse_document(document)
    return [issue.path for issue in caught.value.issues]


def test_exactly_200_components_are_accepted_and_201_rejected():
    assert parse_document(doc(column("root", [text(f"t{i}") for i in range(199)]))).model.components == 200
    assert "/root/children/199" in reject_path(doc(column("root", [text(f"t{i}") for i in range(200)])))


def test_depth_16_is_accepted_and_17_rejected():
    parse_document(doc(nested(16)))
    paths = reject_path(doc(nested(17)))
    assert paths == ["/root" + "/children/0" * 16]


def test_a_64_character_id_is_accepted_and_65_rejected():
    parse_document(doc(text("a" * 64)))
    assert reject_path(doc(text("a" * 65))) == ["/root/id"]


def test_4096_utf16_units_of_emoji_are_accepted_and_one_more_unit_rejected():
    parse_document(doc(text("t", "😀" * 2048)))
    assert reject_path(doc(text("t", "😀" * 2048 + "a"))) == ["/root/props/text"]


def test_a_256_unit_title_is_accepted():
    parse_document({**doc(text("t")), "title": "😀" * 128})
    assert reject_path({**doc(text("t")), "title": "😀" * 128 + "a"}) == ["/title"]


def test_the_document_byte_budget_counts_utf8_bytes_exactly():
    base = doc(text("t", ""))
    room = 262_144 - len(orjson.dumps(base))
    filler = "é" * (room // 2)  # 2 bytes each
    document = doc(text("t", [filler][0][:4096]))
    assert len(orjson.dumps(document)) < 262_144
    chart = {"id": "c", "type": "Table", "props": {"columns": [{"key": "a", "label": "A"}], "rows": []}}
    exact = doc(column("root", [chart]))
    cell = "é" * 2000
    while len(orjson.dumps(exact)) + len(orjson.dumps({"a": cell})) + 1 <= 262_144:
        chart["props"]["rows"].append({"a": cell})
    missing = 262_144 - len(orjson.dumps(exact))
    chart["props"]["rows"].append({"a": "x" * (missing - len('{"a":""}') - 1)})
    assert len(orjson.dumps(exact)) == 262_144
    parse_document(exact)
    chart["props"]["rows"][-1]["a"] += "x"
    with pytest.raises(UISchemaError) as caught:
        parse_document(exact)
    assert caught.value.issues[0].path == "" and caught.value.issues[0].code == "too_large"


def test_integral_floats_count_as_javascript_prints_them():
    document = doc(text("t", 5.0))
    assert parse_document(document).model.byte_size == len(json.dumps(document, separators=(",", ":"))) - 2


def test_parsed_documents_are_deeply_immutable_and_serialize_back():
    source = base_document()
    parsed = parse_document(source)
    with pytest.raises(TypeError):
        parsed["title"] = "x"
    with pytest.raises(TypeError):
        parsed["root"]["children"].append(1)
    with pytest.raises(TypeError):
        parsed["root"]["children"][0]["props"]["text"] = "x"
    assert orjson.loads(orjson.dumps(parsed)) == source
    assert canonical_json_string(parsed) == canonical_json_string(source)


@pytest.mark.parametrize("hostile", [
    "deep lists", "deep objects", "huge array", "nan", "set", "non-string key",
])
def test_hostile_shapes_are_refused_by_the_safe_json_check_before_recursion(hostile):
    value: object
    if hostile == "deep lists":
        value = []
        for _ in range(100_000):
            value = [value]
    elif hostile == "deep objects":
        value = {}
        for _ in range(100_000):
            value = {"root": value}
    elif hostile == "huge array":
        value = doc(column("root", [0] * 5_000_000))
    elif hostile == "nan":
        value = doc(text("t", float("nan")))
    elif hostile == "set":
        value = doc(text("t", {1, 2}))
    else:
        value = {1: "x"}
    with pytest.raises(UISchemaError) as caught:
        parse_document(value)
    assert caught.value.issues[0].code in ("unsafe_json", "too_large")


json_leaf = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10)
json_values = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=5) |
                           st.dictionaries(st.text(max_size=8), inner, max_size=5), max_leaves=40)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_arbitrary_json_returns_or_raises_schema_errors_only(value):
    try:
        parse_document(value)
    except UISchemaError as error:
        assert 1 <= len(error.issues) <= 20


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


ALL_PATHS = list(_paths(base_document()))[1:]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(ALL_PATHS), json_values), min_size=1, max_size=4))
def test_randomly_mutated_documents_return_or_raise_schema_errors_only(edits):
    document = base_document()
    for path, replacement in edits:
        target = document
        try:
            for step in path[:-1]:
                target = target[step]
            target[path[-1]] = replacement
        except (KeyError, IndexError, TypeError):
            continue
    try:
        parsed = parse_document(document)
    except UISchemaError as error:
        assert all(len(issue.path) <= 512 and len(issue.message) <= 300 for issue in error.issues)
    else:
        assert parsed == document


def test_a_document_measured_by_its_canonical_walk_parses_as_the_plain_document() -> None:
    document = base_document()
    _, measured = canonical_json_measured(document)
    assert measured is not None
    assert parse_document(measured) == parse_document(document)
    assert parse_document(measured).model == parse_document(document).model
    assert start_ui_stream(measured, "call-1", 1).checkpoint == start_ui_stream(document, "call-1", 1).checkpoint


def test_a_measured_document_beyond_the_byte_limit_is_refused_as_the_walk_refuses_it() -> None:
    limit = UI_LIMITS["maxDocumentBytes"]
    with pytest.raises(UISchemaError) as error:
        parse_document(SafeJson(base_document(), limit + 1, 3))
    assert [(i.path, i.message, i.code) for i in error.value.issues] == [
        ("", f"JSON is {limit + 1} bytes; the limit is {limit}", "too_large")]


def table(cell):
    return {"id": "t", "type": "Table", "props": {"columns": [{"key": "a", "label": "A"}], "rows": [{"a": cell}]}}


@pytest.mark.parametrize(("node", "path", "code"), [
    (text("t", "a" * 4097), "/root/children/0/props/text", "length"),
    (text("t", {"expr": "a" * 4097}), "/root/children/0/props/text/expr", "length"),
    (table("a" * 4097), "/root/children/0/props/rows/0/a", "length"),
])
def test_a_literal_out_of_its_bounds_has_one_code_wherever_it_sits(node, path, code):
    # an audit: a long Text was `type` (offering {"expr": ...}, which a table cell takes not), the
    # same string in an expression `length`
    with pytest.raises(UISchemaError) as caught:
        parse_document(doc(column("root", [node])))
    assert [(issue.path, issue.code) for issue in caught.value.issues] == [(path, code)]
    assert "expr" not in caught.value.issues[0].message


def _props(component, **props):
    return {"id": "n", "type": component, "props": props}


ROWS = [{"a": "x"}]
COLUMNS = [{"key": "a", "label": "A"}]


@pytest.mark.parametrize(("node", "path", "code"), [
    (_props("Table", columns=COLUMNS, rows={}), "/root/children/0/props/rows", "type"),
    (_props("Table", columns=COLUMNS, rows="x"), "/root/children/0/props/rows", "type"),
    (_props("Table", columns=COLUMNS, rows=ROWS * 501), "/root/children/0/props/rows", "too_many"),
    (_props("Table", columns={}, rows=ROWS), "/root/children/0/props/columns", "type"),
    (_props("Table", columns=[], rows=ROWS), "/root/children/0/props/columns", "length"),
    (_props("Chart", kind="bar", data=5), "/root/children/0/props/data", "type"),
    (_props("Chart", kind="bar", data=[]), "/root/children/0/props/data", "length"),
])
def test_an_array_prop_of_another_type_is_type_and_of_another_count_its_count_code(node, path, code):
    """A non-array where an array belongs is `type`, as `children: {}` is; an array of too few or
    too many items keeps its count code (a seed 000 audit found `length` and `too_many` for both)."""
    with pytest.raises(UISchemaError) as caught:
        parse_document(doc(column("root", [node])))
    assert (caught.value.issues[0].path, caught.value.issues[0].code) == (path, code), caught.value.issues
