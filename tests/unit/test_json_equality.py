"""`json_equal`: JSON values compared as JavaScript's `===` compares them, element by element."""

from __future__ import annotations

from typing import Any

import pytest

from core.json._equality import json_equal
from core.json._frozen import freeze


@pytest.mark.parametrize(("a", "b"), [
    (1, 1.0), (0, -0.0), ("😀", "\ud83d\ude00"), ({"😀": 1}, {"\ud83d\ude00": 1.0}),
    ([1, "a", None, {"k": [True]}], [1.0, "a", None, {"k": [True]}]), ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
])
def test_values_javascript_calls_the_same_are_equal(a: Any, b: Any) -> None:
    assert json_equal(a, b) and json_equal(b, a)
    assert json_equal(freeze(a), b)


@pytest.mark.parametrize(("a", "b"), [
    (True, 1), (False, 0), (False, 0.0), (None, 0), ("1", 1), ([True], [1]), ({"a": False}, {"a": 0}),
    ({"a": 1}, {"b": 1}), ([1], [1, 1]), ({"a": 1}, [1]), ("\ud83d", "\ude00"), (1, 1 + 2**-52),
])
def test_values_javascript_tells_apart_differ(a: Any, b: Any) -> None:
    assert not json_equal(a, b) and not json_equal(b, a)


def test_a_value_that_is_not_json_equals_nothing_but_itself() -> None:
    marker = object()
    assert not json_equal(marker, object()) and json_equal(marker, marker)
