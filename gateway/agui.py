"""AG-UI events: a second rendering of a session's event stream for the ecosystem's front ends."""

from __future__ import annotations

from collections.abc import AsyncIterator

from sse_starlette import ServerSentEvent

from .context import Gateway
from .events import EventStream


async def agui_events(gateway: Gateway, stream: EventStream, *, session: str) -> AsyncIterator[ServerSentEvent]:
    """Placeholder until the AG-UI rendering lands."""
    yield ServerSentEvent(comment="ag-ui")
