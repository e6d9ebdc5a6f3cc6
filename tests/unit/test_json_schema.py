"""The exported JSON Schema: valid Draft 2020-12, fresh, in sync with the file, strict."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema
import pytest

from bench.documents import apply_mutations
from core.document.schema import document_json_schema, document_json_schema_text
from core.limits import UI_LIMITS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCHEMA_FILE = ROOT / "schema" / "ui.schema.json"
MUTATIONS_EXAMPLE = "stream-mutations.json"


def _load(name: str) -> Any:
    return json.loads((EXAMPLES / name).read_text(encoding="utf-8"))


def _nodes(node: dict, parent: dict | None = None) -> Iterator[tuple[dict, dict | None]]:
    yield node, parent
    for child in node.get("children", []):
        yield from _nodes(child, node)


def _example_documents() -> dict[str, dict]:
    documents = {
        path.name: _load(path.name) for path in sorted(EXAMPLES.glob("*.json")) if path.name != MUTATIONS_EXAMPLE
    }
    documents["stream-final (stream-initial.json + stream-mutations.json)"] = apply_mutations(
        documents["stream-initial.json"], _load(MUTATIONS_EXAMPLE)
    )
    return documents


DOCUMENTS = _example_documents()


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(document_json_schema())


@pytest.fixture(scope="module")
def fast_validate():
    return fastjsonschema.compile(document_json_schema())


def test_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(document_json_schema())


def test_schema_names_its_dialect_and_id():
    schema = document_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == "urn:dsh:intelligent-ui:document:1.1"
    assert "parse_document" in schema["description"]


def test_each_call_returns_a_fresh_schema_that_callers_may_mutate():
    first = document_json_schema()
    first["$defs"]["identifier"]["pattern"] = "^.*$"
    first["oneOf"].clear()
    second = document_json_schema()
    assert second["$defs"]["identifier"]["pattern"] == "^[A-Za-z][A-Za-z0-9_-]{0,63}$"
    assert len(second["oneOf"]) == 2


def test_checked_in_schema_file_matches_the_generator():
    checked_in = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert checked_in == document_json_schema(), (
        "schema/ui.schema.json is stale: regenerate it with "
        "`python -m core.document.schema > schema/ui.schema.json`"
    )


def test_the_schema_text_is_the_checked_in_file_byte_for_byte():
    # An audit: compiled, the number bounds read 1000000000000000.0: equal as Python values (the test
    # above passed), another file for `iui schema` and every reader of the text.
    assert document_json_schema_text() == SCHEMA_FILE.read_text(encoding="utf-8")


def test_bounds_come_from_the_limits_module():
    defs = document_json_schema()["$defs"]
    table = defs["Table"]["properties"]["props"]["properties"]
    assert table["rows"]["maxItems"] == UI_LIMITS["maxTableRows"]
    assert table["columns"]["maxItems"] == UI_LIMITS["maxTableColumns"]
    assert defs["stateMap"]["maxProperties"] == UI_LIMITS["maxStateFields"]
    assert defs["number"]["maximum"] == UI_LIMITS["maxNumberMagnitude"]


def _refs_with_siblings(schema: Any) -> Iterator[dict]:
    if isinstance(schema, dict):
        if "$ref" in schema and len(schema) > 1:
            yield schema
        for value in schema.values():
            yield from _refs_with_siblings(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _refs_with_siblings(value)


def test_every_ref_that_carries_siblings_also_spells_out_its_type():
    assert [s for s in _refs_with_siblings(document_json_schema()) if "type" not in s] == []


TYPED_KEYWORDS = {
    "properties", "required", "additionalProperties", "propertyNames", "maxProperties", "minProperties",
    "items", "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum",
}


def _untyped(schema: Any, path: str = "") -> Iterator[str]:
    if isinstance(schema, dict):
        if TYPED_KEYWORDS & set(schema) and "type" not in schema:
            yield path
        for key, value in schema.items():
            yield from _untyped(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from _untyped(value, f"{path}/{index}")


def test_every_type_specific_keyword_sits_next_to_its_type_for_strict_consumers():
    assert list(_untyped(document_json_schema())) == []


def _undeclared_required(schema: Any, path: str = "") -> Iterator[str]:
    if isinstance(schema, dict):
        declared = set(schema.get("properties", {}))
        yield from (f"{path}/required/{name}" for name in schema.get("required", []) if name not in declared)
        for key, value in schema.items():
            yield from _undeclared_required(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from _undeclared_required(value, f"{path}/{index}")


def test_every_required_name_is_declared_in_the_same_properties_for_strict_consumers():
    assert list(_undeclared_required(document_json_schema())) == []


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_every_example_document_satisfies_the_schema(name, validator, fast_validate):
    validator.validate(DOCUMENTS[name])
    fast_validate(DOCUMENTS[name])


# ---------------------------------------------------------------- rejections


def _calculator() -> dict:
    return copy.deepcopy(DOCUMENTS["compound-interest.json"])


def _reader() -> dict:
    return copy.deepcopy(DOCUMENTS["actions-file-reader.json"])


def _find(document: dict, node_id: str) -> dict:
    return next(node for node, _ in _nodes(document["root"]) if node["id"] == node_id)


def _nested_slider_with_numeric_label() -> dict:
    document = _calculator()
    _find(document, "rate-slider")["props"]["label"] = 5
    return document


def _nested_slider_with_unknown_prop() -> dict:
    document = _calculator()
    _find(document, "years-slider")["props"]["onChange"] = "alert(1)"
    return document


def _v1_0_with_actions() -> dict:
    document = _calculator()
    document["actions"] = {}
    return document


def _v1_0_with_invoke_button() -> dict:
    document = _calculator()
    _find(document, "reset-button")["props"]["action"] = {"type": "invoke", "actionId": "anything"}
    return document


def _v1_1_without_actions() -> dict:
    document = _reader()
    del document["actions"]
    return document


def _structured_with_input() -> dict:
    document = copy.deepcopy(DOCUMENTS["product-comparison.json"])
    document["state"] = {"q": {"type": "string", "initial": ""}}
    card = _find(document, "aero-card")
    card["children"].append({"id": "q-input", "type": "Input", "props": {"label": "Search", "bind": "q"}})
    return document


def _form_inside_form() -> dict:
    document = copy.deepcopy(DOCUMENTS["form-controls.json"])
    form = _find(document, "booking-form")
    inner = {"id": "inner-form", "type": "Form", "props": {"submitLabel": "Go", "action": {"type": "reset"}}, "children": []}
    form["children"].append({"id": "wrapper", "type": "Column", "props": {}, "children": [inner]})
    return document


def _text_with_children() -> dict:
    document = _calculator()
    _find(document, "summary-text")["children"] = []
    return document


def _row_without_children() -> dict:
    document = _calculator()
    del _find(document, "actions")["children"]
    return document


def _currency_without_currency_code() -> dict:
    document = _calculator()
    del _find(document, "total-result")["props"]["format"]["currency"]
    return document


def _percent_with_currency_code() -> dict:
    document = _calculator()
    _find(document, "growth-result")["props"]["format"]["currency"] = "USD"
    return document


def _formatted_result_with_text_literal() -> dict:
    document = _calculator()
    _find(document, "total-result")["props"]["value"] = "a lot"
    return document


def _bare_state_reference_as_value() -> dict:
    document = _calculator()
    _find(document, "summary-text")["props"]["text"] = {"state": "years"}
    return document


def _reserved_identifier() -> dict:
    document = _calculator()
    document["state"]["constructor"] = {"type": "boolean", "initial": False}
    return document


def _operator_with_wrong_arity() -> dict:
    document = _calculator()
    document["derived"]["gain"]["args"].append(1)
    return document


def _unknown_operator() -> dict:
    document = _calculator()
    document["derived"]["gain"]["op"] = "eval"
    return document


def _too_many_table_rows() -> dict:
    document = copy.deepcopy(DOCUMENTS["product-comparison.json"])
    table = _find(document, "spec-table")["props"]
    table["rows"] = table["rows"][:1] * (UI_LIMITS["maxTableRows"] + 1)
    return document


def _chart_without_points() -> dict:
    document = _calculator()
    _find(document, "split-chart")["props"]["data"] = []
    return document


def _agent_with_empty_prompt() -> dict:
    document = copy.deepcopy(DOCUMENTS["agent-callback.json"])
    document["actions"]["explain"]["prompt"] = ""
    return document


def _tool_action_with_tool_name() -> dict:
    document = _reader()
    document["actions"]["count_lines"]["toolName"] = "read"
    return document


def _node_id_starting_with_a_digit() -> dict:
    document = _calculator()
    _find(document, "summary-text")["id"] = "2nd-text"
    return document


def _unknown_version() -> dict:
    document = _reader()
    document["version"] = "1.2"
    return document


INVALID = {
    "a Slider deep inside a Card with a numeric label": _nested_slider_with_numeric_label,
    "a Slider deep inside a Card with an unknown prop": _nested_slider_with_unknown_prop,
    "a 1.0 document with actions": _v1_0_with_actions,
    "a 1.0 document with an invoke Button": _v1_0_with_invoke_button,
    "a 1.1 document without actions": _v1_1_without_actions,
    "a structured_ui document with an Input": _structured_with_input,
    "a Form nested in a Form through a Column": _form_inside_form,
    "a Text with children": _text_with_children,
    "a Row without children": _row_without_children,
    "a currency format without a currency": _currency_without_currency_code,
    "a percent format with a currency": _percent_with_currency_code,
    "a formatted Result with a text literal": _formatted_result_with_text_literal,
    "a bare state reference used as a Value": _bare_state_reference_as_value,
    "a reserved identifier as a state key": _reserved_identifier,
    "a sub with three arguments": _operator_with_wrong_arity,
    "an unknown operator": _unknown_operator,
    "a Table with too many rows": _too_many_table_rows,
    "a Chart without points": _chart_without_points,
    "an agent action with an empty prompt": _agent_with_empty_prompt,
    "a tool action naming the tool": _tool_action_with_tool_name,
    "a node id starting with a digit": _node_id_starting_with_a_digit,
    "an unknown version": _unknown_version,
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_schema_rejects(case, validator, fast_validate):
    document = INVALID[case]()
    assert not validator.is_valid(document)
    with pytest.raises(fastjsonschema.JsonSchemaValueException):
        fast_validate(document)


# ---------------------------------------------------------------- edge cases both accept


def _form_controls() -> dict:
    return copy.deepcopy(DOCUMENTS["form-controls.json"])


def _with_child(node: dict) -> dict:
    document = _form_controls()
    document["root"]["children"].append(node)
    return document


def _with_derived(expr: Any) -> dict:
    document = _form_controls()
    document["derived"]["extra"] = expr
    return document


def _with_long_title() -> dict:
    document = _form_controls()
    document["title"] = "T" * 256
    return document


def _with_negative_zero_initial() -> dict:
    document = _form_controls()
    document["state"]["zero"] = {"type": "number", "initial": -0.0}
    return document


def _with_full_select() -> dict:
    document = _form_controls()
    document["state"]["choice"] = {"type": "string", "initial": "o0"}
    options = [{"label": "L" * 512, "value": f"o{i}"} for i in range(UI_LIMITS["maxSelectOptions"])]
    return _add_select(document, options)


def _add_select(document: dict, options: list) -> dict:
    select = {"id": "choice", "type": "Select", "props": {"label": "Choice", "bind": "choice", "options": options}}
    document["root"]["children"].append(select)
    return document


def _with_empty_option_value() -> dict:
    document = _form_controls()
    document["state"]["choice"] = {"type": "string", "initial": ""}
    return _add_select(document, [{"label": "None", "value": ""}, {"label": "Some", "value": "some"}])


def _with_full_table() -> dict:
    columns = [{"key": f"c{i}", "label": f"C{i}"} for i in range(UI_LIMITS["maxTableColumns"])]
    rows = [{c["key"]: None for c in columns}] * UI_LIMITS["maxTableRows"]
    return _with_child({"id": "t", "type": "Table", "props": {"columns": columns, "rows": rows}})


def _with_full_chart() -> dict:
    data = [{"id": f"p{i}", "label": "P", "value": -i} for i in range(UI_LIMITS["maxChartPoints"])]
    return _with_child({"id": "c", "type": "Chart", "props": {"kind": "line", "data": data}})


def _with_full_actions() -> dict:
    document = _reader()
    arguments = {f"a{i}": i for i in range(32)}
    document["actions"] = {f"act{i}": {"kind": "tool", "capabilityId": "read_file", "arguments": arguments} for i in range(16)}
    document["actions"]["count_lines"] = document["actions"].pop("act0")
    return document


ACCEPTED = {
    "an empty Select option value": _with_empty_option_value,
    "a heading level written 1.0": lambda: _with_child({"id": "h", "type": "Heading", "props": {"text": "H", "level": 1.0}}),
    "grid columns written 2.0": lambda: _with_child({"id": "g", "type": "Grid", "props": {"columns": 2.0}, "children": []}),
    "result digits written 2.0": lambda: _with_child(
        {"id": "r", "type": "Result", "props": {"value": 1, "format": {"style": "decimal", "digits": 2.0}}}
    ),
    "an empty Card title and an empty Loading label": lambda: _with_child(
        {"id": "c", "type": "Card", "props": {"title": ""}, "children": [{"id": "l", "type": "Loading", "props": {"label": ""}}]}
    ),
    "an empty Markdown text": lambda: _with_child({"id": "m", "type": "Markdown", "props": {"text": ""}}),
    "a null Badge text": lambda: _with_child({"id": "b", "type": "Badge", "props": {"text": None}}),
    "a Table without rows": lambda: _with_child(
        {"id": "t", "type": "Table", "props": {"columns": [{"key": "a", "label": "A"}], "rows": []}}
    ),
    "a plain scalar derived field": lambda: _with_derived(5),
    "a round with one argument": lambda: _with_derived({"op": "round", "args": [1.5]}),
    "an if over scalars": lambda: _with_derived({"op": "if", "args": [True, 1, 2]}),
    "a 256-character title": _with_long_title,
    "a -0 initial number": _with_negative_zero_initial,
    "a Select with 100 options and 512-character labels": _with_full_select,
    "a Table with 32 columns and 500 rows": _with_full_table,
    "a Chart with 200 points": _with_full_chart,
    "16 actions with 32 arguments each": _with_full_actions,
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_schema_accepts_what_parse_document_accepts(case, validator, fast_validate):
    from core.document.model import parse_document

    document = ACCEPTED[case]()
    parse_document(document)
    validator.validate(document)
    fast_validate(document)
