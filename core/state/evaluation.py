"""Resolving component values against a state (seed 000 §3, §8).

`resolve_document_value` computes only the derived fields the value needs, so a failing
derived field elsewhere does not block an unrelated value or a `reset` button.  A value of
anything but the exact JSON types is refused before it is looked into (`unsafe_json`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from core.document.model import DocumentModel, document_model
from core.errors import UIExpressionError, UIStateError
from core.expression.language import evaluate, evaluate_expression
from core.json._frozen import OBJECT_KINDS, FrozenDict
from core.json.safe import json_type_problem
from core.state.values import assert_state_for


def _unwrap(value: Any) -> Any:
    problem = json_type_problem(value)
    if problem:
        raise UIExpressionError(f"the value is not plain JSON: {problem}", code="unsafe_json")
    if type(value) in OBJECT_KINDS:
        if len(value) != 1 or "expr" not in value:
            raise UIExpressionError('a dynamic value must be written as {"expr": <expression>}')
        return value["expr"]
    return value


class _LazyDerived:
    """Evaluates each needed derived field once, on demand.

    A class rather than a recursive closure: a closure that refers to itself is a reference
    cycle, and workers freeze their heap on the premise that core makes none.
    """

    __slots__ = ("_memo", "_model", "_state")

    def __init__(self, model: DocumentModel, state: Mapping[str, Any]) -> None:
        self._model = model
        self._state = state
        self._memo: dict[str, Any] = {}

    def __call__(self, key: str) -> Any:
        if key in self._memo:
            return self._memo[key]
        if key not in self._model.derived:
            raise UIExpressionError("derived value is not declared")
        self._memo[key] = evaluate(self._model.derived[key], self._state, self)
        return self._memo[key]


def lazy_derived(model: DocumentModel, state: Mapping[str, Any]) -> Callable[[str], Any]:
    """A derived-value lookup that evaluates each needed field once, on demand."""
    return _LazyDerived(model, state)


def evaluate_derived(document: Any, state: Any) -> FrozenDict:
    """Every derived field at `state` (each computed once); raises on the first failure."""
    model = document_model(document)
    _valid_state(model, state)
    lookup = lazy_derived(model, state)
    return FrozenDict({key: lookup(key) for key in model.derived})


def resolve_value(value: Any, state: Any, derived: Any) -> Any:
    """A component Value (scalar or {expr}) with already computed derived values."""
    return evaluate_expression(_unwrap(value), state, derived)


def resolve_document_value(document: Any, state: Any, value: Any) -> Any:
    """A component Value, computing only the derived fields it depends on."""
    model = document_model(document)
    _valid_state(model, state)
    return evaluate(_unwrap(value), state, lazy_derived(model, state))


def _valid_state(model: DocumentModel, state: Any) -> None:
    try:
        assert_state_for(model, state)
    except UIStateError as error:
        raise UIExpressionError(f"invalid state: {error.message}") from None
