"""axe-core (pinned, test-only: .ci/node) finds no serious or critical violation on the Client's views."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import axe_path, shot
from tests.browser.documents import ALL_COMPONENTS
from tests.browser.frames import stream_frames
from tests.external_tools import require

pytestmark = pytest.mark.browser

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def serious_violations(page: Any) -> list[dict[str, Any]]:
    require(axe_path() is not None, "axe-core is missing: npm install --prefix .ci/node axe-core@4.14.1")
    page.add_script_tag(url="/axe/axe.min.js")
    results = page.evaluate("() => axe.run(document)")
    assert len(results["passes"]) > 20  # axe really ran its rules on the page
    return [{"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]][:5]}
            for v in results["violations"] if v["impact"] in ("serious", "critical")]


def test_every_component_and_a_stream_with_operations_have_no_serious_violation(page: Any) -> None:
    page.evaluate("() => window.harness.session({connection: 'live'})")
    for frame in stream_frames(ALL_COMPONENTS, [{"type": "complete"}], call="call-all"):
        page.evaluate("frame => window.harness.frame(frame)", frame)
    writer = json.loads((EXAMPLES / "actions-file-writer.json").read_text())
    for frame in stream_frames(writer, [{"type": "complete"}]):
        page.evaluate("frame => window.harness.frame(frame)", frame)
    page.evaluate("() => { window.harness.firstStatus = 'awaiting_confirmation'; }")
    page.get_by_role("button", name="Request write").click()
    page.locator(".operation").wait_for()
    page.get_by_label("Amount").fill("-1")  # an error message on a field
    page.keyboard.press("Tab")
    assert serious_violations(page) == []
    shot(page, "axe-documents")


def test_answers_have_no_serious_violation(page: Any) -> None:
    page.evaluate("() => window.harness.session()")
    example = json.loads((EXAMPLES / "answer-ui" / "view-state.json").read_text())
    for version, block in enumerate(example["published_blocks"], 1):
        page.evaluate("e => window.harness.answer(e)", {"type": "block", "message_id": "m", "version": version, "block": block})
    page.evaluate("e => window.harness.answer(e)", {"type": "final_answer", "message_id": "m", **example["final_answer"]})
    report = json.loads((EXAMPLES / "answer-ui" / "report.json").read_text())
    page.evaluate("e => window.harness.answer(e)", {"type": "block", "message_id": "r", "version": 1, "block": report["ui_blocks"][1]["block"]})
    page.locator(".a-plot").first.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    page.get_by_role("button", name="Table").first.click()
    assert serious_violations(page) == []
    shot(page, "axe-answers")


def test_the_chart_and_the_evidence_work_by_keyboard(page: Any) -> None:
    page.evaluate("() => window.harness.session()")
    example = json.loads((EXAMPLES / "answer-ui" / "view-state.json").read_text())
    for version, block in enumerate(example["published_blocks"], 1):
        page.evaluate("e => window.harness.answer(e)", {"type": "block", "message_id": "m", "version": version, "block": block})
    page.evaluate("e => window.harness.answer(e)", {"type": "final_answer", "message_id": "m", **example["final_answer"]})
    plot = page.locator(".a-plot")
    plot.focus()
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    detail = page.locator(".a-detail")
    assert "02:00" in detail.inner_text() and "0.29" in detail.inner_text()
    page.keyboard.press("Escape")
    assert detail.count() == 0
    assert page.evaluate("() => document.activeElement.classList.contains('a-plot')")
    disclosure = page.locator(".disclosure").first
    disclosure.focus()
    page.keyboard.press("Enter")
    assert disclosure.get_attribute("aria-expanded") == "true"
