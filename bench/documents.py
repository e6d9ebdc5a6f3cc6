"""Documents to benchmark: the shipped examples and a generated maximal document.

The maximal document is deterministic and valid for `parse_document`, and sits at the
document limits at once: 200 components, 64 state fields, 64 derived fields, close to
2,048 expression nodes and a compact JSON size padded up to `maxDocumentBytes`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.json._frozen import thaw
from core.json.safe import assert_safe_json
from core.limits import UI_LIMITS
from core.stream.lifecycle import advance_ui_stream, start_ui_stream

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
MUTATIONS_EXAMPLE = "stream-mutations.json"

STATE_FIELDS = UI_LIMITS["maxStateFields"]
DERIVED_FIELDS = UI_LIMITS["maxDerivedFields"]
COMPONENTS = UI_LIMITS["maxComponents"]
MAX_BYTES = UI_LIMITS["maxDocumentBytes"]
GROUP = 8  # inputs and results are laid out in grids of 8; derived chains restart per group
TEXTS = COMPONENTS - 5 - 2 * (STATE_FIELDS + STATE_FIELDS // GROUP) - 1
TABLE_COLUMNS = 8
TABLE_ROWS = UI_LIMITS["maxTableRows"]


def example_documents() -> dict[str, dict]:
    """Every example document by file name, plus the stream's final snapshot."""
    documents = {
        path.stem: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(EXAMPLES.glob("*.json"))
        if path.name != MUTATIONS_EXAMPLE
    }
    mutations = json.loads((EXAMPLES / MUTATIONS_EXAMPLE).read_text(encoding="utf-8"))
    documents["stream-final"] = apply_mutations(documents["stream-initial"], mutations)
    return documents


def _nodes(node: dict, parent: dict | None = None) -> Iterator[tuple[dict, dict | None]]:
    yield node, parent
    for child in node.get("children", []):
        yield from _nodes(child, node)


def apply_mutations(document: dict, mutations: list[dict]) -> dict:
    """The snapshot a stream reaches after applying `mutations` with core.stream.lifecycle."""
    state = start_ui_stream(document, "example-open-call", 1)
    for mutation in mutations:
        state = advance_ui_stream(state, mutation)
    return thaw(state.document)


def report_document(components: int) -> dict[str, Any]:
    """The stream example grown to `components` nodes: 5 notes, then a Card of text lines.

    The shape the worker benchmarks open and patch (10 components: the small document,
    200: the large one).
    """
    document = json.loads((EXAMPLES / "stream-initial.json").read_text(encoding="utf-8"))
    for i in range(5):
        document["root"]["children"].append({"id": f"note-{i}", "type": "Text", "props": {"text": f"Note {i}"}})
    lines = components - count_components(document) - 1
    if lines > 0:
        body = [{"id": f"line-{i}", "type": "Text", "props": {"text": f"Line {i} of the report"}} for i in range(lines)]
        document["root"]["children"].append({"id": "lines", "type": "Card", "props": {"title": "Lines", "gap": "sm"},
                                             "children": body})
    return document


# ---------------------------------------------------------------- the maximal document


def _state() -> dict[str, Any]:
    return {
        f"s{i}": {"type": "number", "initial": i % 10 + 1, "min": 0, "max": 1000, "step": 0.5}
        for i in range(STATE_FIELDS)
    }


def _derived(index: int) -> dict[str, Any]:
    """add/mul/round/min/max over states and the previous field of the group: 17 nodes, |value| < 1e6."""
    here, there = {"state": f"s{index}"}, {"state": f"s{(index + 1) % STATE_FIELDS}"}
    previous = {"derived": f"d{index - 1}"} if index % GROUP else 1
    return {
        "op": "add",
        "args": [
            {"op": "mul", "args": [here, 1.5]},
            {"op": "round", "args": [{"op": "div", "args": [there, 3]}, 2]},
            {"op": "max", "args": [here, there, 0]},
            {"op": "min", "args": [here, 500]},
            previous,
        ],
    }


def _text(index: int) -> dict[str, Any]:
    """A concat of states and derived values: 18 nodes."""
    key = index % DERIVED_FIELDS
    args = [f"Line {index}: ", {"state": f"s{key}"}, " plus ", {"derived": f"d{key}"}, " over ", {"state": f"s{(key + 1) % STATE_FIELDS}"}, " is ",
            {"op": "round", "args": [{"op": "add", "args": [{"state": f"s{key}"}, {"derived": f"d{key}"}]}, 1]}, "; step ", 0.5]
    return {"id": f"text{index}", "type": "Text", "props": {"text": {"expr": {"op": "concat", "args": args}}}}


