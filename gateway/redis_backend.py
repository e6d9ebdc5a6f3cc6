"""`Backend` on `redis.asyncio`: a real Redis server, or the embedded fakeredis of the demo.

Replies are read as the wire contract says (`workers.redisio.replies`): a rotation (`BLMOVE
key key LEFT RIGHT`) that leaves the reply in Redis until it is in hand, then `LREM` of that
copy; in `replica` durability, `WAIT` on the same connection confirms it first; after a
connection error the same entry is added again.  The session's logs and state are read with
the key names of `workers.redisio.keys`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from importlib import resources
from typing import Any, Protocol, cast

import orjson
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from workers.answers.tools import block_event, final_event
from workers.redisio.connection import TRANSIENT_ERRORS, Backoff, text
from workers.redisio.durability import Durability, Mode
from workers.redisio.keys import GROUP, PROTOCOL, Keys, generation_field, partition_of

from .backend import UNAVAILABLE, BackendUnavailable, LogBounds, LogEntry, ReplyTimeout, SessionInfo, Snapshot
from .cursor import StreamId, format_id, parse_id

LOG_FIELDS = {"frame": "frame", "receipt": "receipt", "answer": "event"}  # each log's one field
LAG_FRESH_S = 0.25  # a partition's lag is read again after this long
PONG_TIMEOUT_S = 5.0  # a pub/sub connection's PING must be answered within this (as connecting, and when quiet)
PING_AFTER_S = 30.0  # a pub/sub connection without a message for this long sends a PING
FAKE_POLL_S = 0.002  # fakeredis answers BLMOVE at once: the demo polls LMOVE instead


class AsyncRedis(Protocol):
    """What the gateway calls on a `redis.asyncio` client.  redis-py's async stubs leave
    `execute_command` untyped and type some replies as a union with None that never occurs, so
    the client is seen through this Protocol (one cast, in `RedisBackend.__init__`); replies are
    converted where they arrive (`text`, `_bytes`)."""

    async def execute_command(self, *args: Any, **options: Any) -> Any: ...
    async def xadd(self, name: str, fields: Mapping[str, str]) -> Any: ...
    async def hmget(self, name: str, keys: Sequence[str], *args: str) -> list[Any]: ...
    async def hgetall(self, name: str) -> dict[Any, Any]: ...
    async def xrange(self, name: str, min: str = "-", max: str = "+", count: int | None = None) -> list[Any]: ...
    async def set(self, name: str, value: str, ex: int | None = None) -> Any: ...
    async def getdel(self, name: str) -> Any: ...
    async def ping(self) -> Any: ...
    def pubsub(self, **options: Any) -> Any: ...
    def pipeline(self, transaction: bool = True) -> Any: ...
    def register_script(self, script: str) -> Any: ...
    async def aclose(self) -> None: ...


class MetaError(Exception):
    """`{prefix}:meta` names another protocol, or a durability this gateway cannot read."""


class RedisBackend:
    """The gateway's Redis access on one `redis.asyncio` client (a connection pool)."""

    def __init__(self, *, redis: aioredis.Redis | AsyncRedis, keys: Keys, partitions: int,
                 durability: Durability | None = None) -> None:
        self._redis = cast(AsyncRedis, redis)
        self.keys = keys
        self.partitions = partitions
        self._durability = durability or Durability()
        self._fake = type(redis).__module__.startswith("fakeredis")
        self._bounds = redis.register_script(
            resources.files("gateway").joinpath("lua/log_bounds.lua").read_text("utf-8"))
        self._lags: dict[int, tuple[float, int]] = {}
        self._pubsub_connections: aioredis.ConnectionPool | None = None  # made at the first subscription

    @classmethod
    async def of(cls, redis: aioredis.Redis | AsyncRedis, *, prefix: str, partitions: int) -> RedisBackend:
        """A backend for the deployment's `{prefix}:meta` (P and durability as the workers wrote them;
        `partitions` and `fast` before any worker ran)."""
        keys = Keys(prefix)
        meta = {text(k): text(v) for k, v in (await cast(AsyncRedis, redis).hgetall(keys.meta)).items()}
        if meta and meta.get("protocol") != str(PROTOCOL):
            raise MetaError(f"{keys.meta} has protocol={meta.get('protocol')}, this gateway speaks {PROTOCOL}")
        try:
            durability = Durability.parse(meta.get("durability") or "fast")
        except ValueError:
            raise MetaError(f"{keys.meta} names an unknown durability") from None
        return cls(redis=redis, keys=keys, partitions=int(meta.get("partitions") or partitions),
                   durability=durability)

    def _partition(self, session: str) -> int:
        return partition_of(session, self.partitions)

    def channels(self, session: str) -> tuple[str, str, str]:
        """The pub/sub channels of a session's frames, receipts and answers."""
        p = self._partition(session)
        return (self.keys.channel(p, session), self.keys.receipt_channel(p, session),
                self.keys.answer_channel(p, session))

    # -- requests ---------------------------------------------------------------------------

    async def send(self, fields: Mapping[str, str], timeout: float) -> dict[str, Any]:
        """XADD the entry and await its reply; after a connection error, the same entry again."""
        session, request = fields["session"], fields["request"]
        p = self._partition(session)
        stream, key = self.keys.input(p), self.keys.reply(p, session, request)
        deadline = time.monotonic() + timeout
        backoff, send = Backoff(first=0.05, limit=1.0), True
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ReplyTimeout(f"no reply within {timeout:g} s")
            try:
                if send:
                    await self._redis.xadd(stream, dict(fields))
                    send = False
                value = await self._reply(key, remaining)
            except TRANSIENT_ERRORS:
                send = True  # the entry may or may not be in Redis: add it again
                await asyncio.sleep(min(backoff.next(), max(0.0, deadline - time.monotonic())))
                continue
            if value is None:
                raise ReplyTimeout(f"no reply within {timeout:g} s")
            reply: dict[str, Any] = orjson.loads(value)
            return reply

    async def _reply(self, key: str, timeout: float) -> bytes | None:
        """The first reply on `key` (confirmed by WAIT in replica durability), then LREM of that copy."""
        value = await (self._confirmed(key, timeout) if self._durability.mode is Mode.REPLICA
                       else self._rotate(key, timeout))
        if value is not None:
            with contextlib.suppress(*TRANSIENT_ERRORS):  # in hand; the list expires anyway
                await self._redis.execute_command("LREM", key, 1, value)
        return value

    async def _rotate(self, key: str, timeout: float) -> bytes | None:
        # execute_command: redis-py's stubs type BLMOVE's timeout as an int; Redis takes seconds as a double.
        if not self._fake:
            return _bytes(await self._redis.execute_command("BLMOVE", key, key, "LEFT", "RIGHT",
                                                            max(0.01, round(timeout, 3))))
        deadline = time.monotonic() + timeout
        while True:
            value = _bytes(await self._redis.execute_command("LMOVE", key, key, "LEFT", "RIGHT"))
            if value is not None or time.monotonic() >= deadline:
                return value
            await asyncio.sleep(FAKE_POLL_S)

    async def _confirmed(self, key: str, timeout: float) -> bytes | None:
        deadline = time.monotonic() + timeout
        while True:
            pipe = self._redis.pipeline(transaction=False)
            pipe.execute_command("BLMOVE", key, key, "LEFT", "RIGHT", max(0.01, round(deadline - time.monotonic(), 3)))
            pipe.execute_command("WAIT", self._durability.replicas, self._durability.timeout_ms)
            results = await pipe.execute()
            value = _bytes(results[0])
            if value is None or int(results[1]) >= self._durability.replicas:
                return value
            if time.monotonic() >= deadline:
                raise ReplyTimeout(f"the reply was not confirmed by {self._durability.replicas} replica(s) in time")

    async def lag(self, session: str) -> int:
        """Undelivered plus pending entries of the session's partition (read at most every 0.25 s)."""
        p = self._partition(session)
        now = time.monotonic()
        cached = self._lags.get(p)
        if cached is not None and now - cached[0] < LAG_FRESH_S:
            return cached[1]
        lag = 0
        try:
            groups: list[dict[Any, Any]] = await self._redis.execute_command("XINFO", "GROUPS", self.keys.input(p))
        except aioredis.ResponseError as error:
            if "no such key" not in str(error).lower():
                raise  # an ACL refusal must not switch backpressure off silently
            groups = []  # no stream yet: nothing waits
        for group in groups:
            fields = {text(key): value for key, value in group.items()}  # the client leaves replies as bytes
            if text(fields.get("name")) == GROUP:
                lag = int(fields.get("lag") or 0) + int(fields.get("pending") or 0)
        self._lags[p] = (now, lag)
        return lag

    # -- a session's state and logs -----------------------------------------------------------

    async def session(self, session: str) -> SessionInfo | None:
        """The owner record of the session hash (None: not owned, or no such session)."""
        owner, epoch = await self._redis.hmget(self.keys.session(self._partition(session), session), "owner", "epoch")
        return _owner_record(owner, epoch)

    def _log_keys(self, session: str) -> dict[str, str]:
        p = self._partition(session)
        return {"frame": self.keys.frame_log(p, session), "receipt": self.keys.receipt_log(p, session),
                "answer": self.keys.answer_log(p, session)}

    async def bounds(self, session: str) -> dict[str, LogBounds]:
        """First and last id of each log and whether its oldest entries were trimmed (one round trip)."""
        keys = self._log_keys(session)
        rows = await self._bounds(keys=list(keys.values()))
        return {kind: LogBounds(parse_id(text(row[0])) if text(row[0]) else None,
                                parse_id(text(row[1])) if text(row[1]) else None, int(row[2]) > int(row[3]))
                for kind, row in zip(keys, rows, strict=True)}

    async def read(self, session: str, after: Mapping[str, StreamId], count: int
                   ) -> tuple[dict[str, list[LogEntry]], SessionInfo | None]:
        """Entries of the logs named in `after` after their positions (exclusive), oldest first,
        with the owner record of the same moment (MULTI: one round trip; the logs and the session
        hash share a slot)."""
        logs = self._log_keys(session)
        async with self._redis.pipeline(transaction=True) as pipe:
            for kind, position in after.items():
                pipe.xrange(logs[kind], min=f"({format_id(position)}", count=count)
            pipe.hmget(self.keys.session(self._partition(session), session), "owner", "epoch")
            *pages, (owner, epoch) = await pipe.execute()
        entries = {kind: _entries(kind, rows) for kind, rows in zip(after, pages, strict=True)}
        return entries, _owner_record(owner, epoch)

    async def snapshot(self, session: str) -> Snapshot:
        """The latest frame of every UI, every operation's current receipt, the answer events."""
        p = self._partition(session)
        state = {text(k): text(v) for k, v in (await self._redis.hgetall(self.keys.session(p, session))).items()}
        latest = [generation_field(name[3:], int(g), "checkpoint") for name, g in state.items()
                  if name.startswith("ui:") and g.isdigit() and int(g) > 0]
        stored = await self._redis.hmget(self.keys.generations(p, session), latest) if latest else []
        frames = [text(frame) for frame in stored if frame]
        operations = await self._redis.hgetall(self.keys.operations(p, session))
        receipts = [text(v) for k, v in operations.items() if text(k).startswith("r:")]
        answers = _answer_events({text(k): text(v) for k, v in
                                  (await self._redis.hgetall(self.keys.answers(p, session))).items()})
        return Snapshot(frames=frames, receipts=receipts, answers=answers)

    # -- tickets, health, pub/sub -------------------------------------------------------------

    def _ticket_key(self, digest: str) -> str:
        return f"{self.keys.prefix}:gw:ticket:{digest}"

    async def put_ticket(self, digest: str, payload: str, ttl_s: int) -> None:
        """Store a ticket for `ttl_s` seconds."""
        await self._redis.set(self._ticket_key(digest), payload, ex=ttl_s)

    async def take_ticket(self, digest: str) -> str | None:
        """Take a ticket once (GETDEL)."""
        value = await self._redis.getdel(self._ticket_key(digest))
        return None if value is None else text(value)

    async def ping(self) -> bool:
        """True when Redis answers PING."""
        try:
            return bool(await self._redis.ping())
        except TRANSIENT_ERRORS:
            return False

    async def subscription(self) -> RedisSubscription:
        """A new pub/sub connection whose PING was answered (raises `BackendUnavailable` when Redis
        is unreachable, or gives no PONG within `PONG_TIMEOUT_S`).

        Its connection comes from a pool of its own, without redis-py's health check and retries:
        both could make the connection again behind the hub's back (see `RedisSubscription`)."""
        pubsub = aioredis.Redis(connection_pool=self._pubsub_pool()).pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.ping()  # only sent: a pub/sub reply is read as a message
            await _pong(pubsub)
        except UNAVAILABLE as error:
            await pubsub.aclose()
            raise BackendUnavailable(str(error)) from None
        return RedisSubscription(pubsub)

    def _pubsub_pool(self) -> Any:
        """The pool of pub/sub connections: the client's connection options, no health check (its
        PING's answer would be read by whichever task subscribes, beside the hub's reader), no retry
        (a retry reconnects, and redis-py then subscribes again what it remembers)."""
        if self._pubsub_connections is None:
            pool = cast(Any, self._redis).connection_pool
            if self._fake:  # the demo's fakeredis: one process, no connection to lose
                return pool
            options = {**pool.connection_kwargs, "health_check_interval": 0, "retry": Retry(NoBackoff(), 0)}
            self._pubsub_connections = aioredis.ConnectionPool(connection_class=pool.connection_class, **options)
        return self._pubsub_connections

    async def close(self) -> None:
        """Close the connection pools."""
        await self._redis.aclose()
        if self._pubsub_connections is not None:
            await self._pubsub_connections.aclose()


