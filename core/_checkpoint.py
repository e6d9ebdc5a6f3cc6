"""The checkpoint envelope of the component stream (seed 000 section 12).

A checkpoint (frame) is a closed object: the fixed envelope fields plus a full document
`snapshot`.  `parse_checkpoint` validates one exactly, in the seed's order: safe JSON and
the 266,240-byte frame budget, the closed envelope and its revision arithmetic, then the
snapshot again through `parse_document` (its issues located under `/snapshot`).
`build_checkpoint` and `frame_bytes` are the producer's side of the same shape.

The second half is what a receiver keeps from one checkpoint to the next: the bounded
seq -> digest log, the per-generation freeze rules between two snapshots, and the
structural sharing that gives untouched nodes of a new snapshot the previous objects.
"""

from __future__ import annotations

from itertools import islice
from typing import Any, Iterator, Mapping

import orjson

from ._remote_rules import (
    Issues,
    ascii_token,
    closed_object,
    identifier,
    integer,
    is_integral,
    json_object,
    one_of,
    text,
)
from .canonical import hash_canonical_json
from .document import ParsedDocument, parse_document
from .errors import MAX_ISSUES, Issue, UISchemaError, UIStreamError
from .frozen import FrozenDict, FrozenList
from .limits import MESSAGE_LENGTH, SOURCE_CALL_ID_LENGTH, UI_LIMITS, UI_PROTOCOL_LIMITS
from .safe_json import assert_safe_json

PROTOCOL = "dsh.intelligent-ui.stream"
VERSION = "1.0"
MUTATION_TYPES = ("add", "update", "remove")
TERMINAL_TYPES = ("complete", "cancel", "error")
FRAME_TYPES = ("snapshot", *MUTATION_TYPES, *TERMINAL_TYPES)
MAX_GENERATION = 1_000_000_000
MAX_SEQ = UI_PROTOCOL_LIMITS["maxStreamFrames"]
MAX_REVISION = 256
FRAME_BYTES = UI_PROTOCOL_LIMITS["maxStreamFrameBytes"]

# The seed gives the fixed shell 4 levels of depth and 64 values on top of the general
# JSON limits; the snapshot is then held to the document's own limits by parse_document.
_FRAME_LIMITS = {
    "max_bytes": FRAME_BYTES,
    "max_depth": UI_LIMITS["maxJsonDepth"] + 4,
    "max_values": UI_LIMITS["maxJsonValues"] + 64,
}
_INTEGER_FIELDS = ("generation", "seq", "baseRevision", "revision")
ENVELOPE_ORDER = (
    "protocol", "version", "sourceCallId", "uiId", "generation", "seq",
    "baseRevision", "revision", "type", "snapshot", "message",
)  # fmt: skip


def _nullable_revision(value: Any) -> Issues:
    if value is not None:
        yield from integer(0, MAX_REVISION)(value)


_ENVELOPE = closed_object(
    {
        "protocol": one_of(PROTOCOL),
        "version": one_of(VERSION),
        "sourceCallId": ascii_token(SOURCE_CALL_ID_LENGTH),
        "uiId": identifier,
        "generation": integer(1, MAX_GENERATION),
        "seq": integer(1, MAX_SEQ),
        "baseRevision": _nullable_revision,
        "revision": integer(0, MAX_REVISION),
        "type": one_of(*FRAME_TYPES),
        "snapshot": json_object,
    },
    {"message": text(0, MESSAGE_LENGTH)},
)


def _arithmetic(frame: dict) -> Issues:
    """`seq > revision`; `baseRevision` null only for a snapshot; revision steps by type."""
    seq, base, revision, kind = (frame.get(key) for key in ("seq", "baseRevision", "revision", "type"))
    if not (is_integral(seq) and is_integral(revision) and kind in FRAME_TYPES):
        return  # the field rules already reported the cause
    if seq <= revision:
        yield Issue("/seq", "seq must be greater than revision", "sequence")
    if kind == "snapshot":
        if base is not None:
            yield Issue("/baseRevision", "a snapshot frame has baseRevision null", "sequence")
    elif base is None:
        yield Issue("/baseRevision", f"a {kind} frame needs a baseRevision", "sequence")
    elif is_integral(base):
        step = 1 if kind in MUTATION_TYPES else 0
        if revision != base + step:
            rule = "baseRevision + 1" if step else "baseRevision"
            yield Issue("/revision", f"a {kind} frame must have revision = {rule}", "sequence")


