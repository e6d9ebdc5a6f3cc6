"""A document this library validated before, taken back without validating its tree again.

A host that stores every checkpoint it produces (the worker, under a seal: an HMAC over the
stored record) resumes from one after a restart or a fail-over.  Parsing it in full again walks
and checks every component; a restored document instead has its header checked as the full
parse checks it (the fields, derived types and defaults every later patch is judged against:
small, and proportional to what seed 001 asks of a stored record), while its component tree is
walked once for the producer's bookkeeping alone: ids and types, parents and positions, Select
domains, each node's depth and Form ancestry.  No rule of the tree is checked, so a tree that is
not what its caller vouches for is not noticed here (a later patch may then be judged on wrong
facts: only a caller that can prove what it stored restores); the walk checks just enough of
its shape that it can never fail with a Python error.  The totals that only a full walk could
count (JSON bytes, JSON depth, expression nodes) come from the caller, who stored them with
the document (`DocumentCache.restore_facts`).

`RestoredFacts` then finds the facts of a node below the root when a patch first needs them
(core/document/_facts.py): a leaf's by validating it alone; a layout's relative to the node it
was restored from (`Facts.base`), so a patch deep inside a large container counts what it
changes and never walks what it keeps for rules or bytes.  Relative facts cancel between a
node and its patched version; where one stands alone (a removed container), it is validated.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, Final

from core.document._checker import Checker, IssueLimit
from core.document._components import COMPONENTS
from core.document._facts import CHILDREN_BYTES, Facts, FactTree, own_part, primed_checker
from core.document._fields import Field
from core.document._model import DocumentModel
from core.document._tree import ComponentTree
from core.errors import ROOT, Issue, UISchemaError
from core.json._frozen import FrozenDict, FrozenList
from core.json.safe import json_measure

# id(node) -> (node, component depth, inside a Form): where each node of a restored tree stands.
Places = dict[int, tuple[FrozenDict, int, bool]]


class RestoredTree:
    """What the walk of a restored component tree found.

    A plain class with `Final` attributes, as `DocumentModel` (core/document/_model.py)."""

    __slots__ = ("components", "index", "node_types", "places", "select_domains")

    def __init__(self, *, components: int, node_types: dict[str, str], index: dict[str, tuple[str | None, int]],
                 select_domains: dict[str, frozenset[str]], places: Places) -> None:
        self.components: Final = components
        self.node_types: Final = node_types  # in document order, as the full parse collects them
        self.index: Final = index  # id -> (parent id or None for the root, position), as `build_index` gives
        self.select_domains: Final = select_domains
        self.places: Final = places


def unrestorable(message: str) -> UISchemaError:
    """The error of a stored value that is not what a restore takes."""
    return UISchemaError([Issue("", message, "restore")])


def restored_tree(root: Any, fields: Mapping[str, Field], *, every_select: bool = False) -> RestoredTree:
    """Walk a frozen component tree once, in document order, for its bookkeeping (no rule checked).

    Select domains are those of string fields, as a document's model keeps them; with
    `every_select`, of every Select, as a subtree's facts keep them (core/document/_revalidation.py)."""
    walk = _Walk(fields, every_select)
    walk.node(root, None, 0, 1, False)
    return RestoredTree(components=len(walk.node_types), node_types=walk.node_types, index=walk.index,
                        select_domains=walk.selects, places=walk.places)


class _Walk:
    """The walk's findings; recursive (a stored tree nests at most maxJsonDepth / 2 components)."""

    __slots__ = ("every_select", "fields", "index", "node_types", "places", "selects")

    def __init__(self, fields: Mapping[str, Field], every_select: bool) -> None:
        self.fields = fields
        self.every_select = every_select
        self.node_types: dict[str, str] = {}
        self.index: dict[str, tuple[str | None, int]] = {}
        self.selects: dict[str, frozenset[str]] = {}
        self.places: Places = {}

    def node(self, node: Any, parent: str | None, position: int, depth: int, in_form: bool) -> None:
        node_id, kind = _identity(node, self.node_types)
        self.node_types[node_id] = kind
        self.index[node_id] = (parent, position)
        self.places[id(node)] = (node, depth, in_form)
        if kind == "Select":
            _select(node, self.fields, self.selects, self.every_select)
        children = node.get("children")
        if children is None:
            return
        if type(children) is not FrozenList:
            raise unrestorable("a stored node's children are not a frozen list")
        inside = in_form or kind == "Form"
        kids: list[Any] = children
        for at, child in enumerate(kids):
            self.node(child, node_id, at, depth + 1, inside)


