"""answer-view-state@1 rules without Redis: allowed fields per component, migration, digests, demo."""

from __future__ import annotations

import contextlib
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from config.settings import load_settings
from core import (
    UIError,
    UISchemaError,
    UIViewStateError,
    canonical_json_string,
    hash_canonical_json,
    migrate_view_state,
    parse_answer_block,
    parse_view_state,
    view_state_basis,
    view_state_schema_digest,
)
from core.errors import MAX_ISSUES, Issue
from workers.cli.demo_answers import EXAMPLES as SHIPPED
from workers.cli.demo_answers import run_answer_demo

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = json.loads((ROOT / "examples" / "answer-ui" / "view-state.json").read_text("utf-8"))
BLOCK = EXAMPLE["published_blocks"][1]
NODES = EXAMPLE["view_state"]["nodes"]


def changed(edit: Any) -> dict[str, Any]:
    block = copy.deepcopy(BLOCK)
    edit(block["spec"]["elements"])
    return json.loads(json.dumps(parse_answer_block(block)))


def node_issues(nodes: Any, block: Any) -> list[Issue]:
    """The issues `parse_view_state` reports (none for a valid state)."""
    try:
        parse_view_state(nodes, block)
    except UIViewStateError as error:
        return error.issues
    return []


def test_the_example_view_state_is_valid_for_its_block() -> None:
    assert parse_view_state(NODES, parse_answer_block(BLOCK)) == NODES


def test_the_schema_digest_is_the_canonical_sha256_of_the_block() -> None:
    assert view_state_schema_digest(parse_answer_block(BLOCK)) == hash_canonical_json(BLOCK)
    assert len(view_state_schema_digest(BLOCK)) == 64


def test_the_state_is_stored_as_canonical_json() -> None:
    assert canonical_json_string({"b": 1, "a": "é"}) == '{"a":"é","b":1}'


@pytest.mark.parametrize("nodes", [
    {"trend": {"view": "pie"}},
    {"trend": {"hidden_series": ["J-18 (MPa)", "J-18 (MPa)"]}},
    {"trend": {"hidden_series": [{"unhashable": []}]}},
    {"trend": {"selected_point": {"series": ["x"], "category": "03:00"}}},
    {"trend": {"table": {"selection": [], "sort": {"column": None, "direction": "up"}}}},
    {"readings": {"selection": [], "search": "x" * 201}},
    {"note": {"drafts": {"valve_state": "wide open"}}},
    {"note": {"drafts": {"note": 5}}},
    {"basis": {"expanded": "rec-0300"}},
    {"basis": {"category": ["monitoring"]}},
    {"explorer": {}},
    {"trend": "bar"},
])
def test_fields_outside_each_components_view_state_are_rejected(nodes: Any) -> None:
    with pytest.raises(UIViewStateError) as caught:
        parse_view_state(nodes, parse_answer_block(BLOCK))
    assert caught.value.issues and all(issue.path.startswith("/nodes") for issue in caught.value.issues)


def test_issues_are_bounded_and_never_echo_an_unknown_node_id() -> None:
    problems = node_issues({"secret-token-123": {}}, BLOCK)
    assert len(problems) == 1 and "secret-token-123" not in problems[0].path + problems[0].message
    many = {"trend": {"view": "pie", "hidden_series": ["x"], "detail_open": 1, "range": {"start": "9", "end": "9"}},
            "readings": {"selection": [1], "search": 7}, "basis": {"expanded": ["z"], "category": "z"},
            "note": {"drafts": {"valve_state": "z"}}}
    assert len(node_issues(many, BLOCK)) <= MAX_ISSUES


def test_an_unchanged_block_migrates_to_the_same_state() -> None:
    assert migrate_view_state(NODES, view_state_basis(BLOCK), BLOCK) == NODES


def test_changed_series_clear_hidden_series_and_the_data_table_sort_but_keep_the_view() -> None:
    def rename(elements: dict[str, Any]) -> None:
        elements["trend"]["props"]["series"][1]["name"] = "J-19 (MPa)"
    block = changed(rename)
    chart = migrate_view_state(NODES, view_state_basis(BLOCK), block)["trend"]
    assert chart["view"] == "bar" and "hidden_series" not in chart
    assert chart["table"] == {"search": "", "selection": []}
    assert chart["selected_point"] == NODES["trend"]["selected_point"]


