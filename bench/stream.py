"""Stream patch cost: one `update` of a single node's props, small document vs large.

`advance_ui_stream` re-validates only the path from the root to the change (the
document cache keeps every untouched subtree's facts), so a patch on a 200-component
document should cost about what it costs on a 10-component one, and far less than a
full `parse_document` of the 200-component candidate.  Each row times one update
applied to the same base state (states are immutable), next to a from-scratch parse of
the same candidate; the patch result is first checked equal to that parse.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from core.json.canonical import canonical_json_string
from core.document.model import parse_document
from core.json._frozen import thaw
from core.json.safe import assert_safe_json
from core.stream.lifecycle import UIStreamState, advance_ui_stream, start_ui_stream

from .timing import median_seconds
from .documents import count_components, maximal_document

FIELDS = 8
PER_GRID = 9


def _leaf(i: int) -> dict[str, Any]:
    key = f"s{i % FIELDS}"
    kind = i % 4
    if kind == 0:
        args = [f"Line {i}: ", {"state": key}, " and ", {"derived": f"d{i % FIELDS}"}]
        return {"id": f"text{i}", "type": "Text", "props": {"text": {"expr": {"op": "concat", "args": args}}}}
    if kind == 1:
        return {"id": f"result{i}", "type": "Result",
                "props": {"label": f"Total {i}", "value": {"expr": {"derived": f"d{i % FIELDS}"}},
                          "format": {"style": "decimal", "digits": 2}}}  # fmt: skip
    if kind == 2:
        return {"id": f"input{i}", "type": "NumberInput", "props": {"label": f"Quantity {i}", "bind": key}}
    return {"id": f"badge{i}", "type": "Badge", "props": {"text": f"Item {i}", "tone": "success"}}


def stream_document(components: int) -> dict[str, Any]:
    """A valid document of exactly `components` nodes: a Column of Grids of leaves."""
    grids = math.ceil((components - 1) / PER_GRID)
    leaves = components - 1 - grids
    size = math.ceil(leaves / grids)
    children = [
        {"id": f"grid{g}", "type": "Grid", "props": {"columns": 3, "gap": "sm"},
         "children": [_leaf(i) for i in range(g * size, min(leaves, (g + 1) * size))]}
        for g in range(grids)
    ]  # fmt: skip
    return {
        "version": "1.0", "id": f"stream{components}", "mode": "interactive_ui", "title": "Stream bench",
        "state": {f"s{i}": {"type": "number", "initial": i + 1, "min": 0, "max": 1000, "step": 1} for i in range(FIELDS)},
        "derived": {f"d{i}": {"op": "mul", "args": [{"state": f"s{i}"}, 1.5]} for i in range(FIELDS)},
        "root": {"id": "root", "type": "Column", "props": {"gap": "md"}, "children": children},
    }  # fmt: skip


def _middle_text(document: dict[str, Any]) -> dict[str, Any]:
    texts = [leaf for grid in document["root"]["children"] for leaf in grid["children"] if leaf["type"] == "Text"]
    return texts[len(texts) // 2]


def _update_event(document: dict[str, Any]) -> dict[str, Any]:
    target = _middle_text(document)
    args = ["Updated: ", {"state": "s1"}, " / ", {"derived": "d2"}]
    return {"type": "update", "nodeId": target["id"], "props": {"text": {"expr": {"op": "concat", "args": args}}}}


def _maximal_event(document: dict[str, Any]) -> dict[str, Any]:
    texts = document["root"]["children"][-1]["children"]
    target = texts[len(texts) // 2]
    return {"type": "update", "nodeId": target["id"], "props": {"text": "A plain replacement text"}}


def _candidate(document: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """The whole candidate as plain JSON, for the from-scratch parse."""
    candidate = thaw(document)
    stack = [candidate["root"]]
    while stack:
        node = stack.pop()
        if node["id"] == event["nodeId"]:
            node["props"] = thaw(event["props"])
        stack.extend(node.get("children", ()))
    return candidate


def _measure(document: dict[str, Any], event: dict[str, Any], repeat: int, min_time: float) -> dict[str, float]:
    base: UIStreamState = start_ui_stream(document, "bench-call", 1)
    candidate = _candidate(document, event)
    patched = advance_ui_stream(base, event)
    if canonical_json_string(patched.document) != canonical_json_string(parse_document(candidate)):
        raise AssertionError("the patch and the from-scratch parse disagree")
    return {
        "patch": median_seconds(lambda: advance_ui_stream(base, event), repeat=repeat, min_time=min_time) * 1e6,
        "parse": median_seconds(lambda: parse_document(candidate), repeat=repeat, min_time=min_time) * 1e6,
    }


def _print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for line in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths))))


def main(argv: list[str] | None = None) -> int:
    """Time the update patches and the full parse; print them side by side with ratios."""
    parser = argparse.ArgumentParser(prog="python -m bench stream", description=__doc__)
    parser.add_argument("--repeat", type=int, default=7, help="timed rounds per measurement (median taken)")
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per round, at least")
    args = parser.parse_args(argv or [])
    small, large, maximal = stream_document(10), stream_document(200), maximal_document()
    cases = {
        "10 components": (small, _update_event(small)),
        "200 components": (large, _update_event(large)),
        "maximal (200, 256 KiB)": (maximal, _maximal_event(maximal)),
    }
    times = {name: _measure(doc, event, args.repeat, args.min_time) for name, (doc, event) in cases.items()}
    base = times["10 components"]["patch"]
    rows = [
        [name, str(count_components(doc)), str(assert_safe_json(doc)), f"{t['patch']:.1f}", f"{t['parse']:.1f}",
         f"{t['patch'] / base:.2f}", f"{t['parse'] / t['patch']:.1f}"]
        for (name, (doc, _)), t in zip(cases.items(), times.values())
    ]  # fmt: skip
    _print_table(["document", "components", "bytes", "update patch µs", "full parse µs", "patch / 10-comp patch",
                  "parse / patch"], rows)
    ratio = times["200 components"]["patch"] / base
    print(f"200/10 patch ratio {ratio:.2f} (target <= 3); median µs per call, {args.repeat} rounds of >= "
          f"{args.min_time}s each")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
