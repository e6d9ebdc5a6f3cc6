"""The Intelligent UI protocol library: pure validation, evaluation and stream logic.

No I/O, no Redis, no clocks.  Public names are re-exported here (resolved lazily so that
importing one part of the library does not load every module).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "parse_document": "document",
    "document_json_schema": "schema",
    "assert_safe_json": "safe_json",
    "initial_state": "state",
    "update_state": "state",
    "restore_state": "state",
    "assert_valid_state": "state",
    "evaluate_derived": "evaluation",
    "resolve_value": "evaluation",
    "resolve_document_value": "evaluation",
    "evaluate_expression": "expression",
    "dispatch_local_action": "local_action",
    "resolve_ui_action": "host_action",
    "apply_action_result": "host_action",
    "canonical_json_string": "canonical",
    "hash_canonical_json": "canonical",
    "start_ui_stream": "stream",
    "advance_ui_stream": "stream",
    "accept_checkpoint": "stream",
    "resume_ui_stream": "stream",
    "UIStreamState": "stream",
    "parse_ui_document_ref": "remote",
    "parse_ui_action_reserve_request": "remote",
    "parse_ui_action_query": "remote",
    "parse_ui_action_receipt": "remote",
    "parse_ui_action_receipt_list": "remote",
    "parse_ui_capability_descriptor": "remote",
    "parse_ui_capability_catalog": "remote",
    "parse_ui_action_result": "remote",
    "UIError": "errors",
    "UISchemaError": "errors",
    "UIStateError": "errors",
    "UIExpressionError": "errors",
    "UIActionError": "errors",
    "UIStreamError": "errors",
    "Issue": "errors",
    "UI_LIMITS": "limits",
    "UI_PROTOCOL_LIMITS": "limits",
    "parse_answer_block": "answer.block",
    "parse_final_answer": "answer.final",
    "answer_parts": "answer.final",
    "parse_report_ui_blocks": "answer.report",
    "answer_json_schema": "answer.schema",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'core' has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