def envelope_issues(value: Any) -> list[Issue]:
    """The problems of a frame's envelope (its snapshot is checked separately)."""
    issues = list(islice(_ENVELOPE(value), MAX_ISSUES))
    if not issues:
        issues = list(_arithmetic(value))
    return issues


def parse_checkpoint(value: Any) -> tuple[FrozenDict, int]:
    """A validated, frozen checkpoint and its JSON byte size; else `UIStreamError`."""
    try:
        size = assert_safe_json(value, **_FRAME_LIMITS)
    except UISchemaError as error:
        raise UIStreamError(error.issues) from None
    issues = envelope_issues(value)
    if issues:
        raise UIStreamError(issues)
    try:
        snapshot = parse_document(value["snapshot"])
    except UISchemaError as error:
        raise UIStreamError([issue.prefixed("/snapshot") for issue in error.issues]) from None
    if value["uiId"] != snapshot["id"]:
        raise UIStreamError([Issue("/uiId", "uiId must equal the snapshot's document id", "binding")])
    # Integral fields come back as `int` (a JSON `3.0` is the JS number 3).
    fields = {key: value[key] for key in ENVELOPE_ORDER if key in value}
    for key in _INTEGER_FIELDS:
        if fields[key] is not None:
            fields[key] = int(fields[key])
    fields["snapshot"] = snapshot
    return FrozenDict(fields), size


def build_checkpoint(
    *,
    source_call_id: str,
    generation: int,
    seq: int,
    base_revision: int | None,
    revision: int,
    kind: str,
    snapshot: FrozenDict,
    message: str | None = None,
) -> FrozenDict:
    """A producer's frame, fields in the order of the seed's interface."""
    fields = {
        "protocol": PROTOCOL,
        "version": VERSION,
        "sourceCallId": source_call_id,
        "uiId": snapshot["id"],
        "generation": generation,
        "seq": seq,
        "baseRevision": base_revision,
        "revision": revision,
        "type": kind,
        "snapshot": snapshot,
    }
    if message is not None:
        fields["message"] = message
    return FrozenDict(fields)


def frame_bytes(frame: FrozenDict, snapshot_bytes: int) -> int:
    """JSON bytes of a producer's frame, from its snapshot's known size (no re-walk)."""
    shell = orjson.dumps({**frame, "snapshot": 0})  # envelope values are ints and strings
    return len(shell) - 1 + snapshot_bytes


# ---------------------------------------------------------------------------------------
# What a receiver keeps between frames: digests, the freeze rules, shared subtrees.


class DigestLog:
    """seq -> SHA-256 digest of each frame taken in, hashed on first need.

    A persistent list (each state points at its predecessor's log), so a producer never
    pays for hashing a whole snapshot per patch; a receiver hashes eagerly.
    """

    __slots__ = ("previous", "seq", "_frame", "_digest", "_table")

    def __init__(self, previous: "DigestLog | None", seq: int, frame: FrozenDict, *, eager: bool = False) -> None:
        self.previous, self.seq = previous, seq
        self._frame: FrozenDict | None = frame
        self._digest: str | None = None
        self._table: FrozenDict | None = None
        if eager:
            self.digest()

    def digest(self) -> str:
        """This frame's digest (the digest is stored before the frame is let go)."""
        digest = self._digest
        if digest is None:
            frame = self._frame
            if frame is None:  # another thread finished in between
                return self._digest  # type: ignore[return-value]
            digest = self._digest = hash_canonical_json(frame)
            self._frame = None
        return digest

    def table(self) -> FrozenDict:
        """Every digest of the log by seq (at most 256 entries: seqs are distinct)."""
        if self._table is None:
            pending: list[DigestLog] = []
            node: DigestLog | None = self
            while node is not None and node._table is None:
                pending.append(node)
                node = node.previous
            table = dict(node._table) if node is not None else {}
            for each in reversed(pending):
                table[each.seq] = each.digest()
            self._table = FrozenDict(table)
        return self._table


