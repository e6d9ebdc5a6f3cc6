"""Incremental re-validation of stream candidates (the producer side of seed 000 §12).

A stream patch changes one node, yet the candidate must be exactly as valid as if the
whole document were parsed again.  `DocumentCache` remembers, for every validated node
object, the facts of its subtree (position, components, ids and types, Select domains,
expression nodes, JSON bytes and depth).  `revalidate` walks a candidate root that shares
the unchanged node objects: a shared node at the same depth and Form ancestry is taken
from the memo without descending, only new nodes are checked.  Any problem makes it fall
back to `parse_document` on the whole candidate, so rejections carry exactly the issues a
from-scratch parse reports.  Facts depend on the header (state, derived, actions), which
the stream freezes for a generation; one cache serves one generation.

The memo holds the facts of the documents a patch is validated against, not of every
version of every node the generation ever had: each patch adds the facts of its new spine,
so once the memo holds more entries than the candidate has components, by `SWEEP_SLACK` or
an eighth of the components, it is swept down to the nodes of the candidate and its base.
The sweep walks the candidate (the base shares all but its spine): every 4 patches of a
small document, every ~12 of a 200-component one (53 us, so ~4 us a patch); an earlier
state advanced again afterwards finds no facts for its root and takes the full walk, which
is always correct.  Without it a long generation kept ~3 KiB per patch of a 10-component
document (720 KiB after 250 patches) alive in every producer.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import is_not
from typing import Any, TypeGuard

from core.document._checker import Checker, IssueLimit
from core.document._tree import (
    MAX_COMPONENTS,
    MAX_EXPRESSION_NODES,
    ComponentTree,
    finish_document,
)
from core.document.model import DocumentModel, ParsedDocument, parse_document, parse_walked
from core.errors import ROOT, Place, UISchemaError
from core.json._frozen import FrozenDict, FrozenList, freeze
from core.json.safe import MAX_JSON_DEPTH, json_measure
from core.limits import UI_LIMITS

MAX_DOCUMENT_BYTES = UI_LIMITS["maxDocumentBytes"]
_ROOT_KEY_BYTES = len(',"root":')
_CHILDREN_BYTES = len(',"children":[]')
_UNMEASURED = -1
SWEEP_SLACK = 8  # stale memo entries allowed before a sweep, at least (an eighth of the components, at most)


class _Facts:
    """What validating one node object established about its subtree.

    A plain class, not a dataclass: several are built per patch, and a compiled dataclass's
    `__init__` stays interpreted (see `DocumentModel`)."""

    __slots__ = ("children", "children_depth", "children_size", "components", "depth", "expressions", "in_form",
                 "json_depth", "node", "own_depth", "own_expressions", "own_size", "rebuild", "selects", "size",
                 "types")

    def __init__(self, node: Any, depth: int, in_form: bool, components: int, expressions: int, size: int,
                 json_depth: int, types: dict[str, str], selects: dict[str, frozenset[str]], *,
                 own_expressions: int = 0, children: list[_Facts] | None = None,
                 rebuild: tuple[Any, ...] | None = None) -> None:
        self.node = node
        self.depth = depth
        self.in_form = in_form
        self.components = components
        self.expressions = expressions
        self.size = size
        self.json_depth = json_depth
        self.types = types
        self.selects = selects
        self.own_expressions = own_expressions
        self.own_size = 0
        self.own_depth = 0
        self.children_size = 0
        self.children_depth = 0
        self.children: list[_Facts] = [] if children is None else children
        self.rebuild = rebuild  # (old children, prefix, suffix, new middle facts)


class _FactTree(ComponentTree):
    """The document tree walk, reusing memoized subtrees and recording new facts."""

    def __init__(self, check: Checker, memo: dict[int, _Facts], *, measure: bool = True) -> None:
        super().__init__(check)
        self.memo = memo
        self.measure = measure  # False: byte counts are left for `_measured` (the parse's own walk)
        self.sinks: list[list[_Facts | None]] = [[]]

    def node(self, node: Any, place: Place, depth: int, in_form: bool) -> None:
        known = self.memo.get(id(node)) if isinstance(node, FrozenDict) else None
        if known is not None and known.node is node and known.depth == depth and known.in_form == in_form:
            self._reuse(known, place)
            return
        self.sinks.append([])
        issues, expressions = len(self.check.issues), self.check.budget.nodes
        super().node(node, place, depth, in_form)
        children = self.sinks.pop()
        fresh = None
        if len(self.check.issues) == issues and _complete(children):
            fresh = _new_facts(node, depth, in_form, children, self.check.budget.nodes - expressions, self.measure)
        self.sinks[-1].append(fresh)

    def _reuse(self, known: _Facts, place: Place) -> None:
        self.components += known.components
        self.check.budget.nodes += known.expressions
        if self.components > MAX_COMPONENTS or not self.node_types.keys().isdisjoint(known.types):
            self.check.add(place, "shared subtree conflicts with the candidate", "fallback")  # triggers the fallback
        self.node_types.update(known.types)
        for key, domain in known.selects.items():
            seen = self.selects.get(key)
            if seen is None:
                self.selects[key] = (domain, place)
            elif seen[0] != domain:
                self.check.add(place, "Select domains differ", "fallback")  # triggers the fallback
        self.sinks[-1].append(known)


def _new_facts(node: Mapping[str, Any], depth: int, in_form: bool, children: list[_Facts], expressions: int,
               measure: bool = True) -> _Facts:
    types = {node["id"]: node["type"]}
    selects: dict[str, frozenset[str]] = {}
    if node["type"] == "Select":
        selects[node["props"]["bind"]] = frozenset(option["value"] for option in node["props"]["options"])
    components = 1
    for child in children:
        components += child.components
        types.update(child.types)
        selects.update(child.selects)
    facts = _Facts(node, depth, in_form, components, expressions, _UNMEASURED, _UNMEASURED, types, selects,
                   own_expressions=expressions - sum(child.expressions for child in children), children=children)
    if measure:
        facts.own_size, facts.own_depth = json_measure(_own(node))
        _measure_children(facts, "children" in node, sum(_measured(child).size for child in children),
                          max((child.json_depth for child in children), default=0), len(children))
    return facts


def _complete(facts: list[_Facts | None]) -> TypeGuard[list[_Facts]]:
    """Whether every child left its facts (none had a problem)."""
    return None not in facts


def _own(node: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in node.items() if key != "children"}


def _measured(facts: _Facts) -> _Facts:
    """`facts` with its JSON byte counts, measured on first need from its (frozen) node.

    Facts kept from a parse leave them out: most subtrees are never patched.  Depths read
    from a measured parent (`children_depth`) may be upper bounds, which keeps the depth
    budget check sound; byte counts are always exact.
    """
    if facts.size == _UNMEASURED:
        node = facts.node
        facts.own_size, facts.own_depth = json_measure(_own(node))
        facts.size, facts.json_depth = json_measure(node)
        if "children" in node:
            count = len(node["children"])
            facts.children_size = facts.size - facts.own_size - _CHILDREN_BYTES - max(count - 1, 0)
            facts.children_depth = max(facts.json_depth - 2, 0)
    return facts


def _measure_children(facts: _Facts, layout: bool, children_size: int, children_depth: int, count: int) -> None:
    """Set the subtree's JSON bytes and depth from its own part and its children's."""
    facts.children_size, facts.children_depth = children_size, children_depth
    facts.size, facts.json_depth = facts.own_size, facts.own_depth
    if layout:
        facts.size += _CHILDREN_BYTES + children_size + max(count - 1, 0)
        facts.json_depth = max(facts.own_depth, 2, children_depth + 2 if count else 0)


def _common_ends(old: list[Any], new: list[Any]) -> tuple[int, int]:
    """Lengths of the identical prefix and suffix of two children lists (C-speed scans)."""
    shorter = min(len(old), len(new))
    same = list(map(is_not, old[:shorter], new[:shorter]))
    prefix = same.index(True) if True in same else shorter
    tail = list(map(is_not, reversed(old[prefix:]), reversed(new[prefix:])))
    suffix = tail.index(True) if True in tail else len(tail)
    return prefix, min(suffix, shorter - prefix)


class DocumentCache:
    """Validation memo for one stream generation: `revalidate` costs O(change), not O(document)."""

    def __init__(self, document: Any, *, walk: bool = True) -> None:
        """Parse `document` (unless it is a `ParsedDocument`) and walk it for its facts; with
        `walk=False` the caller, `parsed`, attaches the facts of its own parse instead."""
        self._start(document if type(document) is ParsedDocument else parse_document(document))
        if not walk:
            return
        root = self._walk(self.info, self.document["root"])
        assert root is not None, "a parsed document always re-validates"
        self._header_expressions = self.info.expression_nodes - root.expressions

    @classmethod
    def parsed(cls, value: Any) -> DocumentCache:
        """Parse `value` (raising as `parse_document` does) and keep the facts of that very walk.

        The tree is walked once: the parse records each node's facts, and the byte counts
        of a subtree are measured only when a patch first needs them.
        """
        memo: dict[int, _Facts] = {}
        document, tree, depth = parse_walked(value, lambda check: _FactTree(check, memo, measure=False))
        cache = cls(document, walk=False)  # not `cls.__new__`, which mypyc does not compile
        root = tree.sinks[0][0]
        assert root is not None, "a valid document leaves the facts of its root"
        cache._attach(root, document["root"])
        # The root's byte count is the document's minus the header's; its depth at most the document's.
        root.own_size, root.own_depth = json_measure(_own(root.node))
        count = len(root.node.get("children", ()))
        root.size = document.model.byte_size - cache._header_size
        root.children_size = root.size - root.own_size - _CHILDREN_BYTES - max(count - 1, 0)
        root.children_depth = max(depth - 3, 0)  # document > root > children > child: an upper bound
        root.json_depth = max(root.own_depth, 2, root.children_depth + 2 if count else 0)
        cache._header_expressions = cache.info.expression_nodes - root.expressions
        return cache

    def _start(self, document: ParsedDocument) -> None:
        self.document = document
        self.info = document.model
        self._memo: dict[int, _Facts] = {}
        self._header = FrozenDict({k: v for k, v in document.items() if k != "root"})
        self._header_size = json_measure(self._header)[0] - 1 + _ROOT_KEY_BYTES + 1

    def _attach(self, facts: _Facts, node: Any) -> None:
        """Give the facts recorded on the decoded tree the frozen nodes of the parsed document."""
        stack = [(facts, node)]
        while stack:
            each, frozen = stack.pop()
            each.node = frozen
            self._memo[id(frozen)] = each
            stack.extend(zip(each.children, frozen.get("children", ()), strict=True))
            each.children = []

    def _checker(self, model: DocumentModel) -> Checker:
        """A checker primed with the generation's header, as the full parse leaves it."""
        return Checker(version=model.version, mode=model.mode, fields=model.fields,
                       derived_types=dict(model.derived_types), defaults=dict(model.defaults),
                       actions=model.actions if model.version == "1.1" else None, initial=model.initial)

    def _walk(self, model: DocumentModel, root: Any) -> _Facts | None:
        check = self._checker(model)
        tree = _FactTree(check, self._memo)
        try:
            tree.node(root, ROOT / "root", 1, False)
            finish_document(check, tree)
        except IssueLimit:
            return None
        if check.issues or tree.selects.keys() != model.select_domains.keys() or any(
                domain != model.select_domains[key] for key, (domain, _) in tree.selects.items()):
            return None
        facts = tree.sinks[0][0]
        if facts is not None:
            self._remember(facts)
        return facts

    def _remember(self, facts: _Facts) -> Any:
        """Freeze new nodes (reusing shared ones) and memoize their facts."""
        if facts.node is not None and self._memo.get(id(facts.node)) is facts:
            return facts.node
        node = facts.node
        if facts.rebuild is not None:
            old, prefix, suffix = facts.rebuild
            middle = [self._remember(child) for child in facts.children]
            kids = FrozenList([*old[:prefix], *middle, *old[len(old) - suffix:]])
            node = FrozenDict({k: kids if k == "children" else freeze(v) for k, v in node.items()})
        elif "children" in node:
            children = [self._remember(child) for child in facts.children]
            same = isinstance(node, FrozenDict) and all(
                a is b for a, b in zip(children, node["children"], strict=False))
            if not same:
                kids = FrozenList(children)
                node = FrozenDict({k: kids if k == "children" else freeze(v) for k, v in node.items()})
        elif not isinstance(node, FrozenDict):
            node = freeze(node)
        facts.node = node
        facts.children = []
        facts.rebuild = None
        self._memo[id(node)] = facts
        return node

    def revalidate(self, root: Any, base: Any = None) -> tuple[ParsedDocument, DocumentModel]:
        """Validate `{**document, "root": root}`; raise exactly as `parse_document` would.

        With `base` (an earlier document of this generation whose unchanged nodes `root`
        shares), only the changed spine and new subtrees are visited.
        """
        model = self.info
        try:
            known = self._memo.get(id(base["root"])) if isinstance(base, ParsedDocument) else None
            if known is not None and known.node is base["root"]:
                facts = self._delta(model, known, root)
            else:
                facts = self._walk(model, root)
        except UISchemaError:  # unsafe JSON inside a new node: let the full parse say so
            facts = None
        if facts is None or not self._within_budgets(facts):
            document = parse_document(self._with_root(root))
            return document, document.model
        document = ParsedDocument(self._with_root(facts.node))
        document.model = _successor(model, facts, self._header_size + facts.size,
                                    self._header_expressions + facts.expressions)
        if len(self._memo) > facts.components + max(SWEEP_SLACK, facts.components // 8):
            self._sweep(facts.node, base["root"] if isinstance(base, ParsedDocument) else None)
        return document, document.model

    def _sweep(self, *roots: Any) -> None:
        """Keep only the facts of the nodes under `roots` (the candidate and its base)."""
        kept: dict[int, _Facts] = {}
        stack = [root for root in roots if root is not None]
        while stack:
            node = stack.pop()
            facts = self._memo.get(id(node))
            if facts is None or facts.node is not node or id(node) in kept:
                continue  # no facts (the roots are validated, so only a stale id) or met already
            kept[id(node)] = facts
            stack.extend(node.get("children", ()))
        self._memo = kept

    # ------------------------------------------------------------------ delta walk
    def _delta(self, model: DocumentModel, known: _Facts, root: Any) -> _Facts | None:
        check = self._checker(model)
        try:
            facts = self._pair(check, root, known, ROOT / "root", 1, False)
            for deferred in check.deferred:
                deferred(check)
        except IssueLimit:
            return None
        if check.issues or facts is None or facts.selects != model.select_domains:
            return None
        self._remember(facts)
        return facts

    def _fresh(self, check: Checker, node: Any, place: Place, depth: int, in_form: bool) -> _Facts | None:
        tree = _FactTree(check, self._memo)
        tree.node(node, place, depth, in_form)
        return tree.sinks[0][0]

    def _pair(self, check: Checker, node: Any, known: _Facts, place: Place, depth: int, in_form: bool) -> _Facts | None:
        """Facts of `node`, a new version of the layout node `known` at the same place."""
        if node is known.node:
            return known
        old = known.node
        if not (isinstance(node, dict) and isinstance(node.get("children"), list) and "children" in old
                and node.get("id") == old["id"] and node.get("type") == old["type"]
                and known.depth == depth and known.in_form == in_form):
            return self._fresh(check, node, place, depth, in_form)
        issues, expressions = len(check.issues), check.budget.nodes
        ComponentTree(check).shallow(node, place, depth, in_form)
        if len(check.issues) > issues:
            return None
        own_expressions = check.budget.nodes - expressions
        prefix, suffix = _common_ends(old["children"], node["children"])
        removed = [self._memo.get(id(child)) for child in old["children"][prefix:len(old["children"]) - suffix]]
        if not _complete(removed):
            return None
        added = self._middle(check, node, removed, prefix, suffix, place, depth + 1, in_form or node["type"] == "Form")
        if added is None:
            return None
        return self._merged(node, known, removed, added, own_expressions, (old["children"], prefix, suffix))

    def _middle(self, check: Checker, node: Mapping[str, Any], removed: list[_Facts], prefix: int, suffix: int,
                place: Place, depth: int, in_form: bool) -> list[_Facts] | None:
        counterparts = {facts.node["id"]: facts for facts in removed}
        added = []
        children = node["children"]
        for i in range(prefix, len(children) - suffix):
            child = children[i]
            where = place / "children" / i
            node_id = child.get("id") if isinstance(child, dict) else None
            twin = counterparts.get(node_id) if type(node_id) is str else None  # ids may be junk
            facts = (self._pair(check, child, twin, where, depth, in_form) if twin is not None
                     else self._fresh(check, child, where, depth, in_form))
            if facts is None:
                return None
            added.append(facts)
        return added

    def _merged(self, node: Mapping[str, Any], known: _Facts, removed: list[_Facts], added: list[_Facts],
                own_expressions: int, recipe: tuple[Any, ...]) -> _Facts | None:
        types = dict(known.types)
        for facts in removed:
            for key in facts.types:
                del types[key]
        for facts in added:
            if not types.keys().isdisjoint(facts.types):
                return None  # a duplicate id: the full parse reports where
            types.update(facts.types)
        selects: dict[str, frozenset[str]] | None = known.selects
        if any(facts.selects for facts in removed) or any(facts.selects for facts in added):
            selects = self._merged_selects(node, added)
        if selects is None:
            return None
        merged = _Facts(node, known.depth, known.in_form,
                        known.components - sum(f.components for f in removed) + sum(f.components for f in added),
                        known.expressions - known.own_expressions + own_expressions
                        - sum(f.expressions for f in removed) + sum(f.expressions for f in added),
                        0, 0, types, selects, own_expressions=own_expressions, children=added, rebuild=recipe)
        merged.own_size, merged.own_depth = json_measure(_own(node))
        _measured(known)
        removed = [_measured(f) for f in removed]
        added = [_measured(f) for f in added]
        deepest = known.children_depth
        if any(f.json_depth >= deepest for f in removed):
            deepest = max((self._child_depth(child, added, deepest) for child in node["children"]), default=0)
        deepest = max([deepest] + [f.json_depth for f in added])
        size = known.children_size - sum(f.size for f in removed) + sum(f.size for f in added)
        _measure_children(merged, True, size, deepest, len(node["children"]))
        return merged

    def _child_depth(self, child: Any, added: list[_Facts], bound: int) -> int:
        """A child's JSON depth, or `bound` (the parent's) while the child is unmeasured."""
        facts = self._child_facts(child, added)
        return bound if facts.size == _UNMEASURED else facts.json_depth

    def _child_facts(self, child: Any, added: list[_Facts]) -> _Facts:
        known = self._memo.get(id(child))
        if known is not None and known.node is child:
            return known
        return next(f for f in added if f.node is child)

    def _merged_selects(self, node: Mapping[str, Any], added: list[_Facts]) -> dict[str, frozenset[str]] | None:
        selects: dict[str, frozenset[str]] = {}
        for child in node["children"]:
            for key, domain in self._child_facts(child, added).selects.items():
                if selects.setdefault(key, domain) != domain:
                    return None
        return selects

    def _with_root(self, root: Any) -> dict[str, Any]:
        return {key: root if key == "root" else value for key, value in self.document.items()}

    def _within_budgets(self, facts: _Facts) -> bool:
        return (facts.components <= MAX_COMPONENTS
                and self._header_expressions + facts.expressions <= MAX_EXPRESSION_NODES
                and self._header_size + facts.size <= MAX_DOCUMENT_BYTES
                and facts.json_depth + 1 <= MAX_JSON_DEPTH)


def _successor(model: DocumentModel, facts: _Facts, size: int, expressions: int) -> DocumentModel:
    return model.revised(byte_size=size, components=facts.components, expression_nodes=expressions,
                         node_types=facts.types, select_domains=facts.selects)
