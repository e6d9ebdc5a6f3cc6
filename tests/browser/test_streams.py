"""Stream UIs in the browser: frames per UI, no remount, loading until complete, actions gated."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import shot
from tests.browser.frames import stream_frames

pytestmark = pytest.mark.browser

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

NOTE_STREAM: dict[str, Any] = {
    "version": "1.1", "id": "notes", "mode": "interactive_ui", "title": "Notes",
    "state": {"note": {"type": "string", "initial": "", "maxLength": 200}},
    "derived": {}, "actions": {},
    "root": {"id": "card", "type": "Card", "props": {"title": "Draft"}, "children": [
        {"id": "note-input", "type": "Input", "props": {"label": "Note", "bind": "note"}},
        {"id": "echo", "type": "Text", "props": {"text": {"expr": {"op": "concat", "args": ["You typed: ", {"state": "note"}]}}}},
        {"id": "spinner", "type": "Loading", "props": {"label": "More is coming"}},
    ]},
}
NOTE_EVENTS: list[dict[str, Any]] = [
    {"type": "add", "parentId": "card", "index": 2, "node": {"id": "tip", "type": "Badge", "props": {"text": "Tip: be brief"}}},
    {"type": "update", "nodeId": "card", "props": {"title": "Final draft"}},
    {"type": "remove", "nodeId": "spinner"},
    {"type": "complete"},
]


def frames_of(page: Any, frames: list[dict[str, Any]]) -> None:
    for frame in frames:
        page.evaluate("frame => window.harness.frame(frame)", frame)


def example(name: str) -> Any:
    return json.loads((EXAMPLES / f"{name}.json").read_text())


def test_the_example_stream_applies_frame_by_frame_and_loads_until_complete(page: Any) -> None:
    frames = stream_frames(example("stream-initial"), [*example("stream-mutations"), {"type": "complete"}])
    page.evaluate("() => window.harness.session()")
    frames_of(page, frames[:1])
    article = page.locator("article.document")
    assert article.get_attribute("aria-busy") == "true"
    assert "Still generating" in article.inner_text()
    assert page.locator('[data-node="loading"]').count() == 1
    shot(page, "stream-partial")
    frames_of(page, frames[1:4])
    assert "Still generating" in article.inner_text()  # every mutation applied, not complete yet
    assert page.locator('[data-node="loading"]').count() == 0
    assert page.locator('[data-node="revenue-result"] output').inner_text() == "€31,360.00"
    assert page.locator('[data-node="summary-card"] .card-title').inner_text() == "Summary"
    frames_of(page, frames[4:])
    assert article.get_attribute("aria-busy") is None
    assert "Still generating" not in article.inner_text()
    shot(page, "stream-complete")


def test_patches_do_not_remount_a_focused_input_and_keep_its_caret(page: Any) -> None:
    frames = stream_frames(NOTE_STREAM, NOTE_EVENTS)
    page.evaluate("() => window.harness.session()")
    frames_of(page, frames[:1])
    field = page.get_by_role("textbox", name="Note")
    field.click()
    field.press_sequentially("hello world")
    page.evaluate("""() => {
        const input = document.activeElement;
        input.setSelectionRange(5, 5);
        input.dataset.marker = 'same-element';
        document.querySelector('[data-node="echo"]').dataset.marker = 'kept';
    }""")
    frames_of(page, frames[1:])
    state = page.evaluate("""() => ({
        marker: document.activeElement.dataset.marker, value: document.activeElement.value,
        caret: [document.activeElement.selectionStart, document.activeElement.selectionEnd],
        echo: document.querySelector('[data-node="echo"]').dataset.marker,
    })""")
    assert state == {"marker": "same-element", "value": "hello world", "caret": [5, 5], "echo": "kept"}
    field.press_sequentially("!")
    assert field.input_value() == "hello! world"  # typing goes on at the caret
    assert page.locator('[data-node="echo"]').inner_text() == "You typed: hello! world"
    assert page.locator('[data-node="card"] .card-title').inner_text() == "Final draft"


def test_duplicate_stale_and_older_generation_frames_are_dropped(page: Any) -> None:
    frames = stream_frames(NOTE_STREAM, NOTE_EVENTS[:2])
    page.evaluate("() => window.harness.session()")
    frames_of(page, frames)
    frames_of(page, [frames[1], frames[0]])  # a duplicate and a stale frame
    assert page.locator('[data-node="card"] .card-title').inner_text() == "Final draft"
    assert page.locator('[data-node="tip"]').count() == 1
    newer = stream_frames({**NOTE_STREAM, "title": "Second try"}, [], generation=2)
    frames_of(page, newer)
    frames_of(page, frames[2:])  # the old generation cannot come back
    assert page.locator("article.document header h2").inner_text() == "Second try"
    assert page.locator("article.document").count() == 1


def test_a_refused_frame_keeps_the_last_valid_view_and_what_was_typed(page: Any) -> None:
    # Seed 000 §12: a candidate that breaks a rule is refused and the last valid snapshot stays; the
    # page showed a whole-document error box instead, and the next valid frame started the typing over.
    frames = stream_frames(NOTE_STREAM, NOTE_EVENTS)
    page.evaluate("() => window.harness.session()")
    frames_of(page, frames[:1])
    field = page.get_by_role("textbox", name="Note")
    field.fill("kept")
    broken = copy.deepcopy(frames[1])
    broken["snapshot"]["state"]["more"] = {"type": "string", "initial": ""}  # a generation freezes its state
    frames_of(page, [broken])
    notice = page.locator(".refused-update")
    assert notice.count() == 1 and "last valid version" in notice.inner_text()
    shot(page, "stream-refused-update")
    assert page.locator(".document-error, .node-error").count() == 0
    assert page.locator('[data-node="tip"]').count() == 0 and field.input_value() == "kept"
    frames_of(page, frames[2:3])  # the next valid frame (a gap of one is recovered: frames are whole)
    assert notice.count() == 0 and field.input_value() == "kept"
    assert page.locator('[data-node="card"] .card-title').inner_text() == "Final draft"
    assert page.locator('[data-node="tip"]').count() == 1


def test_a_new_generation_of_a_ui_opened_by_another_call_replaces_its_view(page: Any) -> None:
    # Each generation is opened by its own call: a view per (call, UI) kept every generation on the
    # page, with actions the host refuses as stale, until a resync dropped them.
    first = stream_frames(NOTE_STREAM, NOTE_EVENTS[:2], call="call-1")
    page.evaluate("() => window.harness.session()")
    frames_of(page, first[:2])
    second = stream_frames({**NOTE_STREAM, "title": "Second try"}, [], call="call-2", generation=2)
    frames_of(page, second)
    frames_of(page, first[2:])  # a late frame of the older generation
    assert page.locator("article.document").count() == 1
    assert page.locator("article.document header h2").inner_text() == "Second try"
    same = stream_frames({**NOTE_STREAM, "title": "Not mine"}, [], call="call-3", generation=2)
    frames_of(page, same)  # the same generation from another call: not this view's
    assert page.locator("article.document header h2").inner_text() == "Second try"


def test_external_actions_are_disabled_until_the_stream_is_complete(page: Any) -> None:
    frames = stream_frames(example("actions-file-reader"), [{"type": "complete"}])
    page.evaluate("() => window.harness.session()")
    frames_of(page, frames[:1])
    button = page.get_by_role("button", name="Read file")
    assert button.is_disabled()
    assert "finished loading" in page.locator('[data-node="read-button"]').inner_text()
    button.click(force=True)
    assert page.evaluate("() => window.harness.requests.length") == 0
    frames_of(page, frames[1:])
    assert button.is_enabled()
    button.click()
    page.wait_for_function("() => window.harness.requests.length === 1")
    request = page.evaluate("() => window.harness.requests[0]")
    assert request["documentRef"] == {"sourceCallId": "call-1", "uiId": "file-reader", "generation": 1, "revision": 0}
    assert request["actionId"] == "count_lines"
    assert request["values"] == {"path": "docs/CHANGELOG.md", "limit": 40, "lines": 0}


WATCHDOG = """async ({every}) => {
  const { connectEvents } = await import('/app/static/src/events.js');
  const sources = [];
  class Fake {
    constructor(url) { this.url = url; this.listeners = {}; this.closed = false; sources.push(this);
      setTimeout(() => { this.onopen?.(); this.emit('heartbeat', JSON.stringify({ every_s: every })); }, 10); }
    addEventListener(kind, f) { this.listeners[kind] = f; }
    emit(kind, data) { this.listeners[kind]?.({ data, lastEventId: '' }); }
    close() { this.closed = true; }
  }
  const statuses = [];
  const api = { ticket: async () => 't', eventsUrl: (ticket, last) => `/events?ticket=${ticket}&heartbeat=event` };
  const store = { frame() {}, receipt() {}, answer() {}, resync() {} };
  window.watched = { sources, statuses, events: connectEvents({ api, store, onStatus: (s) => statuses.push(s),
                                                                EventSourceImpl: Fake }) };
}"""


def test_a_stream_silent_for_three_heartbeats_is_taken_for_stalled_and_reopened(page: Any) -> None:
    # an audit: behind a proxy that stopped forwarding, the page stayed "Live" on an old frame
    # for good; heartbeats are comments an EventSource never hands the page, unless asked as events
    page.evaluate(WATCHDOG, {"every": 0.2})
    page.wait_for_function("() => window.watched.sources.length === 1 && window.watched.statuses.includes('live')")
    assert "heartbeat=event" in page.evaluate("() => window.watched.sources[0].url")
    page.wait_for_function("() => window.watched.sources.length === 2", timeout=5_000)  # 3 × 0.2 s + 1 s, silent
    assert page.evaluate("() => window.watched.sources[0].closed") is True
    page.wait_for_function("() => window.watched.statuses.filter((s) => s === 'live').length === 2")
    assert page.evaluate("() => window.watched.statuses") == ["connecting", "live", "reconnecting", "reconnecting",
                                                               "live"]
    page.evaluate("() => window.watched.events.close()")


def test_a_stream_whose_heartbeats_come_is_kept(page: Any) -> None:
    page.evaluate(WATCHDOG, {"every": 0.2})
    page.wait_for_function("() => window.watched.statuses.includes('live')")
    page.evaluate("() => { window.beating = setInterval(() => window.watched.sources[0].emit('heartbeat', "
                  "'{\"every_s\":0.2}'), 150); }")
    page.wait_for_timeout(2_500)
    assert page.evaluate("() => [window.watched.sources.length, window.watched.sources[0].closed]") == [1, False]
    page.evaluate("() => { clearInterval(window.beating); window.watched.events.close(); }")
