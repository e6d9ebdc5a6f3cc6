"""Host actions in the browser: receipts, resultMap, stale results, approvals, history, size limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import shot
from tests.browser.frames import stream_frames

pytestmark = pytest.mark.browser

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def open_complete(page: Any, name: str) -> dict[str, Any]:
    document = json.loads((EXAMPLES / f"{name}.json").read_text())
    page.evaluate("() => window.harness.session()")
    for frame in stream_frames(document, [{"type": "complete"}]):
        page.evaluate("frame => window.harness.frame(frame)", frame)
    return document


def click_and_get_receipt(page: Any, button: str) -> dict[str, Any]:
    count = page.evaluate("() => window.harness.requests.length")
    page.get_by_role("button", name=button).click()
    page.wait_for_function(f"() => window.harness.operations().length === {count + 1}")
    return page.evaluate("() => window.harness.operations().at(-1).timeline[0]")


def push(page: Any, receipt: dict[str, Any], status: str, **extra: Any) -> None:
    page.evaluate("r => window.harness.receipt(r)", {**receipt, "status": status, "updatedAt": receipt["updatedAt"] + 1, **extra})


def test_a_succeeded_result_is_mapped_into_state_with_a_receipt_timeline(page: Any) -> None:
    open_complete(page, "actions-file-reader")
    receipt = click_and_get_receipt(page, "Read file")
    assert receipt["status"] == "queued"
    push(page, receipt, "running")
    assert page.locator('[data-node="lines-result"] output').inner_text() == "0"
    push(page, receipt, "succeeded", result={"totalLines": 1234})
    result = page.locator('[data-node="lines-result"] output')
    result.filter(has_text="1,234").wait_for()  # the result is applied by an effect, after the next render
    assert result.inner_text() == "1,234"
    operation = page.locator(".operation")
    assert operation.get_attribute("data-status") == "succeeded"
    assert operation.locator(".timeline li .timeline-status").all_inner_texts() == ["Queued", "Running", "Succeeded"]
    push(page, receipt, "succeeded", result={"totalLines": 99})  # a repeated status changes nothing
    assert page.locator('[data-node="lines-result"] output').inner_text() == "1,234"
    shot(page, "action-succeeded")


def test_a_result_arriving_after_an_edit_keeps_the_users_values_and_skips_the_whole_map(page: Any) -> None:
    open_complete(page, "actions-file-reader")
    receipt = click_and_get_receipt(page, "Read file")
    page.get_by_label("File path").fill("README.md")
    push(page, receipt, "succeeded", result={"totalLines": 77})
    notice = page.locator(".notice.conflict")
    assert "your values were kept and its result was not applied" in notice.inner_text()  # waits for the notice
    assert page.locator('[data-node="lines-result"] output').inner_text() == "0"
    assert page.get_by_label("File path").input_value() == "README.md"
    assert page.locator(".operation").get_attribute("data-status") == "succeeded"  # the receipt still shows
    shot(page, "action-conflict")


def test_an_operation_not_clicked_in_this_page_can_be_seen_but_its_result_is_never_applied(page: Any) -> None:
    open_complete(page, "actions-file-reader")
    ref = {"sourceCallId": "call-1", "uiId": "file-reader", "generation": 1, "revision": 0}
    old = {"operationId": "op-old", "requestId": "earlier-click", "documentRef": ref, "actionId": "count_lines",
           "status": "succeeded", "parameterHash": "b" * 64, "createdAt": 1, "updatedAt": 2, "result": {"totalLines": 5}}
    page.evaluate("r => window.harness.receipt(r)", old)
    assert "not requested from this page: its result is not applied here" in page.locator(".operation").inner_text()
    assert page.locator('[data-node="lines-result"] output').inner_text() == "0"


def test_an_approval_is_asked_for_and_a_denial_or_cancel_is_sent(page: Any) -> None:
    open_complete(page, "actions-file-writer")
    page.evaluate("() => { window.harness.firstStatus = 'awaiting_confirmation'; }")
    receipt = click_and_get_receipt(page, "Request write")
    assert receipt["status"] == "awaiting_confirmation"
    operation = page.locator(".operation")
    assert operation.get_by_role("button", name="Approve").is_visible()
    shot(page, "action-awaiting-confirmation")
    operation.get_by_role("button", name="Deny").click()
    page.wait_for_function("() => window.harness.decisions.length === 1")
    assert page.evaluate("() => window.harness.decisions[0]") == {"operationId": receipt["operationId"], "approve": False}
    assert operation.get_attribute("data-status") == "cancelled"
    assert operation.get_by_role("button").count() == 0

    page.evaluate("() => { window.harness.firstStatus = 'queued'; }")
    second = click_and_get_receipt(page, "Request write")
    page.locator(f'[data-operation="{second["operationId"]}"]').get_by_role("button", name="Cancel").click()
    page.wait_for_function("() => window.harness.decisions.length === 2")
    assert page.locator(f'[data-operation="{second["operationId"]}"]').get_attribute("data-status") == "cancelled"


def test_an_agent_callback_shows_accepted(page: Any) -> None:
    open_complete(page, "agent-callback")
    page.evaluate("() => { window.harness.agentAction = 'explain'; }")
    receipt = click_and_get_receipt(page, "Ask the assistant")
    assert receipt["status"] == "accepted"
    assert "Accepted" in page.locator(".operation").inner_text()


def test_a_request_over_32_kib_is_refused_before_it_is_sent(page: Any) -> None:
    document = json.loads((EXAMPLES / "actions-file-writer.json").read_text())
    for key in ("filePath", "content", "lastOperation"):
        document["state"][key]["maxLength"] = 4096
    document["state"].update({f"pad{i}": {"type": "string", "initial": "x" * 4000, "maxLength": 4096} for i in range(8)})
    page.evaluate("() => window.harness.session()")
    for frame in stream_frames(document, [{"type": "complete"}]):
        page.evaluate("frame => window.harness.frame(frame)", frame)
    page.get_by_label("Content").fill("y" * 4000)
    page.get_by_role("button", name="Request write").click()
    notice = page.locator(".notice.error")
    assert "was not sent" in notice.inner_text() and "the limit is 32768" in notice.inner_text()
    assert page.evaluate("() => window.harness.requests.length") == 0
    page.get_by_label("Content").fill("short")  # the same request under the limit goes through
    page.get_by_role("button", name="Request write").click()
    page.wait_for_function("() => window.harness.requests.length === 1")


def test_an_approval_is_the_hosts_apart_from_the_generated_interface_and_names_its_capability(page: Any) -> None:
    # an audit: model components look like the host's controls, and the action key is the model's word
    document = json.loads((EXAMPLES / "actions-file-writer.json").read_text())
    document["actions"] = {"preview_readonly": document["actions"]["save_note"]}
    for node in document["root"]["children"]:
        if node.get("props", {}).get("action", {}).get("actionId") == "save_note":
            node["props"]["action"]["actionId"] = "preview_readonly"
    page.evaluate("() => window.harness.session()")
    for frame in stream_frames(document, [{"type": "complete"}]):
        page.evaluate("frame => window.harness.frame(frame)", frame)
    page.evaluate("() => { window.harness.firstStatus = 'awaiting_confirmation'; }")
    click_and_get_receipt(page, "Request write")
    operations = page.locator("article.document > section.operations.host-controls")
    assert operations.get_attribute("aria-label") == "Operations (from the host)"
    assert page.locator(".generated .operations, .generated .operation").count() == 0
    assert page.locator(".generated").get_attribute("aria-label") == "Generated by the assistant"
    target = operations.locator(".operation-target")
    assert target.inner_text() == "runs the host capability write_file"
    assert target.locator("code").inner_text() == "write_file"


def test_a_decision_leaves_the_keyboard_on_the_operations_status(page: Any) -> None:
    open_complete(page, "actions-file-writer")
    page.evaluate("() => { window.harness.firstStatus = 'awaiting_confirmation'; }")
    receipt = click_and_get_receipt(page, "Request write")
    operation = page.locator(f'[data-operation="{receipt["operationId"]}"]')
    operation.get_by_role("button", name="Approve").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.harness.decisions.length === 1")
    operation.get_by_role("button", name="Approve").wait_for(state="detached")
    page.wait_for_function("() => document.activeElement.classList.contains('operation-status')")
    assert page.evaluate("() => document.activeElement.closest('.operation').dataset.operation") == receipt["operationId"]
