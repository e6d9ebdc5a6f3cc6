"""Reading a request's reply list so that no crash can swallow the reply.

`BLPOP` removes the reply as Redis sends it: a connection cut at that moment (Redis killed
after the pop reached its AOF, a network failure) loses the reply for good, and the caller
cannot tell whether its call was applied.  `BLMOVE key key LEFT RIGHT` rotates the list
instead: the reply stays in Redis while it travels, and the reader removes exactly the copy
it holds (`LREM key 1 <reply>`) only once it has it.  A reader whose connection broke reads
the list again; one whose entry may have been lost resends it (`Resend`), and the runtime
answers a resend from its ledger, never applying it twice.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import cast

from .client import RedisClient
from .connection import (
    TRANSIENT_ERRORS,
    Backoff,
    block_slice,
    integer,
    is_cluster,
    node_of,
    remove_first,
    rotate_first,
    value_bytes,
)
from .durability import Durability, Mode


class ReplyTimeout(Exception):
    """No reply arrived (or, in `replica` durability, none was confirmed) before the caller's deadline."""


def await_reply(redis: RedisClient, key: str, timeout: float, durability: Durability | None = None) -> bytes | None:
    """The first reply on `key` within `timeout` seconds (None when none came), read without
    losing it to a broken connection; that copy is removed once it is in hand.

    In `replica` durability the reply counts only once `WAIT` confirmed its commit on the
    replicas (see `workers.durability`); until the deadline the read and the wait are repeated,
    then `ReplyTimeout` is raised and the reply stays in Redis.
    """
    if durability is not None and durability.mode is Mode.REPLICA:
        value = _confirmed(redis, key, timeout, durability)
    else:
        value = rotate_first(redis, key, timeout)
    if value is not None:
        with contextlib.suppress(*TRANSIENT_ERRORS):  # the reply is in hand; the list expires anyway
            remove_first(redis, key, value)
    return value


def _confirmed(redis: RedisClient, key: str, timeout: float, durability: Durability) -> bytes | None:
    """BLMOVE and WAIT on one connection (WAIT covers that connection's writes, and the rotation
    is one, made after the commit), repeated until the replicas confirmed or the deadline passed."""
    client = redis.get_redis_connection(node_of(redis, key)) if is_cluster(redis) else redis
    deadline = time.monotonic() + timeout
    most = block_slice(client)  # the BLMOVE and the WAIT each within the socket timeout
    while True:
        pipe = client.pipeline(transaction=False)
        wait = max(0.01, round(min(most, deadline - time.monotonic()), 3))
        pipe.blmove(key, key, cast(int, wait), "LEFT", "RIGHT")  # redis-py types the timeout as int
        pipe.execute_command("WAIT", durability.replicas, durability.timeout_ms)
        moved, acknowledged = pipe.execute()
        value = value_bytes(moved)
        if value is None and time.monotonic() < deadline:
            continue  # a slice of the wait passed
        if value is None or integer(acknowledged) >= durability.replicas:
            return value
        if time.monotonic() >= deadline:
            raise ReplyTimeout(f"the reply was not confirmed by {durability.replicas} replica(s) in time")


def deliver(send: Callable[[], object], key: str, redis: RedisClient, timeout: float,
            durability: Durability | None = None) -> bytes:
    """Send an entry and await its reply; after a connection error, send the same entry again.

    The entry (same request id, same call id) may or may not have reached Redis, and Redis may
    have lost it with its last writes: sending it again is always safe, because the runtime
    answers a resent call from its ledger (an identical tool call replies its stored result, a
    reserve with the same `requestId` its operation, a view put with the same `request_id` its
    receipt).  Raises `ReplyTimeout` at the deadline.
    """
    deadline = time.monotonic() + timeout
    backoff = Backoff(first=0.05, limit=1.0)
    sent = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ReplyTimeout(f"no reply within {timeout:g} s")
        try:
            if not sent:
                send()
                sent = True
            value = await_reply(redis, key, max(0.01, round(remaining, 3)), durability)  # 0 is "forever"
        except TRANSIENT_ERRORS:
            sent = False
            time.sleep(min(backoff.next(), max(0.0, deadline - time.monotonic())))
            continue
        if value is None:
            raise ReplyTimeout(f"no reply within {timeout:g} s")
        return value
