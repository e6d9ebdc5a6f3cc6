"""Model text at its length limits stays inside its containers; Markdown is parsed once per text.

Every label of a document may be 512 characters (a title 256), either a sentence or one word
with no space to break at; none may widen the page or leave its card.  Chart tick labels are
cut by code points, and a Markdown node is not parsed again when the user types elsewhere.
"""

from __future__ import annotations

from typing import Any

import pytest

from core import parse_document
from tests.browser.conftest import shot

pytestmark = pytest.mark.browser

VIEWPORT = 1000
SENTENCE = ("The quick brown fox jumps over the lazy dog while the model keeps on talking " * 8)[:512]
WORD = "W" * 512  # no space, no hyphen: nowhere to break


def _long_labels(text: str) -> dict[str, Any]:
    """A document with `text` as every label the schema allows 512 characters for."""
    children = [
        {"id": "row", "type": "Row", "props": {"gap": "sm"}, "children": [
            {"id": "badge", "type": "Badge", "props": {"text": text}},
            {"id": "row-button", "type": "Button", "props": {"label": text, "action": {"type": "reset"}}},
            {"id": "badge-2", "type": "Badge", "props": {"text": "short", "tone": "success"}},
        ]},
        {"id": "card", "type": "Card", "props": {"title": text}, "children": [
            {"id": "progress", "type": "Progress", "props": {"value": 1e15, "max": 1e15, "label": text}},
            {"id": "result", "type": "Result", "props": {"label": text, "value": text}},
            {"id": "loading", "type": "Loading", "props": {"label": text}},
            {"id": "bars", "type": "Chart", "props": {"kind": "bar", "label": text, "data": [
                {"id": "a", "label": text, "value": 3}, {"id": "b", "label": "B", "value": -2}]}},
            {"id": "table", "type": "Table", "props": {"columns": [{"key": "k", "label": text}],
                                                       "rows": [{"k": text}]}},
        ]},
        {"id": "form", "type": "Form", "props": {"submitLabel": text, "action": {"type": "reset"}}, "children": [
            {"id": "input", "type": "Input", "props": {"label": text, "bind": "s", "placeholder": text}},
            {"id": "number", "type": "NumberInput", "props": {"label": text, "bind": "n"}},
            {"id": "select", "type": "Select", "props": {"label": text, "bind": "s", "options": [
                {"label": text, "value": "a"}]}},
            {"id": "slider", "type": "Slider", "props": {"label": text, "bind": "n"}},
            {"id": "checkbox", "type": "Checkbox", "props": {"label": text, "bind": "b"}},
        ]},
        # out of range once the box is ticked: its click leaves a notice naming the button by its label
        {"id": "failing", "type": "Button", "props": {"label": text, "action": {"type": "set", "key": "n", "value": {
            "expr": {"op": "if", "args": [{"state": "b"}, 99, 1]}}}}},
    ]
    return {"version": "1.0", "id": "long", "mode": "interactive_ui", "title": text[:256],
            "state": {"s": {"type": "string", "initial": "a", "maxLength": 10},
                      "n": {"type": "number", "initial": 1, "min": 0, "max": 10, "step": 1},
                      "b": {"type": "boolean", "initial": False}},
            "derived": {}, "root": {"id": "root", "type": "Column", "props": {}, "children": children}}


# Each visible element and each run of text against its nearest card (or the document): by
# how many pixels it sticks out (text can overflow a box that itself fits).  Scrolling boxes (a
# table's, a code block's) and the SVG's drawing are skipped: their content may be wider.
OUTSIDE = """() => {
  const out = [];
  const skipped = (element) => element.closest('.table-wrap, pre, svg, .visually-hidden');
  const check = (what, box, element) => {
    if (!box.width && !box.height) return;
    const container = element.closest('.card, article.document');
    const limit = container.getBoundingClientRect();
    const excess = Math.max(limit.left - box.left, box.right - limit.right);
    if (excess > 1) out.push(`${what} in ${container.className}: ${Math.round(excess)} px`);
  };
  for (const element of document.querySelectorAll('article.document *')) {
    if (!skipped(element)) check(`${element.tagName.toLowerCase()}.${element.className}`, element.getBoundingClientRect(), element.parentElement);
  }
  const walker = document.createTreeWalker(document.querySelector('article.document'), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.data.trim() || skipped(node.parentElement)) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    check(`text in ${node.parentElement.tagName.toLowerCase()}.${node.parentElement.className}`, range.getBoundingClientRect(), node.parentElement);
  }
  return out;
}"""


