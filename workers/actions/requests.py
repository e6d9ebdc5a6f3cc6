"""Action requests of seed 000 section 11: reserve, get, cancel, list, catalog and confirm.

`ActionHandler.decide` validates one `kind=action` entry with the core parsers, resolves it
against the *persisted* document of the session (never one from the request) and returns an
`ActionDecision`: a receipt change for `receipt.lua` (plus what to do with RQ after the
commit), or a reply that changes nothing.  Every rejection raises a `HostError` with a stable
code; nothing here writes to Redis.  Job reports (`kind=result`) are decided in
`workers.outcomes`, with the same `ReceiptWriter`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from config.capabilities import ArgumentsError, Capability, Catalog
from config.settings import Settings
from core import (
    UIActionError,
    UIError,
    UISchemaError,
    UIStateError,
    assert_valid_state,
    hash_canonical_json,
    parse_ui_action_query,
    parse_ui_action_receipt,
    parse_ui_action_reserve_request,
    parse_ui_document_ref,
    resolve_ui_action,
)

from ..redisio.client import RedisClient
from ..redisio.keys import Keys
from ..sessions.store import Store
from ..wire.entry import InputEntry, dumps, ok_reply
from ..wire.errors import ErrorCode, HostError
from ..wire.names import ACTION_NAMES, served_tools
from .plain import PlainDocuments
from .receipts import (
    MAX_PER_REF,
    NEW,
    ReceiptChange,
    Record,
    ledger_field,
    new_operation_id,
    new_secret,
    read_ledger,
    read_record,
    read_request,
    receipt_json,
    ref_digest,
    request_field,
)

REQUEST_BODY_BYTES = 32_768 + 1_024  # maxActionRequestBytes and the envelope's room


def now_ms() -> int:
    """Unix milliseconds of the host clock (receipts never go back: see `Record.changed`)."""
    return int(time.time() * 1000)


@dataclass(frozen=True)
class ActionDecision:
    """What the consumer writes for one action entry, and what it does with RQ afterwards."""

    reply: str
    change: ReceiptChange | None = None
    enqueue: dict[str, Any] | None = None  # the job payload to enqueue after the commit
    cancel_job: str = ""  # an operation whose queued job is cancelled after the commit
    capability: str = ""  # the metric label
    waited_ms: int = -1  # confirmation wait (approve/deny), for the metric
    ran_ms: int = -1  # running -> outcome, for the job duration metric


class ReceiptWriter:
    """Builds `receipt.lua` changes for the operations of one partition."""

    def __init__(self, *, settings: Settings, keys: Keys, partition: int) -> None:
        self._settings = settings
        self._keys = keys
        self._partition = partition

    def operations_key(self, session: str) -> str:
        return self._keys.operations(self._partition, session)

    def change(self, session: str, record: Record, receipt: Mapping[str, Any], *, entry_id: str = "",
               reply: str = "", reply_key: str = "", expected_secret: str = "", secret: str = "") -> ReceiptChange:
        """A transition of a stored operation (CAS on its stored status)."""
        return self._base(session, record.operation_id, receipt, entry_id=entry_id, reply=reply,
                          reply_key=reply_key, expected=record.status, created_at=record.created_at,
                          expected_secret=expected_secret, secret=secret)

    def _base(self, session: str, op: str, receipt: Mapping[str, Any], *, entry_id: str, reply: str,
              reply_key: str, expected: str, created_at: int, expected_secret: str = "", secret: str = "",
              **extra: Any) -> ReceiptChange:
        k, p = self._keys, self._partition
        return ReceiptChange(
            operations_key=k.operations(p, session), log_key=k.receipt_log(p, session),
            active_key=k.active_operations(p), inbox_key=k.agent_inbox(p, session),
            reply_key=reply_key or k.operations(p, session), approvals_key=k.approvals(p),
            expiry_keys=k.sliding_keys(p, session),
            entry_id=entry_id, operation_id=op, expected=expected, status=str(receipt["status"]),
            receipt=receipt_json(receipt), created_at=created_at, updated_at=int(receipt["updatedAt"]),
            reply=reply, channel=k.receipt_channel(p, session), log_max=self._settings.receipt_log_max,
            expected_secret=expected_secret, secret=secret, member=f"{session} {op}",
            session_ttl_ms=self._settings.session_ttl_s * 1000, inbox_max=self._settings.agent_inbox_max,
            max_per_ref=MAX_PER_REF, max_per_session=self._settings.max_operations_per_session, **extra)

    def create(self, session: str, receipt: Mapping[str, Any], *, entry_id: str, reply: str, reply_key: str,
               request_value: str, ref_ledger: str, job: str = "", capability: str = "", secret: str = "",
               prompt: str = "", approval_expires_ms: int = 0) -> ReceiptChange:
        """A new operation: the requestId index, the ref's ledger and the session's count too."""
        return self._base(session, str(receipt["operationId"]), receipt, entry_id=entry_id, reply=reply,
                          reply_key=reply_key, expected=NEW, created_at=int(receipt["createdAt"]), secret=secret,
                          job=job, capability=capability, approval_expires_ms=approval_expires_ms,
                          request_field=request_field(str(receipt["requestId"])), request_value=request_value,
                          ledger_field=ref_ledger, prompt=prompt,
                          ref_json=dumps(receipt["documentRef"]), action_id=str(receipt["actionId"]))


def _invalid(error: UISchemaError) -> HostError:
    return HostError(f"request rejected: {error.message}", code=ErrorCode.INVALID_REQUEST, issues=error.issues)


class ActionHandler:
    """Validates the action requests of one partition against its persisted state."""

    def __init__(self, *, settings: Settings, keys: Keys, partition: int, store: Store, catalog: Catalog,
                 redis: RedisClient, writer: ReceiptWriter, plain: PlainDocuments) -> None:
        self._settings = settings
        self._keys = keys
        self._partition = partition
        self._store = store
        self._capabilities = catalog
        self._redis = redis
        self._writer = writer
        self._plain = plain

    def decide(self, entry_id: str, entry: InputEntry, body: dict[str, Any], reply_key: str) -> ActionDecision:
        """Validate one action request; raise `HostError` for any rejection."""
        handler = {"reserve": self._reserve, "get": self._get, "cancel": self._cancel, "list": self._list,
                   "catalog": self._catalog, "confirm": self._confirm}.get(entry.name)
        if handler is None:
            raise HostError("unknown action request; use one of " + ", ".join(ACTION_NAMES),
                            code=ErrorCode.UNKNOWN_REQUEST)
        decision: ActionDecision = handler(entry_id, entry, body, reply_key)
        return decision

    # -- reads ----------------------------------------------------------------------------

    def _record(self, session: str, body: Any) -> Record:
        try:
            query = parse_ui_action_query(body)
        except UISchemaError as error:
            raise _invalid(error) from None
        record = read_record(self._redis, self._writer.operations_key(session), str(query["operationId"]))
        if record is None:
            raise HostError("no operation with that operationId in this session", code=ErrorCode.UNKNOWN_OPERATION)
        return record

    def _get(self, entry_id: str, entry: InputEntry, body: Any, reply_key: str) -> ActionDecision:
        record = self._record(entry.session, body)
        return ActionDecision(ok_reply(entry.request, {"receipt": record.receipt}))

    def _list(self, entry_id: str, entry: InputEntry, body: Any, reply_key: str) -> ActionDecision:
        try:
            ref = parse_ui_document_ref(body)
        except UISchemaError as error:
            raise _invalid(error) from None
        receipts = read_ledger(self._redis, self._writer.operations_key(entry.session), ref_digest(ref))
        return ActionDecision(ok_reply(entry.request, {"receipts": receipts}))

    def _catalog(self, entry_id: str, entry: InputEntry, body: Any, reply_key: str) -> ActionDecision:
        if body != {}:
            raise HostError("a catalog request takes an empty object", code=ErrorCode.INVALID_REQUEST)
        return ActionDecision(ok_reply(entry.request, {"capabilities": self._capabilities.descriptors(),
                                                       "tools": served_tools(self._settings.streaming_enabled)}))

    # -- cancel / confirm -----------------------------------------------------------------

    def _cancel(self, entry_id: str, entry: InputEntry, body: Any, reply_key: str) -> ActionDecision:
        record = self._record(entry.session, body)
        if record.status == "running":
            raise HostError("the operation is running and cannot be cancelled; its outcome will be reported "
                            "(a cancel never undoes a side effect)", code=ErrorCode.NOT_CANCELLABLE)
        if record.status not in ("queued", "awaiting_confirmation"):
            raise HostError(f"the operation is already {record.status}", code=ErrorCode.NOT_CANCELLABLE)
        receipt = record.changed("cancelled", now_ms(), message="cancelled before it started")
        reply = ok_reply(entry.request, {"receipt": receipt})
        change = self._writer.change(entry.session, record, receipt, entry_id=entry_id, reply=reply,
                                     reply_key=reply_key)
        return ActionDecision(reply, change, cancel_job=record.operation_id if record.status == "queued" else "",
                              capability=record.capability)

    def _confirm(self, entry_id: str, entry: InputEntry, body: Any, reply_key: str) -> ActionDecision:
        if not isinstance(body, dict) or set(body) != {"operationId", "decision"}:
            raise HostError("a confirm request is {operationId, decision}", code=ErrorCode.INVALID_REQUEST)
        if body["decision"] not in ("approve", "deny"):
            raise HostError("decision must be \"approve\" or \"deny\"", code=ErrorCode.INVALID_REQUEST)
        record = self._record(entry.session, {"operationId": body["operationId"]})
        if record.status != "awaiting_confirmation":
            raise HostError(f"the operation is {record.status}, not awaiting_confirmation",
                            code=ErrorCode.NOT_AWAITING_CONFIRMATION)
        now = now_ms()
        approve = body["decision"] == "approve"
        receipt = record.changed("queued" if approve else "cancelled", now,
                                 message=None if approve else "denied by the user")
        reply = ok_reply(entry.request, {"receipt": receipt})
        secret = new_secret() if approve else ""
        change = self._writer.change(entry.session, record, receipt, entry_id=entry_id, reply=reply,
                                     reply_key=reply_key, secret=secret)
        job = {**record.job, "secret": secret} if approve and record.job is not None else None
        return ActionDecision(reply, change, enqueue=job, capability=record.capability,
                              waited_ms=max(0, now - record.created_at))

    # -- reserve --------------------------------------------------------------------------

    def _reserve(self, entry_id: str, entry: InputEntry, body: Any, reply_key: str) -> ActionDecision:
        try:
            request = parse_ui_action_reserve_request(body)
        except UISchemaError as error:
            raise _invalid(error) from None
        ref, action_id = request["documentRef"], str(request["actionId"])
        digest = hash_canonical_json({"documentRef": ref, "actionId": action_id, "values": request["values"]})
        operations = self._writer.operations_key(entry.session)
        indexed = read_request(self._redis, operations, str(request["requestId"]))
        if indexed is not None:
            return self._replayed(entry, indexed, digest)
        document = self._document(entry.session, ref)
        try:
            assert_valid_state(document, request["values"])
        except UIStateError as error:
            raise HostError(f"values are not a valid state of the document: {error.message}",
                            code=ErrorCode.INVALID_VALUES) from None
        resolved = self._resolve(document, request["values"], action_id)
        ledger = ledger_field(ref_digest(ref))
        self._check_capacity(operations, ledger)
        now = now_ms()
        receipt: dict[str, Any] = {"operationId": new_operation_id(), "requestId": request["requestId"],
                                   "documentRef": ref, "actionId": action_id, "createdAt": now, "updatedAt": now}
        value = f"{receipt['operationId']} {digest}"
        if resolved["kind"] == "agent":
            receipt |= {"status": "accepted", "parameterHash": hash_canonical_json(
                {"documentRef": ref, "actionId": action_id, "prompt": resolved["prompt"]})}
            reply = self._receipt_reply(entry, receipt)
            change = self._writer.create(entry.session, receipt, entry_id=entry_id, reply=reply, reply_key=reply_key,
                                         request_value=value, ref_ledger=ledger, prompt=str(resolved["prompt"]))
            return ActionDecision(reply, change, capability="agent")
        capability, arguments = self._capability(resolved)
        receipt |= {"parameterHash": hash_canonical_json({"documentRef": ref, "actionId": action_id,
                                                          "capabilityId": capability.id, "arguments": arguments}),
                    "status": "awaiting_confirmation" if capability.spec.requires_confirmation else "queued"}
        job = {"operationId": receipt["operationId"], "session": entry.session, "partition": self._partition,
               "prefix": self._keys.prefix, "capabilityId": capability.id, "arguments": arguments}
        waits = capability.spec.requires_confirmation
        secret = "" if waits else new_secret()
        reply = self._receipt_reply(entry, receipt)
        change = self._writer.create(entry.session, receipt, entry_id=entry_id, reply=reply, reply_key=reply_key,
                                     request_value=value, ref_ledger=ledger, job=dumps(job),
                                     capability=capability.id, secret=secret,
                                     approval_expires_ms=now + capability.spec.approval_window_ms if waits else 0)
        return ActionDecision(reply, change, enqueue={**job, "secret": secret} if secret else None,
                              capability=capability.id)

    def _receipt_reply(self, entry: InputEntry, receipt: Mapping[str, Any]) -> str:
        try:
            parse_ui_action_receipt(dict(receipt))
        except UISchemaError as error:  # a host bug: never store a receipt the client would refuse
            raise HostError(f"the receipt would be invalid: {error.message}", code=ErrorCode.INVALID_RECEIPT) from None
        return ok_reply(entry.request, {"receipt": receipt})

    def _replayed(self, entry: InputEntry, indexed: tuple[str, str], digest: str) -> ActionDecision:
        op, stored_digest = indexed
        if stored_digest != digest:
            raise HostError("the requestId was already used with other content; use a new requestId for a new "
                            "operation", code=ErrorCode.REQUEST_ID_REUSED)
        record = read_record(self._redis, self._writer.operations_key(entry.session), op)
        if record is None:  # the session expired in between: the index went with it
            raise HostError("the operation of that requestId is gone", code=ErrorCode.UNKNOWN_OPERATION)
        return ActionDecision(ok_reply(entry.request, {"receipt": record.receipt}))

    def _check_capacity(self, operations: str, ledger: str) -> None:
        values = self._redis.hmget(operations, [ledger, "count"])
        used = len(values[0].split()) if values[0] else 0
        if used >= MAX_PER_REF:
            raise HostError(f"the document already has {MAX_PER_REF} operations; no new one is reserved",
                            code=ErrorCode.LEDGER_FULL)
        if int(values[1] or 0) >= self._settings.max_operations_per_session:
            raise HostError(f"the session already holds {self._settings.max_operations_per_session} operations; "
                            "no new one is reserved", code=ErrorCode.OPERATION_CAPACITY)

    def _resolve(self, document: Any, values: Any, action_id: str) -> Any:
        try:
            return resolve_ui_action(document, values, action_id)
        except UIActionError as error:
            if error.code == "unknown_action":
                raise HostError("the document declares no action with that actionId",
                                code=ErrorCode.UNKNOWN_ACTION) from None
            raise HostError(f"the action cannot be resolved: {error.message}", code=ErrorCode.INVALID_ACTION) from None
        except UIError as error:
            raise HostError(f"the action cannot be resolved: {error.message}", code=ErrorCode.INVALID_ACTION) from None

    def _capability(self, resolved: Any) -> tuple[Capability, dict[str, Any]]:
        capability = self._capabilities.get(str(resolved["capabilityId"]))
        if capability is None:
            raise HostError("the action names a capability this host does not offer", code=ErrorCode.UNKNOWN_CAPABILITY)
        try:
            capability.validate_arguments(resolved["arguments"])
        except ArgumentsError as error:
            raise HostError(f"the arguments do not match the capability's parameters: {error}",
                            code=ErrorCode.ARGUMENT_MISMATCH) from None
        return capability, dict(resolved["arguments"])

    # -- documents ------------------------------------------------------------------------

    def _document(self, session: str, ref: Mapping[str, Any]) -> Any:
        """The persisted document `ref` names: a plain document, or a complete stream at its final revision."""
        source, ui_id, generation = str(ref["sourceCallId"]), str(ref["uiId"]), int(ref["generation"])
        if generation == 0:
            return self._plain_document(session, source, ui_id)
        if self._store.ui_of_source(session, source) != ui_id:
            raise HostError("no document with that sourceCallId and uiId in this session",
                            code=ErrorCode.UNKNOWN_DOCUMENT)
        current = self._store.current(session, ui_id)
        if current is None:
            raise HostError("no document with that sourceCallId and uiId in this session",
                            code=ErrorCode.UNKNOWN_DOCUMENT)
        if current.source != source or current.generation != generation:
            raise HostError(f"the document is not the latest generation (generation {current.generation})",
                            code=ErrorCode.STALE_DOCUMENT)
        if current.status != "complete":
            raise HostError(f"the stream is {current.status}; only a complete stream accepts actions",
                            code=ErrorCode.DOCUMENT_NOT_COMPLETE)
        if current.revision != int(ref["revision"]):
            raise HostError(f"the document's final revision is {current.revision}", code=ErrorCode.STALE_DOCUMENT)
        return current.stream_state().document

    def _plain_document(self, session: str, source: str, ui_id: str) -> Any:
        """The plain document that native call stored (parsed once per content digest)."""
        stored = self._store.plain_entry(session, source)
        if stored is None or stored[1] != ui_id:
            raise HostError("no document with that sourceCallId and uiId in this session",
                            code=ErrorCode.UNKNOWN_DOCUMENT)
        digest, _, text = stored
        return self._plain.parsed(digest, text)
