"""The exported JSON Schema (Draft 2020-12) of an answer-ui@1 block, built from the catalog.

`python -m core.answer.schema > schema/answer-ui.schema.json` writes the checked-in file.
The root describes one block; `$defs` also hold `final_answer` and `report_ui_blocks`.
It covers what structural validation can (closed objects, components, props, enums,
bounds); `parse_answer_block` stays the trust boundary for the rest (see the description).
"""

from __future__ import annotations

import json
from typing import Any

from core._identifier import RESERVED_IDENTIFIERS
from core.answer._catalog import (
    COMPONENTS,
    FALLBACK_LENGTH,
    IDENTIFIER_PATTERN,
    MAX_CHILDREN,
    MAX_ELEMENTS,
    MAX_REPORT_BLOCKS,
    PHASES,
    VERSION,
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
from core.answer.final import MAX_ANSWER_LENGTH, MAX_UI_BLOCK_IDS
from core.answer.report import EVIDENCE_ID_LENGTH, MAX_EVIDENCE_REFS
from core.limits import UI_LIMITS

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:dsh:intelligent-ui:answer-ui:1"
_MAGNITUDE = int(UI_LIMITS["maxNumberMagnitude"])

_DESCRIPTION = (
    "An answer-ui@1 block. Structural check only: it does not verify that the elements form "
    "one tree under root (missing references, cycles, duplicate references, orphans, depth at "
    "most 12), the serialized size of at most 100000 UTF-16 code units, chart series aligned "
    "with the categories and distinct series names, table rows as long as the columns, "
    "distinct form field names and options only on select fields, distinct evidence ids, "
    "and text free of links, scripts and data URIs. String lengths here count code points, "
    "while the protocol counts UTF-16 code units. Every block must pass parse_answer_block."
)


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def _string(spec: Str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "minLength": spec.min_length, "maxLength": spec.max_length}
    if spec.pattern:
        schema["pattern"] = f"^{spec.pattern}$"
    return schema


def _record(spec: Record) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": {p.name: spec_schema(p.spec) for p in spec.props}}
    required = [p.name for p in spec.props if p.required]
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _array(spec: Array) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": spec_schema(spec.item)}
    if spec.min_items:
        schema["minItems"] = spec.min_items
    schema["maxItems"] = spec.max_items
    return schema


def spec_schema(spec: Spec) -> dict[str, Any]:
    """The JSON Schema of one catalog spec."""
    if isinstance(spec, Str):
        return _string(spec)
    if isinstance(spec, Ident):
        return _ref("identifier")
    if isinstance(spec, Choice):
        return {"type": "string", "enum": list(spec.values)}
    if isinstance(spec, Int):
        return {"type": "integer", "minimum": spec.low, "maximum": spec.high}
    if isinstance(spec, Bool):
        return {"type": "boolean"}
    if isinstance(spec, Num):
        kind: str | list[str] = ["number", "null"] if spec.nullable else "number"
        return {"type": kind, "minimum": -_MAGNITUDE, "maximum": _MAGNITUDE}
    if isinstance(spec, Either):
        return {"anyOf": [spec_schema(option) for option in spec.options]}
    if isinstance(spec, Array):
        return _array(spec)
    return _record(spec)


def _component(component: Component) -> dict[str, Any]:
    children: dict[str, Any] = {"type": "array", "items": _ref("identifier"), "maxItems": MAX_CHILDREN}
    if not component.container:
        children = {"type": "array", "maxItems": 0}
    return {
        "description": component.description,
        "type": "object",
        "properties": {"type": {"const": component.name}, "props": spec_schema(component.props), "children": children},
        "required": ["type", "props"],
        "additionalProperties": False,
    }


def _shared_defs() -> dict[str, Any]:
    return {
        "identifier": {"type": "string", "pattern": f"^{IDENTIFIER_PATTERN}$",
                       "not": {"enum": sorted(RESERVED_IDENTIFIERS)}},
        "element": {"oneOf": [_ref(component.name) for component in COMPONENTS]},
        "final_answer": {
            "type": "object",
            "properties": {
                "answer": {"type": "string", "maxLength": MAX_ANSWER_LENGTH},
                "ui_block_ids": {"type": "array", "items": _ref("identifier"), "uniqueItems": True,
                                 "maxItems": MAX_UI_BLOCK_IDS},
            },
            "required": ["answer", "ui_block_ids"],
            "additionalProperties": False,
        },
        "report_ui_blocks": {"type": "array", "items": _report_entry(), "maxItems": MAX_REPORT_BLOCKS},
    }


def _report_entry() -> dict[str, Any]:
    refs = {"type": "string", "minLength": 1, "maxLength": EVIDENCE_ID_LENGTH}
    return {
        "type": "object",
        "properties": {
            # Strict Ajv wants `type` beside `properties` even where the `$ref` already says it.
            "block": {"allOf": [{"$ref": "#"}, {"type": "object", "properties": {"phase": {"const": "final"}}}]},
            "evidence_refs": {"type": "array", "items": refs, "uniqueItems": True, "minItems": 1,
                              "maxItems": MAX_EVIDENCE_REFS},
        },
        "required": ["block", "evidence_refs"],
        "additionalProperties": False,
    }


def _spec() -> dict[str, Any]:
    elements = {
        "type": "object",
        "propertyNames": _ref("identifier"),
        "minProperties": 1,
        "maxProperties": MAX_ELEMENTS,
        "additionalProperties": _ref("element"),
    }
    return {
        "type": "object",
        "properties": {"root": _ref("identifier"), "elements": elements},
        "required": ["root", "elements"],
        "additionalProperties": False,
    }


def answer_json_schema() -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) of an answer-ui@1 block; a fresh object each call."""
    defs = _shared_defs()
    defs.update({component.name: _component(component) for component in COMPONENTS})
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": SCHEMA_ID,
        "title": "answer-ui@1 block",
        "description": _DESCRIPTION,
        "type": "object",
        "properties": {
            "version": {"const": VERSION},
            "block_id": _ref("identifier"),
            "fallback_text": _string(Str(FALLBACK_LENGTH)),
            "spec": _spec(),
            "phase": {"type": "string", "enum": list(PHASES)},
        },
        "required": ["version", "block_id", "fallback_text", "spec"],
        "additionalProperties": False,
        "$defs": defs,
    }


def answer_json_schema_text() -> str:
    """The checked-in text of `schema/answer-ui.schema.json`."""
    return json.dumps(answer_json_schema(), indent=2, ensure_ascii=False) + "\n"

