"""The real page against a fake gateway: tickets, resume after a lost stream, nothing applied twice, resync."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.browser.conftest import CSP, WEB, HarnessServer, send_json, shot
from tests.browser.frames import stream_frames
from tests.browser.test_streams import NOTE_STREAM

pytestmark = pytest.mark.browser


def cursor(frame: int, receipt: int = 0, answer: int = 0, epoch: str = "e1") -> str:
    return f"v1.{epoch}.{frame}-0.{receipt}-0.{answer}-0"


class FakeGateway:
    """Three connections: events 1-2 then a drop; a resume that repeats an old id; a resync."""

    def __init__(self) -> None:
        self.tickets = 0
        self.connections: list[dict[str, list[str]]] = []
        self.lock = threading.Lock()
        self.frames = stream_frames(NOTE_STREAM, [
            {"type": "add", "parentId": "card", "index": 2, "node": {"id": "tip", "type": "Badge", "props": {"text": "Tip"}}},
            {"type": "complete"}])
        ghost = {**NOTE_STREAM, "id": "ghost", "title": "Ghost UI that must not appear"}
        self.ghost = stream_frames(ghost, [], call="call-ghost")[0]
        fresh = {**NOTE_STREAM, "id": "fresh", "title": "After resync"}
        self.fresh = stream_frames(fresh, [], call="call-fresh")[0]

    def page(self, handler: BaseHTTPRequestHandler) -> None:
        body = (WEB / "index.html").read_bytes()
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html; charset=utf-8")
        handler.send_header("Content-Security-Policy", CSP)
        handler.end_headers()
        handler.wfile.write(body)

    def api(self, handler: BaseHTTPRequestHandler) -> None:
        url = urlsplit(handler.path)
        if handler.headers.get("Authorization") != "Bearer tok-1" and url.path.endswith("/tickets"):
            send_json(handler, 401, {"status": 401, "code": "unauthorized"}, "application/problem+json")
            return
        if url.path.endswith("/tickets"):
            with self.lock:
                self.tickets += 1
                number = self.tickets
            if number == 2:
                time.sleep(1.0)  # the page shows "reconnecting" meanwhile
            send_json(handler, 200, {"ticket": f"t{number}", "expires_in": 60})
            return
        query = parse_qs(url.query)
        self.connections.append(query)
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-store")
        handler.end_headers()
        events = {1: [("frame", cursor(1), self.frames[0]), ("frame", cursor(2), self.frames[1])],
                  # an id at the cursor with other content: applying it would show the ghost UI
                  2: [("frame", cursor(2), self.ghost), ("frame", cursor(3), self.frames[2])],
                  3: [("resync", cursor(9, epoch="e2"), {"reason": "epoch", "frames": [self.fresh], "receipts": [], "answers": []})],
                  }.get(len(self.connections), [])
        handler.wfile.write(b"retry: 3000\n\n")
        for kind, event_id, data in events:
            handler.wfile.write(f"event: {kind}\nid: {event_id}\ndata: {json.dumps(data)}\n\n".encode())
        handler.wfile.flush()
        if len(self.connections) >= 4:
            time.sleep(5)  # the last connection stays open


def test_the_page_resumes_after_a_lost_stream_applies_nothing_twice_and_takes_a_resync(
        page: Any, base_url: str, harness_server: HarnessServer) -> None:
    gateway = FakeGateway()
    harness_server.routes["/app/s"] = gateway.page
    harness_server.routes["/v1/sessions/s1"] = gateway.api
    page.goto(f"{base_url}/app/s/s1#token=tok-1")
    assert page.evaluate("() => location.hash") == ""  # the token left the address bar
    page.locator(".connection.reconnecting").wait_for(timeout=5000)
    shot(page, "reconnecting")
    page.locator('[data-node="tip"]').wait_for(timeout=5000)
    page.get_by_text("After resync").wait_for(timeout=10000)
    assert page.get_by_text("Ghost UI").count() == 0
    assert page.locator("article.document").count() == 1  # the resync replaced the whole view
    deadline = time.monotonic() + 10
    while len(gateway.connections) < 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    tickets = [c["ticket"][0] for c in gateway.connections]
    assert len(set(tickets)) == len(tickets) == 4  # a new ticket for every connection
    assert gateway.connections[0].get("last_event_id") is None
    assert gateway.connections[1]["last_event_id"] == [cursor(2)]
    assert gateway.connections[2]["last_event_id"] == [cursor(3)]
    assert gateway.connections[3]["last_event_id"] == [cursor(9, epoch="e2")]
    page.locator(".connection.live").wait_for(timeout=5000)
