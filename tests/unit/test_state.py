"""State updates, restore, value resolution and local actions (seed 000 §4, §6, §8)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from core.document.model import parse_document
from core.errors import UIActionError, UIExpressionError, UIStateError
from core.state.evaluation import evaluate_derived, resolve_document_value, resolve_value
from core.state.local_action import dispatch_local_action
from core.state.values import assert_valid_state, initial_state, restore_state, update_state

from .documents import base_document


@pytest.fixture
def doc():
    return parse_document(base_document())


def test_initial_state_holds_every_declared_initial(doc):
    assert initial_state(doc) == {"amount": 10, "count": 3, "name": "Ada", "plan": "basic", "agree": False}


def test_update_returns_a_new_state_and_never_mutates(doc):
    before = initial_state(doc)
    after = update_state(doc, before, "amount", 20.5)
    assert after["amount"] == 20.5 and before["amount"] == 10
    with pytest.raises(TypeError):
        after["amount"] = 1


@pytest.mark.parametrize("key,value,code", [
    ("ghost", 1, "unknown_field"),
    ("amount", True, "invalid_value"),       # a bool is never a number
    ("amount", "20", "invalid_value"),
    ("amount", 100.5, "invalid_value"),      # above max
    ("amount", -0.5, "invalid_value"),       # below min
    ("amount", 10.25, "invalid_value"),      # off the 0.5 grid
    ("name", "x" * 33, "invalid_value"),     # above maxLength
    ("plan", "gold", "invalid_value"),       # not a Select option
    ("agree", 1, "invalid_value"),
    ("count", float("nan"), "invalid_value"),
])
def test_rejected_updates_keep_the_old_state(doc, key, value, code):
    state = update_state(doc, initial_state(doc), "name", "Grace")
    with pytest.raises(UIStateError) as caught:
        update_state(doc, state, key, value)
    assert caught.value.code == code
    assert state["name"] == "Grace"


def test_step_grid_tolerates_float_representation():
    document = base_document()
    document["state"]["tenth"] = {"type": "number", "initial": 0, "step": 0.1}
    parsed = parse_document(document)
    state = update_state(parsed, initial_state(parsed), "tenth", 0.1 + 0.2)
    assert state["tenth"] == pytest.approx(0.3)


def _grid(step: float, **bounds: float) -> Any:
    document = base_document()
    document["state"]["x"] = {"type": "number", "initial": bounds.get("min", 0), "step": step, **bounds}
    parsed = parse_document(document)
    return parsed, initial_state(parsed)


@pytest.mark.parametrize(("step", "bounds", "value"), [
    (1, {"min": 0, "max": 1e9}, 10.5),  # seed 000 §4's own example
    (1, {"min": 0, "max": 1e9}, 999999999.5),  # half a step at 10^9 steps: a relative bound alone passed it
    (1, {"min": 0, "max": 1e9}, 500000000.5),
    (0.01, {"min": 0, "max": 1e7}, 5000000.005),
    (0.01, {"min": 0, "max": 1e7}, 9999999.995),
    (1, {}, 123456789012.5),
])
def test_a_value_off_the_step_grid_is_refused_at_any_count_of_steps(step, bounds, value):
    parsed, state = _grid(step, **bounds)
    with pytest.raises(UIStateError) as caught:
        update_state(parsed, state, "x", value)
    assert caught.value.code == "invalid_value" and "step grid" in str(caught.value)
    assert state["x"] == bounds.get("min", 0)


@pytest.mark.parametrize(("step", "bounds", "value"), [
    (1, {"min": 0, "max": 1e9}, 999999999),
    (0.01, {"min": 0, "max": 1e7}, 5000000.01),
    (0.1, {"min": -1e15}, -999999999999999.7),  # not representable: the nearest double is ~0.45 steps off
    (0.1, {}, 1e14 + 0.1),
    (0.1, {}, sum([0.1] * 10_000)),  # ten thousand steps added one by one (1000.0000000001588)
])
def test_a_value_on_the_step_grid_within_float_error_is_accepted(step, bounds, value):
    parsed, state = _grid(step, **bounds)
    assert update_state(parsed, state, "x", value)["x"] == value


def test_an_invalid_current_state_is_refused(doc):
    with pytest.raises(UIStateError):
        update_state(doc, {**initial_state(doc), "amount": 1000}, "name", "x")
    with pytest.raises(UIStateError):
        update_state(doc, {"amount": 1}, "amount", 2)


def test_oversize_state_is_refused():
    document = base_document()
    for i in range(64 - len(document["state"])):
        document["state"][f"s{i}"] = {"type": "string", "initial": ""}
    parsed = parse_document(document)
    state = initial_state(parsed)
    with pytest.raises(UIStateError) as caught:
        for i in range(64 - len(base_document()["state"])):
            state = update_state(parsed, state, f"s{i}", "é" * 4096)  # 8,192 bytes each
    assert caught.value.code == "too_large"
    assert 31 <= sum(1 for value in state.values() if value == "é" * 4096) < 33


def test_assert_valid_state_wants_exactly_the_declared_fields(doc):
    assert_valid_state(doc, initial_state(doc))
    with pytest.raises(UIStateError):
        assert_valid_state(doc, {**initial_state(doc), "extra": 1})
    with pytest.raises(UIStateError):
        assert_valid_state(doc, "not a state")


@pytest.mark.parametrize("saved", [None, "junk", [1, 2], 42, {"amount": "lots"}, {"__proto__": {}}, {1: 2}])
def test_restore_never_raises_on_junk_and_falls_back_to_defaults(doc, saved):
    assert restore_state(doc, saved) == initial_state(doc)


def test_restore_keeps_only_valid_declared_fields(doc):
    restored = restore_state(doc, {"amount": 50, "plan": "gold", "name": "Lin", "ghost": 1, "agree": "yes"})
    assert restored == {**initial_state(doc), "amount": 50, "name": "Lin"}


def test_restore_drops_a_lone_surrogate_field_alone(doc):
    """Seed 000 §4: restoreState keeps the declared valid fields and ignores the invalid ones; a
    string with no UTF-8 form is one invalid field, not a reason to lose the whole saved state."""
    restored = restore_state(doc, {"amount": 50, "name": "Lin", "plan": "pro\ud800"})
    assert restored == {**initial_state(doc), "amount": 50, "name": "Lin"}


@pytest.mark.parametrize("text", ["a\udc00", "\ud800", "\ud83d\ude00"])  # the last: a pair kept as two halves
def test_a_lone_surrogate_is_an_invalid_value_of_its_field_and_the_state_is_kept(doc, text):
    before = update_state(doc, initial_state(doc), "name", "Lin")
    with pytest.raises(UIStateError) as refused:
        update_state(doc, before, "name", text)
    assert refused.value.code == "invalid_value"
    assert refused.value.message == "name: value must be valid Unicode (no lone surrogates)"
    assert before["name"] == "Lin"
    with pytest.raises(UIStateError) as invalid:
        assert_valid_state(doc, {**before, "name": text})
    assert invalid.value.code == "invalid_value"


@pytest.mark.parametrize(("value", "kept"), [(2.0, "2"), (-0.0, "0"), (2.5, "2.5"), (7, "7")])
def test_a_written_or_restored_number_is_kept_as_javascript_writes_it(doc, value, kept):
    """An integral float is the int JavaScript cannot tell from it: the state's JSON says 2, not 2.0."""
    assert repr(update_state(doc, initial_state(doc), "count", value)["count"]) == kept
    assert repr(restore_state(doc, {"count": value})["count"]) == kept
    assert orjson.dumps(update_state(doc, initial_state(doc), "count", value)).decode().count(f'"count":{kept},') == 1


