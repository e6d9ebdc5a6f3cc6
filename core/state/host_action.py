"""Host actions of v1.1 (seed 000 §11): resolving a click and applying a trusted result.

`resolve_ui_action` only computes what the host needs (a tool action's flat scalar
arguments or an agent action's prompt) from a validated document and a valid state; it
never executes or authorizes anything.  `apply_action_result` maps public scalar result
fields through `resultMap` into state atomically: every mapped value passes the field's
full check and the whole-state budget, or nothing changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.document.model import DocumentModel, document_model
from core.errors import UIActionError, UISchemaError, UIStateError
from core.expression.language import evaluate
from core.json._frozen import CONTAINER_KINDS, OBJECT_KINDS, FrozenDict
from core.json._text import utf16_length
from core.json.safe import json_byte_size
from core.limits import UI_PROTOCOL_LIMITS
from core.remote.records import parse_ui_action_result
from core.state.evaluation import lazy_derived
from core.state.values import assert_state_for, update_state_many

MAX_ARGUMENTS = UI_PROTOCOL_LIMITS["maxActionArguments"]
MAX_ARGUMENT_BYTES = UI_PROTOCOL_LIMITS["maxActionArgumentBytes"]
MAX_PROMPT = UI_PROTOCOL_LIMITS["maxAgentPromptLength"]


def _definition(model: DocumentModel, state: Any, action_id: Any) -> Mapping[str, Any]:
    if type(action_id) is not str or action_id not in model.actions:
        raise UIActionError("the action is not declared by this document", code="unknown_action")
    try:
        assert_state_for(model, state)
    except UIStateError as error:
        raise UIActionError(f"invalid state: {error.message}", code="invalid_state") from None
    definition: Mapping[str, Any] = model.actions[action_id]
    return definition


def _resolve(value: Any, state: Mapping[str, Any], model: DocumentModel) -> Any:
    if type(value) in OBJECT_KINDS:  # a run-time failure is a UIExpressionError (seed 000 §8)
        return evaluate(value.get("expr"), state, lazy_derived(model, state))
    return value


def resolve_ui_action(document: Any, state: Any, action_id: Any) -> FrozenDict:
    """The tool arguments or agent prompt of a declared action at `state`."""
    model = document_model(document)
    definition = _definition(model, state, action_id)
    if definition["kind"] == "agent":
        prompt = _resolve(definition["prompt"], state, model)
        if type(prompt) is not str or not prompt or utf16_length(prompt) > MAX_PROMPT:
            raise UIActionError(f"the agent prompt must be a non-empty string of at most {MAX_PROMPT} "
                                "UTF-16 code units", code="prompt")
        return FrozenDict({"kind": "agent", "actionId": action_id, "prompt": prompt})
    arguments = {key: _resolve(value, state, model) for key, value in definition["arguments"].items()}
    _check_arguments(arguments)
    return FrozenDict({"kind": "tool", "actionId": action_id, "capabilityId": definition["capabilityId"],
                       "arguments": FrozenDict(arguments)})


def _check_arguments(arguments: Mapping[str, Any]) -> None:
    if len(arguments) > MAX_ARGUMENTS:
        raise UIActionError(f"more than {MAX_ARGUMENTS} arguments", code="arguments")
    for key, value in arguments.items():
        if value is None or type(value) in CONTAINER_KINDS:
            raise UIActionError(f"argument {key} must be a string, number or boolean", code="arguments")
    size = json_byte_size(arguments)
    if size > MAX_ARGUMENT_BYTES:
        raise UIActionError(f"arguments are {size} bytes; the limit is {MAX_ARGUMENT_BYTES}", code="arguments")


def apply_action_result(document: Any, state: Any, action_id: Any, result: Any) -> FrozenDict:
    """The state after mapping a trusted result through the action's resultMap (atomic)."""
    model = document_model(document)
    definition = _definition(model, state, action_id)
    if definition["kind"] != "tool":
        raise UIActionError("agent actions have no resultMap", code="agent_result")
    try:
        public = parse_ui_action_result(result)
    except UISchemaError as error:
        raise UIActionError(f"invalid action result: {error.message}", code="result") from None
    mapping = definition.get("resultMap", {})
    missing = [field for field in mapping.values() if field not in public]
    if missing:
        raise UIActionError("the result lacks a field named in resultMap", code="missing_result_field")
    values = {key: public[field] for key, field in mapping.items()}
    try:
        return update_state_many(document, state, values)
    except UIStateError as rejected:  # its own name: mypyc types a name once per function
        raise UIActionError(f"result rejected, state unchanged: {rejected.message}", code="result_value") from None
