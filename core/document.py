"""`parse_document`: the full validation of a UI document (seed 000 §2-6, 9, 11).

The order is fixed: safe JSON and the byte budget first (no recursion before that),
then the header (version, id, mode, title, state, derived, actions), then the component
tree, then the checks that need the whole tree (Select domains seen by `set` actions).
The result is a `ParsedDocument`: a deep-immutable mapping that also carries its
`DocumentModel`, so runtime helpers never re-parse a validated document.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from .actions import check_action_definitions
from .checker import Checker, IssueLimit
from .components import COMPONENTS, check_props
from .declarations import check_derived, check_state
from .errors import UISchemaError
from .fields import Field
from .frozen import FrozenDict, freeze
from .limits import TITLE_LENGTH, UI_LIMITS
from .safe_json import assert_safe_json

VERSIONS = ("1.0", "1.1")
MODES = ("structured_ui", "interactive_ui")
_KEYS = {"1.0": frozenset({"version", "id", "mode", "title", "state", "derived", "root"})}
_KEYS["1.1"] = _KEYS["1.0"] | {"actions"}
_REQUIRED = ("version", "id", "mode", "title", "state", "derived", "root")
_NODE_KEYS = frozenset({"id", "type", "props"})
_LAYOUT_KEYS = _NODE_KEYS | {"children"}
MAX_COMPONENTS = UI_LIMITS["maxComponents"]
MAX_DEPTH = UI_LIMITS["maxDepth"]
MAX_EXPRESSION_NODES = UI_LIMITS["maxExpressionNodes"]


@dataclass(frozen=True, slots=True)
class DocumentModel:
    """What validation learned about a document, reused by every runtime helper."""

    version: str
    mode: str
    id: str
    fields: Mapping[str, Field]
    derived: Mapping[str, Any]
    derived_types: Mapping[str, int]
    actions: Mapping[str, Any]
    initial: FrozenDict
    defaults: Mapping[str, Any]
    byte_size: int
    components: int
    expression_nodes: int
    node_types: Mapping[str, str]
    select_domains: Mapping[str, frozenset[str]]


class ParsedDocument(FrozenDict):
    """A validated, deep-immutable document; `.model` holds its parsed declarations."""

    __slots__ = ("model",)


class _Tree:
    """Walks the component tree, collecting ids, types and Select domains."""

    def __init__(self, check: Checker) -> None:
        self.check = check
        self.components = 0
        self.node_types: dict[str, str] = {}
        self.selects: dict[str, tuple[frozenset[str], str]] = {}

    def node(self, node: Any, path: str, depth: int, in_form: bool) -> None:
        if self.shallow(node, path, depth, in_form):
            self._children(node, path, depth, in_form or node["type"] == "Form")

    def shallow(self, node: Any, path: str, depth: int, in_form: bool) -> bool:
        """Check one node without its children; True when it is a layout to descend into."""
        check = self.check
        self.components += 1
        if self.components > MAX_COMPONENTS:
            check.add(path, f"the document has more than {MAX_COMPONENTS} components")
            raise IssueLimit
        if depth > MAX_DEPTH:
            check.add(path, f"components nest deeper than {MAX_DEPTH} levels")
            return False
        if not check.mapping(node, path, "component"):
            return False
        kind = node.get("type")
        component = COMPONENTS.get(kind) if type(kind) is str else None
        check.closed(node, _LAYOUT_KEYS if component is not None and component.layout else _NODE_KEYS, path)
        self._identity(node, path, kind)
        if component is None:
            check.add(path + "/type", "unknown component type")
            return False
        if component.interactive and check.mode == "structured_ui":
            check.add(path + "/type", "structured_ui documents cannot contain input, button or form components")
        if kind == "Form" and in_form:
            check.add(path, "a Form cannot contain another Form")
        if check.required(node, ("props",), path):
            results = check_props(check, component, node["props"], path + "/props")
            if kind == "Select" and results.get("options") is not None:
                self._select(node["props"].get("bind"), results["options"], path)
        return component.layout

    def _identity(self, node: Mapping, path: str, kind: Any) -> None:
        if not self.check.required(node, ("id", "type"), path):
            return
        node_id = node["id"]
        if self.check.identifier(node_id, path + "/id"):
            if node_id in self.node_types:
                self.check.add(path + "/id", "node ids must be unique within the document")
            else:
                self.node_types[node_id] = kind if type(kind) is str else ""

    def _children(self, node: Mapping, path: str, depth: int, in_form: bool) -> None:
        if not self.check.required(node, ("children",), path):
            return
        children = node["children"]
        if not isinstance(children, list):
            self.check.add(path + "/children", "children must be an array")
            return
        for i, child in enumerate(children):
            self.node(child, f"{path}/children/{i}", depth + 1, in_form)

    def _select(self, key: Any, values: list[str], path: str) -> None:
        if type(key) is not str or getattr(self.check.fields.get(key), "kind", None) != "string":
            return
        domain = frozenset(values)
        seen = self.selects.get(key)
        if seen is None:
            self.selects[key] = (domain, path)
        elif seen[0] != domain:
            self.check.add(path + "/props/options", "every Select bound to one field must offer the same option values")


def _header(check: Checker, value: Mapping) -> str | None:
    """Check version, id, mode and title; return the version to validate against."""
    version = value.get("version")
    if version not in VERSIONS or type(version) is not str:
        check.add("/version", "must be '1.0' or '1.1'")
        version = "1.1" if "actions" in value else "1.0"
    check.version = version
    check.closed(value, _KEYS[version], "")
    check.required(value, _REQUIRED + (("actions",) if version == "1.1" else ()), "")
    if "id" in value:
        check.identifier(value["id"], "/id")
    mode = value.get("mode")
    if "mode" in value and (type(mode) is not str or mode not in MODES):
        check.add("/mode", "must be 'structured_ui' or 'interactive_ui'")
    check.mode = mode if mode in MODES else "interactive_ui"
    if "title" in value:
        check.text(value["title"], "/title", 1, TITLE_LENGTH)
    return version


def _validate(value: Any) -> tuple[Checker, _Tree]:
    check = Checker()
    tree = _Tree(check)
    try:
        if not isinstance(value, dict):
            check.add("", "a document must be a JSON object")
            raise IssueLimit
        _header(check, value)
        check.fields = check_state(check, value.get("state", {}))
        check.initial = FrozenDict({key: field.initial for key, field in check.fields.items()})
        check_derived(check, value.get("derived", {}))
        if check.version == "1.1":
            check.actions = check_action_definitions(check, value.get("actions", {}), "/actions")
        if "root" in value:
            tree.node(value["root"], "/root", 1, False)
        _finish(check, tree)
    except IssueLimit:
        pass
    return check, tree


def _finish(check: Checker, tree: _Tree) -> None:
    """Checks that need the whole tree: Select domains, deferred set values, budgets."""
    fields = dict(check.fields)
    for key, (domain, _) in tree.selects.items():
        fields[key] = replace(fields[key], options=domain)
    check.fields = fields
    for deferred in check.deferred:
        deferred()
    if check.budget.nodes > MAX_EXPRESSION_NODES:
        check.add("", f"the document has more than {MAX_EXPRESSION_NODES} expression nodes")


def parse_document(value: Any) -> ParsedDocument:
    """Validate an untrusted, already decoded document; return it deep-immutable."""
    size = assert_safe_json(value, max_bytes=UI_LIMITS["maxDocumentBytes"])
    check, tree = _validate(value)
    if check.issues:
        raise UISchemaError(check.issues)
    document = ParsedDocument(freeze(value))
    document.model = _model(check, tree, document, size)
    return document


def _model(check: Checker, tree: _Tree, document: Mapping, size: int) -> DocumentModel:
    return DocumentModel(
        version=check.version, mode=check.mode, id=document["id"],
        fields=check.fields, derived=document["derived"], derived_types=check.derived_types,
        actions=document.get("actions", FrozenDict()), initial=check.initial,
        defaults=check.defaults, byte_size=size, components=tree.components,
        expression_nodes=check.budget.nodes, node_types=tree.node_types,
        select_domains={key: domain for key, (domain, _) in tree.selects.items()},
    )


def document_model(document: Any) -> DocumentModel:
    """The model of a parsed document; untrusted input is parsed first."""
    if type(document) is ParsedDocument:
        return document.model
    return parse_document(document).model

from .revalidation import DocumentCache  # noqa: E402,F401  # re-exported: the stream's incremental path
