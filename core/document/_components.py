"""The 21 components: their closed props and the rule function of each prop.

`COMPONENTS` maps a type name to a `Component`: which props it takes (required or
optional), the checker of each, and an optional whole-props rule for constraints that
span props (Progress default within [0, max], Result format needs a number, numeric
controls repeating their field's domain).  Rule functions receive the `Checker`, the
value and its place (rules descend with `place / segment`; none builds a path).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.document._actions import check_ui_action
from core.document._checker import Checker
from core.document._fields import NumberField
from core.errors import Place
from core.expression.language import NUM, SCALAR, scalar_type
from core.json._number import js_number_string
from core.json._text import utf16_length
from core.limits import LABEL_LENGTH, UI_LIMITS

PropRule = Callable[[Checker, Any, Place], Any]


@dataclass(frozen=True, slots=True)
class Component:
    """Props of one component type and whether it holds children."""

    props: Mapping[str, tuple[bool, PropRule]]
    layout: bool = False
    interactive: bool = False
    extra: Callable[[Checker, Mapping[str, Any], dict[str, Any], Place], None] | None = None
    allowed: frozenset[str] = field(init=False)
    required: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "allowed", frozenset(self.props))
        object.__setattr__(self, "required", tuple(k for k, (req, _) in self.props.items() if req))


# ---------------------------------------------------------------- prop rules

def _enum(*choices: Any) -> PropRule:
    allowed = [c for c in choices]
    text = " | ".join(repr(c) if isinstance(c, str) else js_number_string(c) for c in choices)

    def rule(check: Checker, value: Any, place: Place) -> Any:
        if type(value) is bool or not any(value == c and type(value) in (type(c), float) for c in allowed):
            check.add(place, f"must be one of {text}", "enum")
        return value
    return rule


def _string(low: int, high: int) -> PropRule:
    def rule(check: Checker, value: Any, place: Place) -> Any:
        check.text(value, place, low, high)
        return value
    return rule


LABEL = _string(1, LABEL_LENGTH)
OPTIONAL_LABEL = _string(0, LABEL_LENGTH)
MARKDOWN = _string(0, UI_LIMITS["maxMarkdownLength"])
GAP = _enum("sm", "md", "lg")


def any_value(check: Checker, value: Any, place: Place) -> Any:
    return check.value(value, place, SCALAR)


def number_value(check: Checker, value: Any, place: Place) -> Any:
    return check.value(value, place, NUM)


def plain_number(check: Checker, value: Any, place: Place) -> Any:
    check.number(value, place)
    return value


def positive_number(check: Checker, value: Any, place: Place) -> Any:
    if check.number(value, place) and value <= 0:
        check.add(place, "must be greater than 0", "range")
    return value


def _bind(kind: str) -> PropRule:
    def rule(check: Checker, value: Any, place: Place) -> Any:
        if type(value) is not str or value not in check.fields:
            check.add(place, "must name a declared state field", "unknown_reference")
        elif check.fields[value].kind != kind:
            check.add(place, f"must name a {kind} state field", "field_type")
        return value
    return rule


def action(check: Checker, value: Any, place: Place) -> Any:
    check_ui_action(check, value, place)
    return value


# ---------------------------------------------------------------- complex props

def _records(check: Checker, value: Any, place: Place, low: int, high: int, what: str,
             keys: frozenset[str]) -> list[tuple[Place, Mapping[str, Any]]] | None:
    """The complete objects of a bounded array prop whose objects take exactly `keys`."""
    if not isinstance(value, list) or not low <= len(value) <= high:  # a wrong type is `type`, as everywhere
        check.add(place, f"must be an array of {low}-{high} {what}s", "length" if isinstance(value, list) else "type")
        return None
    records = []
    for i, item in enumerate(value):
        where = place / i
        if check.mapping(item, where, what):
            check.closed(item, keys, where)
            if check.required(item, tuple(sorted(keys)), where):
                records.append((where, item))
    return records


def _unique(check: Checker, seen: set[Any], value: Any, place: Place, message: str) -> None:
    if value in seen:
        check.add(place, message, "duplicate")
    seen.add(value)


def table_columns(check: Checker, value: Any, place: Place) -> Any:
    columns = _records(check, value, place, 1, UI_LIMITS["maxTableColumns"], "column", _COLUMN_KEYS)
    if columns is None:
        return None
    keys: set[str] = set()
    for where, column in columns:
        LABEL(check, column["label"], where / "label")
        if check.identifier(column["key"], where / "key"):
            _unique(check, keys, column["key"], where / "key", "column keys must be unique")
    return keys


_COLUMN_KEYS = frozenset({"key", "label"})


def table_rows(check: Checker, value: Any, place: Place) -> Any:
    limit = UI_LIMITS["maxTableRows"]
    if not isinstance(value, list) or len(value) > limit:
        check.add(place, f"must be an array of at most {limit} rows", "too_many" if isinstance(value, list) else "type")
        return None
    for i, row in enumerate(value):
        check.mapping(row, place / i, "row")
    return value


def _table_extra(check: Checker, props: Mapping[str, Any], results: dict[str, Any], place: Place) -> None:
    """Cells are checked once the column keys are known: an undeclared key is never echoed."""
    keys = results.get("columns")
    rows = props.get("rows")
    if not keys or not isinstance(rows, list):
        return
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            continue
        where = place / "rows" / i
        if len(row) != len(keys) or not keys.issuperset(row):
            check.add(where, "each row must have exactly the declared column keys", "row_keys")
        for key, cell in row.items():
            if key not in keys or scalar_type(cell):
                continue
            if isinstance(cell, (dict, list)):
                check.add(where / key, "table cells must be static scalars", "type")
            else:
                check.value(cell, where / key, SCALAR)


def chart_data(check: Checker, value: Any, place: Place) -> Any:
    points = _records(check, value, place, 1, UI_LIMITS["maxChartPoints"], "point", _POINT_KEYS)
    ids: set[str] = set()
    for where, point in points or ():
        if check.identifier(point["id"], where / "id"):
            _unique(check, ids, point["id"], where / "id", "point ids must be unique within the chart")
        LABEL(check, point["label"], where / "label")
        number_value(check, point["value"], where / "value")
    return value


_POINT_KEYS = frozenset({"id", "label", "value"})


def select_options(check: Checker, value: Any, place: Place) -> Any:
    options = _records(check, value, place, 1, UI_LIMITS["maxSelectOptions"], "option", _OPTION_KEYS)
    if options is None:
        return None
    values: list[str] = []
    for where, option in options:
        LABEL(check, option["label"], where / "label")
        if check.text(option["value"], where / "value", 0, UI_LIMITS["maxStringLength"]):
            if option["value"] in values:
                check.add(where / "value", "option values must be unique", "duplicate")
            values.append(option["value"])
    return values


_OPTION_KEYS = frozenset({"label", "value"})
_FORMAT_KEYS = frozenset({"style", "currency", "digits"})
_STYLE = _enum("decimal", "currency", "percent")
_CURRENCY = _enum("CNY", "USD", "EUR")
_DIGITS = _enum(0, 1, 2, 3, 4, 5, 6)


def result_format(check: Checker, value: Any, place: Place) -> Any:
    if not check.mapping(value, place, "format"):
        return None
    check.closed(value, _FORMAT_KEYS, place)
    if check.required(value, ("style",), place):
        _STYLE(check, value["style"], place / "style")
        if value["style"] == "currency" and "currency" not in value:
            check.add(place / "currency", "currency style needs a currency", "currency")
        if value["style"] != "currency" and "currency" in value:
            check.add(place / "currency", "only the currency style takes a currency", "currency")
    if "currency" in value:
        _CURRENCY(check, value["currency"], place / "currency")
    if "digits" in value:
        _DIGITS(check, value["digits"], place / "digits")
    return value


# ---------------------------------------------------------------- whole-props rules

def _progress_extra(check: Checker, props: Mapping[str, Any], results: dict[str, Any], place: Place) -> None:
    bits, default = results.get("value", (0, None))
    top = props.get("max", 100)
    if bits and type(top) in (int, float) and default is not None and top > 0 and not 0 <= default <= top:
        check.add(place / "value", f"must be within [0, {js_number_string(top)}] at the initial state", "range")


def _result_extra(check: Checker, props: Mapping[str, Any], results: dict[str, Any], place: Place) -> None:
    bits, _ = results.get("value", (0, None))
    if "format" in props and bits and bits != NUM:
        check.add(place / "value", "a formatted Result value must always be a number", "expression_type")


def _bound(check: Checker, props: Mapping[str, Any]) -> Any:
    """The field a control binds, or None (a non-string bind is already reported)."""
    key = props.get("bind")
    return check.fields.get(key) if type(key) is str else None


def _numeric_control_extra(check: Checker, props: Mapping[str, Any], results: dict[str, Any], place: Place) -> None:
    declared = _bound(check, props)
    if not isinstance(declared, NumberField):
        return
    for name in ("min", "max", "step"):
        if name in props and type(props[name]) in (int, float):
            own = getattr(declared, name)
            if own is None:
                check.add(place / name, f"the bound state field declares no {name}; declare it there",
                          "field_mismatch")
            elif props[name] != own:
                check.add(place / name, f"must repeat the state field's {name} {js_number_string(own)} exactly",
                          "field_mismatch")


def _slider_extra(check: Checker, props: Mapping[str, Any], results: dict[str, Any], place: Place) -> None:
    _numeric_control_extra(check, props, results, place)
    declared = _bound(check, props)
    if isinstance(declared, NumberField) and (
            declared.min is None or declared.max is None or not declared.min < declared.max):
        check.add(place / "bind", "a Slider's state field needs min and max with min < max", "field_mismatch")


def _select_extra(check: Checker, props: Mapping[str, Any], results: dict[str, Any], place: Place) -> None:
    values = results.get("options")
    declared = _bound(check, props)
    if values is None or declared is None or declared.kind != "string":
        return
    for i, value in enumerate(values):
        if len(value) > declared.max_length // 2 and utf16_length(value) > declared.max_length:
            check.add(place / "options" / i / "value", "option value exceeds the state field's maxLength",
                      "field_mismatch")
    if declared.initial not in values:
        check.add(place / "options", "the state field's initial value must be one of the options", "field_mismatch")


_BIND_STRING, _BIND_NUMBER, _BIND_BOOLEAN = _bind("string"), _bind("number"), _bind("boolean")
_NUMERIC = {"min": (False, plain_number), "max": (False, plain_number), "step": (False, positive_number)}

COMPONENTS: Mapping[str, Component] = {
    "Text": Component({"text": (True, any_value)}),
    "Heading": Component({"text": (True, any_value), "level": (False, _enum(1, 2, 3))}),
    "Markdown": Component({"text": (True, MARKDOWN)}),
    "Row": Component({"gap": (False, GAP)}, layout=True),
    "Column": Component({"gap": (False, GAP)}, layout=True),
    "Grid": Component({"gap": (False, GAP), "columns": (False, _enum(1, 2, 3, 4))}, layout=True),
    "Card": Component({"title": (False, OPTIONAL_LABEL), "gap": (False, GAP)}, layout=True),
    "Badge": Component({"text": (True, any_value),
                        "tone": (False, _enum("neutral", "success", "warning", "danger"))}),
    "Table": Component({"columns": (True, table_columns), "rows": (True, table_rows)}, extra=_table_extra),
    "Progress": Component({"value": (True, number_value), "max": (False, positive_number),
                           "label": (False, OPTIONAL_LABEL)}, extra=_progress_extra),
    "Chart": Component({"kind": (True, _enum("bar", "line")), "data": (True, chart_data),
                        "label": (False, OPTIONAL_LABEL)}),
    "Input": Component({"label": (True, LABEL), "bind": (True, _BIND_STRING),
                        "placeholder": (False, OPTIONAL_LABEL)}, interactive=True),
    "NumberInput": Component({"label": (True, LABEL), "bind": (True, _BIND_NUMBER), **_NUMERIC},
                             interactive=True, extra=_numeric_control_extra),
    "Select": Component({"label": (True, LABEL), "bind": (True, _BIND_STRING),
                         "options": (True, select_options)}, interactive=True, extra=_select_extra),
    "Button": Component({"label": (True, LABEL), "action": (True, action),
                         "variant": (False, _enum("primary", "secondary"))}, interactive=True),
    "Slider": Component({"label": (True, LABEL), "bind": (True, _BIND_NUMBER), **_NUMERIC},
                        interactive=True, extra=_slider_extra),
    "Checkbox": Component({"label": (True, LABEL), "bind": (True, _BIND_BOOLEAN)}, interactive=True),
    "Form": Component({"submitLabel": (True, LABEL), "action": (True, action), "gap": (False, GAP)},
                      layout=True, interactive=True),
    "Loading": Component({"label": (False, OPTIONAL_LABEL)}),
    "Error": Component({"message": (True, any_value)}),
    "Result": Component({"label": (False, OPTIONAL_LABEL), "value": (True, any_value),
                         "format": (False, result_format)}, extra=_result_extra),
}

LAYOUTS = frozenset(name for name, c in COMPONENTS.items() if c.layout)


def check_props(check: Checker, component: Component, props: Any, place: Place) -> dict[str, Any]:
    """Check a node's props object; return what the rules computed, by prop name."""
    results: dict[str, Any] = {}
    if not check.mapping(props, place, "props"):
        return results
    check.closed(props, component.allowed, place)
    check.required(props, component.required, place)
    for name, (_, rule) in component.props.items():
        if name in props:
            results[name] = rule(check, props[name], place / name)
    if component.extra is not None:
        component.extra(check, props, results, place)
    return results
