"""answer-view-state@1 rules without Redis: allowed fields per component, migration, digests, demo."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from config.settings import load_settings
from core import hash_canonical_json, parse_answer_block
from core.answer._view_state import (
    MAX_ISSUES,
    ViewStateError,
    basis_of,
    check_nodes,
    migrate_nodes,
    node_issues,
    schema_digest,
    state_text,
)
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


def test_the_example_view_state_is_valid_for_its_block() -> None:
    assert check_nodes(NODES, parse_answer_block(BLOCK)) == NODES


def test_the_schema_digest_is_the_canonical_sha256_of_the_block() -> None:
    assert schema_digest(parse_answer_block(BLOCK)) == hash_canonical_json(BLOCK)
    assert len(schema_digest(BLOCK)) == 64


def test_the_state_is_stored_as_canonical_json() -> None:
    assert state_text({"b": 1, "a": "é"}) == '{"a":"é","b":1}'


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
    with pytest.raises(ViewStateError) as caught:
        check_nodes(nodes, parse_answer_block(BLOCK))
    assert caught.value.issues and all(issue.path.startswith("/nodes") for issue in caught.value.issues)


def test_issues_are_bounded_and_never_echo_an_unknown_node_id() -> None:
    problems = node_issues({"secret-token-123": {}}, BLOCK)
    assert len(problems) == 1 and "secret-token-123" not in problems[0].path + problems[0].message
    many = {"trend": {"view": "pie", "hidden_series": ["x"], "detail_open": 1, "range": {"start": "9", "end": "9"}},
            "readings": {"selection": [1], "search": 7}, "basis": {"expanded": ["z"], "category": "z"},
            "note": {"drafts": {"valve_state": "z"}}}
    assert len(node_issues(many, BLOCK)) <= MAX_ISSUES


def test_an_unchanged_block_migrates_to_the_same_state() -> None:
    assert migrate_nodes(NODES, basis_of(BLOCK), BLOCK) == NODES


def test_changed_series_clear_hidden_series_and_the_data_table_sort_but_keep_the_view() -> None:
    def rename(elements: dict[str, Any]) -> None:
        elements["trend"]["props"]["series"][1]["name"] = "J-19 (MPa)"
    block = changed(rename)
    chart = migrate_nodes(NODES, basis_of(BLOCK), block)["trend"]
    assert chart["view"] == "bar" and "hidden_series" not in chart
    assert chart["table"] == {"search": "", "selection": []}
    assert chart["selected_point"] == NODES["trend"]["selected_point"]


def test_a_point_whose_label_is_no_longer_unique_is_cleared_with_its_detail() -> None:
    def duplicate(elements: dict[str, Any]) -> None:
        elements["trend"]["props"]["categories"][0] = "03:00"
    chart = migrate_nodes(NODES, basis_of(BLOCK), changed(duplicate))["trend"]
    assert "selected_point" not in chart and "detail_open" not in chart
    assert chart["range"] == NODES["trend"]["range"]  # its labels are still unique


def test_a_table_keeps_its_search_and_drops_a_sort_on_a_removed_column() -> None:
    def drop(elements: dict[str, Any]) -> None:
        elements["readings"]["props"]["columns"] = ["Time", "Junction", "bar"]
    table = migrate_nodes(NODES, basis_of(BLOCK), changed(drop))["readings"]
    assert table == {"search": "J-17", "selection": []}


def test_form_drafts_move_only_to_fields_of_the_same_name_and_type() -> None:
    def retype(elements: dict[str, Any]) -> None:
        elements["note"]["props"]["fields"][2]["type"] = "text"
        elements["note"]["props"]["fields"][1]["options"] = ["open", "closed"]
    form = migrate_nodes(NODES, basis_of(BLOCK), changed(retype))["note"]
    assert form == {"drafts": {}}  # note changed type, "partly open" is no longer an option
    assert migrate_nodes(NODES, None, BLOCK)["note"] == {"drafts": {}}  # an unknown basis never guesses


def test_evidence_keeps_items_that_still_exist_and_falls_back_to_all_categories() -> None:
    def replace(elements: dict[str, Any]) -> None:
        elements["basis"]["props"]["items"] = [elements["basis"]["props"]["items"][1]]
    assert migrate_nodes(NODES, basis_of(BLOCK), changed(replace))["basis"] == {}


def test_a_removed_or_retyped_element_loses_its_state() -> None:
    def retype(elements: dict[str, Any]) -> None:
        elements["readings"] = {"type": "Text", "props": {"text": "No table any more."}}
    assert "readings" not in migrate_nodes(NODES, basis_of(BLOCK), changed(retype))


def test_the_shipped_demo_examples_are_the_examples() -> None:
    for path in sorted((ROOT / "examples" / "answer-ui").glob("*.json")):
        assert (SHIPPED / path.name).read_bytes() == path.read_bytes(), path.name


def test_the_answer_demo_runs_end_to_end_on_the_embedded_redis() -> None:
    lines: list[str] = []
    assert run_answer_demo(load_settings(partitions=4), embedded=True, out=lines.append) == 0
    assert lines[-1] == "passed" and any("round trip equal=True" in line for line in lines)
