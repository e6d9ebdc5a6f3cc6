"""Job reports (`kind=result` entries) and the reaper's verdicts: the receipt changes of a run.

An RQ job never writes a receipt: it adds `kind=result` entries named `running`, `succeeded`,
`failed` or `unknown` (the capability was stopped: its own timeout, RQ's) to its session's
partition stream, and the partition owner (the one writer of receipts) commits them here.
Each report carries the operation's secret, which only the receipt record and the job hold;
a report without it is refused (`forged_result`) and changes nothing.  A `succeeded` result
is cut to the capability's public fields and must pass `parse_ui_action_result`, or the
operation is `failed`.
"""

from __future__ import annotations

import hmac
from typing import Any

from config.capabilities import Catalog
from core import UISchemaError, parse_ui_action_result

from ..redisio.client import RedisClient
from ..wire.entry import InputEntry, ok_reply
from ..wire.errors import ErrorCode, HostError
from ..wire.names import RESULT_NAMES
from .receipts import ReceiptChange, Record, allowed, read_record
from .requests import ActionDecision, ReceiptWriter, now_ms

RESULT_BODY_BYTES = 65_536  # a public result is at most 32 KiB; the job's message and envelope fit
_KEYS = {"operationId", "secret", "result", "message"}
MAX_SECRET_LENGTH = 256  # a generated secret is 48 hex digits; anything longer is no secret of ours
FORGED = "the report does not carry the operation's secret"


def _body(name: str, body: Any) -> tuple[str, str, Any, str]:
    """(operationId, secret, result, message) of a well-formed report.

    A report that carries no secret (missing, empty, not a string, longer than any secret) is
    `forged_result` before anything else is looked at: it can never be a job's report.  Any
    other shape problem is `invalid_request`.
    """
    if not isinstance(body, dict):
        raise HostError("a result entry is {operationId, secret, result?, message?}", code=ErrorCode.INVALID_REQUEST)
    secret = body.get("secret")
    if not isinstance(secret, str) or not 1 <= len(secret) <= MAX_SECRET_LENGTH:
        raise HostError(FORGED, code=ErrorCode.FORGED_RESULT)
    if "operationId" not in body or not set(body) <= _KEYS:
        raise HostError("a result entry is {operationId, secret, result?, message?}", code=ErrorCode.INVALID_REQUEST)
    op, message = body["operationId"], body.get("message", "")
    if not isinstance(op, str) or not 1 <= len(op) <= 128:
        raise HostError("operationId is not a short string", code=ErrorCode.INVALID_REQUEST)
    if not isinstance(message, str):
        raise HostError("message must be a string", code=ErrorCode.INVALID_REQUEST)
    if "result" in body and name != "succeeded":
        raise HostError("only a succeeded report carries a result", code=ErrorCode.INVALID_REQUEST)
    return op, secret, body.get("result"), message


class OutcomeHandler:
    """Commits the reports of jobs and the reaper's verdicts for one partition."""

    def __init__(self, *, catalog: Catalog, redis: RedisClient, writer: ReceiptWriter) -> None:
        self._catalog = catalog
        self._redis = redis
        self._writer = writer

    def decide(self, entry_id: str, entry: InputEntry, body: Any, reply_key: str) -> ActionDecision:
        """Validate one job report; raise `HostError` (state unchanged) for any rejection."""
        if entry.name not in RESULT_NAMES:
            raise HostError("unknown report; use one of " + ", ".join(RESULT_NAMES), code=ErrorCode.UNKNOWN_REQUEST)
        op, secret, result, message = _body(entry.name, body)
        record = read_record(self._redis, self._writer.operations_key(entry.session), op)
        if record is None:
            raise HostError("no operation with that operationId in this session", code=ErrorCode.UNKNOWN_OPERATION)
        if not record.secret or not hmac.compare_digest(record.secret.encode(), secret.encode()):
            raise HostError(FORGED, code=ErrorCode.FORGED_RESULT)
        if not allowed(record.status, entry.name):
            raise HostError(f"the operation is {record.status}; a {entry.name} report is not accepted",
                            code=ErrorCode.INVALID_TRANSITION)
        status, public = entry.name, None
        if status == "succeeded":
            status, public, message = self._public(record, result)
        receipt = record.changed(status, now_ms(), message=message or None, result=public)
        reply = ok_reply(entry.request, {"receipt": receipt})
        change = self._writer.change(entry.session, record, receipt, entry_id=entry_id, reply=reply,
                                     reply_key=reply_key, expected_secret=record.secret)
        ran = receipt["updatedAt"] - record.updated_at if record.status == "running" else -1
        return ActionDecision(reply, change, capability=record.capability, ran_ms=ran)

    def _public(self, record: Record, result: Any) -> tuple[str, Any, str]:
        """("succeeded", the public result, "") or ("failed", None, why)."""
        capability = self._catalog.get(record.capability)
        if capability is None:
            return "failed", None, "the capability is no longer configured on this host"
        try:
            return "succeeded", parse_ui_action_result(capability.public_result(result)), ""
        except UISchemaError:
            return "failed", None, "the capability returned a result that is not a valid public action result"

    def verdict(self, session: str, record: Record, status: str, message: str) -> ReceiptChange:
        """A change decided by the reaper (no entry, no reply): `unknown`, `failed`, or `cancelled`
        (an approval that expired)."""
        receipt = record.changed(status, now_ms(), message=message)
        return self._writer.change(session, record, receipt)