def test_a_point_whose_label_is_no_longer_unique_is_cleared_with_its_detail() -> None:
    def duplicate(elements: dict[str, Any]) -> None:
        elements["trend"]["props"]["categories"][0] = "03:00"
    chart = migrate_view_state(NODES, view_state_basis(BLOCK), changed(duplicate))["trend"]
    assert "selected_point" not in chart and "detail_open" not in chart
    assert chart["range"] == NODES["trend"]["range"]  # its labels are still unique


def test_a_table_keeps_its_search_and_drops_a_sort_on_a_removed_column() -> None:
    def drop(elements: dict[str, Any]) -> None:
        elements["readings"]["props"]["columns"] = ["Time", "Junction", "bar"]
    table = migrate_view_state(NODES, view_state_basis(BLOCK), changed(drop))["readings"]
    assert table == {"search": "J-17", "selection": []}


def test_form_drafts_move_only_to_fields_of_the_same_name_and_type() -> None:
    def retype(elements: dict[str, Any]) -> None:
        elements["note"]["props"]["fields"][2]["type"] = "text"
        elements["note"]["props"]["fields"][1]["options"] = ["open", "closed"]
    form = migrate_view_state(NODES, view_state_basis(BLOCK), changed(retype))["note"]
    assert form == {"drafts": {}}  # note changed type, "partly open" is no longer an option
    assert migrate_view_state(NODES, None, BLOCK)["note"] == {"drafts": {}}  # an unknown basis never guesses


def test_evidence_keeps_items_that_still_exist_and_falls_back_to_all_categories() -> None:
    def replace(elements: dict[str, Any]) -> None:
        elements["basis"]["props"]["items"] = [elements["basis"]["props"]["items"][1]]
    assert migrate_view_state(NODES, view_state_basis(BLOCK), changed(replace))["basis"] == {}


def test_evidence_keeps_the_expanded_items_that_still_exist_when_others_are_gone() -> None:
    # seed 004: "保留仍存在的证据" -- each item, not the list as a whole
    nodes = {"basis": {"category": "monitoring", "expanded": ["visit-1029", "rec-0300"]}}
    parse_view_state(nodes, BLOCK)

    def keep_first(elements: dict[str, Any]) -> None:
        elements["basis"]["props"]["items"] = elements["basis"]["props"]["items"][:1]
    assert migrate_view_state(nodes, view_state_basis(BLOCK), changed(keep_first))["basis"] == {
        "category": "monitoring", "expanded": ["rec-0300"]}

    def add_one(elements: dict[str, Any]) -> None:  # nothing removed: the list is kept as it was, in order
        items = elements["basis"]["props"]["items"]
        items.append({**items[0], "id": "rec-0400"})
    assert migrate_view_state(nodes, view_state_basis(BLOCK), changed(add_one))["basis"] == nodes["basis"]


@pytest.mark.parametrize("expanded", [
    "rec-0300", None, 7, [7, "rec-0300"], [None], ["rec-0300", "rec-0300"], [["rec-0300"]], [{"id": "rec-0300"}]])
def test_evidence_migration_of_a_stored_expanded_list_of_any_shape_keeps_only_existing_ids(expanded: Any) -> None:
    migrated = migrate_view_state({"basis": {"expanded": expanded}}, view_state_basis(BLOCK), BLOCK)["basis"]
    assert migrated in ({}, {"expanded": ["rec-0300"]})
    parse_view_state({"basis": migrated}, BLOCK)  # whatever is kept passes the block's rule
    if type(expanded) is list and "rec-0300" in expanded:
        assert migrated == {"expanded": ["rec-0300"]}


def test_a_removed_or_retyped_element_loses_its_state() -> None:
    def retype(elements: dict[str, Any]) -> None:
        elements["readings"] = {"type": "Text", "props": {"text": "No table any more."}}
    assert "readings" not in migrate_view_state(NODES, view_state_basis(BLOCK), changed(retype))


