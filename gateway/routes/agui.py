"""GET (or POST, as `@ag-ui/client`'s HttpAgent sends) /v1/sessions/{session}/ag-ui: the session as
AG-UI events (viewer).  A POST body (a RunAgentInput) is read, once the caller is known, as any
other JSON body (within the body limit, `application/json`, safe JSON) and not used: the stream is
the session's, whatever the input says."""

from __future__ import annotations

from sse_starlette import EventSourceResponse
from starlette.requests import Request

from .. import heap
from ..agui import AguiRenderer, agui_events
from ..bodies import read_json
from ..cursor import ZERO, Cursor
from ..events import Resync, resync_reason, resynced_cursor
from ..problems import not_found
from .events import checked, sse


async def stream(request: Request) -> EventSourceResponse:
    """The AG-UI event stream (a reconnection with `Last-Event-ID` resumes it)."""
    asked = await checked(request)  # 401, 403 and 404 before a byte of the body is read
    if request.method == "POST":
        await read_json(request, asked.gateway.settings.gateway_max_body_bytes)
    backend = asked.gateway.backend
    bounds = await backend.bounds(asked.session)  # before the state: a later frame is newer, never older
    snapshot = await backend.snapshot(asked.session)
    if await backend.session(asked.session) != asked.info:  # read after: the state is of the life checked
        raise not_found()  # expired (and created again, by anyone) since it was checked
    epoch = asked.info.epoch if asked.cursor.is_fresh() else asked.cursor.epoch
    start = Cursor(epoch, bounds["frame"].last or ZERO, asked.cursor.receipt, asked.cursor.answer)
    # The opening's snapshot is the state: a cursor the logs cannot resume (an earlier life, a
    # receipt or answer log trimmed past it) is resynced with it, not with a second snapshot.
    reason, resync = resync_reason(start, asked.info, bounds), None
    if reason is not None:
        resync, start = Resync(reason, snapshot), resynced_cursor(asked.info, bounds)
        asked.gateway.metrics.resyncs.labels(reason).inc()
    relieve = heap.relieve if asked.gateway.settings.gc_freeze_s > 0 else None  # with the heap policy only
    return sse(asked.gateway, agui_events(AguiRenderer(asked.session), snapshot.frames, start, asked.stream(start),
                                          relieve, resync=resync))