def _grids(prefix: str, count: int, make) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{prefix}-grid{g}",
            "type": "Grid",
            "props": {"columns": 4, "gap": "sm"},
            "children": [make(i) for i in range(g * GROUP, min(count, (g + 1) * GROUP))],
        }
        for g in range((count + GROUP - 1) // GROUP)
    ]


def _input(i: int) -> dict[str, Any]:
    return {"id": f"input{i}", "type": "NumberInput", "props": {"label": f"Quantity {i}", "bind": f"s{i}"}}


def _result(i: int) -> dict[str, Any]:
    value = {"expr": {"derived": f"d{i}"}}
    return {"id": f"result{i}", "type": "Result", "props": {"label": f"Total {i}", "value": value,
                                                             "format": {"style": "decimal", "digits": 2}}}


def _table() -> dict[str, Any]:
    columns = [{"key": f"c{k}", "label": f"Column {k}"} for k in range(TABLE_COLUMNS)]
    rows = [
        {f"c{k}": (r * TABLE_COLUMNS + k if k % 2 else f"row {r}, cell {k}: a sample description long enough to weigh something real in bytes") for k in range(TABLE_COLUMNS)}
        for r in range(TABLE_ROWS)
    ]
    return {"id": "table", "type": "Table", "props": {"columns": columns, "rows": rows}}


def _chart() -> dict[str, Any]:
    data = [{"id": f"p{i}", "label": f"Point {i}", "value": {"expr": {"derived": f"d{i}"}}} for i in range(DERIVED_FIELDS)]
    return {"id": "chart", "type": "Chart", "props": {"kind": "line", "label": "All totals", "data": data}}


def _skeleton() -> dict[str, Any]:
    children = [
        {"id": "heading", "type": "Heading", "props": {"text": "Maximal document", "level": 1}},
        {"id": "notes", "type": "Markdown", "props": {"text": ""}},
        *_grids("inputs", STATE_FIELDS, _input),
        *_grids("results", DERIVED_FIELDS, _result),
        _chart(),
        _table(),
        {"id": "texts", "type": "Column", "props": {"gap": "sm"}, "children": [_text(i) for i in range(TEXTS)]},
    ]
    return {
        "version": "1.0",
        "id": "maximal",
        "mode": "interactive_ui",
        "title": "A document at the limits",
        "state": _state(),
        "derived": {f"d{i}": _derived(i) for i in range(DERIVED_FIELDS)},
        "root": {"id": "root", "type": "Column", "props": {"gap": "md"}, "children": children},
    }


def maximal_document(max_bytes: int = MAX_BYTES) -> dict[str, Any]:
    """The generated document at the limits, padded with text up to exactly `max_bytes`."""
    document = _skeleton()
    _top_up_expressions(document)
    room = max_bytes - assert_safe_json(document)
    if room < 0:
        raise ValueError(f"the skeleton is {-room} bytes over {max_bytes}")
    # Plain ASCII padding (no JSON escapes): one character is one byte, Markdown first.
    heading, notes = (child["props"] for child in document["root"]["children"][:2])
    notes["text"] = _padding(min(room, UI_LIMITS["maxMarkdownLength"]))
    heading["text"] += _padding(min(room - len(notes["text"]), UI_LIMITS["maxStringLength"] - len(heading["text"])))
    return document


def _top_up_expressions(document: dict[str, Any]) -> None:
    """Bring the expression node count to exactly `maxExpressionNodes`."""
    missing = UI_LIMITS["maxExpressionNodes"] - count_expression_nodes(document)
    points = document["root"]["children"][2 + 2 * (STATE_FIELDS // GROUP)]["props"]["data"]
    for point in points[: missing // 2]:  # max(value, 0) adds two nodes and keeps it numeric
        point["value"] = {"expr": {"op": "max", "args": [point["value"]["expr"], 0]}}
    if missing % 2:
        document["root"]["children"][-1]["children"][0]["props"]["text"]["expr"]["args"].append("")


def _padding(length: int) -> str:
    line = "Padding sentence for the byte budget. "
    return (line * (length // len(line) + 1))[:length]


def count_components(document: dict[str, Any]) -> int:
    """Number of UI nodes in the tree."""
    return sum(1 for _ in _nodes(document["root"]))


def count_expression_nodes(document: dict[str, Any]) -> int:
    """Expression nodes in derived fields and `{expr}` values (each scalar, ref or op is one)."""
    def count(expr: Any) -> int:
        if isinstance(expr, dict) and "op" in expr:
            return 1 + sum(count(arg) for arg in expr["args"])
        return 1

    def wrapped(value: Any) -> int:
        if isinstance(value, dict):
            if set(value) == {"expr"}:
                return count(value["expr"])
            return sum(wrapped(v) for v in value.values())
        if isinstance(value, list):
            return sum(wrapped(v) for v in value)
        return 0

    return sum(count(e) for e in document["derived"].values()) + wrapped(document["root"])
