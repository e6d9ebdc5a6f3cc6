"""GET /v1/sessions/{session}/events: the session's server-sent events (viewer).

Authenticated by a bearer token, or by a one-time ticket in `?ticket=` (EventSource cannot send
headers); resumed from `Last-Event-ID` or `?last_event_id=`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request

from ..context import Gateway, Identity, Permission, session_of
from ..cursor import BadCursor, Cursor
from ..events import EventStream
from ..problems import Problem

RETRY_MS = 3_000
SEND_TIMEOUT_S = 30.0  # a client that takes no bytes for this long is dropped


async def authorized(request: Request, gateway: Gateway, session: str) -> Identity:
    """The stream's identity: from a ticket (used up) or a bearer token, holding READ."""
    ticket = request.query_params.get("ticket")
    if ticket is None:
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


async def open_stream(request: Request) -> EventStream:
    """The checked event stream of a request (401, 403, 404, 400 before any byte is sent)."""
    gateway: Gateway = request.app.state.gateway
    session = session_of(request)
    identity = await authorized(request, gateway, session)
    cursor = cursor_of(request)
    info = await gateway.owned(session, identity)
    settings = gateway.settings
    return EventStream(backend=gateway.backend, hub=gateway.hub, metrics=gateway.metrics, session=session,
                       info=info, cursor=cursor, lifetime_s=settings.gateway_max_connection_s,
                       idle_s=settings.gateway_heartbeat_s)


async def events(request: Request) -> EventSourceResponse:
    """The native event stream."""
    gateway: Gateway = request.app.state.gateway
    stream = await open_stream(request)
    return EventSourceResponse(_sse(gateway, stream), send_timeout=SEND_TIMEOUT_S,
                               headers={"cache-control": "no-store", "x-accel-buffering": "no"})


async def _sse(gateway: Gateway, stream: EventStream) -> AsyncIterator[ServerSentEvent]:
    gateway.metrics.streams.inc()
    try:
        yield ServerSentEvent(comment="iui events", retry=RETRY_MS)
        async for event in stream.events():
            if event is None:
                yield ServerSentEvent(comment="heartbeat")
                continue
            gateway.metrics.events.labels(event.type).inc()
            yield ServerSentEvent(data=event.data, event=event.type, id=event.cursor.text())
    finally:
        gateway.metrics.streams.dec()
