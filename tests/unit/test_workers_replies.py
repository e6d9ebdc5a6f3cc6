"""Reply texts: the model-visible receipt and bounded error diagnostics."""

from __future__ import annotations

import json

from core.errors import Issue
from workers.demo import tree_lines
from workers.entry import error_reply
from workers.errors import HostError
from workers.tools import receipt


def test_the_receipt_names_every_cursor_field() -> None:
    frame = {"sourceCallId": "call_1", "uiId": "ui", "generation": 3, "revision": 2, "seq": 4, "type": "update"}
    text = receipt("intelligent_ui_patch", frame)
    assert text == ("intelligent_ui_patch accepted: sourceCallId=call_1 uiId=ui generation=3 revision=2 seq=4 "
                    "type=update. Use these values for the next call.")


def test_a_terminal_receipt_says_the_stream_is_closed() -> None:
    frame = {"sourceCallId": "c", "uiId": "ui", "generation": 1, "revision": 0, "seq": 2, "type": "complete"}
    assert "closed" in receipt("intelligent_ui_complete", frame)


def test_an_error_reply_carries_at_most_ten_issues() -> None:
    error = HostError("bad", code="invalid_document", issues=[Issue(f"/root/{n}", "wrong") for n in range(20)])
    reply = json.loads(error_reply("req", error))
    assert reply["ok"] is False and reply["request"] == "req"
    assert reply["error"]["code"] == "invalid_document"
    assert len(reply["error"]["issues"]) == 10
    assert reply["error"]["issues"][0] == {"path": "/root/0", "message": "wrong"}


def test_an_error_reply_without_issues_has_no_issue_list() -> None:
    reply = json.loads(error_reply("req", HostError("no", code="cursor_conflict")))
    assert reply["error"] == {"code": "cursor_conflict", "message": "no"}


def test_the_demo_tree_view_indents_children_under_their_parent() -> None:
    root = {"id": "a", "type": "Card", "props": {"title": "Top"},
            "children": [{"id": "b", "type": "Text", "props": {"text": "hello"}}]}
    assert list(tree_lines(root)) == ['Card#a "Top"', '  Text#b "hello"']
