"""Hostile documents render as inert text: no script runs, no element or URL comes from text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core import parse_document
from tests.browser.conftest import shot
from tests.browser.documents import HOSTILE, HOSTILE_TEXT
from tests.browser.frames import stream_frames

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str) -> Any:
    return json.loads((EXAMPLES / f"{name}.json").read_text())

pytestmark = pytest.mark.browser


def test_a_hostile_document_renders_as_inert_text(page: Any) -> None:
    parse_document(HOSTILE)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.evaluate("doc => window.harness.documents([doc])", HOSTILE)
    article = page.locator("article.document")
    assert page.evaluate("() => window.__pwned") is None
    for selector in ("script", "img", "iframe", "a", "style", "[onclick]", "[onerror]", "[href]", "[src]"):
        assert article.locator(selector).count() == 0, selector
    assert page.locator('[data-node="t1"]').inner_text() == HOSTILE_TEXT
    assert page.locator('[data-node="t3"]').inner_text() == HOSTILE_TEXT
    assert page.locator('[data-node="t2"]').inner_text() == "javascript:alert(document.cookie)"
    assert article.locator("header h2").inner_text() == HOSTILE["title"]
    assert page.locator('[data-node="h1"] h2').inner_text() == "<h1 onclick=alert(1)>big</h1>"
    assert page.locator('[data-node="r1"] output').inner_text() == "$1,000,000,000,000,000.000000"
    assert page.locator('[data-node="r2"] output').inner_text() == "-1000000000000000"
    markdown = page.locator('[data-node="md"]').inner_text()
    assert "click me" in markdown and "raw link" in markdown and "bold tag" in markdown
    for gone in ("javascript", "http://127.0.0.1:1", "__pwned", "<b>", "iframe", "img"):
        assert gone not in markdown, gone
    assert "https://example.invalid/autolink" in markdown  # an autolink's text stays, as inert text
    assert page.get_by_role("textbox").input_value() == HOSTILE_TEXT
    assert page.locator('[data-node="ch"] svg rect').count() == 2
    assert [url for url in requests if "127.0.0.1:1" in url or "example.invalid" in url] == []
    assert page.evaluate("() => window.harness.rawHtmlRefused()") is True
    shot(page, "hostile")


def test_markdown_keeps_only_the_allowed_elements(page: Any) -> None:
    text = ("# H1\n## H2\n###### H6\n\nPara with **strong**, *em*, ~~del~~, `code` and a hard  \nbreak.\n\n"
            "> quote\n\n- a\n- b\n  - nested\n\n3. three\n4. four\n\n***\n\n    indented code\n\n"
            "| a | b |\n|---|---|\n| 1 | 2 |\n\n<div>html block</div>\n\n<!-- comment -->\n\ntail")
    document = {"version": "1.0", "id": "md", "mode": "structured_ui", "title": "Markdown", "state": {}, "derived": {},
                "root": {"id": "md", "type": "Markdown", "props": {"text": text}}}
    parse_document(document)
    page.evaluate("doc => window.harness.documents([doc])", document)
    tags = page.eval_on_selector_all('[data-node="md"] .markdown *', "els => [...new Set(els.map(e => e.tagName.toLowerCase()))].sort()")
    assert set(tags) <= {"p", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li", "hr", "br",
                         "h1", "h2", "h3", "h4", "h5", "h6"}
    assert set(tags) >= {"h1", "h2", "h6", "strong", "em", "del", "code", "br", "blockquote", "ul", "ol", "li", "hr", "pre"}
    body = page.locator('[data-node="md"]').inner_text()
    assert "html block" not in body and "comment" not in body and "tail" in body
    assert page.locator('[data-node="md"] ol').get_attribute("start") == "3"
    assert page.locator('[data-node="md"] ul ul li').inner_text() == "nested"


def test_a_right_to_left_override_in_a_label_stays_inside_its_quotes_in_a_notice(page: Any) -> None:
    # an audit: "\u202eNOTICE " as a button's label reversed the rest of the notice's sentence
    document = {"version": "1.0", "id": "rlo", "mode": "interactive_ui", "title": "T",
                "state": {"n": {"type": "number", "initial": 0, "min": 0, "max": 1, "step": 1}}, "derived": {},
                "root": {"id": "root", "type": "Card", "props": {}, "children": [
                    {"id": "b", "type": "Button", "props": {"label": "\u202eNOTICE ", "action": {
                        "type": "set", "key": "n", "value": {"expr": {"op": "add", "args": [{"state": "n"}, 5]}}}}}]}}
    page.evaluate("doc => window.harness.documents([doc])", document)
    page.get_by_role("button", name="NOTICE").click()
    notice = page.locator(".notice.error span").first
    assert notice.locator("bdi").inner_text() == "\u202eNOTICE "
    assert notice.inner_text().startswith("“\u202eNOTICE ” could not run: ")
    page.get_by_role("button", name="Dismiss").click()
    assert page.evaluate("() => document.activeElement.classList.contains('notices')")


NOT_VALID = "it is not a valid document of the protocol (checked again by this page)."


@pytest.mark.parametrize(("change", "problem"), [
    ({"version": "9.9"}, "its protocol version is not one this page knows (1.0, 1.1)."),
    ({"root": None}, "it is not the shape of a validated document."),
    ({"state": None}, "it is not the shape of a validated document."),
    # seed 000 §1 "Client … 再次验证", §2 "未知字段、未知组件、错误大小写和不适用的属性都会被拒绝": an audit saw each
    # of these rendered (conformance.js); the schema's verdict is compared with Ajv's in tests/unit
    ({"root": {"id": "r", "type": "Column", "props": {"onclick": "alert(1)"}, "children": []}}, NOT_VALID),
    ({"root": {"id": "r", "type": "Column", "props": {}, "children": [
        {"id": "f", "type": "Iframe", "props": {"src": "https://example.test"}}]}}, NOT_VALID),
    ({"root": {"id": "r", "type": "column", "props": {}, "children": []}}, NOT_VALID),
    ({"root": {"id": "r", "type": "Column", "props": {}, "children": [
        {"id": "r", "type": "Text", "props": {"text": "a second r"}}]}}, NOT_VALID),
])
def test_a_snapshot_the_views_cannot_read_is_one_error_box_and_other_uis_keep_updating(
        page: Any, change: dict[str, Any], problem: str) -> None:
    # seed 000 §10: "未知版本降级显示错误"; a `root: null` once threw on every render, with no box
    good = stream_frames(load("stream-initial"), [*load("stream-mutations")], call="call-good")
    bad = stream_frames({**load("stream-initial"), "id": "bad-ui"}, [], call="call-bad")[0]  # another UI
    bad["snapshot"].update(change)
    page.evaluate("() => window.harness.session()")
    page.evaluate("frame => window.harness.frame(frame)", good[0])
    page.evaluate("frame => window.harness.frame(frame)", bad)
    box = page.locator(".document-error")
    assert box.get_attribute("role") == "alert"
    assert box.inner_text() == f"This interface cannot be displayed: {problem}"
    for frame in good[1:]:
        page.evaluate("frame => window.harness.frame(frame)", frame)
    assert page.locator("article.document").count() == 1
    assert page.locator('[data-node="revenue-result"]').count() == 1  # the good UI took its patches
    assert page.evaluate("() => window.harness.errors") == []
