"""The eight example documents the spec names load, validate and tell the stream story."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.documents import apply_mutations
from core.document.model import parse_document

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MUTATIONS_EXAMPLE = "stream-mutations.json"
EXPECTED = {
    "compound-interest.json",
    "product-comparison.json",
    "form-controls.json",
    "actions-file-reader.json",
    "actions-file-writer.json",
    "agent-callback.json",
    "stream-initial.json",
    MUTATIONS_EXAMPLE,
}
DOCUMENT_EXAMPLES = sorted(EXPECTED - {MUTATIONS_EXAMPLE})


def _load(name: str) -> Any:
    return json.loads((EXAMPLES / name).read_text(encoding="utf-8"))


def _nodes(node: dict, parent: dict | None = None) -> Iterator[tuple[dict, dict | None]]:
    yield node, parent
    for child in node.get("children", []):
        yield from _nodes(child, node)


def test_the_examples_folder_holds_exactly_the_eight_named_examples():
    assert {path.name for path in EXAMPLES.glob("*.json")} == EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_example_is_json_text(name):
    assert isinstance(_load(name), (dict, list))


@pytest.mark.parametrize("name", DOCUMENT_EXAMPLES)
def test_every_document_example_passes_parse_document(name):
    document = _load(name)
    parsed = parse_document(document)
    assert parsed["id"] == document["id"]


def test_the_stream_mutations_are_add_update_remove_in_that_order():
    mutations = _load(MUTATIONS_EXAMPLE)
    assert [m["type"] for m in mutations] == ["add", "update", "remove"]


def test_the_stream_mutations_add_a_result_retitle_the_card_and_remove_the_loading_node():
    initial = _load("stream-initial.json")
    add, update, remove = _load(MUTATIONS_EXAMPLE)
    nodes = {node["id"]: node for node, _ in _nodes(initial["root"])}
    assert add["node"]["type"] == "Result" and nodes[add["parentId"]]["type"] == "Card"
    assert nodes[update["nodeId"]]["type"] == "Card"
    assert update["props"]["title"] != nodes[update["nodeId"]]["props"]["title"]
    assert nodes[remove["nodeId"]]["type"] == "Loading"


def test_every_stream_snapshot_passes_parse_document():
    initial = _load("stream-initial.json")
    mutations = _load(MUTATIONS_EXAMPLE)
    for count in range(len(mutations) + 1):
        parse_document(apply_mutations(initial, mutations[:count]))


def test_the_v1_1_examples_declare_the_documented_capabilities():
    reader = _load("actions-file-reader.json")["actions"]
    writer = _load("actions-file-writer.json")["actions"]
    agent = _load("agent-callback.json")["actions"]
    assert [a["capabilityId"] for a in reader.values()] == ["read_file"]
    assert [a["resultMap"] for a in reader.values()] == [{"lines": "totalLines"}]
    assert [sorted(a["arguments"]) for a in writer.values()] == [["content", "file_path"]]
    assert [list(a["resultMap"].values()) for a in writer.values()] == [["operation"]]
    assert [a["kind"] for a in agent.values()] == ["agent"]


def test_the_stream_example_runs_to_completion_through_the_stream_receiver():
    from core.stream.lifecycle import advance_ui_stream, start_ui_stream

    stream = start_ui_stream(_load("stream-initial.json"), "call_stream_example", 1)
    for mutation in _load(MUTATIONS_EXAMPLE):
        stream = advance_ui_stream(stream, mutation)
    stream = advance_ui_stream(stream, {"type": "complete"})
    assert stream.status == "complete"
    assert stream.checkpoint["revision"] == 3
    assert [child["id"] for child in stream.document["root"]["children"]] == ["summary-card"]
