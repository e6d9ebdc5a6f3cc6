"""The answer-ui@1 tools of seed 004: `present_answer` and `final_answer`.

A turn is a `message_id`.  `present_answer` publishes a whole block of the session's current
turn (a new message id starts a new turn; every earlier turn is then immutable); the same
`block_id` in the same turn replaces the block, but its phase may not change.
`final_answer` checks the answer's markers against the turn's final blocks, stores it and
closes the turn.  `AnswerHandler.decide` reads the session's answers hash (the partition owner
is its only writer), validates with `core` and returns a plan for `answer.lua`; every rejection
raises a `HostError`, so nothing is written for it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from config.settings import Settings
from core import (
    UIError,
    UISchemaError,
    hash_canonical_json,
    parse_answer_block,
    parse_final_answer,
    view_state_schema_digest,
)

from ..redisio.client import RedisClient
from ..redisio.connection import array, integer, text
from ..redisio.keys import Keys
from ..wire.entry import InputEntry, dumps, is_session_id, loads, ok_reply_text
from ..wire.errors import ErrorCode, HostError
from ..wire.names import FINAL, PRESENT
from .scripts import AnswerPlan

# A block is at most 100,000 UTF-16 units (3 UTF-8 bytes each); the envelope's room on top.
ANSWER_BODY_BYTES = 3 * 100_000 + 8_192
_ARGUMENTS = {PRESENT: ("message_id", "block"), FINAL: ("message_id", "answer", "ui_block_ids")}


@dataclass(frozen=True)
class AnswerDecision:
    """The reply of one answer call and, unless it is an identical resend, the commit plan."""

    reply: str
    plan: AnswerPlan | None = None


@dataclass(frozen=True)
class Turn:
    """What the answers hash says about one (turn, block) when a call arrives."""

    deleted: bool
    turn: str
    closed: bool
    known: bool  # the message id names a turn already seen
    blocks: int
    turns: int
    digest: str
    version: int
    phase: str
    last_call: str
    last_digest: str
    last_result: str


def block_field(message_id: str, block_id: str) -> str:
    """`<message>:<block>`: the suffix of a block's fields in the answers hash."""
    return f"{message_id}:{block_id}"


def _invalid(message: str) -> HostError:
    return HostError(message, code=ErrorCode.INVALID_ARGUMENTS)


def _check_arguments(tool: str, args: Mapping[str, Any]) -> str:
    expected = _ARGUMENTS[tool]
    missing = [name for name in expected if name not in args]
    if missing:
        raise _invalid(f"missing argument {missing[0]!r}")
    if len(args) != len(expected):
        raise _invalid("unknown argument is not allowed")
    message_id = args["message_id"]
    if not isinstance(message_id, str) or not is_session_id(message_id):
        raise _invalid("argument 'message_id' must be 1-128 printable ASCII characters without space, ':', '{' or '}'")
    return message_id


def block_event(message_id: str, version: int, block: str) -> str:
    """The answer log's event of a published block (`block`: its stored JSON text, spliced as is)."""
    return ('{"type":"block","message_id":' + dumps(message_id) + ',"version":' + str(version)
            + ',"block":' + block + "}")


def final_event(message_id: str, answer: str, ui_block_ids: list[str]) -> str:
    """The answer log's event of a final answer."""
    return dumps({"type": "final_answer", "message_id": message_id, "answer": answer, "ui_block_ids": ui_block_ids})


def present_receipt(message_id: str, block_id: str, phase: str, version: int) -> str:
    """The model-visible receipt of an accepted present_answer."""
    return (f"{PRESENT} accepted: message_id={message_id} block_id={block_id} phase={phase} version={version}. "
            "The block is shown; present the same block_id in this turn to replace it (same phase), "
            "or call final_answer to close the turn.")


def final_receipt(message_id: str, ids: list[str]) -> str:
    """The model-visible receipt of an accepted final_answer."""
    return (f"{FINAL} accepted: message_id={message_id} ui_block_ids={','.join(ids) or '(none)'}. "
            "The turn is closed; its blocks can no longer change.")