def _identity(node: Any, seen: Mapping[str, str]) -> tuple[str, str]:
    if type(node) is not FrozenDict:
        raise unrestorable("a stored node is not a frozen object")
    node_id, kind = node.get("id"), node.get("type")
    if type(node_id) is not str or type(kind) is not str or kind not in COMPONENTS or node_id in seen:
        raise unrestorable("a stored node has no unique id or no known component type")
    if type(node.get("props")) is not FrozenDict:
        raise unrestorable("a stored node's props are not a frozen object")
    return node_id, kind


def _select(node: FrozenDict, fields: Mapping[str, Field], selects: dict[str, frozenset[str]],
            every_select: bool) -> None:
    """The option values of a Select bound to a string field (the domain the full parse keeps)."""
    props = node["props"]
    key, options = props.get("bind"), props.get("options")
    if type(key) is not str or (not every_select and getattr(fields.get(key), "kind", None) != "string"):
        return
    if type(options) is not FrozenList or any(type(option) is not FrozenDict for option in options):
        raise unrestorable("a stored Select has no list of options")
    values = frozenset(option.get("value") for option in options)
    if any(type(value) is not str for value in values):
        raise unrestorable("a stored Select has an option value that is not text")
    selects.setdefault(key, values)


def own_expressions(check: Checker, node: FrozenDict, depth: int, in_form: bool) -> int | None:
    """The expression nodes of a stored node's own props (its shallow check); None when the check
    found a problem (left in `check.issues`)."""
    before = check.budget.nodes
    with contextlib.suppress(IssueLimit):
        ComponentTree(check).shallow(node, ROOT, depth, in_form)
    return None if check.issues else check.budget.nodes - before


class RestoredFacts:
    """The facts of a restored document's nodes, found when a patch first needs them and kept in
    the document cache's memo."""

    __slots__ = ("_memo", "_model", "_places")

    def __init__(self, memo: dict[int, Facts], model: DocumentModel, places: Places) -> None:
        self._memo = memo  # the cache's (the cache sweeps it: a node met again is found again)
        self._model = model  # the restored document's: its header is the generation's
        self._places = places

    def known(self, node: Any, depth: int, in_form: bool, bound: int) -> Facts | None:
        """The facts of a node of the restored document standing where it was restored (depth,
        Form ancestry), else None.  `bound` is an upper bound of its JSON depth (its parent's
        children's)."""
        place = self._places.get(id(node))
        if place is None or place[0] is not node or place[1] != depth or place[2] != in_form:
            return None
        if "children" in node:
            return self._relative(node, depth, in_form, bound)
        return self.validated(node, depth, in_form)

    def _relative(self, node: FrozenDict, depth: int, in_form: bool, bound: int) -> Facts | None:
        """Facts of a restored layout relative to itself: its ids, types, Select domains and own
        props are read; its subtree's bytes and expression nodes are left uncounted (zero change)."""
        check = primed_checker(self._model)
        own = own_expressions(check, node, depth, in_form)
        if own is None:
            return None
        walk = restored_tree(node, self._model.fields, every_select=True)
        facts = Facts(node, depth, in_form, walk.components, 0, 0, bound, walk.node_types, walk.select_domains,
                      own_expressions=own)
        facts.base = node
        facts.own_size, facts.own_depth = json_measure(own_part(node))
        facts.base_shell = facts.own_size + CHILDREN_BYTES + max(len(node["children"]) - 1, 0)
        facts.children_depth = max(bound - 2, 0)
        self._memo[id(node)] = facts
        return facts

    def settled(self, removed: list[Facts], added: list[Facts]) -> list[Facts] | None:
        """`removed`, its relative facts that no facts of `added` extends (the base they share
        cancels only between the two) replaced by validated ones; None when one is not valid."""
        extended = {id(facts.base) for facts in added if facts.base is not None}
        if not extended and all(facts.base is None for facts in removed):
            return removed
        settled = []
        for facts in removed:
            if facts.base is not None and id(facts.base) not in extended:
                absolute = self.validated(facts.node, facts.depth, facts.in_form)
                if absolute is None:
                    return None
                facts = absolute
            settled.append(facts)
        return settled

    def validated(self, node: FrozenDict, depth: int, in_form: bool) -> Facts | None:
        """The facts of a node's subtree by validating that subtree alone, with a checker of its
        own (the expression budget of the patch being checked is not touched), memoized."""
        check = primed_checker(self._model)
        tree = FactTree(check, self._memo, measure=False)
        try:
            tree.node(node, ROOT, depth, in_form)
        except IssueLimit:
            return None
        facts = tree.sinks[0][0]
        if check.issues or facts is None:
            return None
        stack = [facts]
        while stack:  # memoize the new facts (a reused subtree's are memoized already)
            each = stack.pop()
            self._memo[id(each.node)] = each
            stack.extend(each.children)
            each.children = []
        return facts
