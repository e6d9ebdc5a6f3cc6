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
        : c.matches('.a-answer-tools') ? 'tools' : c.querySelector('[data-block]') ? c.querySelector('[data-block]').dataset.block
        : c.tagName.toLowerCase())""")
    # a chart: an expand entry; one titled component (the Metric is not one): no table of contents
    assert order == ["tools", "text", "pressure-summary", "text", "pressure-trend", "text", "details"]
    assert answer.locator("pre code").inner_text() == "[[ui:pressure-summary]] stays literal inside a code fence."
    assert answer.locator('[data-block="pressure-summary"]').count() == 1  # mounted once
    assert "0.3 MPa" in answer.locator(".a-metric").inner_text()
    assert answer.locator(".a-plot rect.bar").count() == 5  # the chart's initial view is bar
    assert "Processing steps (1)" in answer.locator("details.process summary").inner_text()
    shot(page, "answer-final")


def test_an_answer_with_titled_components_has_a_table_of_contents_and_an_expand_entry(page: Any) -> None:
    # seed 004: "含表格、图表、补充表单…且包含至少两种可导航组件的回答才提供目录", "…提供展开入口"
    explorer = _explorer(page, {})
    answer = page.locator("article.answer.final")
    toc = answer.get_by_role("navigation", name="In this answer")
    links = toc.get_by_role("link")
    assert links.all_inner_texts() == ["Night pressure", "Table", "Evidence", "Field note"]
    shot(page, "answer-navigation")
    for link, element in zip(links.all(), ["trend", "readings", "basis", "note"], strict=True):
        target = link.get_attribute("href")[1:]
        assert page.evaluate("id => document.getElementById(id)?.dataset.element", target) == element
    links.nth(3).click()
    assert page.evaluate("() => decodeURIComponent(location.hash.slice(1))") == links.nth(3).get_attribute("href")[1:]
    expand = answer.get_by_role("button", name="Expand answer")
    assert expand.get_attribute("aria-pressed") == "false"
    expand.click()
    assert expand.get_attribute("aria-pressed") == "true" and "expanded" in answer.get_attribute("class")
    shot(page, "answer-expanded")
    box = answer.bounding_box()
    assert box is not None and box["width"] >= page.viewport_size["width"] - 20  # the window's width
    page.keyboard.press("Escape")
    assert expand.get_attribute("aria-pressed") == "false" and "expanded" not in answer.get_attribute("class")
    assert explorer.count() == 1


def test_a_short_answer_has_neither(page: Any) -> None:
    good = json.loads((ANSWERS / "response-block.json").read_text())
    short = {**good, "block_id": "short", "spec": {"root": "reading", "elements": {"reading": good["spec"]["elements"]["reading"]}}}
    publish(page, "m-short", [short], {"answer": "The reading: [[ui:short]]", "ui_block_ids": ["short"]})
    answer = page.locator("article.answer.final")
    answer.locator('[data-block="short"]').wait_for(timeout=5000)
    assert answer.locator(".a-toc").count() == 0 and answer.locator(".a-expand").count() == 0


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

    # another window saves first: the next save conflicts; the edit stays on the page, unsaved, and
    # the user chooses (seed 004: "前端保留未保存草稿并提供重载或重新保存")
    page.evaluate("""() => window.harness.viewServer.records.set('msg-pressure-1/pressure-explorer',
        {revision: 9, nodes: {trend: {view: 'line', table: {selection: []}}}})""")
    explorer.get_by_label("Note").fill("Seen at 04:00")
    page.wait_for_function("() => window.harness.viewServer.puts.length === 2", timeout=5000)
    status = page.locator('[data-block="pressure-explorer"] ~ .view-state')
    status.filter(has_text="changed in another window").wait_for()
    assert explorer.get_by_label("Note").input_value() == "Seen at 04:00"
    assert explorer.get_by_role("button", name="Table").get_attribute("aria-pressed") == "true"
    assert "FollowUpForm “note”" in status.inner_text()  # what a reload would replace
    shot(page, "answer-view-state-conflict")
    page.wait_for_timeout(800)
    assert page.evaluate("() => window.harness.viewServer.puts.length") == 2  # nothing saved until the user chooses
    status.get_by_role("button", name="Reload the saved version").click()
    explorer.get_by_role("button", name="Line").filter(has_text="Line").wait_for()
    assert explorer.get_by_role("button", name="Line").get_attribute("aria-pressed") == "true"
    assert explorer.get_by_label("Note").input_value() == ""
    assert status.inner_text() == "Saved"

    page.evaluate("() => { window.harness.viewServer.failNext = 413; }")
    explorer.get_by_label("Note").fill("Too much")
    status.filter(has_text="larger than 32 KiB").wait_for()
    assert explorer.get_by_label("Note").input_value() == "Too much"  # kept on the page


def wait_saved(page: Any, block: str = "pressure-explorer") -> None:
    """Until the block's status reads exactly "Saved" ("Not saved…" and "your saved view" contain the word)."""
    page.wait_for_function("""b => [...document.querySelectorAll(`[data-block="${b}"] ~ .view-state`)]
        .some(s => s.innerText.trim() === 'Saved')""", arg=block, timeout=10_000)


