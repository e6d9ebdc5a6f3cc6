"""The Client against the real gateway in Debian's Chromium: redis-server, a worker pool, a real
`rq worker` and a real `iui gateway` process (tests/browser/stack.py).  An agent streams UIs and
answers over the gateway's HTTP API; the page follows them, acts, saves view state, survives a
gateway SIGKILL, keeps hostile text inert and passes axe-core, with no console error and no CSP
violation on any page."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.documents import ALL_COMPONENTS, HOSTILE, HOSTILE_TEXT
from tests.browser.stack import Agent, Stack, Viewer, example, wait_until
from tests.gateway.conftest import auth, token

pytestmark = [pytest.mark.browser, pytest.mark.integration]


def nodes(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every node of a document, depth first."""
    out, todo = [], [document["root"]]
    while todo:
        node = todo.pop()
        out.append(node)
        todo.extend(node.get("children", []))
    return out


def test_the_demo_session_renders_every_component_and_inputs_drive_results_and_reset(
        e2e: Stack, browser: Any, viewers: list[Viewer]) -> None:
    session = "e2e-demo"
    frames = e2e.stream(session, example("stream-initial.json"), example("stream-mutations.json"), call="sales")
    e2e.stream(session, example("compound-interest.json"), call="interest")
    e2e.stream(session, ALL_COMPONENTS, call="all")
    viewer = Viewer(browser, e2e.url(session))
    viewers.append(viewer)
    page = viewer.page
    page.locator(".connection.live").wait_for()
    page.locator('article[data-status="complete"]').nth(2).wait_for()
    assert page.evaluate("() => location.hash") == ""  # the token left the address bar
    titles = page.locator("article.document header h2").all_inner_texts()
    assert titles == ["Quarterly sales report", "Savings growth calculator", "Every component"]

    sales = page.locator("article.document").nth(0)
    final = frames[-1]["snapshot"]
    for node in nodes(final):
        assert sales.locator(f'[data-node="{node["id"]}"]').get_attribute("data-type") == node["type"]
    assert sales.locator('[data-node="loading"]').count() == 0  # removed by the third patch
    assert sales.locator('[data-node="summary-card"] .card-title').inner_text() == "Summary"
    assert sales.get_by_label("Units sold").input_value() == "1280"
    assert sales.get_by_label("Unit price (EUR)").input_value() == "24.5"
    revenue = sales.locator('[data-node="revenue-result"]')
    assert revenue.locator(".result-label").inner_text() == "Revenue"
    assert revenue.locator("output").inner_text() == "€31,360.00"
    every = page.locator("article.document").nth(2)
    types = {node["type"] for node in nodes(ALL_COMPONENTS)}
    assert len(types) == 21
    for node in nodes(ALL_COMPONENTS):
        assert every.locator(f'[data-node="{node["id"]}"]').get_attribute("data-type") == node["type"]
    assert page.locator(".node-error").count() == 0
    applied = viewer.applied()
    assert [event["kind"] for event in applied] == ["frame"] * (len(frames) + 4)  # 5 + 2 + 2 frames, once each
    viewer.shot("demo-session")

    sales.get_by_label("Units sold").fill("2000")
    assert revenue.locator("output").inner_text() == "€49,000.00"
    interest = page.locator("article.document").nth(1)
    balance = interest.locator('[data-node="total-result"] output')
    initial = balance.inner_text()
    interest.get_by_label("Starting amount (USD)").fill("30000")
    assert balance.inner_text() != initial and balance.inner_text().startswith("$58,")
    interest.get_by_role("button", name="Add $1,000").click()
    assert interest.get_by_label("Starting amount (USD)").input_value() == "31000"
    viewer.shot("demo-session-edited")
    interest.get_by_role("button", name="Reset inputs").click()
    assert balance.inner_text() == initial
    assert interest.get_by_label("Starting amount (USD)").input_value() == "25000"
    assert revenue.locator("output").inner_text() == "€49,000.00"  # another UI's state is its own


