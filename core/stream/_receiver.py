"""The receiver's incremental check: a successor frame costs what it changed (seed 000 §12).

A subscriber holding revision r receives r+1 as a whole snapshot in freshly decoded
objects.  `successor_envelope` reads the envelope of such a frame and `successor_document`
compares its snapshot with the held, validated one by value, node by node and at C speed:
a subtree equal to its held counterpart becomes the held object.  The producer's
incremental revalidation (`DocumentCache.revalidate`) then visits only the changed spine
and the new subtrees, each safe-JSON checked first, as the producer checks an event.

Equality is Python's `==`, trusted only after one `marshal` pass has shown that every
object of the frame has an exact builtin type (marshal refuses subclasses and foreign
objects), so comparing runs no user code.  Between exact JSON types `==` tells a list from
a tuple and NaN from everything, and differs from JSON equality only for a bool against
the number 0 or 1 (`1.0 == 1` and `-0.0 == 0` hold in JavaScript too).  So where the held
value holds a bool, 0 or 1 (`HeldBytes.ambiguous`), the orjson bytes must match as well.
A held subtree thus stands only for an identical JSON value, with its safety, size and depth.

Anything this path does not expect (a changed header, a frame the full check would reject,
an old or repeated seq, ...) returns None and the caller runs the full check, so verdicts
and issues are always exactly the full check's.
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Mapping
from operator import eq
from typing import Any

import orjson

from core.document._revalidation import DocumentCache
from core.document.model import DocumentModel, ParsedDocument
from core.errors import UISchemaError
from core.json._text import utf16_length
from core.json.safe import assert_safe_json
from core.limits import MAX_REVISION, MESSAGE_LENGTH, UI_LIMITS
from core.stream._checkpoint import (
    ENVELOPE_ORDER,
    MAX_SEQ,
    MUTATION_TYPES,
    PROTOCOL,
    TERMINAL_TYPES,
    VERSION,
)

_ENVELOPE_KEYS = frozenset(ENVELOPE_ORDER)
_REQUIRED_KEYS = _ENVELOPE_KEYS - {"message"}
_SCALARS = (str, int, type(None))  # envelope values the fast path takes (no 3.0, no bool)
_SUCCESSOR_STEP = {**dict.fromkeys(MUTATION_TYPES, 1), **dict.fromkeys(TERMINAL_TYPES, 0)}  # revision - base


class _Fallback(Exception):
    """The incremental path cannot decide; the full check will."""


class HeldBytes:
    """Which held (validated, frozen) values `==` could confuse with other JSON, by object.

    One generation's memo; entries keep their value alive, so an `id` is never reused while
    it is a key.  A layout's flag is its own entries' and its children's, so a new layout on
    a patch's path costs its own entries, never its subtree: encoding each whole held subtree
    cost a deep document's frame tens of milliseconds, and keeping those bytes grew the memo by
    ~0.8 MB a frame (an audit: 193 MB after 250 frames).  The memo is emptied once it holds
    `limit` entries (`MEMO_LIMIT`) or `MEMO_BYTES` of values, which drops the values a
    generation replaced.
    """

    __slots__ = ("_limit", "_lists", "_memo", "_pinned")

    def __init__(self, limit: int = 0) -> None:
        self._memo: dict[int, tuple[Any, bool]] = {}
        self._lists: dict[int, tuple[list[Any], tuple[int, ...]]] = {}
        self._limit = limit or MEMO_LIMIT
        self._pinned = 0  # JSON bytes of the values the memo keeps alive (a layout's own entries)

    def ambiguous(self, value: Any) -> bool:
        """Whether `==` could take a bool of a new value for a number of this one, or back."""
        entry = self._memo.get(id(value))
        if entry is not None and entry[0] is value:
            return entry[1]
        children = value.get("children") if isinstance(value, dict) else None
        if isinstance(children, list):
            own = orjson.dumps({key: item for key, item in value.items() if key != "children"})
            flag = _AMBIGUOUS.search(own) is not None or any(map(self.ambiguous, children))
        else:
            own = orjson.dumps(value)
            flag = _AMBIGUOUS.search(own) is not None
        self._make_room(len(own))
        self._memo[id(value)] = (value, flag)
        return flag

    def ambiguous_children(self, held: list[Any]) -> tuple[int, ...]:
        """The positions of the `ambiguous` children of a held children list."""
        entry = self._lists.get(id(held))
        if entry is None or entry[0] is not held:
            positions = tuple(i for i, flag in enumerate(map(self.ambiguous, held)) if flag)
            self._make_room(0)
            entry = self._lists[id(held)] = (held, positions)
        return entry[1]

    def _make_room(self, size: int) -> None:
        """Empty the memo before it holds `limit` entries or `MEMO_BYTES` of values: an entry keeps
        its value alive, and the values a generation replaced are of no further use."""
        if len(self._memo) >= self._limit or len(self._lists) >= self._limit or self._pinned + size > MEMO_BYTES:
            self._memo.clear()
            self._lists.clear()
            self._pinned = 0
        self._pinned += size


# Entries of one generation's memo before it is emptied: a 200-component document's held values
# (nodes, their entries, children lists) are a few thousand; a generation replaces at most 256
# frames' paths.
MEMO_LIMIT = 16_384
# JSON bytes of the values the memo keeps alive before it is emptied: four documents at their limit,
# so a generation whose frames each replace a large node does not keep every replaced one.
MEMO_BYTES = 4 * UI_LIMITS["maxDocumentBytes"]


# A held (frozen) value prints a bool as true/false and the numbers 0 and 1 as 0 and 1 (integral
# floats are ints once frozen), alone or between delimiters.  Matches inside strings only cost
# an extra byte comparison.
_AMBIGUOUS = re.compile(rb"^(?:true|false|0|1)$|[:,\[](?:true|false|0|1)[,\]}]")


def exact_types(value: Any) -> bool:
    """Whether every object inside `value` has an exact builtin type (one C pass, no user code)."""
    try:
        marshal.dumps(value, 4)
    except ValueError:  # a subclass, a foreign object, or nesting beyond marshal's limit
        return False
    return True


def _same_bytes(new: Any, held: Any) -> bool:
    try:
        return orjson.dumps(new) == orjson.dumps(held)
    except TypeError:  # a non-string key, a lone surrogate, an int beyond 64 bits
        raise _Fallback from None


def _safe(value: Any) -> None:
    try:
        assert_safe_json(value)
    except UISchemaError:
        raise _Fallback from None


def successor_envelope(frame: Any, held: Mapping[str, Any]) -> dict[str, Any] | None:
    """The fields (in the envelope order) of a plain successor of the held checkpoint, else None.

    Plain means: exact types throughout, envelope values strings, ints or null, the same
    protocol, source call, UI and generation, a newer seq, a mutation or terminal type and
    revisions that follow the held one: a subset of what the full check accepts.
    """
    # Exact keys before any is hashed (a `str` subclass's `__hash__` would run); the values
    # are compared by type below, and the whole frame by `exact_types` last.
    if type(frame) is not dict or any(type(key) is not str for key in frame):
        return None
    if not _ENVELOPE_KEYS.issuperset(frame) or not _REQUIRED_KEYS.issubset(frame):
        return None
    if type(frame["snapshot"]) is not dict or any(
            type(value) not in _SCALARS for key, value in frame.items() if key != "snapshot"):
        return None
    seq, base, revision, kind = frame["seq"], frame["baseRevision"], frame["revision"], frame["type"]
    if (frame["protocol"] != PROTOCOL or frame["version"] != VERSION or kind not in _SUCCESSOR_STEP
            or frame["sourceCallId"] != held["sourceCallId"] or frame["uiId"] != held["uiId"]
            or frame["generation"] != held["generation"] or type(seq) is not int or type(base) is not int
            or type(revision) is not int):
        return None
    if not (held["seq"] < seq <= MAX_SEQ and held["revision"] <= revision < seq and 0 <= base <= MAX_REVISION
            and revision == base + _SUCCESSOR_STEP[kind] and revision <= MAX_REVISION):
        return None
    if seq == held["seq"] + 1 and base != held["revision"]:
        return None
    message = frame.get("message", "")
    if type(message) is not str or utf16_length(message) > MESSAGE_LENGTH:
        return None
    if not exact_types(frame):
        return None
    return {key: frame[key] for key in ENVELOPE_ORDER if key in frame}  # the full check's order


def successor_document(
    snapshot: dict[str, Any], held: ParsedDocument, cache: DocumentCache, memo: HeldBytes, *, same_revision: bool,
    retired: Mapping[str, str],
) -> tuple[ParsedDocument, DocumentModel] | None:
    """The validated snapshot, sharing every unchanged node with `held`; None if undecided.

    `cache` is the generation's revalidation memo and knows `held`.  The header must be
    unchanged (the freeze rules hold most of it; a new title takes the full check).  `retired`
    holds the types of ids the generation removed: one coming back keeps its type.
    """
    if list(snapshot) != list(held):
        return None
    sharing = _Sharing(memo)
    try:
        for key, value in snapshot.items():
            if key != "root" and not sharing.same(value, held[key]):
                return None
        root = sharing.layout(snapshot["root"], held["root"])
    except _Fallback:
        return None
    if root is held["root"]:
        return held, held.model
    if same_revision:
        return None  # a change without a new revision: the full check reports it
    try:
        document, model = cache.revalidate(root, held)
    except UISchemaError:
        return None
    before = held.model
    types = {**before.node_types, **retired} if retired else before.node_types
    if model.select_domains != before.select_domains or not sharing.types_kept(types):
        return None
    return document, model


class _Sharing:
    """One comparison of a new snapshot's tree with the held one."""

    __slots__ = ("fresh", "memo")

    def __init__(self, memo: HeldBytes) -> None:
        self.memo = memo
        self.fresh: list[Any] = []  # new subtrees that replace no held node as a whole

    def same(self, new: Any, held: Any) -> bool:
        """`new` (exact types only) is the very JSON value `held` is."""
        return new == held and (not self.memo.ambiguous(held) or _same_bytes(new, held))

    def layout(self, new: Any, held: Mapping[str, Any]) -> Any:
        """A layout node of the new snapshot at the held node's place, built from held parts.

        Its own entries are compared one by one and its children as whole subtrees, so a
        patch deep in the tree costs the siblings on its path, not a walk of every node.
        """
        children = new.get("children") if type(new) is dict else None
        if type(children) is not list or new.get("id") != held["id"] or new.get("type") != held["type"]:
            raise _Fallback  # another root, or a layout turned into something else
        node = {key: held[key] if key in held and self.same(value, held[key]) else value
                for key, value in new.items() if key != "children"}
        unchanged = len(node) + 1 == len(held) and all(key in held and node[key] is held[key] for key in node)
        if not unchanged:
            _safe(node)
        shared = self.children(children, held["children"])
        if unchanged and shared is held["children"]:
            return held
        return {key: shared if key == "children" else node[key] for key in new}  # the frame's key order

    def children(self, children: list[Any], held: list[Any]) -> list[Any]:
        """`children` with the held child object wherever the held list has the same child.

        The equal prefix and suffix are found with one C-speed comparison per child; only
        the children between them are looked at one by one.
        """
        prefix, suffix = _common_ends(children, held)
        end, held_end = len(children) - suffix, len(held) - suffix
        for position in self.memo.ambiguous_children(held):
            if (position < prefix or position >= held_end) and not _same_bytes(
                    children[position if position < prefix else position + end - held_end], held[position]):
                raise _Fallback  # equal values, other JSON (a bool for a 0 or 1): the full check decides
        if prefix == len(children) == len(held):
            return held
        counterparts = {child["id"]: child for child in held[prefix:held_end]}
        middle = [self.child(child, counterparts) for child in children[prefix:end]]
        return [*held[:prefix], *middle, *held[held_end:]]

    def child(self, child: Any, counterparts: Mapping[str, Any]) -> Any:
        node_id = child.get("id") if type(child) is dict else None
        held = counterparts.get(node_id) if type(node_id) is str else None
        if held is not None:
            if "children" in held:
                return self.layout(child, held)
            if self.same(child, held):
                return held
        _safe(child)
        self.fresh.append(child)
        return child

    def types_kept(self, types: Mapping[str, str]) -> bool:
        """Every node of the fresh subtrees that the held document has keeps its type there.

        Called once the candidate is valid; the other nodes are held ones or their layouts.
        """
        stack = list(self.fresh)
        while stack:
            node = stack.pop()
            if types.get(node["id"], node["type"]) != node["type"]:
                return False
            stack.extend(node.get("children", ()))
        return True


def _common_ends(new: list[Any], old: list[Any]) -> tuple[int, int]:
    """Lengths of the equal prefix and suffix of two lists (C-speed scans, each pair compared once)."""
    shorter = min(len(old), len(new))
    same = list(map(eq, new[:shorter], old[:shorter]))
    prefix = same.index(False) if False in same else shorter
    if len(new) == len(old):
        tail = same[:prefix - 1 if prefix else None:-1] if prefix < shorter else []
    else:
        tail = list(map(eq, reversed(new[prefix:]), reversed(old[prefix:])))
    suffix = tail.index(False) if False in tail else len(tail)
    return prefix, min(suffix, shorter - prefix)