def _explorer(page: Any, stored: dict[str, Any] | None = None) -> Any:
    example = json.loads((ANSWERS / "view-state.json").read_text())
    if stored is not None:
        page.evaluate("""stored => window.harness.viewServer.records.set('msg-pressure-1/pressure-explorer',
            {revision: 3, nodes: stored})""", stored)
    publish(page, "msg-pressure-1", example["published_blocks"], example["final_answer"])
    explorer = page.locator('article.answer.final [data-block="pressure-explorer"]')
    wait_saved(page)
    return explorer


def test_a_view_state_the_host_migrated_is_shown_with_a_notice(page: Any) -> None:
    # seed 004: "无法匹配时清除选择并提示": the host migrates a state saved for another version of the
    # block; the page shows what it kept and says that the rest was cleared.
    page.evaluate("""() => window.harness.viewServer.records.set('msg-pressure-1/pressure-explorer',
        {revision: 3, nodes: {trend: {view: 'line'}}, migrated: true})""")
    example = json.loads((ANSWERS / "view-state.json").read_text())
    publish(page, "msg-pressure-1", example["published_blocks"], example["final_answer"])
    explorer = page.locator('article.answer.final [data-block="pressure-explorer"]')
    notice = page.locator(".view-migrated")
    notice.wait_for(timeout=5000)
    assert "earlier version of this answer" in notice.inner_text() and notice.get_attribute("role") == "status"
    shot(page, "answer-view-migrated")
    assert explorer.get_by_role("button", name="Line").get_attribute("aria-pressed") == "true"


def test_a_save_the_host_migrated_shows_what_was_written(page: Any) -> None:
    explorer = _explorer(page, {})
    assert page.locator(".view-migrated").count() == 0
    page.evaluate("() => { window.harness.viewServer.migrateNext = {trend: {view: 'line'}}; }")
    explorer.get_by_label("Note").fill("Mine")
    page.locator(".view-migrated").wait_for(timeout=5000)
    wait_saved(page)
    assert explorer.get_by_role("button", name="Line").get_attribute("aria-pressed") == "true"
    assert explorer.get_by_label("Note").input_value() == ""  # the host dropped the draft: the page shows so
    record = page.evaluate("() => window.harness.viewServer.records.get('msg-pressure-1/pressure-explorer')")
    assert record["nodes"] == {"trend": {"view": "line"}}


def test_a_conflict_kept_and_saved_again_writes_the_users_changes_over_the_other_windows(page: Any) -> None:
    explorer = _explorer(page, {})
    page.evaluate("""() => window.harness.viewServer.records.set('msg-pressure-1/pressure-explorer',
        {revision: 9, nodes: {trend: {view: 'line', table: {selection: []}}}})""")
    explorer.get_by_label("Note").fill("Mine")
    status = page.locator('[data-block="pressure-explorer"] ~ .view-state')
    status.filter(has_text="changed in another window").wait_for(timeout=5000)
    explorer.get_by_label("Note").fill("Mine, edited while in conflict")
    status.get_by_role("button", name="Keep my changes and save them").click()
    wait_saved(page)
    put = page.evaluate("() => window.harness.viewServer.puts.at(-1)")
    assert put["body"]["expected_revision"] == 9
    assert put["body"]["nodes"]["note"]["drafts"]["note"] == "Mine, edited while in conflict"
    record = page.evaluate("() => window.harness.viewServer.records.get('msg-pressure-1/pressure-explorer')")
    assert record["revision"] == 10 and record["nodes"]["note"] == put["body"]["nodes"]["note"]


