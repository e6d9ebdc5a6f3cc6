"""Document header rules: state declarations and derived expressions (seed 000 §3-4).

Derived fields may reference each other in any declaration order; references are
collected first, cycles found with an iterative depth-first search, then each
expression is type-checked in dependency order and evaluated at the initial state.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from core.document._checker import Checker, DerivedFailure
from core.document._fields import (
    BooleanField,
    Field,
    NumberField,
    StringField,
    grid_is_countable,
)
from core.errors import ROOT, Place, UIExpressionError
from core.expression.language import evaluate
from core.json._number import is_plain_safe_number
from core.limits import DERIVED_EVALUATION_DEPTH, UI_LIMITS

_NUMBER_KEYS = frozenset({"type", "initial", "min", "max", "step"})
_STRING_KEYS = frozenset({"type", "initial", "maxLength"})
_BOOLEAN_KEYS = frozenset({"type", "initial"})
MAX_STRING = UI_LIMITS["maxStringLength"]


def check_state(check: Checker, value: Any, place: Place = ROOT / "state") -> dict[str, Field]:
    """Parse the `state` declarations into fields, reporting every problem."""
    fields: dict[str, Field] = {}
    for key, declaration, where in check.keyed(value, place, UI_LIMITS["maxStateFields"], "state"):
        if not check.mapping(declaration, where, "state declaration"):
            continue
        parsed = _declaration(check, declaration, where)
        if parsed is not None:
            fields[key] = parsed
    return fields


def _declaration(check: Checker, declaration: Mapping[str, Any], place: Place) -> Field | None:
    kind = declaration.get("type")
    if kind == "number":
        return _number_field(check, declaration, place)
    if kind == "string":
        return _string_field(check, declaration, place)
    if kind == "boolean":
        check.closed(declaration, _BOOLEAN_KEYS, place)
        if check.required(declaration, ("initial",), place):
            if declaration["initial"] is True or declaration["initial"] is False:
                return BooleanField(declaration["initial"])
            check.add(place / "initial", "must be a boolean", "type")
        return None
    check.add(place / "type", "must be one of 'number' | 'string' | 'boolean'", "enum")
    return None


def _number_field(check: Checker, declaration: Mapping[str, Any], place: Place) -> NumberField | None:
    check.closed(declaration, _NUMBER_KEYS, place)
    ok = check.required(declaration, ("initial",), place)
    for name in ("initial", "min", "max", "step"):
        if name in declaration and not check.number(declaration[name], place / name):
            ok = False
    if not ok:
        return None
    low, high, step = declaration.get("min"), declaration.get("max"), declaration.get("step")
    if low is not None and high is not None and low > high:
        check.add(place / "max", "max must not be below min", "range")
        return None
    if step is not None and step <= 0:
        check.add(place / "step", "step must be greater than 0", "range")
        return None
    if step is not None and not grid_is_countable(step):
        check.add(place / "step", "step is too small: values within 1e15 cannot be counted in steps",
                  "step_too_small")
        return None
    field = NumberField(declaration["initial"], low, high, step)
    problem = field.problem(declaration["initial"])
    if problem:
        check.add(place / "initial", problem, "initial_value")
        return None
    return field


def _string_field(check: Checker, declaration: Mapping[str, Any], place: Place) -> StringField | None:
    check.closed(declaration, _STRING_KEYS, place)
    if not check.required(declaration, ("initial",), place):
        return None
    limit = declaration.get("maxLength", MAX_STRING)
    if type(limit) is bool or not is_plain_safe_number(limit) or limit != int(limit) or not 1 <= limit <= MAX_STRING:
        check.add(place / "maxLength", f"maxLength must be an integer from 1 to {MAX_STRING}", "range")
        return None
    if not check.text(declaration["initial"], place / "initial", 0, int(limit)):
        return None
    return StringField(declaration["initial"], int(limit))


# ---------------------------------------------------------------- derived

def check_derived(check: Checker, value: Any, place: Place = ROOT / "derived") -> dict[str, Any]:
    """Check derived expressions (cycles, types) and compute their initial values."""
    entries = {key: (expr, where) for key, expr, where in
               check.keyed(value, place, UI_LIMITS["maxDerivedFields"], "derived")}
    order, cyclic = _dependency_order({key: set(_references(expr)) for key, (expr, _) in entries.items()})
    for key in cyclic:
        check.derived_types[key] = 0
        check.failed_derived.add(key)
        check.add(entries[key][1], "derived values must not form a cycle (this one is on or depends on one)",
                  "derived_cycle")
    totals: dict[str, int] = {}
    for key in order:
        expr, where = entries[key]
        before = len(check.issues)
        bits = check.expression(expr, where)
        check.derived_types[key] = bits
        if bits and len(check.issues) == before:
            totals[key] = _evaluation_depth(expr, totals)
            if totals[key] > DERIVED_EVALUATION_DEPTH:
                check.add(where, f"evaluating this derived value nests deeper than {DERIVED_EVALUATION_DEPTH}"
                                 " levels through the derived values it reads", "derived_depth")
                check.failed_derived.add(key)
                continue
            _evaluate_default(check, key, expr, where)
        else:
            check.failed_derived.add(key)
    return {key: expr for key, (expr, _) in entries.items()}


def _evaluation_depth(expr: Any, totals: Mapping[str, int]) -> int:
    """Levels `evaluate` nests for `expr`, counting each derived value read at its own depth."""
    deepest = 0
    stack = [(expr, 1)]
    while stack:
        node, depth = stack.pop()
        level = depth
        if isinstance(node, dict):
            ref = node.get("derived")
            if len(node) == 1 and type(ref) is str:
                level = depth + totals.get(ref, 0)
            elif isinstance(node.get("args"), list):
                stack.extend((arg, depth + 1) for arg in node["args"])
        deepest = max(deepest, level)
    return deepest


def _evaluate_default(check: Checker, key: str, expr: Any, place: Place) -> None:
    try:
        check.defaults[key] = evaluate(expr, check.initial, check.derived_default)
    except DerivedFailure:
        check.failed_derived.add(key)
    except UIExpressionError as error:
        check.failed_derived.add(key)
        check.add(place, f"fails at the initial state: {error}", "default_evaluation")


def _references(expr: Any) -> Iterator[str]:
    """Every derived key referenced anywhere inside `expr` (iterative, junk-safe)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("derived")
            if len(node) == 1 and type(ref) is str:
                yield ref
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


_VISITING, _DONE, _CYCLIC = 1, 2, 3


def _dependency_order(graph: dict[str, set[str]]) -> tuple[list[str], list[str]]:
    """Keys in dependency order, and the keys on or behind a cycle (iterative DFS)."""
    state: dict[str, int] = {}
    order: list[str] = []
    for start in graph:
        if start in state:
            continue
        state[start] = _VISITING
        stack = [(start, iter(sorted(graph[start] & graph.keys())))]
        while stack:
            key, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                if state[key] == _VISITING:
                    state[key] = _DONE
                    order.append(key)
                elif stack:  # behind a cycle: so is every caller on the stack
                    state[stack[-1][0]] = _CYCLIC
                continue
            seen = state.get(child)
            if seen is None:
                state[child] = _VISITING
                stack.append((child, iter(sorted(graph[child] & graph.keys()))))
            elif seen == _VISITING:
                keys = [k for k, _ in stack]
                for entry in keys[keys.index(child):]:
                    state[entry] = _CYCLIC
            elif seen == _CYCLIC:
                state[key] = _CYCLIC
    return order, [key for key in graph if state.get(key) == _CYCLIC]
