"""GET /v1/sessions/{session}/ag-ui: the same session as AG-UI events (viewer)."""

from __future__ import annotations

from sse_starlette import EventSourceResponse
from starlette.requests import Request

from ..agui import agui_events
from ..context import Gateway
from .events import SEND_TIMEOUT_S, open_stream


async def stream(request: Request) -> EventSourceResponse:
    """The AG-UI event stream (resumes from `Last-Event-ID` like the native one)."""
    gateway: Gateway = request.app.state.gateway
    events = await open_stream(request)
    return EventSourceResponse(agui_events(gateway, events, session=request.path_params["session"]),
                               send_timeout=SEND_TIMEOUT_S,
                               headers={"cache-control": "no-store", "x-accel-buffering": "no"})
