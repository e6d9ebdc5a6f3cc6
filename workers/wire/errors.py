"""The `HostError` family: every rejection the runtime replies with has a stable `code`.

The code is both the reply's `error.code` and the `reason` label of the rejection metric.
Redis errors are translated in `workers.redisio`; core errors in `workers.tools`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from core.errors import Issue

MAX_REPLY_ISSUES = 10  # seed 000 section 8: tool-visible diagnostics are limited to 10


class ErrorCode(StrEnum):
    """Every `code` a reply's error may carry: the README's error-code table, in its order.

    Also the known values of the `reason` label of `iui_rejections_total` (initialised at 0).
    """

    MALFORMED_ENTRY = "malformed_entry"
    INVALID_JSON = "invalid_json"
    INVALID_ARGUMENTS = "invalid_arguments"
    OVERSIZE = "oversize"
    UNKNOWN_TOOL = "unknown_tool"
    STREAMING_DISABLED = "streaming_disabled"
    WRONG_PARTITION = "wrong_partition"
    UNKNOWN_SESSION = "unknown_session"
    INVALID_DOCUMENT = "invalid_document"
    INVALID_MUTATION = "invalid_mutation"
    DOCUMENT_TOO_LARGE = "document_too_large"
    INVALID_SOURCE_CALL_ID = "invalid_source_call_id"
    UNKNOWN_SOURCE = "unknown_source"
    CURSOR_CONFLICT = "cursor_conflict"
    STREAM_CLOSED = "stream_closed"
    CALL_ID_REUSED = "call_id_reused"
    FRAME_BUDGET = "frame_budget"
    BYTE_BUDGET = "byte_budget"
    GENERATION_CAPACITY = "generation_capacity"
    PLAIN_CAPACITY = "plain_capacity"
    # the action runtime (kind=action requests and kind=result job reports)
    UNKNOWN_REQUEST = "unknown_request"
    INVALID_REQUEST = "invalid_request"
    REQUEST_ID_REUSED = "request_id_reused"
    UNKNOWN_DOCUMENT = "unknown_document"
    STALE_DOCUMENT = "stale_document"
    DOCUMENT_NOT_COMPLETE = "document_not_complete"
    INVALID_VALUES = "invalid_values"
    UNKNOWN_ACTION = "unknown_action"
    INVALID_ACTION = "invalid_action"
    UNKNOWN_CAPABILITY = "unknown_capability"
    ARGUMENT_MISMATCH = "argument_mismatch"
    LEDGER_FULL = "ledger_full"
    OPERATION_CAPACITY = "operation_capacity"
    INVALID_RECEIPT = "invalid_receipt"
    UNKNOWN_OPERATION = "unknown_operation"
    NOT_CANCELLABLE = "not_cancellable"
    NOT_AWAITING_CONFIRMATION = "not_awaiting_confirmation"
    FORGED_RESULT = "forged_result"
    INVALID_TRANSITION = "invalid_transition"
    # answer-ui@1 tools and answer-view-state@1 requests (seed 004)
    INVALID_BLOCK = "invalid_block"
    INVALID_FINAL_ANSWER = "invalid_final_answer"
    TURN_CLOSED = "turn_closed"
    PHASE_CHANGED = "phase_changed"
    ANSWER_CAPACITY = "answer_capacity"
    SESSION_DELETED = "session_deleted"
    UNKNOWN_BLOCK = "unknown_block"
    INVALID_VIEW_STATE = "invalid_view_state"
    CONFLICT = "conflict"
    TOO_LARGE = "too_large"
    DEAD_LETTER = "dead_letter"


REJECTION_CODES: tuple[str, ...] = tuple(code.value for code in ErrorCode)


@dataclass(frozen=True, slots=True)
class ReplyIssue:
    """One located diagnostic as the reply carries it."""

    path: str
    message: str


class HostError(Exception):
    """A request was rejected; `code` is stable and machine-readable (an `ErrorCode`)."""

    code: ErrorCode

    def __init__(self, message: str, *, code: ErrorCode | None = None,
                 issues: Iterable[Issue | ReplyIssue] = ()) -> None:
        super().__init__(message)
        if code is not None:
            self.code = ErrorCode(code)  # also checks a plain string from an untyped caller
        elif not hasattr(self, "code"):
            raise TypeError(f"{type(self).__name__} needs an error code")
        self.issues = [ReplyIssue(i.path, i.message) for i in issues][:MAX_REPLY_ISSUES]

    @property
    def message(self) -> str:
        """The human-readable, one-line message."""
        return str(self.args[0])


class MalformedEntry(HostError):
    """The input entry itself is unusable (missing field, bad JSON, unknown tool, oversize...)."""

    code = ErrorCode.MALFORMED_ENTRY


class ConflictError(HostError):
    """The presented cursor is not the current one; the message names the current cursor."""

    code = ErrorCode.CURSOR_CONFLICT


class BudgetError(HostError):
    """A frame, byte, document or generation budget would be exceeded (the code says which)."""


class Fenced(Exception):
    """The lease of the partition was lost: this process must stop writing to it."""


class StaleCache(Exception):
    """The stored checkpoint moved under the in-memory cache; reload and retry the entry."""


class OutOfOrder(Exception):
    """An older entry of the partition is still pending (a paused process moved it there after
    this owner's replay, or an earlier write of the batch failed): nothing was written; replay
    the pending list, in id order, before anything newer."""
