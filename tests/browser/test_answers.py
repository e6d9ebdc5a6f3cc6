"""answer-ui@1 in the browser: blocks at their markers, fallback text, view state saved with CAS."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import shot

pytestmark = pytest.mark.browser

ANSWERS = Path(__file__).resolve().parents[2] / "examples" / "answer-ui"


def publish(page: Any, message_id: str, blocks: list[dict[str, Any]], final: dict[str, Any] | None) -> None:
    page.evaluate("() => window.harness.session()")
    for version, block in enumerate(blocks, 1):
        page.evaluate("e => window.harness.answer(e)", {"type": "block", "message_id": message_id, "version": version, "block": block})
    if final is not None:
        page.evaluate("e => window.harness.answer(e)", {"type": "final_answer", "message_id": message_id, **final})


def test_two_blocks_mount_at_their_markers_and_a_marker_in_code_stays_text(page: Any) -> None:
    example = json.loads((ANSWERS / "final-answer.json").read_text())
    publish(page, "m1", example["published_blocks"], example["final_answer"])
    answer = page.locator("article.answer.final")
    order = answer.evaluate("""a => [...a.children].map(c => c.matches('.markdown') ? 'text' : c.matches('details') ? 'details'
        : c.querySelector('[data-block]') ? c.querySelector('[data-block]').dataset.block : c.tagName.toLowerCase())""")
    assert order == ["text", "pressure-summary", "text", "pressure-trend", "text", "details"]
    assert answer.locator("pre code").inner_text() == "[[ui:pressure-summary]] stays literal inside a code fence."
    assert answer.locator('[data-block="pressure-summary"]').count() == 1  # mounted once
    assert "0.3 MPa" in answer.locator(".a-metric").inner_text()
    assert answer.locator(".a-plot rect.bar").count() == 5  # the chart's initial view is bar
    assert "Processing steps (1)" in answer.locator("details.process summary").inner_text()
    shot(page, "answer-final")


def test_an_invalid_block_shows_its_fallback_text(page: Any) -> None:
    good = json.loads((ANSWERS / "response-block.json").read_text())
    broken = {**good, "block_id": "broken", "fallback_text": "The readings could not be shown; J-17 was 0.30 MPa.",
              "spec": {"root": "x", "elements": {"x": {"type": "Hologram", "props": {}}}}}
    misaligned = json.loads(json.dumps(good))
    misaligned["block_id"] = "misaligned"
    misaligned["fallback_text"] = "Chart data unavailable."
    misaligned["spec"]["elements"]["trend"]["props"]["series"][0]["values"].pop()
    final = {"answer": "Before.\n\n[[ui:pressure-check]]\n\n[[ui:broken]]\n\n[[ui:misaligned]]\n\n[[ui:never-published]]",
             "ui_block_ids": ["pressure-check", "broken", "misaligned", "never-published"]}
    publish(page, "m2", [good, broken, misaligned], final)
    fallbacks = page.locator(".a-fallback").all_inner_texts()
    assert fallbacks == ["The readings could not be shown; J-17 was 0.30 MPa.", "Chart data unavailable.",
                         "This content is unavailable."]
    assert page.locator('[data-block="pressure-check"] .a-result').count() == 1
    shot(page, "answer-fallback")


def test_view_state_is_loaded_saved_with_expected_revision_and_a_conflict_reloads(page: Any) -> None:
    example = json.loads((ANSWERS / "view-state.json").read_text())
    page.evaluate("""stored => window.harness.viewServer.records.set('msg-pressure-1/pressure-explorer',
        {revision: 3, nodes: stored})""", example["view_state"]["nodes"])
    publish(page, "msg-pressure-1", example["published_blocks"], example["final_answer"])
    explorer = page.locator('[data-block="pressure-explorer"]')
    # the stored state is read asynchronously (a CI run read the page before it was applied): wait for it
    explorer.locator('button[aria-pressed="true"]', has_text="Bar").wait_for(timeout=5000)
    # the stored state shows: the chart in bar view with J-18 hidden, the table searched and sorted
    assert explorer.get_by_role("button", name="Bar").get_attribute("aria-pressed") == "true"
    assert explorer.get_by_role("button", name="J-18 (MPa)").get_attribute("aria-pressed") == "false"
    assert explorer.locator('[data-element="readings"] input[type=search]').input_value() == "J-17"
    assert explorer.get_by_label("Valve state").input_value() == "partly open"
    assert "Point detail" in explorer.locator(".a-detail").get_attribute("aria-label")
    shot(page, "answer-view-state")

    explorer.get_by_role("button", name="Table").click()
    page.wait_for_function("() => window.harness.viewServer.puts.length === 1", timeout=5000)
    put = page.evaluate("() => window.harness.viewServer.puts[0]")
    assert put["body"]["expected_revision"] == 3
    assert put["body"]["nodes"]["trend"]["view"] == "table"
    assert put["body"]["nodes"]["readings"] == example["view_state"]["nodes"]["readings"]
    assert page.locator('[data-block="pressure-explorer"] ~ .view-state').inner_text() == "Saved"

    # another window saves first: the next save conflicts, and the stored state is shown
    page.evaluate("""() => window.harness.viewServer.records.set('msg-pressure-1/pressure-explorer',
        {revision: 9, nodes: {trend: {view: 'line', table: {selection: []}}}})""")
    explorer.get_by_label("Note").fill("Seen at 04:00")
    page.wait_for_function("() => window.harness.viewServer.puts.length === 2", timeout=5000)
    status = page.locator('[data-block="pressure-explorer"] ~ .view-state')
    status.filter(has_text="changed elsewhere").wait_for()
    assert explorer.get_by_role("button", name="Line").get_attribute("aria-pressed") == "true"
    assert explorer.get_by_label("Note").input_value() == ""
    shot(page, "answer-view-state-conflict")

    page.evaluate("() => { window.harness.viewServer.failNext = 413; }")
    explorer.get_by_label("Note").fill("Too much")
    status.filter(has_text="larger than 32 KiB").wait_for()
    assert explorer.get_by_label("Note").input_value() == "Too much"  # kept on the page