def test_a_write_action_approved_in_the_page_succeeds_and_an_edit_meanwhile_keeps_the_users_values(
        e2e: Stack, browser: Any, viewers: list[Viewer]) -> None:
    session = "e2e-write"
    e2e.stream(session, example("actions-file-writer.json"), call="writer")
    viewer = Viewer(browser, e2e.url(session))
    viewers.append(viewer)
    page = viewer.page
    page.locator('article[data-status="complete"]').wait_for()
    status = page.locator('[data-node="status-text"]')
    assert status.inner_text() == "Not saved yet."

    page.get_by_role("button", name="Request write").click()
    first = page.locator(".operation").nth(0)
    first.locator("xpath=self::*[@data-status='awaiting_confirmation']").wait_for()
    viewer.shot("write-awaiting-approval")
    first.get_by_role("button", name="Approve").click()
    first.locator("xpath=self::*[@data-status='succeeded']").wait_for(timeout=20_000)
    assert first.locator(".timeline-status").all_inner_texts() == [
        "Awaiting your confirmation", "Queued", "Running", "Succeeded"]
    assert status.inner_text() == "Last write: create"  # the resultMap's lastOperation
    written = e2e.runtime.settings.files_root / "notes" / "meeting.md"
    assert written.read_text() == example("actions-file-writer.json")["state"]["content"]["initial"]
    viewer.shot("write-succeeded")

    page.get_by_role("button", name="Request write").click()
    second = page.locator(".operation").nth(1)
    second.locator("xpath=self::*[@data-status='awaiting_confirmation']").wait_for()
    page.get_by_label("Content").fill("# Changed after the click")
    second.get_by_role("button", name="Approve").click()
    second.locator("xpath=self::*[@data-status='succeeded']").wait_for(timeout=20_000)
    notice = page.locator(".notice.conflict")
    notice.wait_for()
    assert "you changed the values since the click" in notice.inner_text()
    assert page.get_by_label("Content").input_value() == "# Changed after the click"
    assert status.inner_text() == "Last write: create"  # the second result ("update") was not applied
    assert second.locator(".operation-result").inner_text().split() == ["operation", "update"]
    viewer.shot("write-conflict")


def test_the_page_rides_out_a_gateway_sigkill_mid_stream_and_applies_every_frame_once(
        e2e: Stack, browser: Any, viewers: list[Viewer]) -> None:
    session = "e2e-restart"
    frames = e2e.stream(session, example("stream-initial.json"), complete=False, call="restart")
    viewer = Viewer(browser, e2e.url(session), allowed=[r"net::ERR_CONNECTION_REFUSED", r"net::ERR_EMPTY_RESPONSE",
                                                        r"net::ERR_INCOMPLETE_CHUNKED_ENCODING"])
    viewers.append(viewer)
    page = viewer.page
    page.locator(".connection.live").wait_for()
    agent = Agent(e2e, session, frames[-1], count=40)  # the agent speaks Redis: it goes on without the gateway
    agent.start()
    wait_until(lambda: len(viewer.applied()) >= 6, what="six frames in the page")
    e2e.gateway.kill()
    try:
        page.locator(".connection.reconnecting").wait_for()
        viewer.shot("restart-reconnecting")
        wait_until(lambda: agent.sent >= 20, what="frames sent while the gateway is down")
    finally:
        e2e.gateway.start()  # the module's other tests need it
    agent.finish()
    page.locator('article[data-status="complete"]').wait_for(timeout=20_000)
    page.locator(".connection.live").wait_for()
    applied = viewer.applied()
    ids = [event["id"] for event in applied]
    assert [event["kind"] for event in applied] == ["frame"] * (1 + 40 + 1)  # open, 40 patches, complete
    assert len(set(ids)) == len(ids)
    assert page.locator('[data-node="summary-card"] .card-title').inner_text() == "Summary 40"
    viewer.shot("restart-converged")


def publish(e2e: Stack, session: str, message_id: str, turn: dict[str, Any]) -> None:
    """The agent presents a turn's blocks and closes it with its final answer."""
    for block in turn["published_blocks"]:
        e2e.call(session, "present_answer", {"message_id": message_id, "block": block})
    e2e.call(session, "final_answer", {"message_id": message_id, **turn["final_answer"]})


