"""GET /v1/sessions/{session}/events: the session's server-sent events (viewer).

Authenticated by a bearer token, or by a one-time ticket in `?ticket=` (EventSource cannot send
headers); resumed from `Last-Event-ID` or `?last_event_id=`.  Its idle heartbeat is a comment line,
or with `?heartbeat=event` an `event: heartbeat` naming its interval, at the start and when idle:
an `EventSource` hands a page events, never comments, so only these let a page see a stalled
stream (the Client reconnects when none came for a few intervals).  A stream asked for while Redis is
away waits for it (up to `IUI_GATEWAY_REPLY_TIMEOUT_S`) before it is refused 503: an `EventSource`
reconnecting then would stop for good on a 503, where it retries a stream that opened and ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import orjson
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request

from workers.redisio.connection import Backoff

from ..backend import UNAVAILABLE, SessionInfo
from ..context import Gateway, Identity, Permission, session_of
from ..cursor import BadCursor, Cursor
from ..events import EventStream, sse_event, sse_parts
from ..problems import Problem
from ..stalls import StreamResponse

RETRY_MS = 3_000
# sse-starlette's watcher cancels the streams when the server stops; the gateway ends them itself
# at the signal (`Gateway.stop`), with their last words: the watcher waits this long for that first.
STOP_GRACE_S = 1.0
T = TypeVar("T")


async def authorized(request: Request, gateway: Gateway, session: str) -> Identity:
    """The stream's identity: from a ticket (used up) or a bearer token, holding READ."""
    ticket = request.query_params.get("ticket")
    if not ticket:  # none, or `?ticket=` left empty: the bearer token, if any
        return gateway.identity(request, Permission.READ)
    identity = await gateway.tickets.redeem(ticket, session)
    identity.require(Permission.READ)
    return identity


def cursor_of(request: Request) -> Cursor:
    """The client's cursor (a fresh one without `Last-Event-ID`); 400 for anything malformed."""
    text = request.headers.get("last-event-id") or request.query_params.get("last_event_id")
    if not text:
        return Cursor()
    try:
        return Cursor.parse(text)
    except BadCursor:
        raise Problem("bad_cursor", "Last-Event-ID is not a cursor of this gateway") from None


def heartbeat_events(request: Request) -> bool:
    """Whether the client asked for its heartbeats as events (`?heartbeat=event`); 400 for another value."""
    asked = request.query_params.get("heartbeat")
    if asked is None or asked == "comment":
        return False
    if asked == "event":
        return True
    raise Problem("bad_request", "heartbeat must be event or comment")


@dataclass(frozen=True, slots=True)
class StreamRequest:
    """A checked request for a stream (401, 403, 404 and 400 are raised before any byte is sent)."""

    gateway: Gateway
    session: str
    info: SessionInfo
    cursor: Cursor
    heartbeat_events: bool = False

    def stream(self, cursor: Cursor | None = None) -> EventStream:
        """The event stream from `cursor` (default: the client's)."""
        settings = self.gateway.settings
        return EventStream(backend=self.gateway.backend, hub=self.gateway.hub, metrics=self.gateway.metrics,
                           session=self.session, info=self.info, cursor=cursor or self.cursor,
                           lifetime_s=settings.gateway_max_connection_s, idle_s=settings.gateway_heartbeat_s)


async def checked(request: Request) -> StreamRequest:
    """Who asks, for which session, from which cursor."""
    gateway: Gateway = request.app.state.gateway
    session = session_of(request)
    # A ticket is used up when redeemed: its request's cursor is checked first, so a request refused
    # for its cursor leaves the ticket for the next try.  A bearer token is checked first (401 before 400).
    heartbeat = heartbeat_events(request)  # before a ticket is used up, as the cursor
    cursor = cursor_of(request) if request.query_params.get("ticket") else None
    deadline = time.monotonic() + gateway.settings.gateway_reply_timeout_s
    identity = await _once_redis_answers(lambda: authorized(request, gateway, session), deadline)
    if cursor is None:
        cursor = cursor_of(request)
    info = await _once_redis_answers(lambda: gateway.owned(session, identity), deadline)
    return StreamRequest(gateway, session, info, cursor, heartbeat)


async def _once_redis_answers(step: Callable[[], Awaitable[T]], deadline: float) -> T:
    """`step()`, tried again with back-off while Redis is unavailable, until `deadline` (then 503).
    The last try is at the deadline itself: giving up when the next back-off would pass it refused
    a stream after 0.45 s of a 1 s reply timeout."""
    backoff = Backoff(first=0.05, limit=1.0)
    while True:
        try:
            return await step()
        except UNAVAILABLE:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise
            await asyncio.sleep(min(backoff.next(), remaining))


def sse(gateway: Gateway, content: AsyncIterator[ServerSentEvent | bytes]) -> EventSourceResponse:
    """A server-sent event response that is never cached or buffered by a proxy; a client that takes
    no bytes for `IUI_GATEWAY_SEND_TIMEOUT_S` is dropped (`gateway.stalls`)."""
    return StreamResponse(content, stalled=gateway.metrics.stalled_streams.inc,
                          send_timeout=gateway.settings.gateway_send_timeout_s,
                          ping=0,  # the stream sends its own heartbeat
                          shutdown_grace_period=STOP_GRACE_S,
                          headers={"cache-control": "no-store", "x-accel-buffering": "no"})


async def events(request: Request) -> EventSourceResponse:
    """The native event stream."""
    asked = await checked(request)
    return sse(asked.gateway, _sse(asked.gateway, asked.stream(), asked.heartbeat_events))


def _heartbeat(gateway: Gateway, as_event: bool) -> ServerSentEvent:
    if not as_event:
        return sse_event(comment="heartbeat")
    every = orjson.dumps({"every_s": gateway.settings.gateway_heartbeat_s}).decode()
    return sse_event(data=every, event="heartbeat")  # no id: the client's cursor stays where it is


async def _sse(gateway: Gateway, stream: EventStream,
               heartbeat_events: bool) -> AsyncIterator[ServerSentEvent | bytes]:
    gateway.metrics.streams.inc()
    try:
        yield sse_event(comment="iui events", retry=RETRY_MS)
        if heartbeat_events:
            yield _heartbeat(gateway, True)  # its interval, before anything else
        # `aclosing`: closed at a yield (a failed send), this generator closes the stream's too, whose
        # `finally` leaves the hub; `async for` alone would leave that to the garbage collector
        async with contextlib.aclosing(stream.events()) as events:
            async for event in events:
                if event is None:
                    yield _heartbeat(gateway, heartbeat_events)
                    continue
                gateway.metrics.events.labels(event.type).inc()
                if event.resync is None:
                    yield sse_event(data=event.data, event=event.type, id=event.cursor.text())
                    continue
                async for chunk in sse_parts(event.resync.parts(), event=event.type, ident=event.cursor.text()):
                    yield chunk
    finally:
        gateway.metrics.streams.dec()