def test_a_change_made_while_a_save_is_in_flight_is_saved_after_it_not_refused_as_a_conflict(page: Any) -> None:
    explorer = _explorer(page, {})
    page.evaluate("() => { window.harness.viewServer.putDelayMs = 1500; }")
    explorer.get_by_role("button", name="Bar").click()
    page.wait_for_function("() => window.harness.viewServer.puts.length === 1", timeout=5000)
    explorer.get_by_label("Note").fill("typed while saving")
    page.wait_for_function("() => window.harness.viewServer.puts.length === 2", timeout=10_000)
    wait_saved(page)
    puts = page.evaluate("() => window.harness.viewServer.puts.map(p => p.body.expected_revision)")
    assert puts == [3, 4]  # the second under the revision the first returned
    record = page.evaluate("() => window.harness.viewServer.records.get('msg-pressure-1/pressure-explorer')")
    assert record["revision"] == 5
    assert record["nodes"]["trend"]["view"] == "bar" and record["nodes"]["note"]["drafts"]["note"] == "typed while saving"


def test_a_failed_read_keeps_the_edits_and_a_retry_reads_and_saves_them(page: Any) -> None:
    page.evaluate("() => { window.harness.viewServer.failGets = 1; }")
    example = json.loads((ANSWERS / "view-state.json").read_text())
    publish(page, "msg-pressure-1", example["published_blocks"], example["final_answer"])
    status = page.locator('[data-block="pressure-explorer"] ~ .view-state')
    status.filter(has_text="could not be read").wait_for(timeout=5000)
    explorer = page.locator('article.answer.final [data-block="pressure-explorer"]')
    explorer.get_by_role("button", name="Bar").click()
    assert explorer.get_by_role("button", name="Bar").get_attribute("aria-pressed") == "true"
    wait_saved(page)  # the edit read the state again, then saved
    record = page.evaluate("() => window.harness.viewServer.records.get('msg-pressure-1/pressure-explorer')")
    assert record["nodes"]["trend"]["view"] == "bar"
    page.evaluate("() => { window.harness.viewServer.failNext = 503; }")
    explorer.get_by_role("button", name="Line").click()
    status.filter(has_text="could not be reached").wait_for(timeout=5000)
    status.get_by_role("button", name="Retry").click()
    wait_saved(page)
    record = page.evaluate("() => window.harness.viewServer.records.get('msg-pressure-1/pressure-explorer')")
    assert record["nodes"]["trend"]["view"] == "line"


def test_edits_made_while_the_answer_is_generated_work_and_are_merged_into_the_saved_state(page: Any) -> None:
    example = json.loads((ANSWERS / "view-state.json").read_text())
    page.evaluate("""() => window.harness.viewServer.records.set('msg-pressure-1/pressure-explorer',
        {revision: 3, nodes: {readings: {search: 'J-18', selection: []}}})""")
    publish(page, "msg-pressure-1", example["published_blocks"], None)
    block = page.locator('article.answer[aria-busy="true"] [data-block="pressure-explorer"]')
    block.get_by_role("button", name="Bar").click()
    assert block.get_by_role("button", name="Bar").get_attribute("aria-pressed") == "true"
    block.get_by_label("Note").fill("typed during generation")
    page.wait_for_timeout(700)
    assert page.evaluate("() => window.harness.viewServer.puts.length") == 0  # nothing is saved while generated
    assert page.evaluate("() => window.harness.viewServer.gets") == 0
    block.evaluate("el => { el.dataset.probe = 'same-instance'; }")
    page.evaluate("e => window.harness.answer(e)", {"type": "final_answer", "message_id": "msg-pressure-1",
                                                    **example["final_answer"]})
    final = page.locator('article.answer.final [data-block="pressure-explorer"]')
    wait_saved(page)
    assert final.get_attribute("data-probe") == "same-instance"  # not remounted when saving begins
    assert final.get_by_label("Note").input_value() == "typed during generation"
    record = page.evaluate("() => window.harness.viewServer.records.get('msg-pressure-1/pressure-explorer')")
    assert record["revision"] == 4
    assert record["nodes"]["trend"]["view"] == "bar" and record["nodes"]["note"]["drafts"]["note"] == "typed during generation"
    assert record["nodes"]["readings"]["search"] == "J-18"  # the stored state of an element not edited here


