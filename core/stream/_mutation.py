"""Stream mutations: the closed event shapes and the candidate tree each one builds.

An event is checked on its own first (safe JSON within 64 KiB, a closed shape, a target
that exists); its issues are located relative to the event (`/nodeId`, `/index`).  The
candidate root is then built by path copying: only the nodes on the path from the root
to the change are new (plain dicts and lists), every other subtree is the very object of
the current document, so the document layer re-validates only what changed.  Issues of
the candidate keep their document paths (`/root/children/2/props/label`).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import islice
from typing import Any, Final

from core._rules import Issues, closed_object, is_integral, json_object, one_of, text
from core.document._components import LAYOUTS
from core.errors import MAX_ISSUES, Issue, UISchemaError, UIStreamError
from core.json._frozen import OBJECT_KINDS, FrozenDict, thaw
from core.json.safe import assert_safe_json
from core.limits import MESSAGE_LENGTH, UI_LIMITS, UI_PROTOCOL_LIMITS
from core.stream._checkpoint import MUTATION_TYPES, TERMINAL_TYPES
from core.stream._continuity import subtree

MUTATION_BYTES = UI_PROTOCOL_LIMITS["maxStreamMutationBytes"]
MAX_JSON_DEPTH = UI_LIMITS["maxJsonDepth"]
EVENT_TYPES = (*MUTATION_TYPES, *TERMINAL_TYPES)

# id -> (parent id or None for the root, position among the parent's children)
NodeIndex = Mapping[str, tuple["str | None", int]]


def _node_id(value: Any) -> Issues:
    if type(value) is not str:
        yield Issue("", "expected a node id string", "type")


def _position(value: Any) -> Issues:
    if not is_integral(value):
        yield Issue("", "expected an integer", "type")
    elif value < 0:
        yield Issue("", "must be between 0 and the parent's number of children", "range")


_SHAPES = {
    "add": closed_object(
        {"type": one_of("add"), "parentId": _node_id, "index": _position, "node": json_object}
    ),
    "update": closed_object({"type": one_of("update"), "nodeId": _node_id, "props": json_object}),
    "remove": closed_object({"type": one_of("remove"), "nodeId": _node_id}),
    **{kind: closed_object({"type": one_of(kind)}, {"message": text(0, MESSAGE_LENGTH)}) for kind in TERMINAL_TYPES},
}


def read_event(event: Any) -> str:
    """The event's type once it is safe JSON of at most 64 KiB with a closed shape."""
    try:
        assert_safe_json(event, max_bytes=MUTATION_BYTES)
    except UISchemaError as error:
        raise UIStreamError(error.issues) from None
    if type(event) not in OBJECT_KINDS:
        raise UIStreamError([Issue("", "an event must be an object", "type")])
    kind = event.get("type")
    if type(kind) is not str or kind not in _SHAPES:
        raise UIStreamError([Issue("/type", f"must be one of: {', '.join(EVENT_TYPES)}", "enum")])
    issues = list(islice(_SHAPES[kind](event), MAX_ISSUES))
    if issues:
        raise UIStreamError(issues)
    return kind


def build_index(root: Mapping[str, Any]) -> dict[str, tuple[str | None, int]]:
    """The parent and position of every node (one walk, once per document lineage)."""
    index: dict[str, tuple[str | None, int]] = {root["id"]: (None, 0)}
    stack = [root]
    while stack:
        node = stack.pop()
        for position, child in enumerate(node.get("children", ())):
            index[child["id"]] = (node["id"], position)
            stack.append(child)
    return index


