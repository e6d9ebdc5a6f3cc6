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

import contextlib
from collections.abc import Mapping
from operator import is_not
from typing import Any, Final

from core.document._checker import Checker, IssueLimit
from core.document._facts import (
    CHILDREN_BYTES,
    UNMEASURED,
    Facts,
    FactTree,
    complete,
    measure_children,
    measured,
    own_part,
    primed_checker,
    unmeasured,
)
from core.document._restored import RestoredFacts, RestoredTree, own_expressions, restored_tree, unrestorable
from core.document._tree import (
    MAX_COMPONENTS,
    MAX_EXPRESSION_NODES,
    ComponentTree,
    finish_document,
    with_select_domains,
)
from core.document.model import (
    DocumentModel,
    ParsedDocument,
    check_declarations,
    checked_model,
    parse_document,
    parse_walked,
)
from core.errors import ROOT, Place, UISchemaError
from core.json._frozen import FrozenDict, FrozenList, freeze, freeze_json
from core.json.safe import MAX_JSON_DEPTH, json_measure
from core.limits import UI_LIMITS

MAX_DOCUMENT_BYTES = UI_LIMITS["maxDocumentBytes"]
_ROOT_KEY_BYTES = len(',"root":')
SWEEP_SLACK = 8  # stale memo entries allowed before a sweep, at least (an eighth of the components, at most)


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

    def __init__(self, document: Any, *, walk: bool = True, header: tuple[FrozenDict, int] | None = None) -> None:
        """Parse `document` (unless it is a `ParsedDocument`) and walk it for its facts; with
        `walk=False` the caller, `parsed`, attaches the facts of its own parse instead.  `header`:
        the document's header and its size, when the caller knows them (`of_restored`)."""
        self._start(document if type(document) is ParsedDocument else parse_document(document), header)
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
        memo: dict[int, Facts] = {}
        document, tree, depth = parse_walked(value, lambda check: FactTree(check, memo, measure=False))
        cache = cls(document, walk=False)  # not `cls.__new__`, which mypyc does not compile
        root = tree.sinks[0][0]
        assert root is not None, "a valid document leaves the facts of its root"
        cache._attach(root, document["root"])
        cache._measure_root(root, depth)
        cache._header_expressions = cache.info.expression_nodes - root.expressions
        return cache

    def _measure_root(self, root: Facts, depth: int, own: tuple[int, int] | None = None) -> None:
        """The root's JSON bytes (the document's less the header's) and depths (bounded by the
        document's JSON depth `depth`), which a parse or a restore knows without measuring them;
        `own`: the root's own part measured before (a restored document's)."""
        root.own_size, root.own_depth = own if own is not None else json_measure(own_part(root.node))
        count = len(root.node.get("children", ()))
        root.size = self.info.byte_size - self._header_size
        root.children_size = root.size - root.own_size - CHILDREN_BYTES - max(count - 1, 0)
        root.children_depth = max(depth - 3, 0)  # document > root > children > child: an upper bound
        root.json_depth = max(root.own_depth, 2, root.children_depth + 2 if count else 0)

    @classmethod
    def of_restored(cls, restored: RestoredDocument) -> DocumentCache:
        """A new cache of a restored document: its memo holds the root's facts from the stored
        totals, the facts below are found on need.  Many caches may share one `RestoredDocument`
        (it is immutable); each keeps its own memo, as each generation does."""
        document = restored.document
        cache = cls(document, walk=False, header=restored.header)  # not `cls.__new__`: mypyc does not compile it
        cache._restored = RestoredFacts(cache._memo, document.model, restored.tree.places)
        cache._header_expressions = restored.header_expressions
        cache._restore_root(restored)
        return cache

    def _restore_root(self, restored: RestoredDocument) -> None:
        """The root's facts from the document's stored totals (as `parsed` sets them from its walk);
        its types and domains are the model's very dictionaries, as `_successor` shares them."""
        model, node, tree = self.info, self.document["root"], restored.tree
        root = Facts(node, 1, False, model.components, model.expression_nodes - self._header_expressions,
                     UNMEASURED, UNMEASURED, tree.node_types, tree.select_domains,
                     own_expressions=restored.own_expressions)
        self._measure_root(root, restored.json_depth, restored.root_own)
        self._memo[id(node)] = root

    def restore_facts(self, document: ParsedDocument) -> tuple[int, int, int] | None:
        """(JSON bytes, JSON depth bound, expression nodes) of `document`, a document this cache
        validated: with its JSON, what `restored` needs to rebuild this cache's facts of it; None
        when the cache keeps no facts of its root."""
        root = document["root"]
        facts = self._memo.get(id(root))
        if facts is None or facts.node is not root or facts.base is not None:
            return None
        return document.model.byte_size, measured(facts).json_depth + 1, document.model.expression_nodes

    def _start(self, document: ParsedDocument, header: tuple[FrozenDict, int] | None = None) -> None:
        self.document = document
        self.info = document.model
        self._memo: dict[int, Facts] = {}
        self._restored: RestoredFacts | None = None  # a restored document's, found on need
        self._header, self._header_size = header if header is not None else header_of(document)

    def _attach(self, facts: Facts, node: Any) -> None:
        """Give the facts recorded on the decoded tree the frozen nodes of the parsed document."""
        stack = [(facts, node)]
        while stack:
            each, frozen = stack.pop()
            each.node = frozen
            self._memo[id(frozen)] = each
            stack.extend(zip(each.children, frozen.get("children", ()), strict=True))
            each.children = []

    def _known(self, node: Any, depth: int, in_form: bool, bound: int) -> Facts | None:
        """The facts of a node, memoized or (a node of a restored document) found on first need."""
        facts = self._memo.get(id(node))
        if facts is not None or self._restored is None:
            return facts
        return self._restored.known(node, depth, in_form, bound)

    def _settled(self, removed: list[Facts], added: list[Facts]) -> list[Facts] | None:
        """`removed` with no relative facts that `added` does not extend (`RestoredFacts.settled`)."""
        return removed if self._restored is None else self._restored.settled(removed, added)

    def _walk(self, model: DocumentModel, root: Any) -> Facts | None:
        check = primed_checker(model)
        tree = FactTree(check, self._memo)
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

    def _remember(self, facts: Facts) -> Any:
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
        if facts is None or facts.base is not None or not self._within_budgets(facts):
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
        kept: dict[int, Facts] = {}
        stack = [root for root in roots if root is not None]
        while stack:
            node = stack.pop()
            facts = self._memo.get(id(node))
            if facts is None or facts.node is not node or id(node) in kept:
                continue  # no facts (the roots are validated, so only a stale id) or met already
            kept[id(node)] = facts
            stack.extend(node.get("children", ()))
        self._memo.clear()  # in place: a restored document's `RestoredFacts` memoizes into it too
        self._memo.update(kept)

    # ------------------------------------------------------------------ delta walk
    def _delta(self, model: DocumentModel, known: Facts, root: Any) -> Facts | None:
        check = primed_checker(model)
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

    def _fresh(self, check: Checker, node: Any, place: Place, depth: int, in_form: bool) -> Facts | None:
        tree = FactTree(check, self._memo)
        tree.node(node, place, depth, in_form)
        return tree.sinks[0][0]

    def _pair(self, check: Checker, node: Any, known: Facts, place: Place, depth: int, in_form: bool) -> Facts | None:
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
        inner, bound = in_form or old["type"] == "Form", measured(known).children_depth
        gone = old["children"][prefix:len(old["children"]) - suffix]
        removed = [self._known(child, depth + 1, inner, bound) for child in gone]
        if not complete(removed):
            return None
        added = self._middle(check, node, removed, prefix, suffix, place, depth + 1, in_form or node["type"] == "Form")
        if added is None:
            return None
        return self._merged(node, known, removed, added, own_expressions, (old["children"], prefix, suffix))

    def _middle(self, check: Checker, node: Mapping[str, Any], removed: list[Facts], prefix: int, suffix: int,
                place: Place, depth: int, in_form: bool) -> list[Facts] | None:
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

    def _merged(self, node: Mapping[str, Any], known: Facts, removed: list[Facts], added: list[Facts],
                own_expressions: int, recipe: tuple[Any, ...]) -> Facts | None:
        settled = self._settled(removed, added)
        if settled is None:
            return None
        removed = settled
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
            selects = self._merged_selects(node, added, known.depth + 1, known.in_form or node["type"] == "Form",
                                           measured(known).children_depth)
        if selects is None:
            return None
        merged = Facts(node, known.depth, known.in_form,
                        known.components - sum(f.components for f in removed) + sum(f.components for f in added),
                        known.expressions - known.own_expressions + own_expressions
                        - sum(f.expressions for f in removed) + sum(f.expressions for f in added),
                        0, 0, types, selects, own_expressions=own_expressions, children=added, rebuild=recipe)
        merged.base, merged.base_shell = known.base, known.base_shell  # a patched restored node stays relative
        merged.own_size, merged.own_depth = json_measure(own_part(node))
        measured(known)
        removed = [measured(f) for f in removed]
        added = [measured(f) for f in added]
        deepest = known.children_depth
        if any(f.json_depth >= deepest for f in removed):
            deepest = max((self._child_depth(child, added, deepest) for child in node["children"]), default=0)
        deepest = max([deepest] + [f.json_depth for f in added])
        size = known.children_size - sum(f.size for f in removed) + sum(f.size for f in added)
        measure_children(merged, True, size, deepest, len(node["children"]))
        return merged

    def _child_depth(self, child: Any, added: list[Facts], bound: int) -> int:
        """A child's JSON depth, or `bound` (the parent's) while the child is unmeasured or
        unknown (a node of a restored document no patch needed yet)."""
        facts = self._child_facts(child, added)
        return bound if facts is None or unmeasured(facts) else facts.json_depth

    def _child_facts(self, child: Any, added: list[Facts]) -> Facts | None:
        known = self._memo.get(id(child))
        if known is not None and known.node is child:
            return known
        return next((f for f in added if f.node is child), None)

    def _merged_selects(self, node: Mapping[str, Any], added: list[Facts], depth: int, in_form: bool,
                        bound: int) -> dict[str, frozenset[str]] | None:
        selects: dict[str, frozenset[str]] = {}
        for child in node["children"]:
            facts = self._child_facts(child, added) or self._known(child, depth, in_form, bound)
            if facts is None:
                return None
            for key, domain in facts.selects.items():
                if selects.setdefault(key, domain) != domain:
                    return None
        return selects

    def _with_root(self, root: Any) -> dict[str, Any]:
        return {key: root if key == "root" else value for key, value in self.document.items()}

    def _within_budgets(self, facts: Facts) -> bool:
        return (facts.components <= MAX_COMPONENTS
                and self._header_expressions + facts.expressions <= MAX_EXPRESSION_NODES
                and self._header_size + facts.size <= MAX_DOCUMENT_BYTES
                and facts.json_depth + 1 <= MAX_JSON_DEPTH)


