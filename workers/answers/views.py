"""answer-view-state@1 requests (seed 004): `get`, `put` and `delete_session` (`kind=view`).

A record is identified by (principal, project, session, message id, block id): principal and
project come from the entry's trusted fields, which only a trusted producer sets, never from
the body.  Only final blocks that exist in the session may be read or written.  `put` is a
CAS on `expected_revision` with a request-id receipt window and byte budgets, enforced again
by `view_put.lua`; `ViewHandler.decide` reads the record (the partition owner is its only
writer) and returns a plan or a reply; every rejection raises a `HostError`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core import (
    UI_VIEW_STATE_LIMITS,
    UIError,
    UIViewStateError,
    canonical_json_string,
    hash_canonical_json,
    migrate_view_state,
    parse_view_state,
    view_state_basis,
)

from ..redisio.client import RedisClient
from ..redisio.connection import array, bulk, integer, text
from ..redisio.keys import Keys
from ..wire.entry import InputEntry, dumps, error_reply, is_session_id, json_integer, loads, ok_reply, ok_reply_text
from ..wire.errors import ErrorCode, HostError, MalformedEntry
from ..wire.names import DELETE, GET, PUT, VIEW_NAMES
from .scripts import ViewPutPlan
from .tools import block_field

# nodes <= 32 KiB, plus an optional `block` (a client may send its copy; it is never used).
VIEW_BODY_BYTES = 3 * 100_000 + 64 * 1024
_REQUEST_ID = re.compile(r"[!-~]{1,128}")
_DIGEST = re.compile(r"[0-9a-f]{64}")
_PUT = ("message_id", "block_id", "schema_digest", "expected_revision", "request_id", "nodes")
MAX_BLOCK_STATE_BYTES = UI_VIEW_STATE_LIMITS["maxBlockStateBytes"]
MAX_SESSION_STATE_BYTES = UI_VIEW_STATE_LIMITS["maxSessionStateBytes"]


@dataclass(frozen=True)
class ViewDecision:
    """A reply that changes nothing, a write for `view_put.lua`, or a session deletion."""

    reply: str
    put: ViewPutPlan | None = None
    delete: bool = False
    rejected: ErrorCode | None = None  # the code of a rejection replied here (a revision conflict)


@dataclass(frozen=True)
class Record:
    """One stored view state and the block it belongs to."""

    block: Mapping[str, Any]
    digest: str  # the block's current schema digest
    revision: int
    nodes: Any
    written_digest: str  # the digest the state was written under
    basis: Any
    size: int
    session_bytes: int
    receipt: str  # "<content digest> <result JSON>" of the request id, or ""

    def current_nodes(self) -> tuple[Any, bool]:
        """The state as it applies to the current block, and whether it was migrated."""
        if self.revision == 0:
            return {}, False
        if self.written_digest == self.digest:
            return self.nodes, False
        return migrate_view_state(self.nodes, self.basis, self.block), True


def _invalid(message: str) -> HostError:
    return HostError(message, code=ErrorCode.INVALID_REQUEST)


def _closed(body: Mapping[str, Any], required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    missing = [name for name in required if name not in body]
    if missing:
        raise _invalid(f"missing field {missing[0]!r}")
    if any(name not in required and name not in optional for name in body):
        raise _invalid("unknown field is not allowed")


def _id(body: Mapping[str, Any], name: str) -> str:
    value = body[name]
    if not isinstance(value, str) or not is_session_id(value):
        raise _invalid(f"field {name!r} must be 1-128 printable ASCII characters without space, ':', '{{' or '}}'")
    return value


class ViewHandler:
    """Validates view-state requests of one partition against its stored records."""

    def __init__(self, *, redis: RedisClient, keys: Keys, partition: int) -> None:
        self._redis = redis
        self._keys = keys
        self._partition = partition

    def decide(self, entry: InputEntry, body: dict[str, Any]) -> ViewDecision:
        """Validate one view request; raise `HostError` for any rejection."""
        if entry.name not in VIEW_NAMES:
            raise HostError("unknown view request; use one of " + ", ".join(VIEW_NAMES), code=ErrorCode.UNKNOWN_REQUEST)
        if entry.principal is None or entry.project is None:
            raise MalformedEntry(f"entry field {'principal' if entry.principal is None else 'project'!r} is missing")
        if entry.name == DELETE:
            _closed(body, ())
            return ViewDecision(ok_reply(entry.request, {"deleted": True}), delete=True)
        _closed(body, ("message_id", "block_id") if entry.name == GET else _PUT,
                () if entry.name == GET else ("block",))
        message_id, block_id = _id(body, "message_id"), _id(body, "block_id")
        request_id = self._request_id(body) if entry.name == PUT else ""
        record = self._read(entry, message_id, block_id, request_id)
        if entry.name == GET:
            nodes, migrated = record.current_nodes()
            return ViewDecision(ok_reply(entry.request, self._view(message_id, block_id, record, nodes, migrated)))
        return self._put(entry, body, message_id, block_id, request_id, record)

    @staticmethod
    def _request_id(body: Mapping[str, Any]) -> str:
        value = body["request_id"]
        if not isinstance(value, str) or _REQUEST_ID.fullmatch(value) is None:
            raise _invalid("field 'request_id' must be 1-128 printable ASCII characters without space")
        return value

    def record_id(self, entry: InputEntry, message_id: str, block_id: str) -> str:
        """`<principal>:<project>:<message>:<block>`: none of the four may hold ':'."""
        return f"{entry.principal}:{entry.project}:{message_id}:{block_id}"

    def _read(self, entry: InputEntry, message_id: str, block_id: str, request_id: str) -> Record:
        k, p, s = self._keys, self._partition, entry.session
        rid, mb = self.record_id(entry, message_id, block_id), block_field(message_id, block_id)
        pipe = self._redis.pipeline(transaction=False)
        pipe.exists(k.tombstone(p, s))
        pipe.hmget(k.answers(p, s), [f"p:{mb}", f"d:{mb}", f"b:{mb}"])
        pipe.hmget(k.views(p, s), [f"rev:{rid}", f"st:{rid}", f"dig:{rid}", f"bs:{rid}", f"sz:{rid}", "bytes",
                                   f"rr:{rid}:{request_id}" if request_id else "rr:"])
        deleted, block_values, view_values = pipe.execute()
        phase, digest, block = array(block_values)
        revision, state, written, basis, size, total, receipt = array(view_values)
        if deleted:
            raise HostError("the session was deleted", code=ErrorCode.SESSION_DELETED)
        if text(phase) != "final" or block is None:
            raise HostError("no final block with this block_id was published in this message",
                            code=ErrorCode.UNKNOWN_BLOCK)
        return Record(block=loads(bulk(block)), digest=text(digest), revision=integer(revision or 0),
                      nodes=loads(bulk(state)) if state is not None else {}, written_digest=text(written),
                      basis=loads(bulk(basis)) if basis is not None else None, size=integer(size or 0),
                      session_bytes=integer(total or 0), receipt=text(receipt) if request_id else "")

    @staticmethod
    def _view(message_id: str, block_id: str, record: Record, nodes: Any, migrated: bool) -> dict[str, Any]:
        return {"version": "answer-view-state@1", "message_id": message_id, "block_id": block_id,
                "revision": record.revision, "schema_digest": record.digest, "nodes": nodes, "migrated": migrated}

    def _put(self, entry: InputEntry, body: Mapping[str, Any], message_id: str, block_id: str, request_id: str,
             record: Record) -> ViewDecision:
        expected = json_integer(body["expected_revision"], 0)  # 0.0 is the JavaScript number 0, as 0 is
        if expected is None:
            raise _invalid("field 'expected_revision' must be an integer >= 0")
        client_digest = body["schema_digest"]
        if not isinstance(client_digest, str) or _DIGEST.fullmatch(client_digest) is None:
            raise _invalid("field 'schema_digest' must be 64 lowercase hex digits")
        try:
            content = hash_canonical_json({name: body[name] for name in _PUT if name != "request_id"})
        except UIError:
            raise HostError("nodes are not plain JSON", code=ErrorCode.INVALID_VIEW_STATE) from None
        if record.receipt:
            stored_digest, _, original = record.receipt.partition(" ")
            if stored_digest != content:
                raise HostError("the request_id was already used for other content", code=ErrorCode.REQUEST_ID_REUSED)
            return ViewDecision(ok_reply_text(entry.request, original))
        if expected != record.revision:
            return ViewDecision(self._conflict(entry.request, message_id, block_id, record),
                                rejected=ErrorCode.CONFLICT)
        nodes, migrated = self._nodes(body["nodes"], client_digest, record)
        text = canonical_json_string(nodes)
        size = len(text.encode("utf-8"))
        if size > MAX_BLOCK_STATE_BYTES:
            raise HostError(f"the view state is {size} bytes; a block's limit is {MAX_BLOCK_STATE_BYTES}",
                            code=ErrorCode.TOO_LARGE)
        if record.session_bytes - record.size + size > MAX_SESSION_STATE_BYTES:
            raise HostError(f"the session's view states would be {record.session_bytes - record.size + size} "
                            f"bytes; the limit is {MAX_SESSION_STATE_BYTES}", code=ErrorCode.TOO_LARGE)
        result: dict[str, Any] = {"version": "answer-view-state@1", "message_id": message_id, "block_id": block_id,
                                  "revision": record.revision + 1, "schema_digest": record.digest,
                                  "migrated": migrated}
        if migrated:
            result["nodes"] = nodes
        result_text = dumps(result)
        k, p, s = self._keys, self._partition, entry.session
        plan = ViewPutPlan(
            views_key=k.views(p, s), answers_key=k.answers(p, s), tombstone_key=k.tombstone(p, s),
            reply_key=k.reply(p, s, entry.request), expiry_keys=k.sliding_keys(p, s),
            record=self.record_id(entry, message_id, block_id), block_field=block_field(message_id, block_id),
            digest=record.digest, expected_revision=record.revision, state=text, size=size,
            basis=dumps(view_state_basis(record.block)), request_id=request_id, receipt=content + " " + result_text,
            reply=ok_reply_text(entry.request, result_text))
        return ViewDecision(plan.reply, put=plan)

    @staticmethod
    def _nodes(nodes: Any, client_digest: str, record: Record) -> tuple[Any, bool]:
        """Strictly checked nodes for the current block, or migrated ones from a client that saw another."""
        try:
            if client_digest == record.digest:
                return parse_view_state(nodes, record.block), False
            basis = record.basis if client_digest == record.written_digest else None
            return parse_view_state(migrate_view_state(nodes, basis, record.block), record.block), True
        except UIViewStateError as error:
            raise HostError(f"view state rejected: {error}",
                            code=ErrorCode.INVALID_VIEW_STATE, issues=error.issues) from None

    def _conflict(self, request: str, message_id: str, block_id: str, record: Record) -> str:
        nodes, migrated = record.current_nodes()
        current = self._view(message_id, block_id, record, nodes, migrated)
        error = HostError(f"revision conflict; the current revision is {record.revision}", code=ErrorCode.CONFLICT)
        return error_reply(request, error, {name: current[name] for name in ("revision", "schema_digest", "nodes",
                                                                             "migrated")})
