"""Reply texts: the model-visible receipt and bounded error diagnostics."""

from __future__ import annotations

import json

import pytest

from core.errors import Issue, UIStreamError
from core.json.canonical import canonical_json_string, hash_canonical_json
from core.json.safe import assert_safe_json
from workers.cli.demo import tree_lines
from workers.streams.tools import _spent, call_content, receipt
from workers.wire.entry import error_reply
from workers.wire.errors import HostError


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


_ARGUMENTS = [
    {"document": {"id": "ui", "é": "ü", "\U0001f600": [1.5, 2, -0.0, 1e-7, None, True]}},
    {"sourceCallId": "c", "generation": 1.0, "baseRevision": 0, "mutation": {"\ue000": 1, "\U00010000": 2}},
    {"document": {"text": "tab\tquote\"line\u2028 nul\u0000", "n": [1e-7, 5e-324, 123456789012345, 0.1, 100.0]}},
    {},
]


@pytest.mark.parametrize("args", _ARGUMENTS)
@pytest.mark.parametrize("tool", ["intelligent_ui_open", "intelligent_ui_patch", "t\u00e9\"l"])
def test_the_call_content_is_the_canonical_hash_of_tool_and_arguments(tool: str, args: dict) -> None:
    assert call_content(tool, canonical_json_string(args)) == hash_canonical_json({"tool": tool, "arguments": args})


@pytest.mark.parametrize("args", [a for a in _ARGUMENTS if "document" in a and len(a) == 1])
def test_the_canonical_text_of_a_document_is_as_long_as_json_stringify(args: dict) -> None:
    # The open sizes its document from the arguments' canonical text instead of a walk.
    size = len(canonical_json_string(args).encode()) - len('{"document":}')
    assert size == assert_safe_json(args["document"])


def test_cores_budget_refusal_is_answered_with_the_code_of_the_budget_that_is_spent() -> None:
    """Core refuses a frame beyond the generation's frames or bytes with one issue code, "budget";
    the reply names which budget, as the worker's own checks do (not `invalid_mutation`)."""
    spent = UIStreamError([Issue("", "the generation's frame or byte budget is spent", "budget")])
    codes = [getattr(_spent(spent, seq, used), "code", None) for seq, used in ((255, 1_000), (60, 16_000_000))]
    assert codes == ["frame_budget", "byte_budget"]
    assert _spent(UIStreamError([Issue("/mutation", "invalid")]), 1, 1) is None