# -- the error shape --------------------------------------------------------------------------


def test_a_rejected_view_state_is_a_ui_error_with_located_coded_issues() -> None:
    nodes = {"readings": {"selection": [], "sort": {"column": "Nope", "direction": "up"}}}
    with pytest.raises(UIViewStateError) as caught:
        parse_view_state(nodes, BLOCK)
    error = caught.value
    assert isinstance(error, UIError) and error.code == "view_state"
    assert [(issue.path, issue.code) for issue in error.issues] == [
        ("/nodes/readings/sort/column", "unknown_column"), ("/nodes/readings/sort/direction", "enum")]
    assert error.message == "/nodes/readings/sort/column: must name a column shown exactly once (and 1 more)"


@pytest.mark.parametrize(("nodes", "path", "code"), [
    ({"trend": {"view": "pie"}}, "/nodes/trend/view", "enum"),
    ({"trend": {"hidden_series": ["J-18 (MPa)", "J-18 (MPa)"]}}, "/nodes/trend/hidden_series", "duplicate"),
    ({"trend": {"hidden_series": ["J-99"]}}, "/nodes/trend/hidden_series", "unknown_series"),
    ({"trend": {"detail_open": True}}, "/nodes/trend/detail_open", "detail"),
    ({"trend": {"range": {"start": "04:00", "end": "02:00"}}}, "/nodes/trend/range", "range"),
    ({"trend": {"range": {"start": "09:00", "end": "02:00"}}}, "/nodes/trend/range/start", "unknown_category"),
    ({"trend": {"selected_point": {"series": "J-17 (MPa)"}}}, "/nodes/trend/selected_point/category", "required"),
    ({"trend": {"table": {"selection": [], "sort": {"column": "MPa", "direction": "asc"}}}},
     "/nodes/trend/table/sort/column", "unknown_column"),
    ({"trend": {"secret": 1}}, "/nodes/trend", "unknown_property"),
    ({"readings": {"search": "x"}}, "/nodes/readings/selection", "required"),
    ({"readings": {"selection": [1]}}, "/nodes/readings/selection", "selection"),
    ({"readings": {"selection": [], "search": "😀" * 101}}, "/nodes/readings/search", "length"),  # 202 UTF-16 units
    ({"note": {"drafts": {"valve_state": "wide open"}}}, "/nodes/note/drafts/valve_state", "draft"),
    ({"note": {"drafts": {"password": "hunter2"}}}, "/nodes/note/drafts", "unknown_field"),
    ({"basis": {"category": "finance"}}, "/nodes/basis/category", "unknown_category"),
    ({"basis": {"expanded": ["ev-9"]}}, "/nodes/basis/expanded", "unknown_item"),
    ({"explorer": {}}, "/nodes", "unknown_node"),
    ([], "/nodes", "type"),
    ({"readings": {"selection": [], "search": "\ud800"}}, "/nodes", "unsafe_json"),
])
def test_each_rule_reports_its_own_code_at_the_field(nodes: Any, path: str, code: str) -> None:
    problems = node_issues(nodes, BLOCK)
    assert (problems[0].path, problems[0].code) == (path, code)
    assert not any(word in issue.message for issue in problems for word in ("secret", "hunter2", "password"))


def test_at_most_20_issues_are_reported() -> None:
    junk = {"view": 1, "hidden_series": 1, "range": 1, "selected_point": 1, "detail_open": 1, "table": 1}
    block = copy.deepcopy(BLOCK)
    fields = [{"name": f"f{i}", "label": "F", "type": "number"} for i in range(16)]
    block["spec"]["elements"]["note"]["props"]["fields"] = fields
    nodes = {"trend": junk, "note": {"drafts": {f"f{i}": "x" for i in range(16)}}}
    assert len(node_issues(nodes, block)) == MAX_ISSUES == 20


