"""A connection the gateway closes with bytes still to send (`gateway/protocol.py`'s
`LingeringTransport`): aborted once its client takes none of them for the send timeout, never
while the client still reads, and never after the connection is gone (a review: the first version
aborted a fixed time after the close, cutting a client that read slowly but steadily, and under
asyncio its timer called `abort` on a transport already lost, which logged an error)."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from gateway.protocol import LingeringTransport

SEND_TIMEOUT_S = 0.05


class Socket:
    """A transport whose write buffer the test drains by hand."""

    def __init__(self, pending: int) -> None:
        self.pending = pending
        self.closed = self.aborted = False

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def get_write_buffer_size(self) -> int:
        return self.pending


class Protocol:
    """The protocol's part a transport reads (uvicorn's protocol, as the connection holds it)."""

    cycle = None
    lingering = False
    send_timeout_s = SEND_TIMEOUT_S


def closed_with(pending: int) -> tuple[LingeringTransport, Socket]:
    socket = Socket(pending)
    socket.protocol = Protocol()  # type: ignore[attr-defined]  # alive as long as its connection, as uvicorn's
    transport = LingeringTransport(socket, socket.protocol)  # type: ignore[arg-type, attr-defined]
    transport.close()
    return transport, socket


def test_a_transport_does_not_keep_its_protocol_alive() -> None:
    # The protocol holds the transport; the transport held the protocol: a cycle per connection,
    # freed only by a full collection (with the stream's request cycle and transports).
    protocol: Any = Protocol()
    socket = Socket(1_000)
    transport = LingeringTransport(socket, protocol)
    protocol.transport = transport
    alive = weakref.ref(protocol)
    del protocol
    assert alive() is None  # freed by reference counting
    transport.close()  # its connection is gone: nothing to close
    assert not socket.closed and transport.is_closing()


def test_a_client_that_takes_nothing_for_the_send_timeout_is_aborted() -> None:
    async def run() -> Socket:
        _, socket = closed_with(4_000_000)
        await asyncio.sleep(SEND_TIMEOUT_S * 3)
        return socket

    socket = asyncio.run(run())
    assert socket.closed and socket.aborted


def test_a_client_still_reading_slowly_gets_every_byte() -> None:
    async def run() -> Socket:
        _, socket = closed_with(4_000_000)
        for _ in range(12):  # 12 send timeouts long, a little taken in each
            await asyncio.sleep(SEND_TIMEOUT_S * 0.8)
            socket.pending -= 100_000
        return socket

    socket = asyncio.run(run())
    assert socket.closed and not socket.aborted


def test_nothing_is_aborted_once_the_buffer_drained_or_the_connection_is_gone() -> None:
    async def run() -> tuple[Socket, Socket, Socket]:
        _, drained = closed_with(0)
        emptied_transport, emptied = closed_with(1_000)
        lost_transport, lost = closed_with(1_000)
        emptied.pending = 0
        lost_transport.lost()  # asyncio's transport cannot be aborted once lost
        await asyncio.sleep(SEND_TIMEOUT_S * 3)
        assert emptied_transport is not None
        return drained, emptied, lost

    for socket in asyncio.run(run()):
        assert socket.closed and not socket.aborted


def test_a_stream_that_joins_while_the_gateway_begins_to_stop_is_closed_too() -> None:
    # A review: the listener took the hub's `closed` before the join's awaits; a stop in between
    # left it open, and sse-starlette then cut its stream without AG-UI's RUN_FINISHED.
    from gateway.backend import LOG_KINDS, LogBounds, SessionInfo
    from gateway.hub import Hub

    class Backend:
        def channels(self, session: str) -> list[str]:
            return [f"{session}:{kind}" for kind in LOG_KINDS]

        async def bounds(self, session: str) -> dict[str, LogBounds]:
            await asyncio.sleep(0.05)  # the stop comes while the feed reads where the logs end
            return dict.fromkeys(LOG_KINDS, LogBounds(None, None, False))

    async def run() -> bool:
        hub = Hub(Backend(), queue_events=16, queue_bytes=1 << 20)  # type: ignore[arg-type]
        joining = asyncio.create_task(hub.join("s1", SessionInfo("alice demo", 1)))
        await asyncio.sleep(0.01)
        hub.close()
        listener = await joining
        closed = listener.closed and await listener.next(5.0) is None
        await hub.stop()
        return closed

    assert asyncio.run(run())
