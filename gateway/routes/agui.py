"""GET (or POST, as `@ag-ui/client`'s HttpAgent sends) /v1/sessions/{session}/ag-ui: the session as
AG-UI events (viewer).  A POST body (a RunAgentInput) is read within the body limit and not used:
the stream is the session's, whatever the input says."""

from __future__ import annotations

from sse_starlette import EventSourceResponse
from starlette.requests import Request

from ..agui import AguiRenderer, agui_events
from ..bodies import read_capped
from ..cursor import ZERO, Cursor
from .events import checked, sse


async def stream(request: Request) -> EventSourceResponse:
    """The AG-UI event stream (a reconnection with `Last-Event-ID` resumes it)."""
    if request.method == "POST":
        await read_capped(request, request.app.state.gateway.settings.gateway_max_body_bytes)
    asked = await checked(request)
    backend = asked.gateway.backend
    bounds = await backend.bounds(asked.session)  # before the state: a later frame is newer, never older
    snapshot = await backend.snapshot(asked.session)
    epoch = asked.info.epoch if asked.cursor.is_fresh() else asked.cursor.epoch
    start = Cursor(epoch, bounds["frame"].last or ZERO, asked.cursor.receipt, asked.cursor.answer)
    return sse(agui_events(AguiRenderer(asked.session), snapshot.frames, start, asked.stream(start)))
