"""`freeze`: deep-immutable copies of decoded JSON, as JavaScript sees the numbers."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.json._frozen import FrozenDict, FrozenList, freeze, freeze_json, thaw

_SCALARS = st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text(max_size=8) | st.floats(
    allow_nan=False, allow_infinity=False) | st.sampled_from([1.0, -0.0, 2.0**53, 2.0**53 + 2, -(2.0**53), 1e300])
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=4), inner, max_size=4), max_leaves=30)


def _reference(value: Any) -> Any:
    """What `freeze` must return, written plainly: containers frozen, integral floats within
    2**53 as ints, everything else as it is."""
    if isinstance(value, FrozenDict | FrozenList):
        return value
    if isinstance(value, dict):
        return FrozenDict({key: _reference(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return FrozenList([_reference(item) for item in value])
    if type(value) is float and value.is_integer() and abs(value) <= 2.0**53:
        return int(value)
    return value


def _same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (1 == 1.0 and True == 1 would hide a change)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


@settings(max_examples=400, deadline=None)
@given(_JSON)
def test_freeze_is_the_reference_copy_type_for_type(value: Any) -> None:
    assert _same(freeze(value), _reference(value))


@settings(max_examples=200, deadline=None)
@given(_JSON)
def test_thaw_of_freeze_is_mutable_and_equal(value: Any) -> None:
    thawed = thaw(freeze(value))
    assert thawed == _reference(value)
    assert all(type(part) in (dict, list) for part in _containers(thawed))


def _containers(value: Any) -> list[Any]:
    found, stack = [], [value]
    while stack:
        each = stack.pop()
        if isinstance(each, dict):
            found.append(each)
            stack.extend(each.values())
        elif isinstance(each, list):
            found.append(each)
            stack.extend(each)
    return found


def test_integral_floats_become_ints_as_javascript_prints_them() -> None:
    frozen = freeze({"a": 1.0, "b": -0.0, "c": [2.0**53, 2.0**53 + 2, 0.5], "d": True})
    assert _same(frozen, FrozenDict({"a": 1, "b": 0, "c": FrozenList([2**53, 2.0**53 + 2, 0.5]), "d": True}))


def test_frozen_parts_are_reused_not_copied() -> None:
    inner = freeze({"x": [1, 2]})
    outer = freeze({"inner": inner, "list": [inner]})
    assert outer["inner"] is inner and outer["list"][0] is inner
    assert freeze(outer) is outer


def test_tuples_and_dict_subclasses_are_frozen_too() -> None:
    sub = type("Sub", (dict,), {})(a=(1.0, [2]))
    assert _same(freeze(sub), FrozenDict({"a": FrozenList([1, FrozenList([2])])}))
    assert _same(freeze((1, 2.0)), FrozenList([1, 2]))


@pytest.mark.parametrize("mutate", [
    lambda d: d.__setitem__("k", 1), lambda d: d.update(k=1), lambda d: d.pop("a"),
    lambda d: d["list"].append(1), lambda d: d["list"].__setitem__(0, 2), lambda d: d["nested"].clear(),
])
def test_every_level_refuses_mutation(mutate: Any) -> None:
    frozen = freeze({"a": 1, "list": [1], "nested": {"b": 2}})
    with pytest.raises(TypeError, match="immutable"):
        mutate(frozen)
    assert frozen == {"a": 1, "list": [1], "nested": {"b": 2}}


# -- freeze_json: a stored value taken back without a validating walk ------------------------------

_STORED = st.recursive(st.none() | st.booleans() | st.integers(-(10**15), 10**15) | st.text(max_size=8) | st.floats(
    min_value=-1e15, max_value=1e15, allow_nan=False) | st.sampled_from([1.0, -0.0, 1e15, -1e15, 0.5]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=30)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    return 0


@given(_STORED)
@settings(max_examples=300, deadline=None)
def test_freeze_json_of_stored_json_is_freeze_type_for_type(value: Any) -> None:
    frozen = freeze_json(value, _depth(value))
    assert _same(frozen, freeze(value))


@pytest.mark.parametrize(("value", "depth"), [
    ({"a": "\ud800"}, 5), (["ok", "\udfff"], 5), ("\ud800", 5), ({"a": ["x", {"b": "\ud83d"}]}, 5),
    ({1: "x"}, 5), ({"a": {None: 1}}, 5),
    ({"a": 10**15 + 1}, 5), ([-(10**15) - 1], 5), ({"a": 1e16}, 5), ([float("nan")], 5), ([float("inf")], 5),
    ({"a": (1, 2)}, 5), ([{1, 2}], 5), ({"a": b"x"}, 5), ([FrozenDict()], 5), ({"a": FrozenList()}, 5),
    (object(), 5), ({"a": {"b": {}}}, 2), ([[[]]], 2), ({}, 0), ([], 0),
])
def test_freeze_json_refuses_what_no_decoded_json_within_the_depth_is(value: Any, depth: int) -> None:
    with pytest.raises(ValueError):
        freeze_json(value, depth)


def test_freeze_json_takes_valid_non_ascii_text_and_the_depth_bound_exactly() -> None:
    value = {"a": ["é😀", {"b": "中文"}]}
    assert freeze_json(value, 3) == value and type(freeze_json(value, 3)["a"][1]) is FrozenDict
    with pytest.raises(ValueError):
        freeze_json(value, 2)
