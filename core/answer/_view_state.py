"""answer-view-state@1 (seed 004): the view fields each component allows, and their migration.

Pure functions over decoded JSON and a stored answer block (no Redis, no clock), kept here
rather than in `core/` while core's modules are being moved into subpackages; it imports
core only through its public API and can move to `core/answer/` unchanged.

A block's view state is `nodes`: element id -> that element's view fields.  Only Chart,
Table, FollowUpForm and Evidence hold view state, each a closed object:

    Chart         view, hidden_series, range {start, end}, selected_point {series, category},
                  detail_open, table {search, sort {column | null, direction}, selection: []}
    Table         search, sort {column, direction}, selection: []   (selection is always [])
    FollowUpForm  drafts {field name: value}                        (value fits the field type)
    Evidence      category (null: all), expanded [item ids]

`check_nodes` is the strict write check (a client that saw the current block).  Migration
(`migrate_nodes`) keeps what is still compatible with a changed block and clears the rest,
by the seed's table; it compares against a `basis` the host stores next to each state (the
chart's series names and the form's field types at write time), never against client data.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from core.errors import Issue, UIError
from core.json.canonical import canonical_json_string, hash_canonical_json

VIEW_STATE_VERSION = "answer-view-state@1"
MAX_BLOCK_STATE_BYTES = 32 * 1024  # UTF-8 bytes of one block's canonical `nodes` JSON
MAX_SESSION_STATE_BYTES = 1024 * 1024  # the states of one session together
MAX_RECEIPTS = 32  # request receipts kept per block
MAX_RECEIPT_BYTES = 128 * 1024  # bytes of the receipts kept per block
SEARCH_LENGTH = 200
DRAFT_LENGTH = 4_096
MAX_ISSUES = 10
DIRECTIONS = ("asc", "desc")
CHART_VIEWS = ("line", "bar", "table")
STATEFUL = ("Chart", "Table", "FollowUpForm", "Evidence")
UNKNOWN = "unknown property is not allowed"

Issues = Iterator[Issue]
Nodes = dict[str, Any]


class ViewStateError(Exception):
    """A `nodes` payload is not a valid view state of the block; `issues` carry JSON Pointers."""

    def __init__(self, issues: list[Issue]) -> None:
        super().__init__(issues[0].message if issues else "invalid view state")
        self.issues = issues[:MAX_ISSUES]


def schema_digest(block: Mapping[str, Any]) -> str:
    """The server-side `schema_digest` of a stored block: SHA-256 of its canonical JSON."""
    return hash_canonical_json(_plain(block))


def state_text(nodes: Mapping[str, Any]) -> str:
    """The canonical JSON text a state is stored as (its UTF-8 length is what budgets count)."""
    return canonical_json_string(_plain(nodes))


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# -- the block's stateful elements ---------------------------------------------------------


def _elements(block: Mapping[str, Any]) -> Mapping[str, Any]:
    elements: Mapping[str, Any] = block["spec"]["elements"]
    return elements


def _unique(labels: list[Any]) -> set[str]:
    """Labels that occur exactly once (only those can locate a point after a data change)."""
    seen: dict[str, int] = {}
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
    return {label for label, count in seen.items() if count == 1}


def basis_of(block: Mapping[str, Any]) -> dict[str, Any]:
    """What migration compares later: each chart's series names, each form's field types."""
    basis: dict[str, Any] = {}
    for node_id, element in _elements(block).items():
        props = element.get("props", {})
        if element["type"] == "Chart":
            basis[node_id] = {"type": "Chart", "series": hash_canonical_json([s["name"] for s in props["series"]])}
        elif element["type"] == "FollowUpForm":
            basis[node_id] = {"type": "FollowUpForm", "fields": {f["name"]: f["type"] for f in props["fields"]}}
    return basis


# -- strict checks (one function per rule; paths local to the node) ---------------------------


def _is_str(value: Any, limit: int) -> bool:
    return type(value) is str and len(value) <= limit


def _member(value: Any, pool: set[str] | set[Any]) -> bool:
    """`value in pool` for a string only (a list or an object is never hashed)."""
    return type(value) is str and value in pool


def _members(value: Any, pool: set[str]) -> bool:
    """A list of distinct strings, each in `pool`."""
    return type(value) is list and all(_member(v, pool) for v in value) and len(set(value)) == len(value)


def _is_number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and abs(value) <= 1e15


def _closed(value: Any, allowed: tuple[str, ...], path: str) -> Issues:
    if type(value) is not dict:
        yield Issue(path, "must be an object", "type")
        return
    if any(key not in allowed for key in value):
        yield Issue(path, UNKNOWN, "unknown_property")


def _sort(value: Any, columns: set[Any], path: str, nullable_column: bool) -> Issues:
    if value is None:
        return
    problems = list(_closed(value, ("column", "direction"), path))
    if problems:
        yield from problems
        return
    if not _member(value.get("direction"), set(DIRECTIONS)):
        yield Issue(path + "/direction", "must be asc or desc", "enum")
    column = value.get("column")
    if not (column is None and nullable_column) and not _member(column, columns):
        yield Issue(path + "/column", "must name a column shown exactly once", "unknown_column")


def _selection(node: Mapping[str, Any], path: str) -> Issues:
    if node.get("selection") != [] or type(node.get("selection")) is not list:
        yield Issue(path + "/selection", "must be [] (rows are never selectable)", "selection")


def _search(node: Mapping[str, Any], path: str) -> Issues:
    if "search" in node and not _is_str(node["search"], SEARCH_LENGTH):
        yield Issue(path + "/search", f"must be a string of at most {SEARCH_LENGTH} characters", "type")


def _table_state(node: Any, columns: set[Any], path: str, nullable_column: bool) -> Issues:
    problems = list(_closed(node, ("search", "sort", "selection"), path))
    if problems:
        yield from problems
        return
    yield from _search(node, path)
    yield from _sort(node.get("sort"), columns, path + "/sort", nullable_column)
    yield from _selection(node, path)


def _chart(node: Any, props: Mapping[str, Any], path: str) -> Issues:
    keys = ("view", "hidden_series", "range", "selected_point", "detail_open", "table")
    problems = list(_closed(node, keys, path))
    if problems:
        yield from problems
        return
    names = {s["name"] for s in props["series"]}
    labels = _unique(list(props["categories"]))
    if "view" in node and not _member(node["view"], set(CHART_VIEWS)):
        yield Issue(path + "/view", "must be line, bar or table", "enum")
    if not _members(node.get("hidden_series", []), names):
        yield Issue(path + "/hidden_series", "must list distinct series names of the chart", "unknown_series")
    yield from _range(node.get("range"), list(props["categories"]), labels, path + "/range")
    yield from _point(node.get("selected_point"), names, labels, path + "/selected_point")
    if "detail_open" in node and type(node["detail_open"]) is not bool:
        yield Issue(path + "/detail_open", "must be a boolean", "type")
    elif node.get("detail_open") and node.get("selected_point") is None:
        yield Issue(path + "/detail_open", "needs a selected point", "detail")
    if "table" in node:
        yield from _table_state(node["table"], names, path + "/table", nullable_column=True)


def _range(value: Any, categories: list[Any], labels: set[str], path: str) -> Issues:
    if value is None:
        return
    problems = list(_closed(value, ("start", "end"), path))
    if problems:
        yield from problems
        return
    start, end = value.get("start"), value.get("end")
    if not (_member(start, labels) and _member(end, labels)):
        yield Issue(path, "start and end must be category labels shown exactly once", "unknown_category")
    elif categories.index(start) > categories.index(end):
        yield Issue(path, "start must not come after end", "range")


def _point(value: Any, names: set[str], labels: set[str], path: str) -> Issues:
    if value is None:
        return
    problems = list(_closed(value, ("series", "category"), path))
    if problems:
        yield from problems
        return
    if not (_member(value.get("series"), names) and _member(value.get("category"), labels)):
        yield Issue(path, "must name a series and a category label shown exactly once", "unknown_point")


def _draft_fits(value: Any, field: Mapping[str, Any]) -> bool:
    kind = field["type"]
    if value is None:
        return True
    if kind == "number":
        return _is_number(value) and type(value) is not bool
    if kind == "select":
        return value == "" or _member(value, set(field.get("options", ())))
    return _is_str(value, DRAFT_LENGTH)


def _form(node: Any, props: Mapping[str, Any], path: str) -> Issues:
    problems = list(_closed(node, ("drafts",), path))
    if problems:
        yield from problems
        return
    drafts = node.get("drafts", {})
    if type(drafts) is not dict:
        yield Issue(path + "/drafts", "must be an object of field drafts", "type")
        return
    fields = {f["name"]: f for f in props["fields"]}
    if any(name not in fields for name in drafts):
        yield Issue(path + "/drafts", "drafts may only name the form's fields", "unknown_field")
        return
    for name, value in drafts.items():
        if not _draft_fits(value, fields[name]):
            yield Issue(f"{path}/drafts/{name}", "does not fit the field's type or options", "draft")


def _evidence(node: Any, props: Mapping[str, Any], path: str) -> Issues:
    problems = list(_closed(node, ("category", "expanded"), path))
    if problems:
        yield from problems
        return
    items = props["items"]
    categories = {item["category"] for item in items if "category" in item}
    if node.get("category") is not None and not _member(node.get("category"), categories):
        yield Issue(path + "/category", "must be null or a category of the items", "unknown_category")
    if not _members(node.get("expanded", []), {item["id"] for item in items}):
        yield Issue(path + "/expanded", "must list distinct item ids of the evidence", "unknown_item")


def _table(node: Any, props: Mapping[str, Any], path: str) -> Issues:
    yield from _table_state(node, _unique(list(props["columns"])), path, nullable_column=False)


_RULES: dict[str, Callable[[Any, Mapping[str, Any], str], Issues]] = {
    "Chart": _chart, "Table": _table, "FollowUpForm": _form, "Evidence": _evidence,
}


def node_issues(nodes: Any, block: Mapping[str, Any]) -> list[Issue]:
    """Every problem of `nodes` against the block (at most `MAX_ISSUES`); empty when valid."""
    if type(nodes) is not dict:
        return [Issue("/nodes", "must be an object of element ids", "type")]
    elements = _elements(block)
    problems: list[Issue] = []
    for node_id, node in nodes.items():
        element = elements.get(node_id)
        if element is None or element["type"] not in STATEFUL:
            # The id itself is never echoed: it may be anything the client sent.
            problems.append(Issue("/nodes", "view state may only name Chart, Table, FollowUpForm and Evidence "
                                            "elements of the block", "unknown_node"))
            break
        problems.extend(_RULES[element["type"]](node, element.get("props", {}), f"/nodes/{node_id}"))
        if len(problems) >= MAX_ISSUES:
            break
    return problems[:MAX_ISSUES]


def check_nodes(nodes: Any, block: Mapping[str, Any]) -> Nodes:
    """`nodes` if it is a valid view state of `block`, else `ViewStateError`."""
    problems = node_issues(nodes, block)
    if problems:
        raise ViewStateError(problems)
    try:
        state_text(nodes)
    except UIError:
        raise ViewStateError([Issue("/nodes", "must be plain JSON", "type")]) from None
    return dict(nodes)


# -- migration (the seed's table: keep what is compatible, clear the rest) ---------------------


def _keep(node: Mapping[str, Any], node_id: str, block: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The fields of `node` among `names` that still pass the element's strict check, one at a time."""
    element = _elements(block)[node_id]
    kept: dict[str, Any] = {}
    for name in names:
        if name in node:
            candidate = {**kept, name: node[name]}
            if element["type"] in ("Table",):
                candidate.setdefault("selection", [])
            if not list(_RULES[element["type"]](candidate, element.get("props", {}), "")):
                kept[name] = node[name]
    return kept


