"""Receipt records of operations: the status machine, the stored fields and their reads.

All receipts of a session live in one hash (`Keys.operations`).  Per operation it holds the
receipt JSON and, as separate fields, the scalars `receipt.lua` checks without parsing JSON:

    st:<op>   status                 c:<op>  createdAt (ms)      u:<op>  updatedAt (ms)
    r:<op>    receipt JSON           sec:<op> the job's secret  job:<op> the job payload JSON
    cap:<op>  capability id

and per session `req:<requestId>` -> "<operationId> <content digest>" (the idempotency index),
`led:<ref digest>` -> operation ids of one document ref, oldest first, space separated, and
`count` (operations of the session).  `receipt.lua` enforces `TRANSITIONS` as well.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core import hash_canonical_json
from core.json._text import utf16_prefix
from core.limits import MESSAGE_LENGTH

from ..redisio.client import RedisClient
from ..redisio.connection import text
from ..wire.entry import dumps, loads

NEW = ""  # the "status" of an operation that does not exist yet
TRANSITIONS: Mapping[str, frozenset[str]] = {
    NEW: frozenset({"queued", "awaiting_confirmation", "accepted"}),
    "awaiting_confirmation": frozenset({"queued", "cancelled"}),
    "queued": frozenset({"running", "cancelled", "unknown", "failed"}),
    "running": frozenset({"succeeded", "failed", "unknown"}),
}
TERMINAL = frozenset({"accepted", "succeeded", "failed", "cancelled", "unknown"})
ACTIVE = frozenset({"queued", "running"})  # what the reaper watches
MAX_PER_REF = 256  # receipts per document ref (the list reply's bound)


def allowed(current: str, new: str) -> bool:
    """True if the status machine allows `current` -> `new` (`NEW` for a new operation)."""
    return new in TRANSITIONS.get(current, frozenset())


def new_operation_id() -> str:
    """A host-generated operation id: `op-` and 32 random hex digits."""
    return "op-" + secrets.token_hex(16)


def new_secret() -> str:
    """The random secret a job presents with its result entries."""
    return secrets.token_hex(24)


def ref_digest(ref: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical document ref: the name of its ledger."""
    return hash_canonical_json(dict(ref))


def status_field(op: str) -> str:
    return f"st:{op}"


def receipt_field(op: str) -> str:
    return f"r:{op}"


def request_field(request_id: str) -> str:
    """The idempotency index field of a requestId."""
    return f"req:{request_id}"


def ledger_field(digest: str) -> str:
    """The ledger field of a document ref (by `ref_digest`)."""
    return f"led:{digest}"


_FIELDS = ("st", "r", "c", "u", "sec", "job", "cap")


@dataclass(frozen=True)
class Record:
    """One operation's stored fields."""

    operation_id: str
    status: str
    receipt: dict[str, Any]
    created_at: int
    updated_at: int
    secret: str
    job: dict[str, Any] | None
    capability: str

    def changed(self, status: str, now_ms: int, *, message: str | None = None,
                result: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The receipt after a change to `status` (updatedAt never before createdAt or the last change)."""
        receipt = {key: value for key, value in self.receipt.items() if key not in ("message", "result")}
        receipt["status"] = status
        receipt["updatedAt"] = max(now_ms, self.updated_at, self.created_at)
        if message:
            receipt["message"] = utf16_prefix(message, MESSAGE_LENGTH)  # seed 000 §13: UTF-16 units
        if result is not None:
            receipt["result"] = dict(result)
        return receipt


@dataclass(frozen=True, slots=True)
class ReceiptChange:
    """Everything `receipt.lua` needs for one receipt change (see its header)."""

    operations_key: str
    log_key: str
    active_key: str
    inbox_key: str
    reply_key: str
    approvals_key: str
    expiry_keys: tuple[str, ...]
    entry_id: str  # "" for a change without an input entry (the reaper)
    operation_id: str
    expected: str  # the stored status the change starts from (NEW for a new operation)
    status: str
    receipt: str
    created_at: int
    updated_at: int
    reply: str
    channel: str
    log_max: int
    session_ttl_ms: int
    member: str
    expected_secret: str = ""
    secret: str = ""
    job: str = ""
    capability: str = ""
    request_field: str = ""
    request_value: str = ""
    ledger_field: str = ""
    max_per_ref: int = MAX_PER_REF
    max_per_session: int = 1_024
    prompt: str = ""
    ref_json: str = ""
    action_id: str = ""
    inbox_max: int = 1_024
    approval_expires_ms: int = 0  # a change to awaiting_confirmation: when the reaper cancels it


def read_record(redis: RedisClient, key: str, op: str) -> Record | None:
    """The stored record of an operation, or None."""
    values = redis.hmget(key, [f"{name}:{op}" for name in _FIELDS])
    if values[0] is None or values[1] is None:
        return None
    status, receipt, created, updated, secret, job, capability = (None if v is None else text(v) for v in values)
    return Record(operation_id=op, status=str(status), receipt=loads(str(receipt)), created_at=int(created or 0),
                  updated_at=int(updated or 0), secret=secret or "", job=loads(job) if job else None,
                  capability=capability or "")


def read_request(redis: RedisClient, key: str, request_id: str) -> tuple[str, str] | None:
    """(operationId, content digest) a requestId committed, or None."""
    value = redis.hget(key, request_field(request_id))
    if value is None:
        return None
    op, _, digest = text(value).partition(" ")
    return op, digest


def read_ledger(redis: RedisClient, key: str, digest: str) -> list[dict[str, Any]]:
    """The receipts of one document ref, oldest first."""
    value = redis.hget(key, ledger_field(digest))
    ops = text(value).split() if value is not None else []
    if not ops:
        return []
    values = redis.hmget(key, [receipt_field(op) for op in ops])
    return [loads(value) for value in values if value is not None]


def receipt_json(receipt: Mapping[str, Any]) -> str:
    """The stored, published and replied text of a receipt."""
    return dumps(receipt)
