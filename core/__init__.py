"""The Intelligent UI protocol library: pure validation, evaluation and stream logic.

No I/O, no Redis, no clocks.  The public names are imported here; each subpackage says in
its docstring what it offers (see "Architecture" in the README).
"""

from __future__ import annotations

from core._compiled import COMPILED
from core.answer._schema import answer_json_schema
from core.answer.block import parse_answer_block
from core.answer.final import answer_parts, parse_final_answer
from core.answer.report import parse_report_ui_blocks
from core.answer.view_state import (
    migrate_view_state,
    parse_view_state,
    view_state_basis,
    view_state_schema_digest,
)
from core.document._schema import document_json_schema
from core.document.model import parse_document
from core.errors import (
    Issue,
    UIActionError,
    UIError,
    UIExpressionError,
    UISchemaError,
    UIStateError,
    UIStreamError,
    UIViewStateError,
)
from core.expression.language import evaluate_expression
from core.json.canonical import canonical_json_string, hash_canonical_json
from core.json.safe import assert_safe_json
from core.limits import UI_LIMITS, UI_PROTOCOL_LIMITS, UI_VIEW_STATE_LIMITS
from core.remote.records import (
    parse_ui_action_query,
    parse_ui_action_receipt,
    parse_ui_action_receipt_list,
    parse_ui_action_reserve_request,
    parse_ui_action_result,
    parse_ui_capability_catalog,
    parse_ui_capability_descriptor,
    parse_ui_document_ref,
)
from core.state.evaluation import evaluate_derived, resolve_document_value, resolve_value
from core.state.host_action import apply_action_result, resolve_ui_action
from core.state.local_action import dispatch_local_action
from core.state.values import assert_valid_state, initial_state, restore_state, update_state
from core.stream.lifecycle import (
    RestoredSnapshot,
    UIStreamState,
    accept_checkpoint,
    advance_ui_stream,
    restore_envelope,
    restore_snapshot,
    restore_ui_stream,
    resume_ui_stream,
    start_ui_stream,
)

__all__ = [
    "COMPILED",
    "UI_LIMITS",
    "UI_PROTOCOL_LIMITS",
    "UI_VIEW_STATE_LIMITS",
    "Issue",
    "RestoredSnapshot",
    "UIActionError",
    "UIError",
    "UIExpressionError",
    "UISchemaError",
    "UIStateError",
    "UIStreamError",
    "UIStreamState",
    "UIViewStateError",
    "accept_checkpoint",
    "advance_ui_stream",
    "answer_json_schema",
    "answer_parts",
    "apply_action_result",
    "assert_safe_json",
    "assert_valid_state",
    "canonical_json_string",
    "dispatch_local_action",
    "document_json_schema",
    "evaluate_derived",
    "evaluate_expression",
    "hash_canonical_json",
    "initial_state",
    "migrate_view_state",
    "parse_answer_block",
    "parse_document",
    "parse_final_answer",
    "parse_report_ui_blocks",
    "parse_ui_action_query",
    "parse_ui_action_receipt",
    "parse_ui_action_receipt_list",
    "parse_ui_action_reserve_request",
    "parse_ui_action_result",
    "parse_ui_capability_catalog",
    "parse_ui_capability_descriptor",
    "parse_ui_document_ref",
    "parse_view_state",
    "resolve_document_value",
    "resolve_ui_action",
    "resolve_value",
    "restore_envelope",
    "restore_snapshot",
    "restore_state",
    "restore_ui_stream",
    "resume_ui_stream",
    "start_ui_stream",
    "update_state",
    "view_state_basis",
    "view_state_schema_digest",
]
