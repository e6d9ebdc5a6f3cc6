"""A final answer's table of contents and expand entry (`gateway/web/src/answer/navigation.js`, run
in Node.js), seed 004: "短回答不显示内容导航；含表格、图表、补充表单或达到长内容标准、且包含至少两种可导航
组件的回答才提供目录" and "包含表格、图表、补充表单或长正文的回答提供展开入口"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.javascript import NODE, node_json

pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js to run the Client's JavaScript modules")

WEB = Path(__file__).resolve().parents[2] / "gateway" / "web" / "src"
ANSWERS = Path(__file__).resolve().parents[2] / "examples" / "answer-ui"
SCRIPT = f"""
const MODULE = {json.dumps((WEB / 'answer' / 'navigation.js').as_uri())};
const {{ answerNavigation, elementDomId, LONG_TEXT }} = await import(MODULE);
let input = '';
process.stdin.on('data', (chunk) => {{ input += chunk; }});
process.stdin.on('end', () => {{
  const {{ cases, ids }} = JSON.parse(input);
  process.stdout.write(JSON.stringify({{
    long: LONG_TEXT,
    navigation: cases.map(([blocks, length]) => answerNavigation(blocks, length)),
    ids: ids.map((parts) => elementDomId(...parts)),
  }}));
}});
"""


def block(block_id: str, root: str, elements: dict[str, Any]) -> dict[str, Any]:
    return {"version": "answer-ui@1", "block_id": block_id, "phase": "final", "fallback_text": "The answer, in words.",
            "spec": {"root": root, "elements": elements}}


def run(cases: list[tuple[list[dict[str, Any]], int]], ids: list[list[str]] | None = None) -> dict[str, Any]:
    return node_json(SCRIPT, json.dumps({"cases": cases, "ids": ids or []}))


def test_an_answer_with_rich_components_lists_its_titled_ones_in_the_order_it_shows_them() -> None:
    explorer = [b for b in json.loads((ANSWERS / "view-state.json").read_text())["published_blocks"]
                if b["block_id"] == "pressure-explorer"]
    (found,) = run([(explorer, 0)])["navigation"]
    assert found["expandable"] is True
    assert [(e["elementId"], e["label"]) for e in found["entries"]] == [
        ("trend", "Night pressure"), ("readings", "Table"), ("basis", "Evidence"), ("note", "Field note")]
    assert {e["blockId"] for e in found["entries"]} == {"pressure-explorer"}


def test_short_answers_and_single_components_get_no_table_of_contents() -> None:
    metric = block("m", "m", {"m": {"type": "Metric", "props": {"label": "P", "value": 1}}})
    chart = block("c", "c", {"c": {"type": "Chart", "props": {"title": "Trend", "categories": ["a"],
                                                               "series": [{"name": "s", "values": [1]}]}}})
    sections = block("s", "root", {
        "root": {"type": "Stack", "props": {}, "children": ["one", "two", "bare"]},
        "one": {"type": "Section", "props": {"title": "Findings"}, "children": ["t1"]},
        "two": {"type": "Section", "props": {"title": "Basis", "role": "evidence"}, "children": ["t2"]},
        "bare": {"type": "Section", "props": {}, "children": []},
        "t1": {"type": "Text", "props": {"text": "x"}}, "t2": {"type": "Text", "props": {"text": "y"}}})
    result = run([([metric], 100), ([chart], 100), ([metric, chart], 5000), ([sections], 100), ([sections], 1999),
                  ([sections], 2000), ([], 90000)])
    long = result["long"]
    assert long == 2000
    short, one_chart, chart_and_metric, short_sections, almost, long_sections, text_only = result["navigation"]
    assert short == {"entries": [], "expandable": False}
    assert one_chart == {"entries": [], "expandable": True}  # rich, but one navigable component
    assert chart_and_metric == {"entries": [], "expandable": True}  # a Metric is not navigable
    assert short_sections == almost == {"entries": [], "expandable": False}
    assert [e["label"] for e in long_sections["entries"]] == ["Findings", "Basis"] and long_sections["expandable"]
    assert text_only == {"entries": [], "expandable": True}


def test_element_dom_ids_are_distinct_and_safe_in_a_fragment() -> None:
    parts = [["m1", "b", "e"], ["m1", "b-e", ""], ["m 1", "b", "e"], ["m_201", "b", "e"],
             ["m1", "b", "e\u00e9\U0001F600"], ["m1--b", "e", "x"], ["m1", "b--e", "x"], ["m1.b", "e", "x"],
             ["m1", "b.e", "x"], ["m1_2e_b", "e", "x"]]
    ids = run([], parts)["ids"]
    assert len(set(ids)) == len(ids)  # joined by ".", which no escaped part holds
    assert all(all(c.isascii() and (c.isalnum() or c in "-_.") for c in found) for found in ids)
    assert ids[0] == "a.m1.b.e" and ids[4] == "a.m1.b.e_e9__1f600_"


def test_a_block_shown_as_its_fallback_text_adds_nothing() -> None:
    # None of its elements is on the page: links to them would lead nowhere.
    chart = block("c", "c", {"c": {"type": "Chart", "props": {"title": "Trend", "categories": ["a"],
                                                               "series": [{"name": "s", "values": [1]}]}}})
    broken = block("b", "root", {"root": {"type": "Stack", "props": {}, "children": ["t", "r"]},
                                 "t": {"type": "Table", "props": {"columns": ["a"], "rows": [], "title": "Rows"}},
                                 "r": {"type": "Hologram", "props": {}}})
    alone, beside = run([([broken], 100), ([chart, broken], 100)])["navigation"]
    assert alone == {"entries": [], "expandable": False}  # its Table is not shown
    assert beside == {"entries": [], "expandable": True}  # one navigable component left: the chart
