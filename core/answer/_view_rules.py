"""The strict answer-view-state@1 rules: the view fields each stateful component allows.

One rule per field, built from the element's facts (`core.answer._view_facts`).  Rules
yield issues located at their own value; the object walker (`core._rules.closed_object`)
and `node_issues` prepend the segments, so no rule builds a path.  Every object is closed,
and no message echoes a key or a value the client sent (an unknown node id is reported at
the object that holds it).  Values have passed the exact-type check before any rule runs.

    Chart         view, hidden_series, range {start, end}, selected_point {series, category},
                  detail_open, table {search, sort {column | null, direction}, selection: []}
    Table         search, sort {column, direction}, selection: []   (selection is always [])
    FollowUpForm  drafts {field name: value}                        (value fits the field type)
    Evidence      category (null: all), expanded [item ids]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from core._rules import Issues, Rule, all_of, boolean, closed_object, descend, one_of
from core.answer._view_facts import (
    BlockFacts,
    ChartFacts,
    ElementFacts,
    EvidenceFacts,
    FieldFacts,
    FormFacts,
    TableFacts,
)
from core.errors import Issue
from core.json._frozen import ARRAY_KINDS, OBJECT_KINDS
from core.json._number import is_plain_safe_number
from core.json._text import utf16_length
from core.limits import VIEW_DRAFT_LENGTH, VIEW_SEARCH_LENGTH

DIRECTIONS = ("asc", "desc")
CHART_VIEWS = ("line", "bar", "table")
UNKNOWN_NODE = "view state may only name Chart, Table, FollowUpForm and Evidence elements of the block"


def _nullable(rule: Rule) -> Rule:
    def checked(value: Any) -> Issues:
        if value is not None:
            yield from rule(value)

    return checked


def _member(pool: frozenset[str], message: str, code: str) -> Rule:
    """A string of `pool`."""

    def rule(value: Any) -> Issues:
        if type(value) is not str or value not in pool:
            yield Issue("", message, code)

    return rule


def _members(pool: frozenset[str], message: str, code: str) -> Rule:
    """An array of distinct strings of `pool` (reported at the array: no item is echoed)."""

    def rule(value: Any) -> Issues:
        if type(value) not in ARRAY_KINDS:
            yield Issue("", "expected an array", "type")
        elif any(type(item) is not str or item not in pool for item in value):
            yield Issue("", message, code)
        elif len(set(value)) != len(value):
            yield Issue("", message, "duplicate")

    return rule


def _search(value: Any) -> Issues:
    if type(value) is not str:
        yield Issue("", "expected a string", "type")
    elif utf16_length(value) > VIEW_SEARCH_LENGTH:
        yield Issue("", f"length must be at most {VIEW_SEARCH_LENGTH} UTF-16 code units", "length")


def _selection(value: Any) -> Issues:
    if type(value) not in ARRAY_KINDS or len(value) != 0:
        yield Issue("", "must be [] (rows are never selectable)", "selection")


def _sort(columns: frozenset[str], *, nullable_column: bool) -> Rule:
    column = _member(columns, "must name a column shown exactly once", "unknown_column")
    return closed_object({"column": _nullable(column) if nullable_column else column,
                          "direction": one_of(*DIRECTIONS)})


def table_state(columns: frozenset[str], *, nullable_column: bool) -> Rule:
    """A table's view (a Table's own, or a chart's data table: sort by a series or null)."""
    return closed_object({"selection": _selection},
                         {"search": _search, "sort": _nullable(_sort(columns, nullable_column=nullable_column))})


def _range_order(categories: tuple[str, ...], labels: frozenset[str]) -> Rule:
    def rule(value: Any) -> Issues:
        if type(value) not in OBJECT_KINDS:
            return
        start, end = value.get("start"), value.get("end")
        if type(start) is not str or type(end) is not str or start not in labels or end not in labels:
            return  # reported by the label rule
        if categories.index(start) > categories.index(end):
            yield Issue("", "start must not come after end", "range")

    return rule


def _detail(value: Any) -> Issues:
    if type(value) in OBJECT_KINDS and value.get("detail_open") is True and value.get("selected_point") is None:
        yield from descend([Issue("", "needs a selected point", "detail")], "detail_open")


def _chart(facts: ChartFacts) -> Rule:
    names, labels = facts.names, facts.labels
    label = _member(labels, "must be a category label shown exactly once", "unknown_category")
    series = _member(names, "must name a series of the chart", "unknown_series")
    return all_of(closed_object({}, {
        "view": one_of(*CHART_VIEWS),
        "hidden_series": _members(names, "must list distinct series names of the chart", "unknown_series"),
        "range": _nullable(all_of(closed_object({"start": label, "end": label}),
                                  _range_order(facts.categories, labels))),
        "selected_point": _nullable(closed_object({"series": series, "category": label})),
        "detail_open": boolean,
        "table": table_state(names, nullable_column=True),
    }), _detail)


def draft_fits(value: Any, field: FieldFacts) -> bool:
    """Whether a draft value fits its field: null, or a value of the field's type."""
    if value is None:
        return True
    if field.type == "number":
        return is_plain_safe_number(value)
    if type(value) is not str:
        return False
    if field.type == "select":
        return value == "" or value in field.options
    return utf16_length(value) <= VIEW_DRAFT_LENGTH


def _drafts(fields: Mapping[str, FieldFacts]) -> Rule:
    def rule(value: Any) -> Issues:
        if type(value) not in OBJECT_KINDS:
            yield Issue("", "must be an object of field drafts", "type")
        elif any(name not in fields for name in value):
            yield Issue("", "drafts may only name the form's fields", "unknown_field")
        else:
            for name, draft in value.items():
                if not draft_fits(draft, fields[name]):
                    yield from descend([Issue("", "does not fit the field's type or options", "draft")], name)

    return rule


def _form(facts: FormFacts) -> Rule:
    return closed_object({}, {"drafts": _drafts(facts.fields)})


def _evidence(facts: EvidenceFacts) -> Rule:
    category = _member(facts.categories, "must be null or a category of the items", "unknown_category")
    return closed_object({}, {
        "category": _nullable(category),
        "expanded": _members(facts.items, "must list distinct item ids of the evidence", "unknown_item"),
    })


def _table(facts: TableFacts) -> Rule:
    return table_state(facts.columns, nullable_column=False)


def element_rule(facts: ElementFacts) -> Rule:
    """The strict rule of one stateful element's view state."""
    if isinstance(facts, ChartFacts):
        return _chart(facts)
    if isinstance(facts, TableFacts):
        return _table(facts)
    if isinstance(facts, FormFacts):
        return _form(facts)
    return _evidence(facts)


def node_issues(nodes: Any, facts: BlockFacts) -> Iterator[Issue]:
    """Every problem of a `nodes` object (exact JSON types) against the block's facts."""
    if type(nodes) not in OBJECT_KINDS:
        yield Issue("", "must be an object of element ids", "type")
        return
    for node_id, node in nodes.items():
        element = facts.get(node_id)
        if element is None:
            yield Issue("", UNKNOWN_NODE, "unknown_node")  # the id itself may be anything: never echoed
            return
        yield from descend(element_rule(element)(node), node_id)
