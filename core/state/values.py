"""Runtime state helpers (seed 000 §4): initial, update, restore and validity checks.

A state is a JSON object with exactly the declared fields.  `update_state` is atomic: it
returns a new immutable mapping or raises `UIStateError`, never touching the old one.
`restore_state` never raises on junk input: it keeps only declared, valid saved fields.
A state (or saved state) of anything but the exact JSON types is refused before any key of
it is looked up (`unsafe_json`): a subclass's `__eq__` or `__hash__` could answer anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.document.model import DocumentModel, document_model
from core.errors import UISchemaError, UIStateError
from core.json._frozen import OBJECT_KINDS, FrozenDict, freeze
from core.json.safe import json_byte_size, json_type_problem
from core.limits import UI_LIMITS

MAX_STATE_BYTES = UI_LIMITS["maxStateBytes"]


def initial_state(document: Any) -> FrozenDict:
    """Every declared field at its initial value."""
    return document_model(document).initial


def state_byte_size(state: Mapping[str, Any]) -> int:
    """JSON bytes of a state whose values are valid scalars."""
    try:
        return json_byte_size(state)
    except UISchemaError as error:
        raise UIStateError(f"state is not serializable JSON: {error.message}") from None


def check_state_value(model: DocumentModel, key: Any, value: Any) -> None:
    """Raise UIStateError unless `value` may be written to field `key`."""
    if type(key) is not str or key not in model.fields:
        raise UIStateError("unknown state field", code="unknown_field")
    problem = model.fields[key].problem(value)
    if problem:
        raise UIStateError(f"{key}: {problem}", code="invalid_value")


def assert_valid_state(document: Any, state: Any) -> None:
    """Raise UIStateError unless `state` holds exactly the declared fields, all valid."""
    assert_state_for(document_model(document), state)


def assert_state_for(model: DocumentModel, state: Any) -> None:
    """`assert_valid_state` against an already parsed model (the shared runtime check)."""
    if type(state) not in OBJECT_KINDS:
        raise UIStateError("state must be an object")
    problem = json_type_problem(state)
    if problem:
        raise UIStateError(f"state is not plain JSON: {problem}", code="unsafe_json")
    if len(state) != len(model.fields) or any(key not in state for key in model.fields):
        raise UIStateError("state must contain exactly the declared fields", code="fields")
    for key, value in state.items():
        check_state_value(model, key, value)
    _assert_budget(state)


def _assert_budget(state: Mapping[str, Any]) -> None:
    size = state_byte_size(state)
    if size > MAX_STATE_BYTES:
        raise UIStateError(f"state is {size} bytes; the limit is {MAX_STATE_BYTES}", code="too_large")


def update_state(document: Any, state: Any, key: Any, value: Any) -> FrozenDict:
    """A new state with `key` set to `value`, or UIStateError; the old state is untouched."""
    model = document_model(document)
    assert_state_for(model, state)
    check_state_value(model, key, value)
    candidate = FrozenDict({**state, key: freeze(value)})  # 2.0 kept as 2, as JavaScript writes it
    _assert_budget(candidate)
    return candidate


def update_state_many(document: Any, state: Any, values: dict[str, Any]) -> FrozenDict:
    """Apply several field writes atomically: all pass or none does."""
    model = document_model(document)
    assert_state_for(model, state)
    written: dict[str, Any] = {}
    for key, value in values.items():
        check_state_value(model, key, value)
        written[key] = freeze(value)
    candidate = FrozenDict({**state, **written})
    _assert_budget(candidate)
    return candidate


def restore_state(document: Any, saved: Any) -> FrozenDict:
    """Defaults, overlaid with the saved fields that are declared and valid; never raises on junk."""
    model = document_model(document)
    if type(saved) not in OBJECT_KINDS or json_type_problem(saved):
        return model.initial  # looking a key up in it could run a subclass's own code
    restored = dict(model.initial)
    for key, field in model.fields.items():
        if key in saved and field.problem(saved[key]) is None:
            restored[key] = freeze(saved[key])
    candidate = FrozenDict(restored)
    try:
        _assert_budget(candidate)
    except UIStateError:
        return model.initial
    return candidate
