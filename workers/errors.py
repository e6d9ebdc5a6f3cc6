"""The `HostError` family: every rejection the runtime replies with has a stable `code`.

The code is both the reply's `error.code` and the `reason` label of the rejection metric.
Redis errors are translated in `workers.redisio`; core errors in `workers.tools`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from core.errors import Issue

MAX_REPLY_ISSUES = 10  # seed 000 section 8: tool-visible diagnostics are limited to 10

# Every `code` a reply's error may carry: the README's error-code table, in its order, and the
# known values of the `reason` label of `iui_rejections_total` (initialised at 0 at start-up).
REJECTION_CODES: tuple[str, ...] = (
    "malformed_entry", "invalid_json", "invalid_arguments", "oversize", "unknown_tool",
    "wrong_partition", "invalid_document", "invalid_mutation", "document_too_large", "invalid_source_call_id",
    "unknown_source", "cursor_conflict", "stream_closed", "call_id_reused", "frame_budget", "byte_budget",
    "generation_capacity", "plain_capacity",
    # the action runtime (kind=action requests and kind=result job reports)
    "unknown_request", "invalid_request", "request_id_reused", "unknown_document", "stale_document",
    "document_not_complete", "invalid_values", "unknown_action", "invalid_action", "unknown_capability",
    "argument_mismatch", "ledger_full", "operation_capacity", "invalid_receipt", "unknown_operation",
    "not_cancellable", "not_awaiting_confirmation", "forged_result", "invalid_transition",
    # answer-ui@1 tools and answer-view-state@1 requests (seed 004)
    "invalid_block", "invalid_final_answer", "turn_closed", "phase_changed", "answer_capacity",
    "session_deleted", "unknown_block", "invalid_view_state", "conflict", "too_large",
    "dead_letter",
)


@dataclass(frozen=True, slots=True)
class ReplyIssue:
    """One located diagnostic as the reply carries it."""

    path: str
    message: str


class HostError(Exception):
    """A request was rejected; `code` is stable and machine-readable."""

    code = "rejected"

    def __init__(self, message: str, *, code: str | None = None,
                 issues: Iterable[Issue | ReplyIssue] = ()) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.issues = [ReplyIssue(i.path, i.message) for i in issues][:MAX_REPLY_ISSUES]

    @property
    def message(self) -> str:
        return str(self.args[0])


class MalformedEntry(HostError):
    """The input entry itself is unusable (missing field, bad JSON, unknown tool, oversize...)."""

    code = "malformed_entry"


class ConflictError(HostError):
    """The presented cursor is not the current one; the message names the current cursor."""

    code = "cursor_conflict"


class BudgetError(HostError):
    """A frame, byte, document or generation budget would be exceeded."""

    code = "budget_exceeded"


class Fenced(Exception):
    """The lease of the partition was lost: this process must stop writing to it."""


class StaleCache(Exception):
    """The stored checkpoint moved under the in-memory cache; reload and retry the entry."""