class _Sneaky(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        raise AssertionError("a method of the subclass ran")

    __iter__ = keys = values = __eq__ = __len__ = items  # type: ignore[assignment]


def test_a_subclass_of_a_json_type_is_refused_before_any_of_its_methods_run() -> None:
    for nodes in (_Sneaky(), {"trend": _Sneaky()}):
        assert [(issue.path, issue.code) for issue in node_issues(nodes, BLOCK)] == [("/nodes", "unsafe_json")]
        assert migrate_view_state(nodes, view_state_basis(BLOCK), BLOCK) == {}
    assert migrate_view_state(NODES, _Sneaky(), BLOCK)["note"] == {"drafts": {}}  # treated as an unknown basis


@pytest.mark.parametrize(("block", "path"), [
    (5, "/spec/elements"),
    ({"spec": {"elements": []}}, "/spec/elements"),
    ({"spec": {"elements": {"c": {"type": "Chart", "props": {"series": [{"name": 1}], "categories": []}}}}},
     "/spec/elements/c/props"),
    ({"spec": {"elements": {"f": {"type": "FollowUpForm", "props": {"fields": [{"name": "a"}]}}}}},
     "/spec/elements/f/props"),
])
def test_a_value_that_is_not_a_block_is_a_schema_error_located_in_the_block(block: Any, path: str) -> None:
    for call in (lambda: parse_view_state({}, block), lambda: migrate_view_state({}, None, block),
                 lambda: view_state_basis(block)):
        with pytest.raises(UISchemaError) as caught:
            call()
        assert [issue.path for issue in caught.value.issues] == [path]


@pytest.mark.parametrize("basis", [[], {"trend": 5, "note": {"type": "FollowUpForm", "fields": []}}, "x", {"note": 1}])
def test_a_basis_of_another_shape_counts_as_unknown(basis: Any) -> None:
    migrated = migrate_view_state(NODES, basis, BLOCK)
    assert migrated["note"] == {"drafts": {}} and "hidden_series" not in migrated["trend"]
    assert migrated["readings"] == NODES["readings"]


def test_a_valid_view_state_comes_back_deep_immutable() -> None:
    parsed = parse_view_state(NODES, BLOCK)
    with pytest.raises(TypeError):
        parsed["trend"]["view"] = "line"
    assert canonical_json_string(parsed) == canonical_json_string(NODES)


_KEYS = st.sampled_from(["trend", "readings", "basis", "note", "explorer", "view", "hidden_series", "range", "start",
                         "end", "selected_point", "series", "category", "detail_open", "table", "search", "sort",
                         "column", "direction", "selection", "drafts", "valve_state", "expanded", "type", "fields"])
_WORDS = st.sampled_from(["bar", "asc", "desc", "J-17 (MPa)", "J-18 (MPa)", "02:00", "04:00", "MPa", "open",
                          "partly open", "monitoring", "rec-0300", "Chart", "FollowUpForm", "", None, True, 0, 1.5])
JUNK = st.recursive(_WORDS | st.integers() | st.floats() | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=4),
                    max_leaves=24)


@settings(max_examples=400, deadline=None)
@given(JUNK, JUNK)
def test_junk_raises_only_documented_errors_and_always_migrates_to_a_valid_state(nodes: Any, basis: Any) -> None:
    migrated = migrate_view_state(nodes, basis, BLOCK)
    assert parse_view_state(migrated, BLOCK) == migrated
    for call in (lambda: parse_view_state(nodes, BLOCK), lambda: view_state_basis(nodes),
                 lambda: parse_view_state(NODES, nodes), lambda: view_state_schema_digest(nodes)):
        with contextlib.suppress(UIError):
            call()


def test_the_shipped_demo_examples_are_the_examples() -> None:
    for path in sorted((ROOT / "examples" / "answer-ui").glob("*.json")):
        assert (SHIPPED / path.name).read_bytes() == path.read_bytes(), path.name


def test_the_answer_demo_runs_end_to_end_on_the_embedded_redis() -> None:
    lines: list[str] = []
    assert run_answer_demo(load_settings(partitions=4), embedded=True, out=lines.append) == 0
    assert lines[-1] == "passed" and any("round trip equal=True" in line for line in lines)