def _counted(value: Any, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def _successor(model: DocumentModel, facts: Facts, size: int, expressions: int) -> DocumentModel:
    return model.revised(byte_size=size, components=facts.components, expression_nodes=expressions,
                         node_types=facts.types, select_domains=facts.selects)


class RestoredDocument:
    """What `restore_document` found of a stored document: the frozen document (its model
    checked), the walk's bookkeeping and the root's stored totals.  Immutable once built (the
    tree's dictionaries are replaced, never changed, by the patches that follow), so caches of
    many generations may share one (`DocumentCache.of_restored`).

    A plain class with `Final` attributes, as `DocumentModel` (core/document/_model.py)."""

    __slots__ = ("document", "header", "header_expressions", "json_depth", "own_expressions", "root_own", "tree")

    def __init__(self, *, document: ParsedDocument, tree: RestoredTree, header_expressions: int,
                 own_expressions: int, json_depth: int) -> None:
        self.document: Final = document
        self.tree: Final = tree
        self.header_expressions: Final = header_expressions  # the header's expression nodes
        self.own_expressions: Final = own_expressions  # the root's own props'
        self.json_depth: Final = json_depth  # the stored JSON depth bound
        # Measured once for every cache of it: the header and its size, the root's own part's size and depth.
        self.header: Final = header_of(document)
        self.root_own: Final = json_measure(own_part(document["root"]))


def header_of(document: ParsedDocument) -> tuple[FrozenDict, int]:
    """A document's header (every field but the root) and the JSON bytes the document spends
    outside its root's value."""
    header = FrozenDict({k: v for k, v in document.items() if k != "root"})
    return header, json_measure(header)[0] - 1 + _ROOT_KEY_BYTES + 1


def restore_document(value: Any, *, byte_size: int, json_depth: int, expression_nodes: int) -> RestoredDocument:
    """A document this library validated before, from its decoded JSON and the `restore_facts`
    its cache gave when it was stored: the header checked as the full parse checks it, the tree
    walked for its bookkeeping only (core/document/_restored.py).  Raises `UISchemaError` for a
    value or facts no stored document has."""
    try:
        frozen = freeze_json(value, MAX_JSON_DEPTH)
    except ValueError:
        raise unrestorable("a stored document must be decoded JSON within the depth limit") from None
    if type(frozen) is not FrozenDict or type(frozen.get("root")) is not FrozenDict:
        raise unrestorable("a stored document must be an object with a root component")
    document = ParsedDocument(frozen)
    check = Checker()
    with contextlib.suppress(IssueLimit):
        check_declarations(check, document)
    if check.issues:
        raise UISchemaError(check.issues)
    tree = restored_tree(document["root"], check.fields)
    check.fields = with_select_domains(check.fields, tree.select_domains)
    header_expressions = check.budget.nodes
    own = own_expressions(check, document["root"], 1, False)
    if own is None:
        raise UISchemaError(check.issues)
    if not (_counted(byte_size, 1, UI_LIMITS["maxDocumentBytes"]) and _counted(json_depth, 3, MAX_JSON_DEPTH)
            and _counted(expression_nodes, header_expressions + own, MAX_EXPRESSION_NODES)):
        raise unrestorable("the stored facts cannot be those of this document")
    document.model = checked_model(check, document, byte_size=byte_size, components=tree.components,
                                   expression_nodes=expression_nodes, node_types=tree.node_types,
                                   select_domains=tree.select_domains)
    return RestoredDocument(document=document, tree=tree, header_expressions=header_expressions,
                            own_expressions=own, json_depth=json_depth)