def test_an_answer_mounts_two_blocks_saves_view_state_and_a_concurrent_save_gives_a_409(
        e2e: Stack, browser: Any, viewers: list[Viewer]) -> None:
    session = "e2e-answer"
    publish(e2e, session, "m1", example("answer-ui/final-answer.json"))
    explorer_turn = example("answer-ui/view-state.json")
    publish(e2e, session, explorer_turn["message_id"], explorer_turn)
    conflict = [r"status of 409 \(Conflict\)"]  # Chromium logs the refused save; the page handles it
    first, second = Viewer(browser, e2e.url(session)), Viewer(browser, e2e.url(session), allowed=conflict)
    viewers += [first, second]
    page = first.page
    answer = page.locator('article.answer.final[data-message="m1"]')
    answer.wait_for()
    order = answer.evaluate("""a => [...a.children].map(c => c.matches('.markdown') ? 'text' : c.matches('details') ? 'details'
        : c.matches('.a-answer-tools') ? 'tools' : c.querySelector('[data-block]') ? c.querySelector('[data-block]').dataset.block
        : c.tagName.toLowerCase())""")
    assert order == ["tools", "text", "pressure-summary", "text", "pressure-trend", "text", "details"]
    assert answer.locator("pre code").inner_text() == "[[ui:pressure-summary]] stays literal inside a code fence."
    assert answer.locator('[data-block="pressure-summary"]').count() == 1
    assert "0.3 MPa" in answer.locator(".a-metric").inner_text()
    assert answer.locator(".a-plot rect.bar").count() == 5

    saved = '[data-block="pressure-explorer"] ~ .view-state'
    for viewer in (first, second):  # both tabs read the stored state (revision 0) before anyone saves
        viewer.page.locator(saved).filter(has_text="Saved").wait_for()
    explorer = page.locator('[data-block="pressure-explorer"]')
    explorer.get_by_role("button", name="Table").click()
    page.locator(saved).filter(has_text="Saving").or_(page.locator(saved).filter(has_text="Saved")).wait_for()
    stored = wait_for_revision(e2e, session, explorer_turn["message_id"], "pressure-explorer", 1)
    assert stored["nodes"]["trend"]["view"] == "table"
    first.shot("answer-saved")

    other = second.page.locator('[data-block="pressure-explorer"]')
    other.get_by_label("Note").fill("Seen at 04:00")
    status = second.page.locator(saved)
    status.filter(has_text="changed in another window").wait_for(timeout=10_000)
    assert other.get_by_label("Note").input_value() == "Seen at 04:00"  # kept, unsaved, until the user chooses
    assert wait_for_revision(e2e, session, explorer_turn["message_id"], "pressure-explorer", 1)["nodes"] == stored["nodes"]
    second.shot("answer-conflict")
    status.get_by_role("button", name="Reload the saved version").click()
    other.get_by_role("button", name="Table").and_(other.locator('[aria-pressed="true"]')).wait_for()
    assert other.get_by_label("Note").input_value() == ""  # the first tab's save, as the reload said


def wait_for_revision(e2e: Stack, session: str, message: str, block: str, revision: int) -> dict[str, Any]:
    """The stored view state once it reached `revision` (read over the gateway with the user's token)."""
    path = f"/v1/sessions/{session}/messages/{message}/blocks/{block}/state"
    found: dict[str, Any] = {}

    def reached() -> bool:
        found.update(e2e.http.get(path, headers=auth("user")).json())
        return found.get("revision") == revision

    wait_until(reached, timeout=10, what=f"revision {revision}")
    return found


def test_a_hostile_document_renders_as_inert_text_without_console_errors_or_csp_violations(
        e2e: Stack, browser: Any, viewers: list[Viewer]) -> None:
    session = "e2e-hostile"
    e2e.stream(session, HOSTILE, call="hostile")
    e2e.call(session, "final_answer", {"message_id": "m-hostile", "ui_block_ids": [], "answer": (
        "<script>window.__pwned = 6</script>\n\n[click](javascript:alert(1)) <img src=x onerror=\"window.__pwned = 7\">"
        "\n\n[[ui:<script>]] and 1e308 and " + HOSTILE_TEXT)})
    viewer = Viewer(browser, e2e.url(session))
    viewers.append(viewer)
    page = viewer.page
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    article = page.locator('article[data-status="complete"]')
    article.wait_for()
    assert page.evaluate("() => window.__pwned") is None
    for selector in ("script", "img", "iframe", "a", "style", "[onclick]", "[onerror]", "[href]", "[src]"):
        assert article.locator(selector).count() == 0, selector
    assert article.locator("header h2").inner_text() == HOSTILE["title"]
    assert page.locator('[data-node="t1"]').inner_text() == HOSTILE_TEXT
    assert page.locator('[data-node="t2"]').inner_text() == "javascript:alert(document.cookie)"
    assert page.locator('[data-node="t3"]').inner_text() == HOSTILE_TEXT
    assert page.locator('[data-node="r1"] output').inner_text() == "$1,000,000,000,000,000.000000"
    assert page.locator('[data-node="r2"] output').inner_text() == "-1000000000000000"
    markdown = page.locator('[data-node="md"]').inner_text()
    for gone in ("javascript", "http://127.0.0.1:1", "__pwned", "<b>", "iframe"):
        assert gone not in markdown, gone
    answer = page.locator('article.answer[data-message="m-hostile"]')
    for selector in ("script", "img", "a", "[onerror]", "[href]", "[src]"):
        assert answer.locator(selector).count() == 0, selector
    # raw HTML is dropped (an HTML block whole, inline tags alone), a link keeps only its text
    assert answer.inner_text() == "click\n\n[[ui:]] and 1e308 and window.__pwned = 1"
    page.get_by_role("textbox").fill(HOSTILE_TEXT + " typed")
    assert page.locator('[data-node="t3"]').inner_text() == HOSTILE_TEXT + " typed"
    assert [url for url in requests if "127.0.0.1:1/" in url or "example.invalid" in url] == []
    viewer.shot("hostile")


