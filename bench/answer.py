"""answer-ui@1 validation cost: median `parse_answer_block` time on a 48-element block.

The block is the largest tree the seed allows by count: a root Stack holding Sections that
hold every other component (charts of 24 points, tables of 12 rows), 48 elements in all.
"""

from __future__ import annotations

import argparse
from typing import Any

from core.answer._catalog import MAX_ELEMENTS
from core.answer.block import parse_answer_block
from core.json.safe import json_byte_size

from .timing import median_seconds

_POINTS = 24
_LEAVES: tuple[dict[str, Any], ...] = (
    {"type": "Text", "props": {"title": "Limits", "text": "Readings were not confirmed on site. " * 4}},
    {"type": "Result", "props": {"title": "Checked", "summary": "Six records read.", "status": "partial"}},
    {"type": "Metric", "props": {"label": "Pressure", "value": 0.3, "unit": "MPa", "source": "Saved records"}},
    {"type": "Chart", "props": {
        "title": "Pressure", "view": "line", "categories": [f"{h:02d}:00" for h in range(_POINTS)],
        "series": [{"name": f"J-{s}", "values": [0.3 + s / 100 + h / 1000 for h in range(_POINTS)]} for s in range(3)],
    }},
    {"type": "Table", "props": {"columns": ["Time", "Junction", "MPa"], "rows": [[f"{h:02d}:00", "J-17", 0.3] for h in range(12)]}},
    {"type": "Evidence", "props": {"items": [
        {"id": f"ev-{i}", "summary": "A saved reading.", "source": "Saved records", "recorded_at": "2026-10-29T05:00:00Z"}
        for i in range(3)
    ]}},
    {"type": "MapLocation", "props": {"layer": "valves", "feature_id": "V-3"}},
)  # fmt: skip


def block_of_48() -> dict[str, Any]:
    """A valid block of exactly 48 elements: root, 5 Sections, 42 leaves."""
    elements: dict[str, Any] = {"root": {"type": "Stack", "props": {"intent": "report"}, "children": []}}
    for section in range(5):
        sid = f"s{section}"
        elements["root"]["children"].append(sid)
        elements[sid] = {"type": "Section", "props": {"role": "analysis"}, "children": []}
    for index in range(MAX_ELEMENTS - 6):
        eid = f"e{index}"
        elements[f"s{index % 5}"]["children"].append(eid)
        elements[eid] = {**_LEAVES[index % len(_LEAVES)], "children": []}
    spec = {"root": "root", "elements": elements}
    return {"version": "answer-ui@1", "block_id": "bench", "phase": "final", "fallback_text": "Benchmark.", "spec": spec}


def main(argv: list[str]) -> int:
    """Print the median cost of one `parse_answer_block` call on the 48-element block."""
    parser = argparse.ArgumentParser(prog="python -m bench answer", description=__doc__)
    parser.add_argument("--repeat", type=int, default=7, help="timed rounds (median taken)")
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per round, at least")
    args = parser.parse_args(argv)
    value = block_of_48()
    parse_answer_block(value)  # it must be valid before it is timed
    seconds = median_seconds(lambda: parse_answer_block(value), repeat=args.repeat, min_time=args.min_time)
    print(f"parse_answer_block, {len(value['spec']['elements'])} elements, {json_byte_size(value)} bytes: "
          f"{seconds * 1e6:.1f} µs median per call ({args.repeat} rounds of >= {args.min_time}s)")
    return 0
