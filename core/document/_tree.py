"""The walk of a document's component tree and the checks that need the whole tree.

`ComponentTree` checks every node (identity, type, props, nesting, budgets) and collects
ids, types and Select domains; `finish_document` runs what needs all of them.  Both the
full parse (`model`) and the incremental re-validation (`_revalidation`) use them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from core.document._checker import Checker, IssueLimit
from core.document._components import COMPONENTS, check_props
from core.document._fields import Field, StringField
from core.errors import ROOT, Place
from core.limits import UI_LIMITS

_NODE_KEYS = frozenset({"id", "type", "props"})
_LAYOUT_KEYS = _NODE_KEYS | {"children"}
MAX_COMPONENTS = UI_LIMITS["maxComponents"]
MAX_DEPTH = UI_LIMITS["maxDepth"]
MAX_EXPRESSION_NODES = UI_LIMITS["maxExpressionNodes"]


class ComponentTree:
    """Walks the component tree, collecting ids, types and Select domains."""

    def __init__(self, check: Checker) -> None:
        self.check = check
        self.components = 0
        self.node_types: dict[str, str] = {}
        self.selects: dict[str, tuple[frozenset[str], Place]] = {}

    def node(self, node: Any, place: Place, depth: int, in_form: bool) -> None:
        if self.shallow(node, place, depth, in_form):
            self._children(node, place, depth, in_form or node["type"] == "Form")

    def shallow(self, node: Any, place: Place, depth: int, in_form: bool) -> bool:
        """Check one node without its children; True when it is a layout to descend into."""
        check = self.check
        self.components += 1
        if self.components > MAX_COMPONENTS:
            check.add(place, f"the document has more than {MAX_COMPONENTS} components", "too_many")
            raise IssueLimit
        if depth > MAX_DEPTH:
            check.add(place, f"components nest deeper than {MAX_DEPTH} levels", "too_deep")
            return False
        if not check.mapping(node, place, "component"):
            return False
        kind = node.get("type")
        component = COMPONENTS.get(kind) if type(kind) is str else None
        check.closed(node, _LAYOUT_KEYS if component is not None and component.layout else _NODE_KEYS, place)
        self._identity(node, place, kind)
        if component is None:
            check.add(place / "type", "unknown component type", "unknown_component")
            return False
        if component.interactive and check.mode == "structured_ui":
            check.add(place / "type", "structured_ui documents cannot contain input, button or form components",
                      "structured_ui_input")
        if kind == "Form" and in_form:
            check.add(place, "a Form cannot contain another Form", "nested_form")
        if check.required(node, ("props",), place):
            results = check_props(check, component, node["props"], place / "props")
            if kind == "Select" and results.get("options") is not None:
                self._select(node["props"].get("bind"), results["options"], place)
        return component.layout

    def _identity(self, node: Mapping[str, Any], place: Place, kind: Any) -> None:
        if not self.check.required(node, ("id", "type"), place):
            return
        node_id = node["id"]
        if self.check.identifier(node_id, place / "id"):
            if node_id in self.node_types:
                self.check.add(place / "id", "node ids must be unique within the document", "duplicate_id")
            else:
                self.node_types[node_id] = kind if type(kind) is str else ""

    def _children(self, node: Mapping[str, Any], place: Place, depth: int, in_form: bool) -> None:
        if not self.check.required(node, ("children",), place):
            return
        children = node["children"]
        if not isinstance(children, list):
            self.check.add(place / "children", "children must be an array", "type")
            return
        for i, child in enumerate(children):
            self.node(child, place / "children" / i, depth + 1, in_form)

    def _select(self, key: Any, values: list[str], place: Place) -> None:
        if type(key) is not str or getattr(self.check.fields.get(key), "kind", None) != "string":
            return
        domain = frozenset(values)
        seen = self.selects.get(key)
        if seen is None:
            self.selects[key] = (domain, place)
        elif seen[0] != domain:
            self.check.add(place / "props" / "options",
                           "every Select bound to one field must offer the same option values", "select_domain")


def with_select_domains(fields: Mapping[str, Field], domains: Mapping[str, frozenset[str]]) -> dict[str, Field]:
    """The declared fields, each string field bound by Selects given their option values."""
    kept = dict(fields)
    for key, domain in domains.items():
        field = kept[key]
        if isinstance(field, StringField):  # a Select domain is only kept for a string field
            kept[key] = replace(field, options=domain)
    return kept


def finish_document(check: Checker, tree: ComponentTree) -> None:
    """Checks that need the whole tree: Select domains, deferred set values, budgets."""
    check.fields = with_select_domains(check.fields, {key: domain for key, (domain, _) in tree.selects.items()})
    for deferred in check.deferred:
        deferred(check)
    if check.budget.nodes > MAX_EXPRESSION_NODES:
        check.add(ROOT, f"the document has more than {MAX_EXPRESSION_NODES} expression nodes", "expression_budget")
