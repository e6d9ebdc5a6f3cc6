"""The exported answer-ui JSON Schema: one catalog source, fresh on disk, and every example passes it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from core import (
    answer_json_schema,
    answer_parts,
    parse_answer_block,
    parse_final_answer,
    parse_report_ui_blocks,
)
from core.answer._catalog import CATALOG, MAX_ELEMENTS

from .answer_documents import every_component

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "schema" / "answer-ui.schema.json"
EXAMPLES = sorted((ROOT / "examples" / "answer-ui").glob("*.json"))


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(answer_json_schema())


def _def(validator: jsonschema.Draft202012Validator, name: str) -> jsonschema.Draft202012Validator:
    return validator.evolve(schema={"$ref": f"{validator.schema['$id']}#/$defs/{name}"})


def _blocks(example: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if "version" in example:
        yield example
    yield from example.get("published_blocks", [])
    yield from (entry["block"] for entry in example.get("ui_blocks", []))


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(answer_json_schema())


def test_the_checked_in_schema_file_matches_the_catalog():
    assert json.loads(SCHEMA_FILE.read_text(encoding="utf-8")) == answer_json_schema(), (
        "schema/answer-ui.schema.json is stale: regenerate it with "
        "`python -m core.answer.schema > schema/answer-ui.schema.json`"
    )


def test_every_catalog_component_and_prop_is_in_the_schema():
    defs = answer_json_schema()["$defs"]
    for name, component in CATALOG.items():
        props = defs[name]["properties"]["props"]
        assert set(props["properties"]) == {prop.name for prop in component.props.props}
        assert props["additionalProperties"] is False
    assert len(CATALOG) == 10
    assert answer_json_schema()["properties"]["spec"]["properties"]["elements"]["maxProperties"] == MAX_ELEMENTS


def test_the_examples_cover_all_ten_components():
    used = {element["type"] for path in EXAMPLES for b in _blocks(json.loads(path.read_text()))
            for element in b["spec"]["elements"].values()}
    assert used == set(CATALOG)


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.name for path in EXAMPLES])
def test_every_example_passes_the_schema_and_the_parsers(path, validator):
    example = json.loads(path.read_text(encoding="utf-8"))
    blocks = [parse_answer_block(b) for b in _blocks(example)]
    for b in _blocks(example):
        validator.validate(b)
    assert blocks
    if "final_answer" in example:
        _def(validator, "final_answer").validate(example["final_answer"])
        final = parse_final_answer(example["final_answer"], blocks)
        assert [part["type"] for part in answer_parts(final, blocks)].count("block") == 2
    if "ui_blocks" in example:
        _def(validator, "report_ui_blocks").validate(example["ui_blocks"])
        parse_report_ui_blocks(example["ui_blocks"], example["evidence_ids"])


def test_the_schema_rejects_what_the_catalog_closes(validator):
    value = every_component()
    value["spec"]["elements"]["text"]["props"]["onClick"] = "x"
    assert not validator.is_valid(value)
    value = every_component()
    value["spec"]["elements"]["text"]["type"] = "Script"
    assert not validator.is_valid(value)
    assert validator.is_valid(every_component())


def test_the_report_definition_refuses_process_blocks(validator):
    entry = {"block": every_component() | {"phase": "process"}, "evidence_refs": ["e"]}
    assert not _def(validator, "report_ui_blocks").is_valid([entry])