def _json_kind(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        return 1
    if isinstance(value, str):
        return 2
    if isinstance(value, (int, float)):
        return 3
    return 4 if isinstance(value, dict) else 5 if isinstance(value, list) else 6


def json_equal(left: Any, right: Any) -> bool:
    """Equality of JSON values as JavaScript sees them (`1 == 1.0`, but `true != 1`)."""
    stack = [(left, right)]
    while stack:
        a, b = stack.pop()
        if a is b:
            continue
        kind = _json_kind(a)
        if kind != _json_kind(b):
            return False
        if kind == 4:
            if a.keys() != b.keys():
                return False
            stack.extend((a[key], b[key]) for key in a)
        elif kind == 5:
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b))
        elif a != b:
            return False
    return True


def subtree(node: Mapping, pointer: str) -> Iterator[tuple[Mapping, str]]:
    """Every node of a subtree with its document path, in document order."""
    stack = [(node, pointer)]
    while stack:
        current, path = stack.pop()
        yield current, path
        children = current.get("children", ())
        for position in range(len(children) - 1, -1, -1):
            stack.append((children[position], f"{path}/children/{position}"))


def _share_node(node: FrozenDict, previous: Mapping[str, FrozenDict]) -> FrozenDict:
    """`node`, built from the previous frame's objects wherever the content is the same."""
    old = previous.get(node["id"])
    children = node.get("children")
    if children is not None:
        shared = [_share_node(child, previous) for child in children]
        old_children = old.get("children") if old is not None else None
        if old_children is not None and len(old_children) == len(shared) and all(
            a is b for a, b in zip(old_children, shared)
        ):
            children = old_children
        elif any(a is not b for a, b in zip(children, shared)):
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


def share_unchanged(before: FrozenDict, after: FrozenDict) -> FrozenDict:
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


def _first_path(root: Mapping, pointer: str, wanted: Any) -> str:
    """The document path of the first node (in document order) that `wanted` accepts."""
    return next(path for node, path in subtree(root, pointer) if wanted(node))


def frozen_rule_issues(before: FrozenDict, after: FrozenDict, same_revision: bool) -> list[Issue]:
    """The per-generation freeze rules between two valid snapshots of one generation."""
    issues = [
        Issue(f"/snapshot/{key}", f"`{key}` is frozen for the generation", "frozen")
        for key in _FROZEN_HEADER
        if (key in before) != (key in after) or (key in before and not json_equal(before[key], after[key]))
    ]
    if before["root"]["id"] != after["root"]["id"]:
        issues.append(Issue("/snapshot/root/id", "the root id is frozen for the generation", "frozen"))
    old_types, new_types = before.model.node_types, after.model.node_types
    for node_id, kind in new_types.items():
        if old_types.get(node_id, kind) != kind:
            path = _first_path(after["root"], "/snapshot/root", lambda node: node["id"] == node_id)
            issues.append(Issue(f"{path}/type", "an existing node id keeps its component type", "frozen"))
    old_domains, new_domains = before.model.select_domains, after.model.select_domains
    for field in sorted(old_domains.keys() | new_domains.keys()):
        if field not in new_domains:
            issues.append(Issue(f"/snapshot/state/{field}", "the last Select of this field cannot be removed: "
                                "its option set is frozen for the generation", "frozen_domain"))
        elif old_domains.get(field) != new_domains[field]:
            path = _first_path(after["root"], "/snapshot/root",
                               lambda node: node["type"] == "Select" and node["props"]["bind"] == field)
            issues.append(Issue(f"{path}/props/options", "a Select must keep its field's option "
                                "set for the generation (a new Select reuses the existing set)", "frozen_domain"))
    if same_revision and not issues and not json_equal(before, after):
        issues.append(Issue("/revision", "a document change must increase the revision", "sequence"))
    return issues[:MAX_ISSUES]