def test_axe_finds_no_serious_or_critical_violation_on_the_real_page(
        e2e: Stack, browser: Any, viewers: list[Viewer]) -> None:
    session = "e2e-axe"
    e2e.stream(session, example("stream-initial.json"), example("stream-mutations.json"), call="sales")
    e2e.stream(session, example("actions-file-writer.json"), call="writer")
    publish(e2e, session, "m1", example("answer-ui/view-state.json"))
    viewer = Viewer(browser, e2e.url(session))
    viewers.append(viewer)
    page = viewer.page
    page.locator('[data-block="pressure-explorer"] ~ .view-state').filter(has_text="Saved").wait_for()
    page.get_by_role("button", name="Request write").click()
    page.locator('.operation[data-status="awaiting_confirmation"]').wait_for()
    assert viewer.axe() == []
    viewer.shot("axe")


def test_a_refused_token_stops_the_page_and_a_session_not_there_yet_is_waited_for(
        e2e: Stack, browser: Any, viewers: list[Viewer]) -> None:
    expired = Viewer(browser, f"{e2e.gateway.url}/app/s/e2e-later#token={token(ttl=-60)}", allowed=[r"status of 401"])
    viewers.append(expired)
    refused = expired.page.locator(".connection.refused")
    refused.wait_for()
    assert refused.inner_text() == ("The access token of this link was refused (it may have expired): "
                                    "open the session from a new link.")
    waiting = Viewer(browser, e2e.url("e2e-later"), allowed=[r"status of 404"])
    viewers.append(waiting)
    missing = waiting.page.locator(".connection.missing")
    missing.wait_for()
    assert missing.inner_text() == "No such session, or not yours (yet): waiting for it…"
    waiting.shot("session-missing")
    e2e.stream("e2e-later", example("stream-initial.json"), call="later")
    waiting.page.locator('article[data-status="complete"]').wait_for(timeout=10_000)
    waiting.page.locator(".connection.live").wait_for()
    assert [url for url in expired.requests if url.endswith("/tickets")] == [f"{e2e.gateway.url}/v1/sessions/e2e-later/tickets"]


def test_a_viewer_link_reads_the_session_and_says_why_it_cannot_act_or_save(
        e2e: Stack, browser: Any, viewers: list[Viewer]) -> None:
    session = "e2e-viewer"
    e2e.stream(session, example("actions-file-writer.json"), call="writer")
    publish(e2e, session, "m1", example("answer-ui/view-state.json"))
    viewer = Viewer(browser, e2e.url(session, role="viewer"), allowed=[r"status of 403"])
    viewers.append(viewer)
    page = viewer.page
    status = page.locator('[data-block="pressure-explorer"] ~ .view-state')
    status.filter(has_text="only view").wait_for()
    assert status.inner_text() == "This link may only view: changes to this view are not saved."
    page.get_by_role("button", name="Request write").click()
    notice = page.locator(".notice.error")
    assert notice.locator("span").inner_text() == "“Request write” was not accepted: this link may only view"
    page.locator('[data-block="pressure-explorer"]').get_by_role("button", name="Table").click()
    assert status.inner_text() == "This link may only view: changes to this view are not saved."
    viewer.shot("viewer-link")


def test_the_index_page_opens_a_session_from_its_id_and_a_token(
        e2e: Stack, browser: Any, viewers: list[Viewer]) -> None:
    session = "e2e-index"
    e2e.stream(session, example("stream-initial.json"), call="index")
    viewer = Viewer(browser, f"{e2e.gateway.url}/app/")
    viewers.append(viewer)
    page = viewer.page
    page.get_by_label("Session id").fill(session)
    page.get_by_label("Access token").fill(token(role="viewer"))
    page.get_by_role("button", name="Open").click()
    page.locator('article[data-status="complete"]').wait_for()
    assert page.evaluate("() => [location.pathname, location.hash]") == [f"/app/s/{session}", ""]