def _migrate_chart(node: Mapping[str, Any], node_id: str, block: Mapping[str, Any],
                   same_series: bool) -> dict[str, Any]:
    names: tuple[str, ...] = ("view", "range", "selected_point", "detail_open")
    if same_series:
        names = ("view", "hidden_series", "range", "selected_point", "detail_open")
    kept = _keep(node, node_id, block, names)
    table = node.get("table")
    if isinstance(table, Mapping):
        inner = {"search": table["search"]} if _is_str(table.get("search"), SEARCH_LENGTH) else {}
        if same_series and table.get("sort") is not None:
            inner["sort"] = table["sort"]
        candidate = {"table": {**inner, "selection": []}}
        props = _elements(block)[node_id].get("props", {})
        if list(_chart(candidate, props, "")):
            candidate["table"].pop("sort", None)
        kept.update(candidate)
    return kept


def _migrate_form(node: Mapping[str, Any], field_types: Mapping[str, str] | None,
                  props: Mapping[str, Any]) -> dict[str, Any]:
    drafts = node.get("drafts")
    if not isinstance(drafts, Mapping):
        return {}
    fields = {f["name"]: f for f in props["fields"]}
    kept = {name: value for name, value in drafts.items()
            if name in fields and field_types is not None and field_types.get(name) == fields[name]["type"]
            and _draft_fits(value, fields[name])}
    return {"drafts": kept}