def test_a_process_blocks_controls_work_on_the_page_and_write_nothing(page: Any) -> None:
    example = json.loads((ANSWERS / "view-state.json").read_text())
    explorer = json.loads(json.dumps(example["published_blocks"][1]))
    explorer["block_id"], explorer["phase"] = "explorer-draft", "process"
    publish(page, "msg-pressure-1", [*example["published_blocks"], explorer], example["final_answer"])
    details = page.locator("details.process")
    details.locator("summary").click()
    draft = details.locator('[data-block="explorer-draft"]')
    draft.get_by_role("button", name="Bar").click()
    assert draft.get_by_role("button", name="Bar").get_attribute("aria-pressed") == "true"
    page.wait_for_timeout(700)
    assert all(p["blockId"] != "explorer-draft" for p in page.evaluate("() => window.harness.viewServer.puts"))


def test_a_follow_up_number_keeps_its_decimals_as_typed_and_a_filled_field_clears_its_error(page: Any) -> None:
    example = json.loads((ANSWERS / "view-state.json").read_text())
    block = example["published_blocks"][1]
    block["spec"]["elements"]["note"]["props"]["fields"].append(
        {"name": "pressure", "label": "Pressure (MPa)", "type": "number", "required": True})
    publish(page, "msg-pressure-1", example["published_blocks"], example["final_answer"])
    wait_saved(page)
    form = page.locator('article.answer.final [data-element="note"]')
    number = form.get_by_label("Pressure (MPa)")
    number.press_sequentially("1.05", delay=20)
    assert number.input_value() == "1.05"
    number.fill("")
    form.get_by_role("button", name="Send").click()
    assert form.locator(".field-error").count() == 1
    number.press_sequentially("2.50", delay=20)
    assert number.input_value() == "2.50"
    assert form.locator(".field-error").count() == 0  # filled: its error goes
    page.wait_for_function("""() => window.harness.viewServer.records.get('msg-pressure-1/pressure-explorer')
        ?.nodes?.note?.drafts?.pressure === 2.5""", timeout=5000)


def test_enter_on_the_focused_plot_selects_a_point_and_shows_its_detail(page: Any) -> None:
    # seed 004: "数据点详情只在点击图中数据点，或聚焦图形后按回车、方向键、Home/End 选点时出现"
    explorer = _explorer(page, {})
    explorer.locator(".a-plot").focus()
    assert explorer.locator(".a-detail").count() == 0
    page.keyboard.press("Enter")
    detail = explorer.locator(".a-detail")
    detail.wait_for(timeout=5000)
    entered = detail.inner_text()
    page.keyboard.press("Escape")
    assert explorer.locator(".a-detail").count() == 0
    page.keyboard.press("Home")
    assert explorer.locator(".a-detail").inner_text() == entered  # the first point of the range, as Home


def test_the_point_detail_opens_from_the_keyboard_and_is_not_shown_in_the_table_view(page: Any) -> None:
    explorer = _explorer(page, {})
    plot = explorer.locator(".a-plot")
    plot.focus()
    page.keyboard.press("ArrowRight")
    detail = explorer.locator(".a-detail")
    detail.wait_for(timeout=5000)
    assert detail.get_attribute("aria-live") == "polite"
    page.keyboard.press("End")
    assert detail.count() == 1
    explorer.get_by_role("button", name="Table").click()
    assert explorer.locator(".a-detail").count() == 0  # seed 004: "数据表页签不重复展示区间摘要和点详情"


def test_a_resync_keeps_the_order_the_page_showed(page: Any) -> None:
    from tests.browser.frames import stream_frames
    from tests.browser.test_documents import example

    first = stream_frames(example("stream-initial"), [{"type": "complete"}], call="call-a")[-1]
    # another UI (one view per uiId: the same uiId from another call would be its next generation)
    second = stream_frames({**example("stream-initial"), "id": "second-ui"}, [{"type": "complete"}], call="call-b")[-1]
    answer = json.loads((ANSWERS / "final-answer.json").read_text())
    events = [{"type": "block", "message_id": "m1", "version": i, "block": b}
              for i, b in enumerate(answer["published_blocks"], 1)]
    events.append({"type": "final_answer", "message_id": "m1", **answer["final_answer"]})
    page.evaluate("() => window.harness.session()")
    page.evaluate("f => window.harness.frame(f)", first)
    for event in events:
        page.evaluate("e => window.harness.answer(e)", event)
    page.evaluate("f => window.harness.frame(f)", second)
    order = """() => [...document.querySelector('.session').children].filter(c => !c.matches('.connection, .empty'))
        .map(c => c.matches('article.answer') ? 'answer' : 'ui')"""
    assert page.evaluate(order) == ["ui", "answer", "ui"]
    page.evaluate("b => window.harness.resync(b)", {"frames": [first, second], "receipts": [], "answers": events})
    assert page.evaluate(order) == ["ui", "answer", "ui"]