class AnswerHandler:
    """Validates answer tool calls of one partition against its answers hash."""

    def __init__(self, *, redis: RedisClient, settings: Settings, keys: Keys, partition: int) -> None:
        self._redis = redis
        self._settings = settings
        self._keys = keys
        self._partition = partition

    def decide(self, entry: InputEntry, args: dict[str, Any]) -> AnswerDecision:
        """Validate one present_answer / final_answer call; raise `HostError` for any rejection."""
        message_id = _check_arguments(entry.name, args)
        try:
            content = hash_canonical_json({"tool": entry.name, "arguments": args})
        except UIError:
            raise _invalid("arguments are not canonical JSON") from None
        call_digest = hashlib.sha256(entry.call.encode("utf-8")).hexdigest()[:32] + ":" + content
        block_id = _block_id(args) if entry.name == PRESENT else ""
        turn = self._read(entry.session, message_id, block_id)
        if turn.deleted:
            raise HostError("the session was deleted", code=ErrorCode.SESSION_DELETED)
        if turn.last_call == entry.call and turn.last_digest == call_digest:
            return AnswerDecision(ok_reply_text(entry.request, turn.last_result))
        if turn.closed:
            raise HostError("the turn is closed by final_answer; its blocks can no longer change",
                            code=ErrorCode.TURN_CLOSED)
        if turn.known and message_id != turn.turn:
            raise HostError("the message id names an earlier turn; its blocks can no longer change",
                            code=ErrorCode.TURN_CLOSED)
        turns = self._settings.max_answer_turns_per_session
        if not turn.known and turn.turns >= turns:
            # Each turn keeps its blocks and final answer for the session's life: uncounted, one agent
            # grew a session's answers hash by ~10 KB a turn without end (~14 MB at 100 maximal answers).
            raise HostError(f"the session already holds {turns} answer turns; no new turn can start",
                            code=ErrorCode.ANSWER_CAPACITY)
        if entry.name == PRESENT:
            return self._present(entry, args, message_id, turn, call_digest)
        return self._final(entry, args, message_id, turn, call_digest)

    def _read(self, session: str, message_id: str, block_id: str) -> Turn:
        answers, mb = self._keys.answers(self._partition, session), block_field(message_id, block_id)
        pipe = self._redis.pipeline(transaction=False)
        pipe.exists(self._keys.tombstone(self._partition, session))
        pipe.hmget(answers, ["turn", f"f:{message_id}", f"t:{message_id}", "blocks", f"d:{mb}", f"v:{mb}",
                             f"p:{mb}", "last_call", "last_digest", "last_result", "turns"])
        deleted, values = pipe.execute()
        turn, final, listed, blocks, digest, version, phase, call, digest_of_call, result, turns = array(values)
        return Turn(deleted=bool(deleted), turn=text(turn), closed=final is not None, known=listed is not None,
                    blocks=integer(blocks or 0), turns=integer(turns or 0), digest=text(digest) if block_id else "",
                    version=integer(version or 0) if block_id else 0, phase=text(phase) if block_id else "",
                    last_call=text(call), last_digest=text(digest_of_call), last_result=text(result))

    def _present(self, entry: InputEntry, args: Mapping[str, Any], message_id: str, turn: Turn,
                 call_digest: str) -> AnswerDecision:
        try:
            block = parse_answer_block(args["block"])
        except UISchemaError as error:
            raise HostError(f"block rejected: {error.message}",
                            code=ErrorCode.INVALID_BLOCK, issues=error.issues) from None
        phase = str(block.get("phase", "process"))
        if turn.phase and turn.phase != phase:
            raise HostError(f"the block was published with phase {turn.phase} in this turn; the phase cannot "
                            "change (publish a final block under another block_id)", code=ErrorCode.PHASE_CHANGED)
        capacity = self._settings.max_answer_blocks_per_session
        if not turn.digest and turn.blocks >= capacity:
            raise HostError(f"the session already holds {capacity} answer blocks; no new block can be published",
                            code=ErrorCode.ANSWER_CAPACITY)
        block_id, stored, version = str(block["block_id"]), dumps(block), turn.version + 1
        digest = view_state_schema_digest(block)
        event = block_event(message_id, version, stored)
        result = dumps({"message_id": message_id, "block_id": block_id, "phase": phase, "version": version,
                        "schema_digest": digest, "receipt": present_receipt(message_id, block_id, phase, version)})
        return AnswerDecision(ok_reply_text(entry.request, result), self._plan(
            entry, "block", message_id, turn, stored=stored, event=event, result=result, call_digest=call_digest,
            block_id=block_id, phase=phase, digest=digest))

    def _final(self, entry: InputEntry, args: Mapping[str, Any], message_id: str, turn: Turn,
               call_digest: str) -> AnswerDecision:
        final = {"answer": args["answer"], "ui_block_ids": args["ui_block_ids"]}
        try:
            checked = parse_final_answer(final, self._published(entry.session, message_id, args["ui_block_ids"]))
        except UISchemaError as error:
            raise HostError(f"final answer rejected: {error.message}", code=ErrorCode.INVALID_FINAL_ANSWER,
                            issues=error.issues) from None
        ids = [str(i) for i in checked["ui_block_ids"]]
        stored = dumps(checked)
        event = final_event(message_id, checked["answer"], ids)
        result = dumps({"message_id": message_id, "ui_block_ids": ids, "receipt": final_receipt(message_id, ids)})
        return AnswerDecision(ok_reply_text(entry.request, result), self._plan(
            entry, "final", message_id, turn, stored=stored, event=event, result=result, call_digest=call_digest))

    def _published(self, session: str, message_id: str, ids: Any) -> dict[str, Any]:
        """The turn's blocks that `ids` may name (only well-formed ids are looked up)."""
        if not isinstance(ids, list) or len(ids) > 16:
            return {}
        wanted = [i for i in ids if isinstance(i, str) and is_session_id(i)]
        if not wanted:
            return {}
        raw = self._redis.hmget(self._keys.answers(self._partition, session),
                                [f"b:{block_field(message_id, i)}" for i in wanted])
        return {block_id: loads(value) for block_id, value in zip(wanted, raw, strict=True) if value is not None}

    def _plan(self, entry: InputEntry, op: str, message_id: str, turn: Turn, *, stored: str, event: str,
              result: str, call_digest: str, block_id: str = "", phase: str = "", digest: str = "") -> AnswerPlan:
        k, p, s = self._keys, self._partition, entry.session
        return AnswerPlan(
            answers_key=k.answers(p, s), log_key=k.answer_log(p, s), tombstone_key=k.tombstone(p, s),
            reply_key=k.reply(p, s, entry.request),
            expiry_keys=k.sliding_keys(p, s), op=op, message_id=message_id,
            block_id=block_id, expected_turn=turn.turn, expected_digest=turn.digest,
            expected_version=turn.version, stored=stored, phase=phase, digest=digest, event=event,
            channel=k.answer_channel(p, s), reply=ok_reply_text(entry.request, result), call=entry.call,
            call_digest=call_digest, result=result)


def _block_id(args: Mapping[str, Any]) -> str:
    """The block id to look up before validation ("" when it cannot name a stored block)."""
    block = args.get("block")
    value = block.get("block_id") if isinstance(block, dict) else None
    return value if isinstance(value, str) and is_session_id(value) else ""
