"""Static rules of actions: local `reset`/`set`, v1.1 `invoke`, and v1.1 action definitions.

A `set` value is evaluated at the initial state and must pass the field's full check,
including its Select domain; since domains are known only after the whole tree is
walked, that last check is deferred.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.document._checker import Checker
from core.errors import Place
from core.expression.language import BOOL, NUM, STR
from core.limits import UI_PROTOCOL_LIMITS

_RESET_KEYS = frozenset({"type"})
_SET_KEYS = frozenset({"type", "key", "value"})
_INVOKE_KEYS = frozenset({"type", "actionId"})
_TOOL_KEYS = frozenset({"kind", "capabilityId", "arguments", "resultMap"})
_AGENT_KEYS = frozenset({"kind", "prompt"})
_FIELD_BITS = {"number": NUM, "string": STR, "boolean": BOOL}


def check_ui_action(check: Checker, action: Any, place: Place) -> None:
    """A Button's or Form's action: reset, set, or (v1.1) invoke."""
    if not check.mapping(action, place, "action"):
        return
    kind = action.get("type")
    if kind == "reset":
        check.closed(action, _RESET_KEYS, place)
    elif kind == "set":
        _check_set(check, action, place)
    elif kind == "invoke" and check.version == "1.1":
        check.closed(action, _INVOKE_KEYS, place)
        if check.required(action, ("actionId",), place):
            target = action["actionId"]
            if type(target) is not str or check.actions is None or target not in check.actions:
                check.add(place / "actionId", "must name an action declared in actions", "unknown_reference")
    elif kind == "invoke":
        check.add(place / "type", "invoke actions need document version 1.1", "version")
    else:
        check.add(place / "type",
                  "must be one of 'reset' | 'set'" + (" | 'invoke'" if check.version == "1.1" else ""), "enum")


def _check_set(check: Checker, action: Mapping[str, Any], place: Place) -> None:
    check.closed(action, _SET_KEYS, place)
    if not check.required(action, ("key", "value"), place):
        return
    key = action["key"]
    if type(key) is not str or key not in check.fields:
        check.add(place / "key", "must name a declared state field", "unknown_reference")
        return
    bits, default = check.value(action["value"], place / "value", _FIELD_BITS[check.fields[key].kind])
    if bits:
        check.deferred.append(lambda checker: _check_set_default(checker, key, default, place / "value"))


def _check_set_default(check: Checker, key: str, default: Any, place: Place) -> None:
    if default is None:
        return  # its evaluation failure is already reported
    problem = check.fields[key].problem(default)
    if problem:
        check.add(place, f"at the initial state the {key} field rejects this: {problem}", "default_evaluation")


def check_action_definitions(check: Checker, value: Any, place: Place) -> dict[str, Any]:
    """The v1.1 `actions` dictionary: tool and agent definitions."""
    definitions = {}
    for key, definition, where in check.keyed(value, place, UI_PROTOCOL_LIMITS["maxActions"], "actions"):
        if not check.mapping(definition, where, "action definition"):
            continue
        kind = definition.get("kind")
        if kind == "tool":
            _check_tool(check, definition, where)
        elif kind == "agent":
            _check_agent(check, definition, where)
        else:
            check.add(where / "kind", "must be one of 'tool' | 'agent'", "enum")
        definitions[key] = definition
    return definitions


def _check_tool(check: Checker, definition: Mapping[str, Any], place: Place) -> None:
    check.closed(definition, _TOOL_KEYS, place)
    if not check.required(definition, ("capabilityId", "arguments"), place):
        return
    check.identifier(definition["capabilityId"], place / "capabilityId")
    limit = UI_PROTOCOL_LIMITS["maxActionArguments"]
    for _, argument, where in check.keyed(definition["arguments"], place / "arguments", limit, "arguments"):
        if isinstance(argument, (dict, list)) and not (isinstance(argument, dict) and "expr" in argument):
            check.add(where, "arguments are flat scalars or {\"expr\": ...}; no objects or arrays", "type")
            continue
        check.value(argument, where, NUM | STR | BOOL, evaluate=False)
    if "resultMap" in definition:
        _check_result_map(check, definition["resultMap"], place / "resultMap")


def _check_result_map(check: Checker, value: Any, place: Place) -> None:
    limit = UI_PROTOCOL_LIMITS["maxActionResultFields"]
    for key, field_name, where in check.keyed(value, place, limit, "resultMap"):
        if key not in check.fields:
            check.add(place, "resultMap keys must be declared state fields", "undeclared_result_key")
        elif not check.identifier(field_name, where):
            continue


def _check_agent(check: Checker, definition: Mapping[str, Any], place: Place) -> None:
    check.closed(definition, _AGENT_KEYS, place)
    if not check.required(definition, ("prompt",), place):
        return
    bits, default = check.value(definition["prompt"], place / "prompt", STR)
    if bits and default == "":
        check.add(place / "prompt", "the agent prompt must not be empty at the initial state", "empty_prompt")
