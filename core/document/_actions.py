"""Static rules of actions: local `reset`/`set`, v1.1 `invoke`, and v1.1 action definitions.

A `set` value is evaluated at the initial state and must pass the field's full check,
including its Select domain; since domains are known only after the whole tree is
walked, that last check is deferred.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.document._checker import Checker
from core.expression.language import BOOL, NUM, STR
from core.limits import UI_PROTOCOL_LIMITS

_RESET_KEYS = frozenset({"type"})
_SET_KEYS = frozenset({"type", "key", "value"})
_INVOKE_KEYS = frozenset({"type", "actionId"})
_TOOL_KEYS = frozenset({"kind", "capabilityId", "arguments", "resultMap"})
_AGENT_KEYS = frozenset({"kind", "prompt"})
_FIELD_BITS = {"number": NUM, "string": STR, "boolean": BOOL}


def check_ui_action(check: Checker, action: Any, path: str) -> None:
    """A Button's or Form's action: reset, set, or (v1.1) invoke."""
    if not check.mapping(action, path, "action"):
        return
    kind = action.get("type")
    if kind == "reset":
        check.closed(action, _RESET_KEYS, path)
    elif kind == "set":
        _check_set(check, action, path)
    elif kind == "invoke" and check.version == "1.1":
        check.closed(action, _INVOKE_KEYS, path)
        if check.required(action, ("actionId",), path):
            target = action["actionId"]
            if type(target) is not str or check.actions is None or target not in check.actions:
                check.add(path + "/actionId", "must name an action declared in actions", "unknown_reference")
    elif kind == "invoke":
        check.add(path + "/type", "invoke actions need document version 1.1", "version")
    else:
        check.add(path + "/type",
                  "must be one of 'reset' | 'set'" + (" | 'invoke'" if check.version == "1.1" else ""), "enum")


def _check_set(check: Checker, action: Mapping[str, Any], path: str) -> None:
    check.closed(action, _SET_KEYS, path)
    if not check.required(action, ("key", "value"), path):
        return
    key = action["key"]
    if type(key) is not str or key not in check.fields:
        check.add(path + "/key", "must name a declared state field", "unknown_reference")
        return
    bits, default = check.value(action["value"], path + "/value", _FIELD_BITS[check.fields[key].kind])
    if bits:
        check.deferred.append(lambda checker: _check_set_default(checker, key, default, path + "/value"))


def _check_set_default(check: Checker, key: str, default: Any, path: str) -> None:
    if default is None:
        return  # its evaluation failure is already reported
    problem = check.fields[key].problem(default)
    if problem:
        check.add(path, f"at the initial state the {key} field rejects this: {problem}", "default_evaluation")


def check_action_definitions(check: Checker, value: Any, path: str) -> dict[str, Any]:
    """The v1.1 `actions` dictionary: tool and agent definitions."""
    definitions = {}
    for key, definition, where in check.keyed(value, path, UI_PROTOCOL_LIMITS["maxActions"], "actions"):
        if not check.mapping(definition, where, "action definition"):
            continue
        kind = definition.get("kind")
        if kind == "tool":
            _check_tool(check, definition, where)
        elif kind == "agent":
            _check_agent(check, definition, where)
        else:
            check.add(where + "/kind", "must be one of 'tool' | 'agent'", "enum")
        definitions[key] = definition
    return definitions


def _check_tool(check: Checker, definition: Mapping[str, Any], path: str) -> None:
    check.closed(definition, _TOOL_KEYS, path)
    if not check.required(definition, ("capabilityId", "arguments"), path):
        return
    check.identifier(definition["capabilityId"], path + "/capabilityId")
    limit = UI_PROTOCOL_LIMITS["maxActionArguments"]
    for _, argument, where in check.keyed(definition["arguments"], path + "/arguments", limit, "arguments"):
        if isinstance(argument, (dict, list)) and not (isinstance(argument, dict) and "expr" in argument):
            check.add(where, "arguments are flat scalars or {\"expr\": ...}; no objects or arrays", "type")
            continue
        check.value(argument, where, NUM | STR | BOOL, evaluate=False)
    if "resultMap" in definition:
        _check_result_map(check, definition["resultMap"], path + "/resultMap")


def _check_result_map(check: Checker, value: Any, path: str) -> None:
    limit = UI_PROTOCOL_LIMITS["maxActionResultFields"]
    for key, field_name, where in check.keyed(value, path, limit, "resultMap"):
        if key not in check.fields:
            check.add(path, "resultMap keys must be declared state fields", "undeclared_result_key")
        elif not check.identifier(field_name, where):
            continue


def _check_agent(check: Checker, definition: Mapping[str, Any], path: str) -> None:
    check.closed(definition, _AGENT_KEYS, path)
    if not check.required(definition, ("prompt",), path):
        return
    bits, default = check.value(definition["prompt"], path + "/prompt", STR)
    if bits and default == "":
        check.add(path + "/prompt", "the agent prompt must not be empty at the initial state", "empty_prompt")
