"""resolve_ui_action and apply_action_result (seed 000 §11)."""

from __future__ import annotations

import pytest

from core.document.model import parse_document
from core.errors import UIActionError
from core.state.host_action import apply_action_result, resolve_ui_action
from core.state.values import initial_state, update_state

from .documents import base_document


@pytest.fixture
def doc():
    return parse_document(base_document())


def test_tool_arguments_are_computed_from_state(doc):
    state = update_state(doc, initial_state(doc), "name", "Grace")
    resolved = resolve_ui_action(doc, state, "save")
    assert resolved == {"kind": "tool", "actionId": "save", "capabilityId": "save_note",
                        "arguments": {"text": "Grace", "limit": 5}}


def test_agent_prompt_is_computed(doc):
    assert resolve_ui_action(doc, initial_state(doc), "ask")["prompt"] == "Explain basic"


def test_agent_prompt_must_not_become_empty():
    document = base_document()
    document["actions"]["ask"]["prompt"] = {"expr": {"state": "name"}}
    parsed = parse_document(document)
    state = update_state(parsed, initial_state(parsed), "name", "")
    with pytest.raises(UIActionError) as caught:
        resolve_ui_action(parsed, state, "ask")
    assert caught.value.code == "prompt"


def test_arguments_over_16_kib_are_refused():
    document = base_document()
    document["state"]["blob"] = {"type": "string", "initial": ""}
    for i in range(5):
        document["actions"]["save"]["arguments"][f"b{i}"] = {"expr": {"state": "blob"}}
    parsed = parse_document(document)
    state = update_state(parsed, initial_state(parsed), "blob", "x" * 4000)
    with pytest.raises(UIActionError) as caught:
        resolve_ui_action(parsed, state, "save")
    assert caught.value.code == "arguments"


def test_unknown_action_and_invalid_state_are_refused(doc):
    with pytest.raises(UIActionError):
        resolve_ui_action(doc, initial_state(doc), "ghost")
    with pytest.raises(UIActionError):
        resolve_ui_action(doc, {"amount": 1}, "save")


def test_results_map_into_state(doc):
    assert apply_action_result(doc, initial_state(doc), "save", {"lines": 42, "other": "x"})["count"] == 42


def test_a_results_integral_float_maps_into_state_as_an_int(doc):
    assert repr(apply_action_result(doc, initial_state(doc), "save", {"lines": 42.0})["count"]) == "42"


@pytest.mark.parametrize("result,code", [
    ({"lines": "42"}, "result_value"),          # wrong type
    ({"lines": True}, "result_value"),          # a bool is never a number
    ({"lines": None}, "result_value"),
    ({"other": 1}, "missing_result_field"),
    ({"lines": {"nested": 1}}, "result"),       # not a public scalar
    ("junk", "result"),
])
def test_bad_results_change_nothing(doc, result, code):
    state = initial_state(doc)
    with pytest.raises(UIActionError) as caught:
        apply_action_result(doc, state, "save", result)
    assert caught.value.code == code
    assert state == initial_state(doc)


def test_result_mapping_is_atomic_across_fields():
    document = base_document()
    document["actions"]["save"]["resultMap"] = {"count": "lines", "plan": "plan"}
    parsed = parse_document(document)
    with pytest.raises(UIActionError):
        apply_action_result(parsed, initial_state(parsed), "save", {"lines": 7, "plan": "gold"})
    after = apply_action_result(parsed, initial_state(parsed), "save", {"lines": 7, "plan": "pro"})
    assert (after["count"], after["plan"]) == (7, "pro")


def test_agent_actions_take_no_result(doc):
    with pytest.raises(UIActionError) as caught:
        apply_action_result(doc, initial_state(doc), "ask", {"x": 1})
    assert caught.value.code == "agent_result"


def test_integers_a_document_declares_stay_integers_through_state_and_arguments():
    # An audit: compiled, a number field's initial value was a C double: the file reader's `limit`
    # of 40 reached the capability as 40.0, which its `int` parameter refused.
    import json
    from pathlib import Path

    from core.state.values import restore_state

    example = Path(__file__).resolve().parents[2] / "examples" / "actions-file-reader.json"
    document = parse_document(json.loads(example.read_text(encoding="utf-8")))
    state = initial_state(document)
    assert [type(state[key]) for key in ("limit", "lines")] == [int, int]
    assert type(resolve_ui_action(document, state, "count_lines")["arguments"]["limit"]) is int
    assert [type(value) for value in restore_state(document, {"path": "a.md"}).values()] == [str, int, int]
    changed = update_state(document, state, "limit", 41)
    assert type(changed["lines"]) is int and type(changed["limit"]) is int
    after = apply_action_result(document, state, "count_lines", {"totalLines": 7})
    assert type(after["lines"]) is int and type(after["limit"]) is int
    from core.state.local_action import dispatch_local_action

    interest = parse_document(json.loads((example.parent / "compound-interest.json").read_text(encoding="utf-8")))
    moved = update_state(interest, initial_state(interest), "years", 20)
    reset = dispatch_local_action(interest, moved, {"type": "reset"})
    assert [(reset[key], type(reset[key])) for key in ("principal", "rate", "years")] == \
        [(25000, int), (4.5, float), (15, int)]
