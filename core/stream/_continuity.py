"""What a stream keeps from one checkpoint to the next (seed 000 section 12).

The bounded seq -> digest log, the per-generation freeze rules between two snapshots, and
the structural sharing that gives untouched nodes of a new snapshot the previous objects.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, cast

from core.document.model import ParsedDocument
from core.errors import MAX_ISSUES, Issue
from core.json._equality import json_equal
from core.json._frozen import FrozenDict, FrozenList
from core.json.canonical import hash_canonical_json


class DigestLog:
    """seq -> SHA-256 digest of each frame taken in, hashed on first need.

    A persistent list (each state points at its predecessor's log), so a producer never
    pays for hashing a whole snapshot per patch; a receiver hashes eagerly, or, on its
    incremental path, keeps at most `pending` frames unhashed: an unhashed frame keeps the
    parts it changed alive, and a receiver that never read `digests` held every frame of its
    generation (an audit: 40 MB after 128 frames each replacing a 60 KB Table).
    """

    __slots__ = ("_digest", "_frame", "_table", "previous", "seq")

    def __init__(self, previous: DigestLog | None, seq: int, frame: FrozenDict, *, eager: bool = False,
                 pending: int = 0) -> None:
        self.previous, self.seq = previous, seq
        self._frame: FrozenDict | None = frame
        self._digest: str | None = None
        self._table: Mapping[int, str] | None = None
        if eager:
            self.digest()
        elif pending:
            self._hash_beyond(pending)

    def _hash_beyond(self, pending: int) -> None:
        """Hash the unhashed frames before this one's `pending` newest (each is hashed once: the
        walk stops at the first frame already hashed)."""
        node, newer = self.previous, 1
        while node is not None and node._frame is not None:
            if newer >= pending:
                node.digest()
            newer += 1
            node = node.previous

    def digest(self) -> str:
        """This frame's digest (the digest is stored before the frame is let go)."""
        digest = self._digest
        if digest is None:
            frame = self._frame
            if frame is None:  # another thread finished in between: it stored the digest first
                finished = self._digest
                assert finished is not None
                return finished
            digest = self._digest = hash_canonical_json(frame)
            self._frame = None
        return digest

    def table(self) -> Mapping[int, str]:
        """Every digest of the log by seq (at most 256 entries: seqs are distinct)."""
        if self._table is None:
            pending: list[DigestLog] = []
            node: DigestLog | None = self
            known: Mapping[int, str] = {}
            while node is not None:
                if node._table is not None:
                    known = node._table
                    break
                pending.append(node)
                node = node.previous
            table = dict(known)
            for each in reversed(pending):
                table[each.seq] = each.digest()
            self._table = _frozen_table(table)
        return self._table


def _frozen_table(table: dict[int, str]) -> Mapping[int, str]:
    # FrozenDict is typed as a JSON object (str keys); this one is keyed by seq.
    return cast("Mapping[int, str]", FrozenDict(cast("dict[str, str]", table)))


def subtree(node: Mapping[str, Any], pointer: str) -> Iterator[tuple[Mapping[str, Any], str]]:
    """Every node of a subtree with its document path, in document order."""
    stack = [(node, pointer)]
    while stack:
        current, path = stack.pop()
        yield current, path
        children = current.get("children", ())
        for position in range(len(children) - 1, -1, -1):
            stack.append((children[position], f"{path}/children/{position}"))


def _share_node(node: Mapping[str, Any], previous: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any]:
    """`node`, built from the previous frame's objects wherever the content is the same."""
    old = previous.get(node["id"])
    children = node.get("children")
    if children is not None:
        shared = [_share_node(child, previous) for child in children]
        old_children = old.get("children") if old is not None else None
        if old_children is not None and len(old_children) == len(shared) and all(
            a is b for a, b in zip(old_children, shared, strict=False)
        ):
            children = old_children
        elif any(a is not b for a, b in zip(children, shared, strict=False)):
            children = FrozenList(shared)
    props = node["props"]
    if old is not None and old["type"] == node["type"]:
        if json_equal(old["props"], props):
            props = old["props"]
        if props is old["props"] and children is old.get("children") and old.keys() == node.keys():
            return old
    if props is node["props"] and children is node.get("children"):
        return node
    return FrozenDict({**node, "props": props, **({} if children is None else {"children": children})})


