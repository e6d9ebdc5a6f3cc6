"""What an event renders again: only the views it changed (Chromium's precise coverage counts the
calls of each component function, so these count renders, not milliseconds)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.frames import stream_frames

pytestmark = pytest.mark.browser


def table_document(ui: str, rows: int = 50) -> dict[str, Any]:
    columns = [{"key": f"c{i}", "label": f"C{i}"} for i in range(8)]
    return {"version": "1.1", "id": ui, "mode": "interactive_ui", "title": f"UI {ui}",
            "state": {"name": {"type": "string", "initial": "", "maxLength": 40}}, "derived": {}, "actions": {},
            "root": {"id": "root", "type": "Column", "props": {}, "children": [
                {"id": "name", "type": "Input", "props": {"label": f"Name {ui}", "bind": "name"}},
                {"id": "echo", "type": "Text", "props": {"text": {"expr": {"state": "name"}}}},
                {"id": "table", "type": "Table", "props": {"columns": columns, "rows": [
                    {f"c{i}": f"{ui}-{r}-{i}" for i in range(8)} for r in range(rows)]}}]}}


class Calls:
    """Calls of named functions of the Client's modules since the last reading."""

    def __init__(self, page: Any) -> None:
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Profiler.enable")
        self.cdp.send("Profiler.startPreciseCoverage", {"callCount": True, "detailed": True})

    def read(self, module: str, name: str) -> int:
        scripts = self.cdp.send("Profiler.takePreciseCoverage")["result"]  # taking it resets the counts
        return sum(function["ranges"][0]["count"] for script in scripts if script["url"].endswith(module)
                   for function in script["functions"] if function["functionName"] == name)


def test_typing_into_a_document_does_not_render_its_table_again(page: Any) -> None:
    # A Table reads no state: its cells (up to 500 x 32) were rendered again at every keystroke.
    calls = Calls(page)
    page.evaluate("doc => window.harness.documents([doc])", table_document("a"))
    assert calls.read("/src/render/table.js", "TableBody") == 1
    page.get_by_label("Name a").press_sequentially("typing", delay=0)
    assert page.locator('[data-node="echo"]').inner_text() == "typing"  # six renders of the document
    assert calls.read("/src/render/table.js", "TableBody") == 0


def test_an_event_of_a_session_renders_again_only_the_view_it_changed(page: Any) -> None:
    # Every event re-rendered every document of the session (a receipt took 50-230 ms in a session
    # of 4-16 UIs of a large Table): now a frame renders its own view, a receipt only its operation's.
    calls = Calls(page)
    page.evaluate("() => window.harness.session()")
    streams = {ui: stream_frames(table_document(ui), [{"type": "update", "nodeId": "echo", "props": {"text": "new"}},
                                                      {"type": "complete"}], call=f"call-{ui}")
               for ui in ("a", "b", "c")}
    for frames in streams.values():
        page.evaluate("frame => window.harness.frame(frame)", frames[0])
    assert page.locator("article.document").count() == 3
    assert calls.read("/src/render/document.js", "DocumentView") >= 3
    page.evaluate("frame => window.harness.frame(frame)", streams["b"][1])
    assert page.locator('article.document').nth(1).locator('[data-node="echo"]').inner_text() == "new"
    assert calls.read("/src/render/document.js", "DocumentView") == 1
    assert calls.read("/src/render/table.js", "TableBody") == 0  # the frame kept b's Table object
    page.evaluate("frame => window.harness.frame(frame)", streams["c"][2])
    assert calls.read("/src/render/document.js", "DocumentView") == 1
    receipt = {"operationId": "op-x", "requestId": "r-x", "actionId": "save", "status": "queued",
               "parameterHash": "a" * 64, "createdAt": 1, "updatedAt": 1,
               "documentRef": {"sourceCallId": "call-z", "uiId": "z", "generation": 1, "revision": 0}}
    page.evaluate("receipt => window.harness.receipt(receipt)", receipt)
    assert page.evaluate("() => window.harness.operations().length") == 1
    assert calls.read("/src/render/document.js", "DocumentView") == 0  # no view of its document
    assert page.evaluate("() => window.harness.errors") == []
