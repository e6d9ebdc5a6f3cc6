"""The Lua scripts of answer-ui@1 and answer-view-state@1, with one typed wrapper each.

`answer.lua` commits a present_answer / final_answer call, `view_put.lua` one view-state
write, `view_delete.lua` a session deletion (tombstone).  Each is fenced by the partition's
lease epoch, replies and XACKs in the same step.  The caller decided from a read of the same
keys (it is the partition's only writer), so any refusal other than fencing means that read
is stale: the wrappers raise `StaleCache` and the consumer re-reads and decides again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from redis.typing import EncodableT

from ..redisio.client import RedisClient
from ..redisio.connection import array, integer
from ..redisio.scripts import Code, check_owner, register_scripts, reply_code, run_script
from ..wire.errors import StaleCache

_NAMES = ("answer", "view_put", "view_delete")


@dataclass(frozen=True, slots=True)
class AnswerPlan:
    """Everything `answer.lua` needs for one accepted present_answer or final_answer call."""

    answers_key: str
    log_key: str
    tombstone_key: str
    reply_key: str
    expiry_keys: tuple[str, ...]
    op: str  # "block" or "final"
    message_id: str
    block_id: str
    expected_turn: str
    expected_digest: str
    expected_version: int
    stored: str  # block JSON or final answer JSON
    phase: str
    digest: str
    event: str
    channel: str
    reply: str
    call: str
    call_digest: str
    result: str


@dataclass(frozen=True, slots=True)
class ViewPutPlan:
    """Everything `view_put.lua` needs for one accepted view-state write."""

    views_key: str
    answers_key: str
    tombstone_key: str
    reply_key: str
    expiry_keys: tuple[str, ...]
    record: str
    block_field: str  # "<message>:<block>"
    digest: str
    expected_revision: int
    state: str
    size: int
    basis: str
    request_id: str
    receipt: str
    reply: str


@dataclass(frozen=True, slots=True)
class AnswerLimits:
    """The bounds the scripts enforce (answer log, block capacity, view-state budgets)."""

    log_max: int
    log_max_bytes: int
    max_blocks: int
    max_turns: int
    max_state_bytes: int
    max_session_bytes: int
    max_receipts: int
    max_receipt_bytes: int
    reply_ttl_ms: int
    session_ttl_ms: int


class AnswerScripts:
    """The answer scripts registered on one Redis client."""

    def __init__(self, *, redis: RedisClient, group: str, limits: AnswerLimits) -> None:
        self._group = group
        self._limits = limits
        self._scripts = register_scripts(redis, _NAMES)

    def answer(self, lease_key: str, input_key: str, fence: str, entry_id: str, plan: AnswerPlan) -> None:
        """Commit one answer call; raises `Fenced` or `StaleCache` (nothing written)."""
        p, lim = plan, self._limits
        keys = [lease_key, input_key, p.answers_key, p.log_key, p.tombstone_key, p.reply_key, *p.expiry_keys]
        args: list[EncodableT] = [fence, self._group, entry_id, p.op, p.message_id, p.block_id, p.expected_turn,
                           p.expected_digest, p.expected_version, p.stored, p.phase, p.digest, p.event, p.channel,
                           lim.log_max, lim.log_max_bytes, lim.max_blocks, p.reply, lim.session_ttl_ms,
                           lim.reply_ttl_ms, p.call, p.call_digest, p.result, lim.max_turns]
        code = reply_code(run_script(self._scripts["answer"], keys, args))
        check_owner(code, lease_key)
        if code is not Code.OK:
            raise StaleCache(f"answer.lua refused the commit ({code})")

    def view_put(self, lease_key: str, input_key: str, fence: str, entry_id: str, plan: ViewPutPlan) -> int:
        """Write one view state; returns the new revision; raises `Fenced` or `StaleCache`."""
        p, lim = plan, self._limits
        keys = [lease_key, input_key, p.views_key, p.answers_key, p.tombstone_key, p.reply_key, *p.expiry_keys]
        args: list[EncodableT] = [fence, self._group, entry_id, p.record, p.block_field, p.digest, p.expected_revision,
                           p.state, p.size, p.basis, p.request_id, p.receipt, lim.max_state_bytes,
                           lim.max_session_bytes, lim.max_receipts, lim.max_receipt_bytes, p.reply,
                           lim.reply_ttl_ms, lim.session_ttl_ms]
        result = run_script(self._scripts["view_put"], keys, args)
        code = reply_code(result)
        check_owner(code, lease_key)
        if code is not Code.OK:
            raise StaleCache(f"view_put.lua refused the write ({code})")
        return integer(array(result)[1])

    def view_delete(self, lease_key: str, input_key: str, fence: str, entry_id: str, tombstone_key: str,
                    reply_key: str, deleted: Sequence[str], now_ms: int, reply: str) -> None:
        """Delete `deleted`, leave the tombstone, reply and ack; raises `Fenced`."""
        keys = [lease_key, input_key, tombstone_key, reply_key, *deleted]
        args: list[EncodableT] = [fence, self._group, entry_id, now_ms, self._limits.session_ttl_ms, reply,
                           self._limits.reply_ttl_ms]
        check_owner(reply_code(run_script(self._scripts["view_delete"], keys, args)), lease_key)