class Trail:
    """The nodes from the root down to one node, and each one's position in its parent.

    Plain classes with `Final` attributes, not frozen dataclasses: each patch builds them, and
    a compiled dataclass's `__init__` stays interpreted (core/document/_model.py)."""

    __slots__ = ("nodes", "positions")

    def __init__(self, nodes: tuple[Mapping[str, Any], ...], positions: tuple[int, ...]) -> None:
        self.nodes: Final = nodes
        self.positions: Final = positions

    @property
    def target(self) -> Mapping[str, Any]:
        return self.nodes[-1]

    @property
    def pointer(self) -> str:
        """The document path of the target (`/root/children/1/children/0`)."""
        return "/root" + "".join(f"/children/{position}" for position in self.positions)

    @property
    def json_depth(self) -> int:
        """JSON nesting level of the target object in the whole document (root = 2)."""
        return 2 * len(self.nodes)

    def rebuild(self, replacement: dict[str, Any]) -> dict[str, Any]:
        """A candidate root where the target is `replacement` (path nodes are copied)."""
        node = replacement
        for parent, position in zip(reversed(self.nodes[:-1]), reversed(self.positions), strict=False):
            children = list(parent["children"])
            children[position] = node
            node = {**parent, "children": children}
        return node


def trail(root: Mapping[str, Any], index: NodeIndex, node_id: str) -> Trail:
    """The trail to an existing node, O(depth)."""
    chain: list[str] = []
    current: str | None = node_id
    while current is not None:
        chain.append(current)
        current = index[current][0]
    nodes = [root]
    positions: list[int] = []
    for child_id in reversed(chain[:-1]):
        position = index[child_id][1]
        nodes.append(nodes[-1]["children"][position])
        positions.append(position)
    return Trail(tuple(nodes), tuple(positions))


class Candidate:
    """A mutation resolved against a document: the candidate root and where it changed."""

    __slots__ = ("kind", "position", "root", "trail")

    def __init__(self, kind: str, root: dict[str, Any], trail: Trail, position: int = 0) -> None:
        self.kind: Final = kind
        self.root: Final = root
        self.trail: Final = trail  # to the changed node (update, remove) or the parent (add)
        self.position: Final = position  # the child position of an add or a remove


def _unknown_node(index: NodeIndex, node_id: str, field: str) -> None:
    if node_id not in index:
        raise UIStreamError([Issue(f"/{field}", "no node of the document has this id", "not_found")])


def _depth_checked(value: Any, depth_offset: int, pointer: str) -> None:
    """The whole-document JSON depth limit, applied to a new part at its future place."""
    try:
        assert_safe_json(value, max_depth=MAX_JSON_DEPTH - depth_offset)
    except UISchemaError as error:
        # Same issue a from-scratch check of the candidate reports: its path, its limit.
        raise UIStreamError(
            [Issue(pointer + issue.path, f"JSON nesting exceeds {MAX_JSON_DEPTH} levels", issue.code)
             for issue in error.issues]
        ) from None


def plan(document: Mapping[str, Any], index: NodeIndex, node_types: Mapping[str, str],
         event: Mapping[str, Any]) -> Candidate:
    """Resolve an add / update / remove against the document; raise on event errors."""
    kind = event["type"]
    root = document["root"]
    if kind == "add":
        parent_id = event["parentId"]
        _unknown_node(index, parent_id, "parentId")
        if node_types[parent_id] not in LAYOUTS:
            raise UIStreamError([Issue("/parentId", "the parent must be a Row, Column, Grid, Card or Form",
                                       "not_layout")])
        path = trail(root, index, parent_id)
        children = path.target["children"]
        position = int(event["index"])
        if position > len(children):
            raise UIStreamError([Issue("/index", f"must be between 0 and {len(children)}", "range")])
        _depth_checked(event["node"], path.json_depth + 1, f"{path.pointer}/children/{position}")
        node = thaw(event["node"])
        parent = {**path.target, "children": [*children[:position], node, *children[position:]]}
        return Candidate(kind, path.rebuild(parent), path, position)
    node_id = event["nodeId"]
    _unknown_node(index, node_id, "nodeId")
    path = trail(root, index, node_id)
    if kind == "update":
        _depth_checked(event["props"], path.json_depth, f"{path.pointer}/props")
        return Candidate(kind, path.rebuild({**path.target, "props": thaw(event["props"])}), path)
    if len(path.nodes) == 1:
        raise UIStreamError([Issue("/nodeId", "the root node cannot be removed", "root")])
    parent_trail = Trail(path.nodes[:-1], path.positions[:-1])
    position = path.positions[-1]
    children = parent_trail.target["children"]
    parent = {**parent_trail.target, "children": [*children[:position], *children[position + 1:]]}
    return Candidate(kind, parent_trail.rebuild(parent), path, position)