@pytest.mark.parametrize("text", [SENTENCE, WORD], ids=["sentences", "unbreakable"])
def test_labels_at_their_length_limit_stay_inside_the_page_and_their_cards(page: Any, text: str) -> None:
    document = _long_labels(text)
    parse_document(document)
    page.evaluate("doc => window.harness.documents([doc])", document)
    page.locator('[data-node="checkbox"] input').check()
    page.locator('[data-node="failing"] button').click()
    page.locator(".notice").wait_for()
    assert page.viewport_size["width"] == VIEWPORT
    outside = page.evaluate(OUTSIDE)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= VIEWPORT + 1, "\n".join(outside)
    assert outside == []
    shot(page, f"long-labels-{'word' if text == WORD else 'sentence'}")


def test_a_long_label_in_a_row_wraps_beside_a_short_one(page: Any) -> None:
    document = _long_labels(SENTENCE)
    page.evaluate("doc => window.harness.documents([doc])", document)
    row = page.locator('[data-node="row"]').bounding_box()
    for node in ("badge", "row-button"):
        box = page.locator(f'[data-node="{node}"]').bounding_box()
        assert box["width"] <= row["width"] + 1 and box["height"] > 40, node  # wrapped onto several lines
    short = page.locator('[data-node="badge-2"]').bounding_box()
    assert short["width"] < 100  # a short badge still keeps to its own size


def test_a_chart_tick_label_is_cut_by_code_points(page: Any) -> None:
    label = "abcdefghijkl\U0001F600xyz"  # the emoji's two UTF-16 units straddle the 13th
    document = {"version": "1.0", "id": "ticks", "mode": "interactive_ui", "title": "Ticks", "state": {},
                "derived": {}, "root": {"id": "chart", "type": "Chart", "props": {"kind": "line", "data": [
                    {"id": "a", "label": label, "value": 1}, {"id": "b", "label": "\U0001F600" * 14, "value": 2},
                    {"id": "c", "label": "\U0001F600" * 15, "value": 3}]}}}
    parse_document(document)
    page.evaluate("doc => window.harness.documents([doc])", document)
    ticks = page.eval_on_selector_all(".chart text.tick", "els => els.map(e => [e.textContent, e.textContent.isWellFormed()])")
    assert ticks == [["abcdefghijkl\U0001F600…", True], ["\U0001F600" * 14, True], ["\U0001F600" * 13 + "…", True]]


MARKDOWN = {"version": "1.0", "id": "md", "mode": "interactive_ui", "title": "Typing next to Markdown",
            "state": {"s": {"type": "string", "initial": "", "maxLength": 40}}, "derived": {},
            "root": {"id": "root", "type": "Column", "props": {}, "children": [
                {"id": "input", "type": "Input", "props": {"label": "Name", "bind": "s"}},
                {"id": "echo", "type": "Text", "props": {"text": {"expr": {"state": "s"}}}},
                {"id": "md", "type": "Markdown", "props": {"text": "Some **bold** and *em*."}}]}}


def test_typing_next_to_markdown_does_not_parse_it_again(page: Any) -> None:
    # Chromium's precise coverage counts each function's calls: parseMarkdown's must not grow
    # with the keystrokes that re-render the document.
    cdp = page.context.new_cdp_session(page)
    cdp.send("Profiler.enable")
    cdp.send("Profiler.startPreciseCoverage", {"callCount": True, "detailed": True})

    def parses() -> int:
        scripts = cdp.send("Profiler.takePreciseCoverage")["result"]
        return sum(function["ranges"][0]["count"] for script in scripts if script["url"].endswith("/src/markdown.js")
                   for function in script["functions"] if function["functionName"] == "parseMarkdown")

    page.evaluate("doc => window.harness.documents([doc])", MARKDOWN)
    assert page.locator('[data-node="md"] strong').inner_text() == "bold"
    before = parses()  # taking the coverage resets the counts
    assert before >= 1
    page.get_by_label("Name").press_sequentially("typing", delay=0)
    assert page.locator('[data-node="echo"]').inner_text() == "typing"  # six re-renders happened
    assert parses() == 0