class RedisSubscription:
    """A `redis.asyncio` PubSub whose channels change while one task reads it; its connection is
    never made again: a lost one ends `messages()`, and the hub makes a new subscription.

    redis-py reconnects a PubSub on its own (a read on a dropped connection, a retry) and then
    subscribes again the channels *it* remembers, among them channels whose UNSUBSCRIBE was sent
    and not yet confirmed: they stayed subscribed for the process's life, and the hub, never told,
    did not wake its feeds to read what was written while no connection listened.  A connect
    callback tells such a reconnect, and `messages()` raises at once.  A quiet connection is
    probed: a PING after `PING_AFTER_S` without a message, answered within `PONG_TIMEOUT_S`."""

    def __init__(self, pubsub: Any) -> None:
        self._pubsub = pubsub
        self._remade = False
        pubsub.connection.register_connect_callback(self._connected_again)
        self._settling: dict[str, asyncio.Future[None]] = {}  # PING tokens whose PONG is awaited
        self._tokens = itertools.count(1)

    async def _connected_again(self, connection: Any) -> None:
        self._remade = True

    async def subscribe(self, channels: Sequence[str]) -> None:
        """SUBSCRIBE channels."""
        if channels:
            await self._command(self._pubsub.subscribe(*channels))

    async def unsubscribe(self, channels: Sequence[str]) -> None:
        """UNSUBSCRIBE channels."""
        if channels:
            await self._command(self._pubsub.unsubscribe(*channels))

    async def settled(self) -> None:
        """Return once Redis has applied every command sent before (its answer to a PING comes after
        theirs, and `messages()`' reader hands it over); `BackendUnavailable` after `PONG_TIMEOUT_S`."""
        token = f"iui-settled-{next(self._tokens)}"
        answered = asyncio.get_running_loop().create_future()
        self._settling[token] = answered
        try:
            await self._command(self._pubsub.ping(token))
            async with asyncio.timeout(PONG_TIMEOUT_S):
                await answered
        except TimeoutError:
            raise BackendUnavailable("no answer to PING on the pub/sub connection") from None
        finally:
            self._settling.pop(token, None)

    async def _command(self, sent: Awaitable[Any]) -> None:
        try:
            await sent
        except UNAVAILABLE as error:
            raise BackendUnavailable(str(error)) from None
        self._check()

    def _check(self) -> None:
        if self._remade:
            raise BackendUnavailable("the pub/sub connection was lost")

    async def messages(self) -> AsyncIterator[str]:
        """The channel of every message; a lost connection (or a PING unanswered) raises
        `BackendUnavailable`."""
        heard = time.monotonic()  # the last message, or PONG
        pinged: float | None = None
        while True:
            try:
                message = await self._pubsub.get_message(timeout=1.0)
            except UNAVAILABLE as error:
                raise BackendUnavailable(str(error)) from None
            self._check()
            now = time.monotonic()
            if message is not None:
                heard, pinged = now, None
                if message.get("type") == "message":
                    yield text(message["channel"])
                elif message.get("type") == "pong":
                    self._answered(text(message.get("data") or b""))
            elif pinged is not None and now - pinged > PONG_TIMEOUT_S:
                raise BackendUnavailable("no answer to PING on the pub/sub connection")
            elif pinged is None and now - heard > PING_AFTER_S:
                await self._command(self._pubsub.ping())
                pinged = now

    def _answered(self, token: str) -> None:
        waiter = self._settling.get(token)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def close(self) -> None:
        """Close the pub/sub connection."""
        with contextlib.suppress(Exception):
            await self._pubsub.aclose()