def next_index(index: NodeIndex, candidate: Candidate, new_root: Mapping[str, Any]) -> NodeIndex:
    """The node index of the accepted candidate: O(siblings + changed subtree)."""
    if candidate.kind == "update":
        return index
    updated = dict(index)
    parent_positions = candidate.trail.positions
    if candidate.kind == "remove":
        for node, _ in subtree(candidate.trail.target, ""):
            del updated[node["id"]]
        parent_positions = parent_positions[:-1]
    parent = new_root
    for position in parent_positions:
        parent = parent["children"][position]
    siblings = parent["children"]
    for position in range(candidate.position, len(siblings)):
        updated[siblings[position]["id"]] = (parent["id"], position)
    if candidate.kind == "add":
        for node, _ in subtree(siblings[candidate.position], ""):
            for position, child in enumerate(node.get("children", ())):
                updated[child["id"]] = (node["id"], position)
    return updated


def seen_types(candidate: Candidate, types: Mapping[str, str]) -> Mapping[str, str]:
    """The generation's id -> type record after an add; a reused id must keep its type."""
    if candidate.kind != "add":
        return types
    added = list(subtree(_added(candidate), f"{candidate.trail.pointer}/children/{candidate.position}"))
    for each, path in added:
        if types.get(each["id"], each["type"]) != each["type"]:
            raise UIStreamError([Issue(f"{path}/type", "a node id keeps its component type for the generation",
                                       "frozen")])
    if all(each["id"] in types for each, _ in added):
        return types
    return {**types, **{each["id"]: each["type"] for each, _ in added}}


def domain_change(candidate: Candidate, before: Mapping[str, frozenset[str]], after: Mapping[str,
                                                                                             frozenset[str]]) -> Issue:
    """Locate the Select that changes the generation's frozen option sets."""
    if candidate.kind == "remove":
        for node, path in subtree(candidate.trail.target, candidate.trail.pointer):
            field = _select_field(node)
            if field is not None and field not in after:
                return Issue(path, "the last Select of a field cannot be removed: its option set is frozen "
                             "for this generation", "frozen_domain")
    else:
        start = candidate.trail.pointer
        node = candidate.root
        for position in candidate.trail.positions:
            node = node["children"][position]
        if candidate.kind == "add":
            start += f"/children/{candidate.position}"
            node = node["children"][candidate.position]
        for each, path in subtree(node, start):
            field = _select_field(each)
            if field is not None and before.get(field) != after.get(field):
                return Issue(f"{path}/props/options", "a Select must keep its field's option set for this "
                             "generation (a new Select reuses the existing set)", "frozen_domain")
    return Issue("", "the Select option sets are frozen for this generation", "frozen_domain")


def _select_field(node: Mapping[str, Any]) -> str | None:
    if node.get("type") != "Select":
        return None
    props = node.get("props")
    bind = props.get("bind") if isinstance(props, Mapping) else None
    return bind if isinstance(bind, str) else None

def retired_after(candidate: Candidate, retired: FrozenDict) -> FrozenDict:
    """The generation's removed ids and their types after the accepted candidate: a remove adds
    its subtree's, an add takes back the ids it re-uses (with their type: `seen_types` refused
    any other); an update keeps the very object (a host compares it by identity)."""
    if candidate.kind == "remove":
        return FrozenDict({**retired, **{node["id"]: node["type"] for node, _ in subtree(candidate.trail.target, "")}})
    if candidate.kind != "add" or not retired:
        return retired
    back = {each["id"] for each, _ in subtree(_added(candidate), "")}
    if back.isdisjoint(retired):
        return retired
    return FrozenDict({key: kind for key, kind in retired.items() if key not in back})


def _added(candidate: Candidate) -> Mapping[str, Any]:
    """The node an add candidate inserts, in its new root."""
    node = candidate.root
    for position in (*candidate.trail.positions, candidate.position):
        node = node["children"][position]
    return node
