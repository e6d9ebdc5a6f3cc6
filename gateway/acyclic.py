"""sse-starlette's response, whose parts end without a reference cycle.

sse-starlette runs each response's parts (the body, the shutdown listener, the disconnect listener)
as tasks of one anyio task group and cancels the others once one ends.  anyio (4.16) ends a
cancelled task in `TaskGroup._spawn`'s `task_done`, whose local `exc` holds the task's
`CancelledError` while the error's traceback holds that very frame: a cycle, and through the
traceback it keeps every frame the task had (the stream's generators and their locals: its
listener, its cursor, its transport).  Two per stream: an ended stream stayed in memory (~150
objects, ~20 KiB) until a full collection, and under the gateway's heap policy (`gateway.heap`)
that collection came every `FULL_AFTER_ENDED` ended streams and stopped the event loop for a
quarter of a second in a storm of reconnections.

So a part its group cancels returns instead: anyio finds no exception to keep, and the stream's
objects are freed by reference counting as it ends.  Only the group cancels these tasks (nothing
else holds them); the request's own cancellation is the host task's, which anyio raises as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from sse_starlette import EventSourceResponse
from starlette.types import Receive, Send


class AcyclicEventSourceResponse(EventSourceResponse):
    """`EventSourceResponse` whose parts return when their task group cancels them."""

    async def _stream_response(self, send: Send) -> None:
        await _ended(super()._stream_response(send))

    async def _listen_for_disconnect(self, receive: Receive) -> None:
        await _ended(super()._listen_for_disconnect(receive))

    async def _listen_for_exit_signal_with_grace(self) -> None:
        await _ended(super()._listen_for_exit_signal_with_grace())

    async def _ping(self, send: Send) -> None:
        await _ended(super()._ping(send))


async def _ended(part: Awaitable[None]) -> None:
    """Run a part; its cancellation ends it like a return (no `as`: nothing keeps the error)."""
    try:
        await part
    except asyncio.CancelledError:
        return
