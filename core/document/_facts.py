"""What validating a component established about its subtree, kept to validate the next patch.

`Facts` hold, for one validated node object, the facts of its subtree (position, components,
ids and types, Select domains, expression nodes, JSON bytes and depth); `FactTree` is the
document walk that records them (and takes a memoized subtree's instead of descending).  The
JSON byte counts of facts kept from a parse are measured on first need (`measured`): most
subtrees are never patched.  Facts of a restored document's layouts may be relative to the
node they were restored from (core/document/_restored.py): see `Facts.base`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from core.document._checker import Checker
from core.document._model import DocumentModel
from core.document._tree import MAX_COMPONENTS, ComponentTree
from core.errors import Place
from core.json._frozen import FrozenDict
from core.json.safe import json_measure

CHILDREN_BYTES = len(',"children":[]')
UNMEASURED = -1


def primed_checker(model: DocumentModel) -> Checker:
    """A checker primed with a document's header, as the full parse leaves it."""
    return Checker(version=model.version, mode=model.mode, fields=model.fields,
                   derived_types=dict(model.derived_types), defaults=dict(model.defaults),
                   actions=model.actions if model.version == "1.1" else None, initial=model.initial)


class Facts:
    """What validating one node object established about its subtree.

    A plain class, not a dataclass: several are built per patch, and a compiled dataclass's
    `__init__` stays interpreted (see `DocumentModel`)."""

    __slots__ = ("base", "base_shell", "children", "children_depth", "children_size", "components", "depth",
                 "expressions", "in_form", "json_depth", "node", "own_depth", "own_expressions", "own_size", "rebuild",
                 "selects", "size", "types")

    def __init__(self, node: Any, depth: int, in_form: bool, components: int, expressions: int, size: int,
                 json_depth: int, types: dict[str, str], selects: dict[str, frozenset[str]], *,
                 own_expressions: int = 0, children: list[Facts] | None = None,
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
        self.children: list[Facts] = [] if children is None else children
        self.rebuild = rebuild  # (old children, prefix, suffix, new middle facts)
        # Relative facts (a layout node of a restored document, or a patched version of one): `base` is
        # that restored node, and `expressions`, `size` and `children_size` are this subtree's less the
        # base's, which were never counted; `base_shell` is the base's JSON bytes outside its children.
        # Depths are upper bounds; components, types and Select domains are this subtree's own.
        self.base: FrozenDict | None = None
        self.base_shell = 0


class FactTree(ComponentTree):
    """The document tree walk, reusing memoized subtrees and recording new facts."""

    def __init__(self, check: Checker, memo: dict[int, Facts], *, measure: bool = True) -> None:
        super().__init__(check)
        self.memo = memo
        self.measure = measure  # False: byte counts are left for `measured` (the parse's own walk)
        self.sinks: list[list[Facts | None]] = [[]]

    def node(self, node: Any, place: Place, depth: int, in_form: bool) -> None:
        known = self.memo.get(id(node)) if isinstance(node, FrozenDict) else None
        if (known is not None and known.node is node and known.depth == depth and known.in_form == in_form
                and known.base is None):  # relative facts count nothing absolute: descend instead
            self._reuse(known, place)
            return
        self.sinks.append([])
        issues, expressions = len(self.check.issues), self.check.budget.nodes
        super().node(node, place, depth, in_form)
        children = self.sinks.pop()
        fresh = None
        if len(self.check.issues) == issues and complete(children):
            fresh = new_facts(node, depth, in_form, children, self.check.budget.nodes - expressions, self.measure)
        self.sinks[-1].append(fresh)

    def _reuse(self, known: Facts, place: Place) -> None:
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


def new_facts(node: Mapping[str, Any], depth: int, in_form: bool, children: list[Facts], expressions: int,
               measure: bool = True) -> Facts:
    types = {node["id"]: node["type"]}
    selects: dict[str, frozenset[str]] = {}
    if node["type"] == "Select":
        selects[node["props"]["bind"]] = frozenset(option["value"] for option in node["props"]["options"])
    components = 1
    for child in children:
        components += child.components
        types.update(child.types)
        selects.update(child.selects)
    facts = Facts(node, depth, in_form, components, expressions, UNMEASURED, UNMEASURED, types, selects,
                   own_expressions=expressions - sum(child.expressions for child in children), children=children)
    if measure:
        facts.own_size, facts.own_depth = json_measure(own_part(node))
        measure_children(facts, "children" in node, sum(measured(child).size for child in children),
                          max((child.json_depth for child in children), default=0), len(children))
    return facts


def complete(facts: list[Facts | None]) -> TypeGuard[list[Facts]]:
    """Whether every child left its facts (none had a problem)."""
    return None not in facts


def own_part(node: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in node.items() if key != "children"}


def measured(facts: Facts) -> Facts:
    """`facts` with its JSON byte counts, measured on first need from its (frozen) node.

    Facts kept from a parse leave them out: most subtrees are never patched.  Depths read
    from a measured parent (`children_depth`) may be upper bounds, which keeps the depth
    budget check sound; byte counts are always exact.
    """
    if unmeasured(facts):
        node = facts.node
        facts.own_size, facts.own_depth = json_measure(own_part(node))
        facts.size, facts.json_depth = json_measure(node)
        if "children" in node:
            count = len(node["children"])
            facts.children_size = facts.size - facts.own_size - CHILDREN_BYTES - max(count - 1, 0)
            facts.children_depth = max(facts.json_depth - 2, 0)
    return facts


def unmeasured(facts: Facts) -> bool:
    """Facts kept from a parse whose byte counts were never measured (relative ones count as measured)."""
    return facts.base is None and facts.size == UNMEASURED


def measure_children(facts: Facts, layout: bool, children_size: int, children_depth: int, count: int) -> None:
    """Set the subtree's JSON bytes and depth from its own part and its children's (for relative
    facts, the bytes less the base's: its shell, and its children's bytes in `children_size`)."""
    facts.children_size, facts.children_depth = children_size, children_depth
    facts.size, facts.json_depth = facts.own_size - facts.base_shell, facts.own_depth
    if layout:
        facts.size += CHILDREN_BYTES + children_size + max(count - 1, 0)
        facts.json_depth = max(facts.own_depth, 2, children_depth + 2 if count else 0)