def share_unchanged(before: ParsedDocument, after: ParsedDocument) -> ParsedDocument:
    """`after` with every part equal to `before`'s being `before`'s very object.

    A client keyed by node id then sees the same objects for untouched components and
    does not remount them, even though each frame carries a full snapshot.
    """
    previous = {node["id"]: node for node, _ in subtree(before["root"], "")}
    root = _share_node(after["root"], previous)
    fields = {
        key: root if key == "root" else before[key] if key in before and json_equal(before[key], value) else value
        for key, value in after.items()
    }
    if before.keys() == fields.keys() and all(before[key] is value for key, value in fields.items()):
        return before
    shared = ParsedDocument(fields)
    shared.model = after.model  # same content, so the same validated model
    return shared


_FROZEN_HEADER = ("id", "version", "mode", "state", "derived", "actions")


def _first_path(root: Mapping[str, Any], pointer: str, wanted: Any) -> str:
    """The document path of the first node (in document order) that `wanted` accepts."""
    return next(path for node, path in subtree(root, pointer) if wanted(node))


def retired_between(retired: FrozenDict, before: Mapping[str, str], after: Mapping[str, str]) -> FrozenDict:
    """id -> type of each node a receiver's generation saw that its next snapshot no longer holds.

    `retired` is that record before the frame, `before` and `after` the node types of the two
    snapshots; the same object while no id leaves or comes back (the usual patch: one C-speed
    comparison of the id sets)."""
    if before.keys() <= after.keys() and (not retired or retired.keys().isdisjoint(after.keys())):
        return retired
    gone = {**retired, **{node_id: kind for node_id, kind in before.items() if node_id not in after}}
    return FrozenDict({node_id: kind for node_id, kind in gone.items() if node_id not in after})


def frozen_rule_issues(before: ParsedDocument, after: ParsedDocument, same_revision: bool,
                       retired: Mapping[str, str]) -> list[Issue]:
    """The per-generation freeze rules between two valid snapshots of one generation; `retired`
    holds the types of the ids the generation removed before `before` (an id keeps its type)."""
    issues = [
        Issue(f"/snapshot/{key}", f"`{key}` is frozen for the generation", "frozen")
        for key in _FROZEN_HEADER
        if (key in before) != (key in after) or (key in before and not json_equal(before[key], after[key]))
    ]
    if before["root"]["id"] != after["root"]["id"]:
        issues.append(Issue("/snapshot/root/id", "the root id is frozen for the generation", "frozen"))
    old_types, new_types = before.model.node_types, after.model.node_types
    for node_id, kind in new_types.items():
        if old_types.get(node_id, kind) != kind or (node_id in retired and retired[node_id] != kind):
            path = _first_path(after["root"], "/snapshot/root", lambda node, node_id=node_id: node["id"] == node_id)
            issues.append(Issue(f"{path}/type", "an existing node id keeps its component type", "frozen"))
    old_domains, new_domains = before.model.select_domains, after.model.select_domains
    for field in sorted(old_domains.keys() | new_domains.keys()):
        if field not in new_domains:
            issues.append(Issue(f"/snapshot/state/{field}", "the last Select of this field cannot be removed: "
                                "its option set is frozen for the generation", "frozen_domain"))
        elif old_domains.get(field) != new_domains[field]:
            path = _first_path(after["root"], "/snapshot/root",
                               lambda node, field=field: node["type"] == "Select" and node["props"]["bind"] == field)
            issues.append(Issue(f"{path}/props/options", "a Select must keep its field's option "
                                "set for the generation (a new Select reuses the existing set)", "frozen_domain"))
    if same_revision and not issues and not json_equal(before, after):
        issues.append(Issue("/revision", "a document change must increase the revision", "sequence"))
    return issues[:MAX_ISSUES]
