"""The action runtime's Lua script, `receipt.lua`, and its one typed wrapper.

Every status change of an operation is one fenced commit of `receipt.lua`: the status machine
(`workers.actions.receipts.TRANSITIONS`, enforced again in Lua), the receipt fields, the
active-operation and approval indexes, the receipt log, the agent inbox, the publish and the reply together.
"""

from __future__ import annotations

from redis.typing import EncodableT

from ..redisio.client import RedisClient
from ..redisio.connection import array, text
from ..redisio.scripts import Code, check_owner, register_scripts, reply_code, run_script
from ..wire.errors import StaleCache
from .receipts import ReceiptChange


class ReceiptScript:
    """`receipt.lua` registered on one client."""

    def __init__(self, *, redis: RedisClient, group: str, reply_ttl_ms: int) -> None:
        self._group = group
        self._reply_ttl_ms = reply_ttl_ms
        self._script = register_scripts(redis, ["receipt"])["receipt"]

    def commit(self, lease_key: str, input_key: str, fence: str, change: ReceiptChange) -> None:
        """Commit one receipt change (status machine in Lua); raises `Fenced` or `StaleCache`."""
        c = change
        keys = [lease_key, input_key, c.operations_key, c.log_key, c.active_key, c.inbox_key, c.reply_key,
                c.approvals_key, *c.expiry_keys]
        args: list[EncodableT] = [fence, self._group, c.entry_id, c.operation_id, c.expected, c.status, c.receipt,
                           c.created_at, c.updated_at, c.reply, self._reply_ttl_ms, c.channel, c.log_max,
                           c.session_ttl_ms, c.expected_secret, c.secret, c.job, c.capability, c.member,
                           c.request_field, c.request_value, c.ledger_field, c.max_per_ref, c.max_per_session,
                           c.prompt, c.ref_json, c.action_id, c.inbox_max, c.approval_expires_ms]
        result = run_script(self._script, keys, args)
        code = reply_code(result)
        check_owner(code, lease_key)
        if code is not Code.OK:
            values = array(result)
            detail = text(values[1]) if len(values) > 1 else ""
            raise StaleCache(f"receipt change refused by receipt.lua ({code} {detail})".strip())
