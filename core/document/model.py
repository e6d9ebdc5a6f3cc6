"""`parse_document`: the full validation of a UI document (seed 000 §2-6, 9, 11).

The order is fixed: safe JSON and the byte budget first (no recursion before that),
then the header (version, id, mode, title, state, derived, actions), then the component
tree, then the checks that need the whole tree (Select domains seen by `set` actions).
The result is a `ParsedDocument`: a deep-immutable mapping that also carries its
`DocumentModel`, so runtime helpers never re-parse a validated document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from core.document._actions import check_action_definitions
from core.document._checker import Checker, IssueLimit
from core.document._declarations import check_derived, check_state
from core.document._model import DocumentModel as DocumentModel
from core.document._parsed import ParsedDocument as ParsedDocument
from core.document._tree import ComponentTree, finish_document
from core.errors import ROOT, UISchemaError
from core.json._frozen import FrozenDict, freeze
from core.json.safe import SafeJson, check_budget, measure_safe_json
from core.limits import TITLE_LENGTH, UI_LIMITS

VERSIONS = ("1.0", "1.1")
MODES = ("structured_ui", "interactive_ui")
_KEYS = {"1.0": frozenset({"version", "id", "mode", "title", "state", "derived", "root"})}
_KEYS["1.1"] = _KEYS["1.0"] | {"actions"}
_REQUIRED = ("version", "id", "mode", "title", "state", "derived", "root")
TreeT = TypeVar("TreeT", bound=ComponentTree)


def _header(check: Checker, value: Mapping[str, Any]) -> str | None:
    """Check version, id, mode and title; return the version to validate against."""
    version = value.get("version")
    if version not in VERSIONS or type(version) is not str:
        check.add(ROOT / "version", "must be '1.0' or '1.1'", "enum")
        version = "1.1" if "actions" in value else "1.0"
    check.version = version
    check.closed(value, _KEYS[version], ROOT)
    check.required(value, _REQUIRED + (("actions",) if version == "1.1" else ()), ROOT)
    if "id" in value:
        check.identifier(value["id"], ROOT / "id")
    mode = value.get("mode")
    if "mode" in value and (type(mode) is not str or mode not in MODES):
        check.add(ROOT / "mode", "must be 'structured_ui' or 'interactive_ui'", "enum")
    check.mode = mode if mode in MODES else "interactive_ui"
    if "title" in value:
        check.text(value["title"], ROOT / "title", 1, TITLE_LENGTH)
    return version


def check_declarations(check: Checker, value: Mapping[str, Any]) -> None:
    """The header of a document object: version, id, mode, title, state, derived, actions."""
    _header(check, value)
    check.fields = check_state(check, value.get("state", {}))
    check.initial = FrozenDict({key: field.initial for key, field in check.fields.items()})
    check_derived(check, value.get("derived", {}))
    if check.version == "1.1":
        check.actions = check_action_definitions(check, value.get("actions", {}), ROOT / "actions")


def _validate(value: Any, make_tree: Callable[[Checker], TreeT]) -> tuple[Checker, TreeT]:
    check = Checker()
    tree = make_tree(check)
    try:
        if not isinstance(value, dict):
            check.add(ROOT, "a document must be a JSON object", "type")
            raise IssueLimit
        check_declarations(check, value)
        if "root" in value:
            tree.node(value["root"], ROOT / "root", 1, False)
        finish_document(check, tree)
    except IssueLimit:
        pass
    return check, tree


def parse_document(value: Any) -> ParsedDocument:
    """Validate an untrusted, already decoded document; return it deep-immutable."""
    return parse_walked(value, ComponentTree)[0]


def parse_walked(value: Any, make_tree: Callable[[Checker], TreeT]) -> tuple[ParsedDocument, TreeT, int]:
    """`parse_document` walking the components with `make_tree(checker)`; also that tree and
    the document's JSON nesting depth (so a caller can keep what the walk learned).  A
    `SafeJson` value is not measured again."""
    if type(value) is SafeJson:
        value, size, depth = value.value, value.size, value.depth
        check_budget(size, UI_LIMITS["maxDocumentBytes"])
    else:
        size, depth = measure_safe_json(value, max_bytes=UI_LIMITS["maxDocumentBytes"])
    check, tree = _validate(value, make_tree)
    if check.issues:
        raise UISchemaError(check.issues)
    document = ParsedDocument(freeze(value))
    document.model = _model(check, tree, document, size)
    return document, tree, depth


def _model(check: Checker, tree: ComponentTree, document: Mapping[str, Any], size: int) -> DocumentModel:
    return checked_model(check, document, byte_size=size, components=tree.components,
                         expression_nodes=check.budget.nodes, node_types=tree.node_types,
                         select_domains={key: domain for key, (domain, _) in tree.selects.items()})


def checked_model(check: Checker, document: Mapping[str, Any], *, byte_size: int, components: int,
                  expression_nodes: int, node_types: Mapping[str, str],
                  select_domains: Mapping[str, frozenset[str]]) -> DocumentModel:
    """The model of a frozen document whose header `check` checked, with its tree's facts (a
    parse's walk counted them; a restore was given the totals only a walk counts)."""
    return DocumentModel(
        version=check.version, mode=check.mode, id=document["id"],
        fields=check.fields, derived=document["derived"], derived_types=check.derived_types,
        actions=document.get("actions", FrozenDict()), initial=check.initial,
        defaults=check.defaults, byte_size=byte_size, components=components,
        expression_nodes=expression_nodes, node_types=node_types, select_domains=select_domains,
    )


def document_model(document: Any) -> DocumentModel:
    """The model of a parsed document; untrusted input is parsed first."""
    if type(document) is ParsedDocument:
        return document.model
    return parse_document(document).model

