"""answer-view-state@1 (seed 004): the view state a user keeps for one stored answer block.

A block's view state is `nodes`: element id -> that element's view fields.  Only Chart,
Table, FollowUpForm and Evidence hold view state, each a closed object (the fields are
listed in `core.answer._view_rules`).  Pure functions over decoded JSON and a block as
`parse_answer_block` accepted it; the store around them (revisions, receipts, byte
budgets `UI_VIEW_STATE_LIMITS`) is the runtime's.

- `parse_view_state` is the strict write check of a client that saw the current block;
- `migrate_view_state` keeps what is still compatible with a changed block, comparing
  against the `view_state_basis` the host stored beside the state;
- `view_state_schema_digest` is the host's `schema_digest` of a block.

Issues are located in the answer-view-state@1 record, under `/nodes`.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from core._rules import descend
from core.answer._view_facts import BlockFacts, ChartFacts, FormFacts, block_facts
from core.answer._view_migration import migrate, series_digest
from core.answer._view_rules import node_issues
from core.errors import MAX_ISSUES, Issue, UISchemaError, UIViewStateError
from core.json._frozen import EMPTY_DICT, OBJECT_KINDS, FrozenDict, freeze, freeze_object
from core.json.canonical import hash_canonical_json
from core.json.safe import assert_safe_json, json_type_problem


def view_state_schema_digest(block: Any) -> str:
    """The `schema_digest` of a stored block: the SHA-256 of its canonical JSON (RFC 8785)."""
    return hash_canonical_json(block)


def _basis(facts: BlockFacts) -> FrozenDict:
    basis: dict[str, Any] = {}
    for node_id, element in facts.items():
        if isinstance(element, ChartFacts):
            basis[node_id] = {"type": element.kind, "series": series_digest(element)}
        elif isinstance(element, FormFacts):
            basis[node_id] = {"type": element.kind, "fields": {name: f.type for name, f in element.fields.items()}}
    return freeze_object(basis)


def view_state_basis(block: Any) -> FrozenDict:
    """What migration compares later: each chart's series digest, each form's field types."""
    return _basis(block_facts(block))


def _rejected(issues: list[Issue]) -> UIViewStateError:
    return UIViewStateError(list(islice(descend(issues, "nodes"), MAX_ISSUES)))


def parse_view_state(nodes: Any, block: Any) -> FrozenDict:
    """`nodes` as a deep-immutable copy if it is a valid view state of `block`.

    Raises `UIViewStateError` for nodes that do not fit (issues under `/nodes`, the first 20)
    and `UISchemaError` for a block without the elements the rules read.
    """
    facts = block_facts(block)
    try:
        assert_safe_json(nodes)  # exact JSON types before any rule touches a value
    except UISchemaError as error:
        raise _rejected(error.issues) from None
    problems = list(islice(node_issues(nodes, facts), MAX_ISSUES))
    if problems:
        raise _rejected(problems)
    frozen: FrozenDict = freeze(nodes)
    return frozen


def migrate_view_state(nodes: Any, basis: Any, block: Any) -> FrozenDict:
    """The part of `nodes` still compatible with `block`, given the basis it was saved with.

    Never raises for `nodes` or `basis`: whatever does not fit is dropped, and a basis that
    is None or not what `view_state_basis` returns counts as unknown.  `UISchemaError` for
    a block without the elements the rules read.
    """
    facts = block_facts(block)
    if type(nodes) not in OBJECT_KINDS or json_type_problem(nodes):
        return EMPTY_DICT
    if type(basis) not in OBJECT_KINDS or json_type_problem(basis):
        basis = EMPTY_DICT
    return freeze_object(migrate(nodes, basis, facts))