async def _pong(pubsub: Any) -> None:
    """Wait for the answer to the PING just sent.  A sent PING proves nothing: the pool's idle
    connection to a server that died a moment ago still takes a write, and counting it as a
    (re)connect would count the real one twice (IUIGatewaySubscriptionFlapping reads the count)."""
    deadline = time.monotonic() + PONG_TIMEOUT_S
    while (left := deadline - time.monotonic()) > 0:
        message = await pubsub.get_message(timeout=left)
        if message is not None and message.get("type") == "pong":
            return
    raise BackendUnavailable("no answer to PING on the pub/sub connection")


def _answer_events(answers: Mapping[str, str]) -> list[str]:
    """The answer events of every turn, as the answer log holds them: blocks, then the final answer."""
    events: list[str] = []
    turns = [name[2:] for name in answers if name.startswith("t:")]
    for message_id in sorted(turns):
        for block_id in answers[f"t:{message_id}"].split():
            block = answers.get(f"b:{message_id}:{block_id}")
            if block is not None:
                events.append(block_event(message_id, int(answers.get(f"v:{message_id}:{block_id}", "1")), block))
        final = answers.get(f"f:{message_id}")
        if final is not None:
            stored = orjson.loads(final)
            events.append(final_event(message_id, stored["answer"], [str(i) for i in stored["ui_block_ids"]]))
    return events


def _bytes(value: Any) -> bytes | None:
    """A bulk reply as bytes (None stays None)."""
    return None if value is None else bytes(value) if isinstance(value, (bytes, bytearray)) else str(value).encode()


def _entries(kind: str, rows: list[Any]) -> list[LogEntry]:
    """An XRANGE reply of a `kind` log as its entries."""
    field = LOG_FIELDS[kind].encode()
    return [LogEntry(kind, parse_id(text(entry_id)), text(fields.get(field, b""))) for entry_id, fields in rows]


def _owner_record(owner: bytes | None, epoch: bytes | None) -> SessionInfo | None:
    """A session hash's `owner` and `epoch` fields as its owner record (None: not owned)."""
    if owner is None:
        return None
    return SessionInfo(text(owner), int(text(epoch) or 0))  # `text(None)` is ""