def migrate_nodes(nodes: Any, basis: Mapping[str, Any] | None, block: Mapping[str, Any]) -> Nodes:
    """The part of `nodes` still compatible with `block`, given the basis the state was saved with.

    Charts keep their view, range and point when the labels still locate them, hidden series
    and the data table's sort only when the series names and order are unchanged; tables keep
    the search and a sort whose column still exists; forms keep drafts of fields with the
    same name and type; evidence keeps expanded items that still exist and a category filter
    that still matches (else all).  `basis` None (unknown) clears whatever needs it.
    """
    if not isinstance(nodes, Mapping):
        return {}
    elements, current = _elements(block), basis_of(block)
    migrated: Nodes = {}
    for node_id, node in nodes.items():
        element = elements.get(node_id)
        old = (basis or {}).get(node_id)
        if element is None or element["type"] not in STATEFUL or not isinstance(node, Mapping):
            continue
        kind = element["type"]
        if old is not None and old.get("type") != kind:
            continue
        if kind == "Chart":
            same = old is not None and old.get("series") == current[node_id]["series"]
            migrated[node_id] = _migrate_chart(node, node_id, block, same)
        elif kind == "FollowUpForm":
            migrated[node_id] = _migrate_form(node, None if old is None else old.get("fields"), element["props"])
        elif kind == "Table":
            migrated[node_id] = {**_keep(node, node_id, block, ("search", "sort")), "selection": []}
        else:
            migrated[node_id] = _keep(node, node_id, block, ("category", "expanded"))
    return migrated
