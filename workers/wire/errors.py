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
    """Every `code` a reply's error may carry, each with its meaning in the string below it.

    The docs' error-code table (docs/reference/error-codes.md) is generated from these, in this order.
    Also the known values of the `reason` label of `iui_rejections_total` (initialised at 0).
    """

    MALFORMED_ENTRY = "malformed_entry"
    """A field is missing, unknown or invalid (`kind` other than tool/action/result/view, a `kind=view` entry
    without `principal` or `project`, ...)."""
    INVALID_JSON = "invalid_json"
    """The body is not JSON: not JSON syntax, or not UTF-8 (a JSON text is UTF-8; a byte that is not is never
    replaced, so the document stored is always the one sent)."""
    INVALID_ARGUMENTS = "invalid_arguments"
    """The body is not the tool's argument object."""
    OVERSIZE = "oversize"
    """The body is larger than `IUI_MAX_DOCUMENT_BYTES` + 4 KiB (checked before it is parsed)."""
    UNKNOWN_TOOL = "unknown_tool"
    """The tool name is none of the seven: `intelligent_ui`, the four stream tools, `present_answer`, `final_answer`.
    The message lists the tools the answering worker serves (without the stream tools when
    `IUI_STREAMING_ENABLED=false`, which refuses those four with `streaming_disabled`), never the name sent."""
    STREAMING_DISABLED = "streaming_disabled"
    """`intelligent_ui_open`, `_patch`, `_complete` or `_cancel` while the stream tools are switched off
    (`IUI_STREAMING_ENABLED=false`); checked after the body parses, before anything else; nothing changes, a
    stream opened earlier keeps its state, `intelligent_ui` still works."""
    WRONG_PARTITION = "wrong_partition"
    """The entry was added to another partition's stream (the reply is on *that* partition's reply key)."""
    UNKNOWN_SESSION = "unknown_session"
    """The entry's identity (`principal`, `project`) is not the session's owner: answered as if the session did not
    exist, nothing changes."""
    INVALID_DOCUMENT = "invalid_document"
    """The document failed validation (issues carry JSON Pointers), a document beyond the protocol's 262,144 bytes
    included, whatever `IUI_MAX_DOCUMENT_BYTES` is (one issue at path `""`: `JSON is <n> bytes; the limit is
    262144`)."""
    INVALID_MUTATION = "invalid_mutation"
    """The patched candidate document failed validation (issues carry JSON Pointers), a patched document beyond the
    protocol's 262,144 bytes included (as for `invalid_document`)."""
    DOCUMENT_TOO_LARGE = "document_too_large"
    """The document (or patched document) is within the protocol's 262,144 bytes but exceeds a lowered
    `IUI_MAX_DOCUMENT_BYTES`; never returned at the default (262,144), where a larger document is
    `invalid_document` (`invalid_mutation` for a patch), and a body beyond the limit + 4 KiB is `oversize`."""
    INVALID_SOURCE_CALL_ID = "invalid_source_call_id"
    """The `sourceCallId` argument is not a string of 1–256 printable ASCII characters."""
    UNKNOWN_SOURCE = "unknown_source"
    """No stream was opened by that `sourceCallId` in this session."""
    CURSOR_CONFLICT = "cursor_conflict"
    """`sourceCallId`/`generation`/`baseRevision` are not the current cursor; the message names the current cursor."""
    STREAM_CLOSED = "stream_closed"
    """The generation has ended; the message names the current cursor."""
    CALL_ID_REUSED = "call_id_reused"
    """The call id was already accepted in this generation with other content, or before a later call; or it
    already stored a plain document with other content; or it is already a plain document / a stream's
    `sourceCallId`."""
    FRAME_BUDGET = "frame_budget"
    """Only the terminal frame still fits in the generation's frames (`IUI_MAX_FRAMES_PER_GENERATION`)."""
    BYTE_BUDGET = "byte_budget"
    """Only the terminal frame still fits in the generation's 16 MiB (one maximal frame is reserved): the patch
    is refused with this code whether the worker or core's own check finds it first (never
    `invalid_mutation`)."""
    GENERATION_CAPACITY = "generation_capacity"
    """The session holds `IUI_MAX_GENERATIONS_PER_SESSION` generations; no new open."""
    PLAIN_CAPACITY = "plain_capacity"
    """The session holds `IUI_MAX_PLAIN_PER_SESSION` plain documents; no new plain call (a stored one is never
    overwritten)."""
    # the action runtime (kind=action requests and kind=result job reports)
    UNKNOWN_REQUEST = "unknown_request"
    """A `kind=action` name not one of reserve/get/cancel/list/catalog/confirm, a `kind=result` name not
    running/succeeded/failed/unknown, or a `kind=view` name not get/put/delete_session."""
    INVALID_REQUEST = "invalid_request"
    """The body is not the request's shape (`UIActionReserveRequest`, `UIActionQuery`, `UIDocumentRef`, `{}`,
    `{operationId, decision}`, a job report that carries a secret, a view request's body); issues carry JSON
    Pointers."""
    REQUEST_ID_REUSED = "request_id_reused"
    """The `requestId` already reserved an operation with other content (document ref, action or values), or a view
    `put`'s `request_id` in the receipt window was used with other content."""
    UNKNOWN_DOCUMENT = "unknown_document"
    """No plain document or stream with that `sourceCallId` and `uiId` in this session."""
    STALE_DOCUMENT = "stale_document"
    """The ref is not the latest generation, or not its final revision (the message names the current one)."""
    DOCUMENT_NOT_COMPLETE = "document_not_complete"
    """The stream is `streaming`, `cancel` or `error`: only a `complete` stream accepts actions."""
    INVALID_VALUES = "invalid_values"
    """`values` is not a valid state of the document (fields, types, ranges, steps, options, bytes)."""
    UNKNOWN_ACTION = "unknown_action"
    """The document declares no such action."""
    INVALID_ACTION = "invalid_action"
    """The action's arguments or prompt cannot be computed from `values`."""
    UNKNOWN_CAPABILITY = "unknown_capability"
    """The action names a capability this host's catalog does not offer."""
    ARGUMENT_MISMATCH = "argument_mismatch"
    """The computed arguments do not match the capability's parameter schema (its callable's signature)."""
    LEDGER_FULL = "ledger_full"
    """The document ref holds 256 operations; no new reserve (nothing is overwritten)."""
    OPERATION_CAPACITY = "operation_capacity"
    """The session holds `IUI_MAX_OPERATIONS_PER_SESSION` operations; no new reserve (nothing is overwritten)."""
    INVALID_RECEIPT = "invalid_receipt"
    """The receipt the host built would not pass `parse_ui_action_receipt` (a host bug; nothing is stored)."""
    UNKNOWN_OPERATION = "unknown_operation"
    """No operation with that `operationId` in this session."""
    NOT_CANCELLABLE = "not_cancellable"
    """The operation is `running` (its outcome will still be reported; a cancel never undoes a side effect) or
    already final."""
    NOT_AWAITING_CONFIRMATION = "not_awaiting_confirmation"
    """`confirm` of an operation that is not `awaiting_confirmation`."""
    FORGED_RESULT = "forged_result"
    """A job report without the operation's secret (`secret` missing, empty, not a string, or not the stored one;
    checked before anything else of the report but its being an object): refused, nothing changes."""
    INVALID_TRANSITION = "invalid_transition"
    """A job report the status machine does not allow now (e.g. `running` of a cancelled operation)."""
    # answer-ui@1 tools and answer-view-state@1 requests (seed 004)
    INVALID_BLOCK = "invalid_block"
    """A `present_answer` block failed the answer-ui@1 checks (issues carry JSON Pointers)."""
    INVALID_FINAL_ANSWER = "invalid_final_answer"
    """A `final_answer` failed the answer-ui@1 checks (issues carry JSON Pointers)."""
    TURN_CLOSED = "turn_closed"
    """The message id names an earlier turn, or its turn was closed by `final_answer`."""
    PHASE_CHANGED = "phase_changed"
    """The block id was published in this turn with the other phase."""
    ANSWER_CAPACITY = "answer_capacity"
    """The session holds `IUI_MAX_ANSWER_BLOCKS_PER_SESSION` blocks (no new block) or
    `IUI_MAX_ANSWER_TURNS_PER_SESSION` turns (no new turn)."""
    SESSION_DELETED = "session_deleted"
    """The session's answers and view states were deleted (tombstone)."""
    UNKNOWN_BLOCK = "unknown_block"
    """No final block with that id was published in that message (a view request)."""
    INVALID_VIEW_STATE = "invalid_view_state"
    """`nodes` holds a field the component does not allow, or a value that does not fit the block."""
    CONFLICT = "conflict"
    """`expected_revision` is not the stored revision; the error carries `revision`, `schema_digest`, `nodes`,
    `migrated`."""
    TOO_LARGE = "too_large"
    """The block's view state would exceed 32,768 bytes or the session's 1,048,576 bytes."""
    DEAD_LETTER = "dead_letter"
    """The entry could not be processed (delivered more than `IUI_DEAD_LETTER_AFTER` times or kept failing); it is
    in `{prefix}:{pN}:dead`."""


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
