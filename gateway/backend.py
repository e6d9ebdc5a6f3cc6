"""The gateway's one door to Redis: a small interface, so an in-process server can serve it too.

`RedisBackend` (`gateway.redis_backend`) implements it with `redis.asyncio` on a real server or
on the embedded fakeredis of `iui demo --serve`.  Everything the gateway knows of the runtime's
key layout and entries goes through here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from workers.redisio.connection import TRANSIENT_ERRORS

from .cursor import StreamId

LOG_KINDS = ("frame", "receipt", "answer")  # the session's three logs, in the cursor's order


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One entry of a session log: its kind (`frame`, `receipt`, `answer`), id and JSON text."""

    kind: str
    id: StreamId
    data: str


@dataclass(frozen=True, slots=True)
class LogBounds:
    """Where a log begins and ends: first and last id (None when empty), and whether it was trimmed."""

    first: StreamId | None
    last: StreamId | None
    trimmed: bool


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A session's owner record: `<principal> <project>` and its epoch."""

    owner: str
    epoch: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A session's current state, for a `resync`: the latest frame of every UI, the current receipt
    of every operation, the answer events of its turns (JSON texts)."""

    frames: list[str] = field(default_factory=list)
    receipts: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)


class BackendUnavailable(Exception):
    """Redis could not be reached (503)."""


# What a backend call raises while Redis is away: its own error, or redis-py's connection errors.
UNAVAILABLE: tuple[type[BaseException], ...] = (BackendUnavailable, *TRANSIENT_ERRORS)


class ReplyTimeout(Exception):
    """No (confirmed) reply came within the gateway's reply timeout (504)."""


class Subscription(Protocol):
    """One pub/sub connection whose channel set changes while it is read."""

    async def subscribe(self, channels: Sequence[str]) -> None:
        """Add channels."""

    async def unsubscribe(self, channels: Sequence[str]) -> None:
        """Remove channels."""

    async def settled(self) -> None:
        """Return once Redis has applied every command sent before (while `messages()` is read)."""

    def messages(self) -> AsyncIterator[str]:
        """The channel name of each message as it arrives (raises on a lost connection)."""

    async def close(self) -> None:
        """Close the connection."""


class Backend(Protocol):
    """What the gateway does with Redis."""

    partitions: int

    def channels(self, session: str) -> tuple[str, str, str]:
        """The pub/sub channels of a session's frames, receipts and answers."""

    async def send(self, fields: Mapping[str, str], timeout: float) -> dict[str, Any]:
        """Add an input entry and await its reply (the same entry is added again after a
        connection error: the runtime answers a resend from its ledger)."""

    async def lag(self, session: str) -> int:
        """Entries waiting (undelivered plus pending) in the session's partition."""

    async def session(self, session: str) -> SessionInfo | None:
        """The session's owner record, or None when nobody owns it (or it does not exist)."""

    async def bounds(self, session: str) -> dict[str, LogBounds]:
        """The bounds of the session's three logs, by kind."""

    async def read(self, session: str, after: Mapping[str, StreamId], count: int
                   ) -> tuple[dict[str, list[LogEntry]], SessionInfo | None]:
        """Up to `count` entries of each log named in `after` (by kind) after its position, oldest
        first, and the session's owner record, all read in one transaction (the life the entries
        belong to)."""

    async def snapshot(self, session: str) -> Snapshot:
        """The session's current state."""

    async def put_ticket(self, digest: str, payload: str, ttl_s: int) -> None:
        """Store a ticket (by the digest of its secret) for `ttl_s` seconds."""

    async def take_ticket(self, digest: str) -> str | None:
        """Take a ticket once (GETDEL): its payload, or None when unknown, expired or used."""

    async def ping(self) -> bool:
        """True when Redis answers."""

    async def subscription(self) -> Subscription:
        """A new pub/sub connection."""

    async def close(self) -> None:
        """Close every connection."""