def test_evaluate_derived_computes_every_field(doc):
    assert evaluate_derived(doc, initial_state(doc)) == {"double": 20, "label": "Total: 20", "big": False}


def test_resolve_document_value_computes_only_what_it_needs():
    document = base_document()
    document["state"]["divisor"] = {"type": "number", "initial": 1}
    document["derived"]["ratio"] = {"op": "div", "args": [1, {"state": "divisor"}]}
    parsed = parse_document(document)
    state = update_state(parsed, initial_state(parsed), "divisor", 0)
    with pytest.raises(UIExpressionError):
        evaluate_derived(parsed, state)
    assert resolve_document_value(parsed, state, {"expr": {"derived": "double"}}) == 20
    with pytest.raises(UIExpressionError):
        resolve_document_value(parsed, state, {"expr": {"derived": "ratio"}})
    assert dispatch_local_action(parsed, state, {"type": "reset"})["divisor"] == 1


def test_resolve_value_uses_given_derived_values(doc):
    assert resolve_value({"expr": {"derived": "double"}}, initial_state(doc), {"double": 7}) == 7
    assert resolve_value("plain", {}, {}) == "plain"


def test_set_action_evaluates_and_checks_the_domain(doc):
    more = {"type": "set", "key": "amount", "value": {"expr": {"op": "add", "args": [{"state": "amount"}, 0.5]}}}
    state = dispatch_local_action(doc, initial_state(doc), more)
    assert state["amount"] == 10.5
    at_max = update_state(doc, state, "amount", 100)
    with pytest.raises(UIStateError):
        dispatch_local_action(doc, at_max, more)


def test_only_declared_local_actions_run(doc):
    with pytest.raises(UIActionError):
        dispatch_local_action(doc, initial_state(doc), {"type": "set", "key": "amount", "value": 99})
    with pytest.raises(UIActionError):
        dispatch_local_action(doc, initial_state(doc), {"type": "invoke", "actionId": "save"})


def _set_button_document(value):
    action = {"type": "set", "key": "s", "value": value}
    button = {"id": "b", "type": "Button", "props": {"label": "Set", "action": action}}
    return parse_document({"version": "1.0", "id": "d", "mode": "interactive_ui", "title": "t", "derived": {},
                           "state": {"s": {"type": "string", "initial": ""}},
                           "root": {"id": "r", "type": "Column", "props": {}, "children": [button]}})


def _concat_action(last):
    return {"type": "set", "key": "s", "value": {"expr": {"op": "concat", "args": ["x", last]}}}


@pytest.mark.parametrize(("declared", "sent"), [(1, True), (0, False), (True, 1), (False, 0), (1, "1")])
def test_an_action_that_differs_by_a_boolean_for_a_number_is_undeclared(declared, sent):
    # JavaScript compares with ===: true is not 1, so the crafted action is not the declared one.
    doc = _set_button_document({"expr": {"op": "concat", "args": ["x", declared]}})
    with pytest.raises(UIActionError) as caught:
        dispatch_local_action(doc, initial_state(doc), _concat_action(sent))
    assert caught.value.code == "undeclared"


def test_an_action_sent_with_1_0_for_1_is_the_declared_one():
    doc = _set_button_document({"expr": {"op": "concat", "args": ["x", 1]}})
    assert dispatch_local_action(doc, initial_state(doc), _concat_action(1.0)) == {"s": "x1"}


def test_an_action_whose_string_holds_the_utf16_halves_of_the_declared_character_is_declared():
    # In JavaScript "\ud83d\ude00" and "😀" are the same string; the declared copy is what runs.
    doc = _set_button_document("😀")
    sent = {"type": "set", "key": "s", "value": "\ud83d\ude00"}
    assert dispatch_local_action(doc, initial_state(doc), sent) == {"s": "😀"}
