"""Expression evaluation with exact JavaScript semantics, and junk never leaks Python errors."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import UIExpressionError
from core.expression.language import evaluate_expression


def ev(expr, state=None, derived=None):
    return evaluate_expression(expr, state or {}, derived)


def op(name, *args):
    return {"op": name, "args": list(args)}


@pytest.mark.parametrize("value,text", [
    (1.0, "1"), (-0.0, "0"), (1e15, "1000000000000000"), (1e-7, "1e-7"), (0.000001, "0.000001"),
    (123456789012345.6, "123456789012345.6"), (None, ""), (True, "true"), (False, "false"), ("x", "x"),
])
def test_concat_prints_numbers_as_javascript_string(value, text):
    assert ev(op("concat", "<", value, ">")) == f"<{text}>"


def test_concat_of_point_one_plus_point_two():
    assert ev(op("concat", op("add", 0.1, 0.2))) == "0.30000000000000004"


@pytest.mark.parametrize("args,expected", [
    ((2.5,), 3), ((-2.5,), -3), ((1.005, 2), 1), ((0.5,), 1), ((-0.5,), -1), ((1.255, 2), 1.25), ((8.345, 2), 8.35),
])
def test_round_is_number_of_to_fixed(args, expected):
    assert ev(op("round", *args)) == expected


@pytest.mark.parametrize("expr", [
    op("pow", -8, op("div", 1, 3)),      # NaN in JavaScript
    op("pow", 0, -1),                      # Infinity
    op("pow", 10, 16),                     # beyond 1e15
    op("div", 1, 0),
    op("mul", 1e15, 10),
    op("add", 1e15, 1e15),
    op("round", 1.5, 7),
    op("round", 1.5, 0.5),
    op("concat", "x" * 4000, "y" * 97),
])
def test_failures_raise_expression_errors(expr):
    with pytest.raises(UIExpressionError):
        ev(expr)


def test_concat_limit_counts_utf16_units():
    assert len(ev(op("concat", "😀" * 2048))) == 2048
    with pytest.raises(UIExpressionError):
        ev(op("concat", "😀" * 2048, "a"))


def test_concat_joins_two_surrogate_halves_into_one_character_as_javascript_does():
    assert ev(op("concat", "\ud83d", "\ude00")) == "😀"
    assert ev(op("eq", op("concat", "\ud83d", "\ude00"), "😀")) is True
    assert ev(op("concat", "a\ud83d", "b")) == "a\ud83db"  # a lone half stays what it is
    assert ev(op("concat", "\ude00", "\ud83d")) == "\ude00\ud83d"  # a low half first pairs with nothing


def test_eq_compares_strings_by_utf16_code_units():
    assert ev(op("eq", "\ud83d\ude00", "😀")) is True


def test_eq_is_strict():
    assert ev(op("eq", 1, 1.0)) is True
    assert ev(op("eq", 1, "1")) is False
    assert ev(op("eq", 1, True)) is False
    assert ev(op("eq", None, None)) is True


def test_booleans_are_never_numbers():
    with pytest.raises(UIExpressionError):
        ev(op("add", True, 1))
    with pytest.raises(UIExpressionError):
        ev(op("add", {"state": "flag"}, 1), {"flag": True})


def test_and_or_if_evaluate_lazily():
    failing = op("gt", op("div", 1, 0), 0)
    assert ev(op("and", False, failing)) is False
    assert ev(op("or", True, failing)) is True
    assert ev(op("if", True, 1, op("div", 1, 0))) == 1
    with pytest.raises(UIExpressionError):
        ev(op("and", True, failing))


def test_integral_results_are_ints_as_javascript_prints_them():
    assert repr(ev(op("pow", 3, 2))) == "9"
    assert repr(ev(op("div", 6, 3))) == "2"


def test_min_and_max_give_integral_results_as_ints_and_no_negative_zero():
    """JSON.stringify(Math.max(-0, 0)) and of Math.min(0, -0) are both "0"; a state's 2.0 is 2."""
    assert repr(ev(op("max", -0.0, 0))) == "0" and repr(ev(op("min", 0, -0.0))) == "0"
    assert repr(evaluate_expression(op("max", {"state": "x"}, 1), {"x": 2.0}, {})) == "2"
    assert repr(evaluate_expression(op("min", {"state": "x"}, 3), {"x": 2.5}, {})) == "2.5"


def test_references_use_state_and_given_derived_values():
    assert ev(op("add", {"state": "a"}, {"derived": "d"}), {"a": 1}, {"d": 2}) == 3
    with pytest.raises(UIExpressionError):
        ev({"derived": "missing"}, {}, {})
    with pytest.raises(UIExpressionError):
        ev({"state": "missing"}, {})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["op", "args", "state", "derived", "x"]), inner, max_size=3),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values, st.dictionaries(st.text(max_size=3), json_values, max_size=3))
def test_junk_expressions_only_raise_expression_errors(expr, state):
    with contextlib.suppress(UIExpressionError):
        ev(expr, state)


def test_deep_junk_does_not_recurse_without_bound():
    expr: object = 1
    for _ in range(5000):
        expr = op("add", expr, 1)
    with pytest.raises(UIExpressionError):
        ev(expr)
