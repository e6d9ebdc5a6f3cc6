"""The JSON Schema (Draft 2020-12) export of the Intelligent UI document, v1.0 and v1.1.

The schema is built from small functions, one per component and per shared shape, so
that every bound comes from :mod:`core.limits`.  It describes what standard structural
validation can: versions, modes, closed objects, component props, enums, lengths, ranges
and the mode/Form-nesting rules (by generating one node family per context).  It is not
the trust boundary: `parse_document` remains the only full validator.

Only keywords that mean the same in Draft 7 and Draft 2020-12 are used (`$defs` with
JSON-pointer `$ref`, `if`/`then`/`else`, `const`, `propertyNames`), so Draft-7-only
consumers such as fastjsonschema read it the same way.  No constraint is placed next to
a `$ref` (Draft 7 would ignore it; a `$ref` with siblings would need its `type` spelled
out), every type-specific keyword sits beside its `type` and every `required` name beside
its `properties` entry, which is what AJV's 2020 strict mode demands.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from core._identifier import IDENTIFIER_PATTERN as BARE_IDENTIFIER_PATTERN
from core._identifier import RESERVED_IDENTIFIERS
from core.limits import LABEL_LENGTH, TITLE_LENGTH, UI_LIMITS, UI_PROTOCOL_LIMITS

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:dsh:intelligent-ui:document:1.1"

IDENTIFIER_PATTERN = f"^{BARE_IDENTIFIER_PATTERN}$"
VERSIONS = ("1.0", "1.1")
MODES = ("structured_ui", "interactive_ui")

OPERATOR_ARITIES: dict[tuple[int, int], tuple[str, ...]] = {
    (2, UI_LIMITS["maxExpressionArgs"]): ("add", "mul", "and", "or"),
    (2, 2): ("sub", "div", "pow", "eq", "lt", "lte", "gt", "gte"),
    (1, UI_LIMITS["maxExpressionArgs"]): ("min", "max", "concat"),
    (1, 2): ("round",),
    (1, 1): ("not",),
    (3, 3): ("if",),
}

DISPLAY_COMPONENTS = (
    "Text", "Heading", "Markdown", "Badge", "Table", "Progress", "Chart", "Loading", "Error", "Result",
)
INPUT_COMPONENTS = ("Input", "NumberInput", "Select", "Slider", "Checkbox")
LAYOUT_COMPONENTS = ("Row", "Column", "Grid", "Card")

# 1e15 is integral: write it as an integer so the JSON file reads 1000000000000000 (typed `int |
# float`: compiled, a name first bound to a float is a C double, and the schema read 1e15 as 1000000000000000.0).
_MAGNITUDE: int | float = UI_LIMITS["maxNumberMagnitude"]
_MAGNITUDE = int(_MAGNITUDE) if float(_MAGNITUDE).is_integer() else _MAGNITUDE
_MAX_CHILDREN = UI_LIMITS["maxComponents"] - 1

_DESCRIPTION = (
    "Intelligent UI document, DSL version 1.0 or 1.1. Structural check only: it does not "
    "verify unique node ids, that state/derived/action references exist, derived cycles, "
    "expression static types and depth, round digits, bindings and their shared numeric "
    "and Select domains, table rows matching the declared column keys, unique chart point "
    "ids and option values, default evaluation of derived/display/set values, nesting depth, "
    "component count, expression node count and byte budgets. String lengths here count "
    "code points, while the protocol counts UTF-16 code units. Every document must pass "
    "parse_document."
)


# ---------------------------------------------------------------- small builders


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def _closed(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


def _keyed_map(values: dict[str, Any], max_properties: int) -> dict[str, Any]:
    return {
        "type": "object",
        "maxProperties": max_properties,
        "propertyNames": _ref("identifier"),
        "additionalProperties": values,
    }


def _string(max_length: int, min_length: int = 0) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    if min_length:
        schema["minLength"] = min_length
    schema["maxLength"] = max_length
    return schema


def _number(*, positive: bool = False) -> dict[str, Any]:
    if positive:
        return {"type": "number", "exclusiveMinimum": 0, "maximum": _MAGNITUDE}
    return {"type": "number", "minimum": -_MAGNITUDE, "maximum": _MAGNITUDE}


def _array(items: dict[str, Any], max_items: int, min_items: int = 0) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": items}
    if min_items:
        schema["minItems"] = min_items
    schema["maxItems"] = max_items
    return schema


def _discriminated(key: str, branches: dict[str, str]) -> list[dict[str, Any]]:
    """`if key == value then $ref` clauses: one error trail per mismatch, not one per branch."""
    return [
        {
            "if": {"type": "object", "properties": {key: {"const": value}}, "required": [key]},
            "then": _ref(target),
        }
        for value, target in branches.items()
    ]


# ---------------------------------------------------------------- values and expressions


def _value_defs() -> dict[str, Any]:
    scalar_string = _string(UI_LIMITS["maxStringLength"])
    magnitude_note = "Finite JSON number with magnitude at most the protocol limit."
    return {
        "identifier": {
            "type": "string",
            "pattern": IDENTIFIER_PATTERN,
            "not": {"enum": list(RESERVED_IDENTIFIERS)},
        },
        "number": {**_number(), "description": magnitude_note},
        "scalar": {
            "anyOf": [scalar_string, _ref("number"), {"type": "boolean"}, {"type": "null"}],
        },
        "stateRef": _closed({"state": _ref("identifier")}, ("state",)),
        "derivedRef": _closed({"derived": _ref("identifier")}, ("derived",)),
        "operation": _operation(),
        # Objects are operations or references, anything else a scalar; the object branches
        # are disjoint, so anyOf (which may stop at the first match) is exact.
        "expr": {
            "if": {"type": "object"},
            "then": {"type": "object", "anyOf": [_ref("operation"), _ref("stateRef"), _ref("derivedRef")]},
            "else": _ref("scalar"),
        },
        "exprValue": _closed({"expr": _ref("expr")}, ("expr",)),
        "value": {"anyOf": [_ref("scalar"), _ref("exprValue")]},
        "numericValue": {"anyOf": [_ref("number"), _ref("exprValue")]},
        "promptValue": {
            "anyOf": [
                _string(UI_PROTOCOL_LIMITS["maxAgentPromptLength"], min_length=1),
                _ref("exprValue"),
            ],
        },
    }


def _operation() -> dict[str, Any]:
    """`{op, args}`; the arity branches never descend into args, so args are validated once."""
    operators = [name for names in OPERATOR_ARITIES.values() for name in names]
    operation = _closed(
        {"op": {"enum": operators}, "args": _array(_ref("expr"), UI_LIMITS["maxExpressionArgs"], min_items=1)},
        ("op", "args"),
    )
    operation["anyOf"] = [
        {
            "type": "object",
            "properties": {"op": {"enum": list(names)}, "args": {"type": "array", "minItems": low, "maxItems": high}},
        }
        for (low, high), names in OPERATOR_ARITIES.items()
    ]
    return operation


# ---------------------------------------------------------------- state, derived, actions


def _state_defs() -> dict[str, Any]:
    string_length = UI_LIMITS["maxStringLength"]
    number_state = _closed(
        {
            "type": {"const": "number"},
            "initial": _ref("number"),
            "min": _ref("number"),
            "max": _ref("number"),
            "step": _number(positive=True),
        },
        ("type", "initial"),
    )
    string_state = _closed(
        {
            "type": {"const": "string"},
            "initial": _string(string_length),
            "maxLength": {"type": "integer", "minimum": 1, "maximum": string_length},
        },
        ("type", "initial"),
    )
    boolean_state = _closed({"type": {"const": "boolean"}, "initial": {"type": "boolean"}}, ("type", "initial"))
    declaration = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"enum": ["number", "string", "boolean"]}},
        "allOf": _discriminated(
            "type", {"number": "numberState", "string": "stringState", "boolean": "booleanState"}
        ),
    }
    return {
        "numberState": number_state,
        "stringState": string_state,
        "booleanState": boolean_state,
        "stateDeclaration": declaration,
        "stateMap": _keyed_map(_ref("stateDeclaration"), UI_LIMITS["maxStateFields"]),
        "derivedMap": _keyed_map(_ref("expr"), UI_LIMITS["maxDerivedFields"]),
    }


def _action_defs() -> dict[str, Any]:
    result_fields = UI_PROTOCOL_LIMITS["maxActionResultFields"]
    tool = _closed(
        {
            "kind": {"const": "tool"},
            "capabilityId": _ref("identifier"),
            "arguments": _keyed_map(_ref("value"), UI_PROTOCOL_LIMITS["maxActionArguments"]),
            "resultMap": _keyed_map(_ref("identifier"), result_fields),
        },
        ("kind", "capabilityId", "arguments"),
    )
    agent = _closed({"kind": {"const": "agent"}, "prompt": _ref("promptValue")}, ("kind", "prompt"))
    return {
        "resetAction": _closed({"type": {"const": "reset"}}, ("type",)),
        "setAction": _closed(
            {"type": {"const": "set"}, "key": _ref("identifier"), "value": _ref("value")},
            ("type", "key", "value"),
        ),
        "invokeAction": _closed(
            {"type": {"const": "invoke"}, "actionId": _ref("identifier")}, ("type", "actionId")
        ),
        "action_v1_0": {"oneOf": [_ref("resetAction"), _ref("setAction")]},
        "action_v1_1": {"oneOf": [_ref("resetAction"), _ref("setAction"), _ref("invokeAction")]},
        "toolAction": tool,
        "agentAction": agent,
        "actionDefinition": {"oneOf": [_ref("toolAction"), _ref("agentAction")]},
        "actionMap": _keyed_map(_ref("actionDefinition"), UI_PROTOCOL_LIMITS["maxActions"]),
    }


# ---------------------------------------------------------------- shared prop shapes


def _prop_defs() -> dict[str, Any]:
    digits = {"type": "integer", "minimum": 0, "maximum": UI_LIMITS["maxRoundDigits"]}
    result_format = _closed(
        {
            "style": {"enum": ["decimal", "currency", "percent"]},
            "currency": {"enum": ["CNY", "USD", "EUR"]},
            "digits": digits,
        },
        ("style",),
    )
    # currency is required exactly when style is "currency".
    result_format["if"] = {
        "type": "object",
        "properties": {"style": {"const": "currency"}},
        "required": ["style"],
    }
    has_currency = {"type": "object", "properties": {"currency": {"type": "string"}}, "required": ["currency"]}
    result_format["then"] = has_currency
    result_format["else"] = {"type": "object", "not": copy.deepcopy(has_currency)}
    return {
        "gap": {"enum": ["sm", "md", "lg"]},
        "requiredLabel": _string(LABEL_LENGTH, min_length=1),
        "optionalLabel": _string(LABEL_LENGTH),
        "resultFormat": result_format,
    }


# ---------------------------------------------------------------- leaf component props


def _text_props() -> dict[str, Any]:
    return _closed({"text": _ref("value")}, ("text",))


def _heading_props() -> dict[str, Any]:
    return _closed({"text": _ref("value"), "level": {"enum": [1, 2, 3]}}, ("text",))


def _markdown_props() -> dict[str, Any]:
    return _closed({"text": _string(UI_LIMITS["maxMarkdownLength"])}, ("text",))


def _badge_props() -> dict[str, Any]:
    tone = {"enum": ["neutral", "success", "warning", "danger"]}
    return _closed({"text": _ref("value"), "tone": tone}, ("text",))


def _table_props() -> dict[str, Any]:
    max_columns = UI_LIMITS["maxTableColumns"]
    column = _closed({"key": _ref("identifier"), "label": _ref("requiredLabel")}, ("key", "label"))
    row = {
        "type": "object",
        "minProperties": 1,
        "maxProperties": max_columns,
        "propertyNames": _ref("identifier"),
        "additionalProperties": _ref("scalar"),
    }
    columns = _array(column, max_columns, min_items=1)
    return _closed({"columns": columns, "rows": _array(row, UI_LIMITS["maxTableRows"])}, ("columns", "rows"))


def _progress_props() -> dict[str, Any]:
    props = {"value": _ref("numericValue"), "max": _number(positive=True), "label": _ref("optionalLabel")}
    return _closed(props, ("value",))


def _chart_props() -> dict[str, Any]:
    point = _closed(
        {"id": _ref("identifier"), "label": _ref("requiredLabel"), "value": _ref("numericValue")},
        ("id", "label", "value"),
    )
    props = {
        "kind": {"enum": ["bar", "line"]},
        "data": _array(point, UI_LIMITS["maxChartPoints"], min_items=1),
        "label": _ref("optionalLabel"),
    }
    return _closed(props, ("kind", "data"))


def _loading_props() -> dict[str, Any]:
    return _closed({"label": _ref("optionalLabel")})


def _error_props() -> dict[str, Any]:
    return _closed({"message": _ref("value")}, ("message",))


def _result_props() -> dict[str, Any]:
    props = _closed(
        {"label": _ref("optionalLabel"), "value": _ref("value"), "format": _ref("resultFormat")},
        ("value",),
    )
    # A formatted result must be numeric: a literal value must then be a number.
    props["if"] = {"type": "object", "properties": {"format": {"type": "object"}}, "required": ["format"]}
    props["then"] = {"type": "object", "properties": {"value": _ref("numericValue")}}
    return props


def _input_props() -> dict[str, Any]:
    props = {"label": _ref("requiredLabel"), "bind": _ref("identifier"), "placeholder": _ref("optionalLabel")}
    return _closed(props, ("label", "bind"))


def _numeric_control_props() -> dict[str, Any]:
    props = {
        "label": _ref("requiredLabel"),
        "bind": _ref("identifier"),
        "min": _ref("number"),
        "max": _ref("number"),
        "step": _number(positive=True),
    }
    return _closed(props, ("label", "bind"))


def _select_props() -> dict[str, Any]:
    option = _closed(
        {"label": _ref("requiredLabel"), "value": _string(UI_LIMITS["maxStringLength"])},
        ("label", "value"),
    )
    props = {
        "label": _ref("requiredLabel"),
        "bind": _ref("identifier"),
        "options": _array(option, UI_LIMITS["maxSelectOptions"], min_items=1),
    }
    return _closed(props, ("label", "bind", "options"))


def _checkbox_props() -> dict[str, Any]:
    return _closed({"label": _ref("requiredLabel"), "bind": _ref("identifier")}, ("label", "bind"))


LEAF_PROPS: dict[str, Callable[[], dict[str, Any]]] = {
    "Text": _text_props,
    "Heading": _heading_props,
    "Markdown": _markdown_props,
    "Badge": _badge_props,
    "Table": _table_props,
    "Progress": _progress_props,
    "Chart": _chart_props,
    "Loading": _loading_props,
    "Error": _error_props,
    "Result": _result_props,
    "Input": _input_props,
    "NumberInput": _numeric_control_props,
    "Select": _select_props,
    "Slider": _numeric_control_props,
    "Checkbox": _checkbox_props,
}


# ---------------------------------------------------------------- nodes and node families


def _node(component: str, props: dict[str, Any], children: dict[str, Any] | None = None) -> dict[str, Any]:
    properties = {"id": _ref("identifier"), "type": {"const": component}, "props": props}
    required: tuple[str, ...] = ("id", "type", "props")
    if children is not None:
        properties["children"] = _array(children, _MAX_CHILDREN)
        required += ("children",)
    return _closed(properties, required)


def _layout_props(component: str) -> dict[str, Any]:
    props: dict[str, Any] = {"gap": _ref("gap")}
    if component == "Grid":
        props["columns"] = {"enum": [1, 2, 3, 4]}
    if component == "Card":
        props["title"] = _ref("optionalLabel")
    return _closed(props)


def _families() -> list[tuple[str, str | None, bool]]:
    """(family, action version, inside a Form): the contexts a node can sit in."""
    families: list[tuple[str, str | None, bool]] = [("structured", None, False)]
    for version in VERSIONS:
        tag = "v" + version.replace(".", "_")
        families += [(tag, tag, False), (tag + "_form", tag, True)]
    return families


def _family_members(version: str | None, in_form: bool) -> list[str]:
    if version is None:  # structured_ui: display and layout only
        return [*DISPLAY_COMPONENTS, *LAYOUT_COMPONENTS]
    members = [*DISPLAY_COMPONENTS, *INPUT_COMPONENTS, *LAYOUT_COMPONENTS, "Button"]
    return members if in_form else [*members, "Form"]


def _family_defs(family: str, version: str | None, in_form: bool) -> dict[str, Any]:
    """The dispatcher of one family plus its layout containers (and Form, if allowed)."""
    members = _family_members(version, in_form)
    targets: dict[str, str] = {}
    defs: dict[str, Any] = {}
    for component in members:
        if component in LAYOUT_COMPONENTS:
            targets[component] = f"{component}_{family}"
            defs[targets[component]] = _node(component, _layout_props(component), _ref(f"node_{family}"))
        elif component == "Form":
            targets[component] = f"Form_{family}"
            props = {"submitLabel": _ref("requiredLabel"), "action": _ref(f"action_{version}"), "gap": _ref("gap")}
            form_props = _closed(props, ("submitLabel", "action"))
            defs[targets[component]] = _node("Form", form_props, _ref(f"node_{family}_form"))
        elif component == "Button":
            targets[component] = f"Button_{version}"
        else:
            targets[component] = component
    defs[f"node_{family}"] = {
        "type": "object",
        "required": ["type"],  # the component schema requires the rest
        "properties": {"type": {"enum": members}},
        "allOf": _discriminated("type", targets),
    }
    return defs


def _component_defs() -> dict[str, Any]:
    defs = {name: _node(name, build()) for name, build in LEAF_PROPS.items()}
    for version in VERSIONS:
        tag = "v" + version.replace(".", "_")
        props = {"label": _ref("requiredLabel"), "action": _ref(f"action_{tag}"), "variant": {"enum": ["primary",
                                                                                                       "secondary"]}}
        defs[f"Button_{tag}"] = _node("Button", _closed(props, ("label", "action")))
    for family, family_version, in_form in _families():
        defs.update(_family_defs(family, family_version, in_form))
    return defs


# ---------------------------------------------------------------- documents


def _document(version: str) -> dict[str, Any]:
    """One version's document, gated on `version` so the other oneOf branch fails at once."""
    return {
        "if": {"type": "object", "properties": {"version": {"const": version}}, "required": ["version"]},
        "then": _document_body(version),
        "else": False,
    }


