"""`dispatch_local_action`: the explicit `reset` and `set` actions (seed 000 §6).

The action must be one that the validated document declares (a Button's or a Form's);
`set` evaluates its value with only the derived fields it needs, then goes through the
same atomic `update_state` check as any other writer.  `invoke` is not local: it goes to
the host through `resolve_ui_action`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from core.document.model import DocumentModel, ParsedDocument, parse_document
from core.errors import UIActionError
from core.expression.language import evaluate
from core.json._equality import json_equal
from core.json._frozen import OBJECT_KINDS, FrozenDict
from core.json.safe import json_type_problem
from core.state.evaluation import lazy_derived
from core.state.values import assert_state_for, update_state


def dispatch_local_action(document: Any, state: Any, action: Any) -> FrozenDict:
    """Apply a declared `reset` or `set` action; return the new state."""
    parsed = document if type(document) is ParsedDocument else parse_document(document)
    model = parsed.model
    if type(action) not in OBJECT_KINDS:
        raise UIActionError("only reset and set actions run locally", code="not_local")
    if json_type_problem(action):  # compared below: a subclass's `__eq__` could answer anything
        raise UIActionError("the action is not plain JSON", code="unsafe_json")
    if action.get("type") not in ("reset", "set"):
        raise UIActionError("only reset and set actions run locally", code="not_local")
    # Compared as JavaScript's `===` does (`true` is not `1`); what runs is the document's own
    # copy, so nothing of the sent value is used past this point.
    declared = next((each for each in _declared_actions(parsed["root"]) if json_equal(action, each)), None)
    if declared is None:
        raise UIActionError("the action is not declared by this document", code="undeclared")
    assert_state_for(model, state)
    if declared["type"] == "reset":
        return model.initial
    return _set(parsed, model, state, declared)


def _set(document: ParsedDocument, model: DocumentModel, state: Mapping[str, Any],
         action: Mapping[str, Any]) -> FrozenDict:
    value: Any = action.get("value")
    if type(value) in OBJECT_KINDS:  # a run-time failure is a UIExpressionError (seed 000 §8)
        value = evaluate(value.get("expr"), state, lazy_derived(model, state))
    return update_state(document, state, action.get("key"), value)


def _declared_actions(root: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    stack = [root]
    while stack:
        node = stack.pop()
        props = node.get("props", {})
        if "action" in props:
            yield props["action"]
        stack.extend(node.get("children", ()))
