"""Migration of a view state to a changed block: keep what is compatible, clear the rest.

The seed's table: a chart keeps its view, and its range and selected point while their
labels are still shown exactly once (the detail only with its point); hidden series and
the data table's sort only when the series names and their order are unchanged.  A table
keeps its search and a sort whose column still exists; form drafts move only to fields
of the same name and type (and a value that still fits); evidence keeps expanded items
that still exist and a category that still matches (else all).

What "unchanged" means is read from the basis the host stored beside the state (the
chart's series digest and the form's field types at write time), never from client data;
a basis that is missing or not of that shape counts as unknown and clears what needs it.
Any input gives a result: a node or field that does not fit is dropped, never an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.answer._view_facts import BlockFacts, ChartFacts, ElementFacts, EvidenceFacts, FormFacts, TableFacts
from core.answer._view_rules import draft_fits, element_rule
from core.json._frozen import ARRAY_KINDS, OBJECT_KINDS
from core.json.canonical import hash_canonical_json

_CHART_FIELDS = ("view", "range", "selected_point", "detail_open")
_SAME_SERIES_FIELDS = ("view", "hidden_series", "range", "selected_point", "detail_open")


def series_digest(facts: ChartFacts) -> str:
    """The basis of a chart: the SHA-256 of its series names in order."""
    return hash_canonical_json(list(facts.series))


def _object(value: Any) -> Mapping[str, Any] | None:
    return value if type(value) in OBJECT_KINDS else None


def _keep(node: Mapping[str, Any], facts: ElementFacts, names: tuple[str, ...]) -> dict[str, Any]:
    """The fields of `node` among `names` that still pass the element's rule, one at a time."""
    rule = element_rule(facts)
    kept: dict[str, Any] = {}
    for name in names:
        if name in node:
            candidate = {**kept, name: node[name]}
            if isinstance(facts, TableFacts):
                candidate.setdefault("selection", [])
            if next(iter(rule(candidate)), None) is None:
                kept[name] = node[name]
    return kept


def _chart_table(table: Mapping[str, Any], facts: ChartFacts, same_series: bool) -> dict[str, Any]:
    """The chart's data table: its search, and its sort only while the series are the same."""
    rule = element_rule(facts)
    inner = {"search": table["search"]} if "search" in table else {}
    if next(iter(rule({"table": {**inner, "selection": []}})), None) is not None:
        inner = {}
    sorted_by = table.get("sort")
    if same_series and sorted_by is not None:
        candidate = {**inner, "sort": sorted_by, "selection": []}
        if next(iter(rule({"table": candidate})), None) is None:
            return candidate
    return {**inner, "selection": []}


def _chart(node: Mapping[str, Any], facts: ChartFacts, old: Mapping[str, Any] | None) -> dict[str, Any]:
    same_series = old is not None and old.get("series") == series_digest(facts)
    kept = _keep(node, facts, _SAME_SERIES_FIELDS if same_series else _CHART_FIELDS)
    table = _object(node.get("table"))
    if table is not None:
        kept["table"] = _chart_table(table, facts, same_series)
    return kept


def _form(node: Mapping[str, Any], facts: FormFacts, old: Mapping[str, Any] | None) -> dict[str, Any]:
    drafts = _object(node.get("drafts"))
    if drafts is None:
        return {}
    saved_types = _object(None if old is None else old.get("fields"))
    if saved_types is None:  # an unknown basis never guesses
        return {"drafts": {}}
    fields = facts.fields
    return {"drafts": {name: value for name, value in drafts.items()
                       if name in fields and saved_types.get(name) == fields[name].type
                       and draft_fits(value, fields[name])}}


def _evidence(node: Mapping[str, Any], facts: EvidenceFacts) -> dict[str, Any]:
    """Each expanded item kept while it still exists (not the list as a whole), in its order;
    none left, no field (nothing expanded, as before)."""
    kept = _keep(node, facts, ("category",))
    expanded: Any = node.get("expanded")
    if type(expanded) in ARRAY_KINDS:  # by exact type, before any item is hashed
        items: list[Any] = expanded
        existing = list(dict.fromkeys(item for item in items if type(item) is str and item in facts.items))
        if existing:
            kept["expanded"] = existing
    return kept


def _migrated(node: Mapping[str, Any], facts: ElementFacts, old: Mapping[str, Any] | None) -> dict[str, Any]:
    if isinstance(facts, ChartFacts):
        return _chart(node, facts, old)
    if isinstance(facts, FormFacts):
        return _form(node, facts, old)
    if isinstance(facts, TableFacts):
        return {**_keep(node, facts, ("search", "sort")), "selection": []}
    return _evidence(node, facts)


def migrate(nodes: Mapping[str, Any], basis: Mapping[str, Any], facts: BlockFacts) -> dict[str, Any]:
    """The part of `nodes` (exact JSON types) still compatible with the block of `facts`.

    An element whose component type changed since the basis was stored loses its state.
    """
    migrated: dict[str, Any] = {}
    for node_id, value in nodes.items():
        element, node = facts.get(node_id), _object(value)
        if element is None or node is None:
            continue
        old = _object(basis.get(node_id))
        if old is not None and old.get("type") != element.kind:
            continue
        migrated[node_id] = _migrated(node, element, old)
    return migrated