def _document_body(version: str) -> dict[str, Any]:
    tag = "v" + version.replace(".", "_")
    properties: dict[str, Any] = {
        "version": {"const": version},
        "id": _ref("identifier"),
        "mode": {"enum": list(MODES)},
        "title": _string(TITLE_LENGTH, min_length=1),
        "state": _ref("stateMap"),
        "derived": _ref("derivedMap"),
    }
    required: tuple[str, ...] = ("version", "id", "mode", "title", "state", "derived", "root")
    if version != "1.0":
        properties["actions"] = _ref("actionMap")
        required += ("actions",)
    properties["root"] = {"type": "object"}
    document = _closed(properties, required)
    # The root's node family depends on the mode: structured_ui has no inputs or actions.
    document["if"] = {
        "type": "object",
        "properties": {"mode": {"const": "structured_ui"}},
        "required": ["mode"],
    }
    document["then"] = {"type": "object", "properties": {"root": _ref("node_structured")}}
    document["else"] = {"type": "object", "properties": {"root": _ref(f"node_{tag}")}}
    return document


def document_json_schema() -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) of a v1.0 or v1.1 document; a fresh object each call."""
    defs: dict[str, Any] = {}
    defs.update(_value_defs())
    defs.update(_state_defs())
    defs.update(_action_defs())
    defs.update(_prop_defs())
    defs.update(_component_defs())
    for version in VERSIONS:
        defs["document_v" + version.replace(".", "_")] = _document(version)
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": SCHEMA_ID,
        "title": "Intelligent UI document",
        "description": _DESCRIPTION,
        "type": "object",
        "oneOf": [_ref("document_v1_0"), _ref("document_v1_1")],
        "$defs": defs,
    }


def document_json_schema_text() -> str:
    """The checked-in text of `schema/ui.schema.json`."""
    return json.dumps(document_json_schema(), indent=2, ensure_ascii=False) + "\n"

