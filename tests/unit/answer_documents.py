"""Builders of answer-ui@1 blocks for the answer tests (valid unless a test breaks them)."""

from __future__ import annotations

import copy
import json
from typing import Any

from core.json._text import utf16_length

SECRET = "SECRET-3f9c"  # placed in rejected keys and values; must never reach an issue


def block(elements: dict[str, Any], root: str = "root", **envelope: Any) -> dict[str, Any]:
    """A block around `elements` (ids to elements)."""
    value = {"version": "answer-ui@1", "block_id": "b1", "fallback_text": "fallback", "spec": {"root": root, "elements": elements}}
    value.update(envelope)
    return value


def leaf(kind: str, **props: Any) -> dict[str, Any]:
    return {"type": kind, "props": props, "children": []}


def stack(*children: str, **props: Any) -> dict[str, Any]:
    return {"type": "Stack", "props": props, "children": list(children)}


def text(value: str = "hello") -> dict[str, Any]:
    return leaf("Text", text=value)


def chart(**overrides: Any) -> dict[str, Any]:
    props = {
        "title": "Pressure",
        "categories": ["01:00", "02:00", "03:00"],
        "series": [{"name": "J-17", "values": [0.3, 0.29, None]}],
    }
    props.update(overrides)
    return leaf("Chart", **props)


def table(**overrides: Any) -> dict[str, Any]:
    props = {"columns": ["Time", "Value"], "rows": [["01:00", 1], ["02:00", None]]}
    props.update(overrides)
    return leaf("Table", **props)


def form(*fields: dict[str, Any]) -> dict[str, Any]:
    return leaf("FollowUpForm", title="More", fields=list(fields) or [{"name": "note", "label": "Note", "type": "text"}])


def evidence(*items: dict[str, Any]) -> dict[str, Any]:
    default = {"id": "ev-1", "summary": "A reading", "source": "Saved records", "recorded_at": "2026-10-29T05:00:00Z"}
    return leaf("Evidence", items=list(items) or [default])


def every_component() -> dict[str, Any]:
    """A valid block using all ten components."""
    elements = {
        "root": stack("section", "result", "metric", "chart", "table", "evidence", "map", "form", intent="response"),
        "section": {"type": "Section", "props": {"role": "analysis", "title": "Analysis"}, "children": ["text"]},
        "text": leaf("Text", text="Explained.", title="Limits", tone="info"),
        "result": leaf("Result", title="Done", summary="Read six records.", status="partial", source="Records"),
        "metric": leaf("Metric", label="Pressure", value=0.3, unit="MPa"),
        "chart": chart(view="bar"),
        "table": table(),
        "evidence": evidence(),
        "map": leaf("MapLocation", layer="valves", feature_id="V-3"),
        "form": form({"name": "state", "label": "State", "type": "select", "options": ["open", "closed"]}),
    }
    return block(elements)


def js_length(value: Any) -> int:
    """`JSON.stringify(value).length` for values without floats or control characters."""
    return utf16_length(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def sized_block(units: int, filler: str = "x", block_id: str = "big") -> dict[str, Any]:
    """A one-table block whose serialized form is exactly `units` UTF-16 code units long."""
    value = block({"root": table(columns=["c"], rows=[[""]])}, block_id=block_id)
    rows = value["spec"]["elements"]["root"]["props"]["rows"]
    while units - js_length(value) > 1_024:
        rows.append(["x" * 1_000])
    remaining = units - js_length(value)
    width = utf16_length(filler)
    rows[0] = [filler * (remaining // width) + "x" * (remaining % width)]
    assert js_length(value) == units
    return value


def clone(value: Any) -> Any:
    return copy.deepcopy(value)
