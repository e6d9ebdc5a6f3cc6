"""A session's event stream: every frame, receipt change and answer event exactly once, in log order.

A stream subscribes first (`Hub.join`), then reads the session's logs after the client's
cursor, then forwards what its feed reads, dropping what it already sent: a gap is impossible
and a duplicate is dropped by id.  A cursor older than what the logs keep, or of an earlier
life of the session, gets one `resync` with the session's current state instead, then the
events after it.  A reader that falls `IUI_GATEWAY_QUEUE_EVENTS` behind gets a last `resync`
(`slow_reader`, no state) and the stream ends: it resumes from its cursor, nothing is buffered
without limit.  Streams end after `IUI_GATEWAY_MAX_CONNECTION_S` too, and when the gateway stops.

`EventStream.events()` yields `Event`s; the native SSE route and the AG-UI route render them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

from sse_starlette import ServerSentEvent

from .backend import LOG_KINDS, Backend, LogBounds, LogEntry, SessionInfo, Snapshot
from .cursor import ZERO, Cursor
from .hub import Hub, Listener, lived_pages
from .metrics import GatewayMetrics

SLOW_READER = "slow_reader"
PIECE_CHARS = 65_536  # a body chunk of an event written in pieces (`sse_parts`)
SCAN_CHARS = 1 << 20  # what `sse_parts` scans for line breaks in one turn of the loop
LINE_END = "\n"  # SSE allows \r\n too, but some readers (@ag-ui/client's) split events on "\n\n" only


EPOCH = "epoch"  # resync reasons: a cursor of an earlier life of the session,
EXPIRED = "expired"  # a position its log no longer holds,
AHEAD = "ahead"  # a position past its log's end


def is_earlier_life(cursor: Cursor, info: SessionInfo) -> bool:
    """A cursor of an earlier life of the session (deleted, expired, created again): its ids are
    positions in logs that are gone."""
    return not cursor.is_fresh() and cursor.epoch != info.epoch


def resync_reason(cursor: Cursor, info: SessionInfo, bounds: dict[str, LogBounds]) -> str | None:
    """Why `cursor` cannot be resumed from the session's logs, whose bounds were read (None: it
    can), as a stream sends it in its `resync`."""
    if is_earlier_life(cursor, info):
        return EPOCH
    for kind in LOG_KINDS:
        first = bounds[kind].first
        if bounds[kind].trimmed and first is not None and cursor.at(kind) < first:
            return EXPIRED
    for kind in LOG_KINDS:
        # A log only grows (and loses its oldest): a position past its end was lost by Redis (a
        # restart that lost its last writes, a log deleted with the session's answers) or forged.
        # The next entries may sort below it and would be dropped as sent: the state instead.
        if cursor.at(kind) > (bounds[kind].last or ZERO):
            return AHEAD
    return None


def resynced_cursor(info: SessionInfo, bounds: dict[str, LogBounds]) -> Cursor:
    """The cursor after a resync whose state was read after `bounds`: each log's last entry (a later
    one is newer than the state, or the same)."""
    return Cursor(info.epoch, *(bounds[kind].last or ZERO for kind in LOG_KINDS))


class AnotherLife(Exception):
    """The session's owner record changed while a stream started: it ends before sending more."""


class OneLineEvent(ServerSentEvent):
    """sse-starlette's event, written without its line split when no field holds a line break.

    `ServerSentEvent.encode` splits the data on line breaks with a regular expression and writes
    it through a `StringIO`: ~4 ms a megabyte, 114 ms for the 27 MB snapshot of 100 UIs at the
    document limit, all on the event loop every stream shares, though the gateway's data is JSON
    on one line (orjson's, the logs', a resync's).  The same bytes, in one concatenation."""

    def encode(self) -> bytes:
        data, event, ident, retry = self.data, self.event, self.id, self.retry
        if (self.comment is not None or not isinstance(data, str) or _broken(data)
                or (event is not None and _broken(event)) or (ident is not None and _broken(ident))
                or (retry is not None and not isinstance(retry, int))):  # the last: sse-starlette's TypeError
            return super().encode()
        sep = self._sep
        head = ("" if ident is None else "id: " + ident + sep) + ("" if event is None else "event: " + event + sep)
        tail = sep if retry is None else f"retry: {retry}{sep}{sep}"
        return (head + "data: " + data + sep + tail).encode("utf-8")


def _broken(text: str) -> bool:
    """A line break SSE would split on (CR or LF)."""
    return "\n" in text or "\r" in text


def sse_event(**fields: Any) -> ServerSentEvent:
    """A server-sent event whose lines end with LF."""
    return OneLineEvent(sep=LINE_END, **fields)


async def sse_parts(parts: list[str], *, event: str, ident: str) -> AsyncIterator[ServerSentEvent | bytes]:
    """One event whose data comes in pieces, written as its SSE bytes about PIECE_CHARS at a time
    with the event loop's other work between them (one `data:` line over several body chunks;
    nothing else writes to the connection meanwhile): the bytes `sse_event` writes of the pieces
    joined, without joining them (a resync of 100 UIs at the document limit is 27 MB of text).  A
    piece holding a line break (not the gateway's JSON: an entry someone else wrote) is joined and
    written by `sse_event`, which splits it as SSE requires."""
    if _broken(event) or _broken(ident) or not await _one_line(parts):
        yield sse_event(data="".join(parts), event=event, id=ident)
        return
    pending = "id: " + ident + LINE_END + "event: " + event + LINE_END + "data: "
    for part in parts:
        pending += part  # a large piece after an empty pending is not copied, only encoded
        if len(pending) >= PIECE_CHARS:
            yield pending.encode("utf-8")
            pending = ""
            await asyncio.sleep(0)  # a chunk's send need not wait: the loop's turn is taken here
    yield (pending + LINE_END + LINE_END).encode("utf-8")


async def _one_line(parts: list[str]) -> bool:
    """No piece holds a line break; scanned before a byte is written, SCAN_CHARS a turn of the
    loop (the scan of 27 MB is itself ~3 ms)."""
    scanned = 0
    for part in parts:
        if _broken(part):
            return False
        scanned += len(part)
        if scanned >= SCAN_CHARS:
            scanned = 0
            await asyncio.sleep(0)
    return True


@dataclass(frozen=True, slots=True)
class Resync:
    """What a `resync` says: why, and the session's state as read (JSON texts)."""

    reason: str
    state: Snapshot

    def parts(self) -> list[str]:
        """Its JSON in pieces, each frame, receipt and answer a piece of its own (never copied);
        joined: `{"reason":...,"frames":[...],"receipts":[...],"answers":[...]}`."""
        parts = ['{"reason":"' + self.reason + '","frames":[']
        _listed(parts, self.state.frames)
        parts.append('],"receipts":[')
        _listed(parts, self.state.receipts)
        parts.append('],"answers":[')
        _listed(parts, self.state.answers)
        parts.append("]}")
        return parts


def _listed(parts: list[str], texts: list[str]) -> None:
    """`texts` appended to `parts` as the items of a JSON array."""
    for index, text in enumerate(texts):
        if index:
            parts.append(",")
        parts.append(text)


@dataclass(frozen=True, slots=True)
class Event:
    """One event of a stream: its type, the cursor after it and its JSON data (a resync's is in
    pieces, `resync`, and `data` is empty)."""

    type: str  # frame, receipt, answer or resync
    cursor: Cursor
    data: str
    resync: Resync | None = None


class EventStream:
    """The events of one connection, from its cursor on."""

    def __init__(self, *, backend: Backend, hub: Hub, metrics: GatewayMetrics, session: str, info: SessionInfo,
                 cursor: Cursor, lifetime_s: float, idle_s: float) -> None:
        self._backend = backend
        self._hub = hub
        self._metrics = metrics
        self._session = session
        self._info = info  # the owner record that allowed the stream (its epoch is the cursors')
        self._cursor = cursor
        self._deadline = time.monotonic() + lifetime_s
        self._idle_s = idle_s

    async def events(self) -> AsyncGenerator[Event | None, None]:
        """Events as they come; None when nothing came for `idle_s` (the caller's heartbeat).

        The stream ends when its session is another life's (expired and created again, by anyone):
        its client reconnects and is answered as a new request is (404, or a resync of its own)."""
        listener = await self._hub.join(self._session, self._info)
        try:
            try:
                async for event in self._start():
                    yield event
            except AnotherLife:
                return
            async for item in self._live(listener):
                yield item
        finally:
            self._hub.leave(listener)  # no await: a cancelled stream's cleanup must not be cancelled too

    async def _start(self) -> AsyncIterator[Event]:
        reason = await self._resync_reason()
        if reason is not None:
            yield await self._resync(reason)
            return
        async for entries, life in lived_pages(self._backend, self._session, self._cursor):
            if life != self._info:  # the session expired and began again since it was checked
                raise AnotherLife
            for entry in entries:
                yield self._event(entry)

    async def _resync_reason(self) -> str | None:
        """Why the cursor cannot be resumed from the logs (None: it can)."""
        if is_earlier_life(self._cursor, self._info):  # no need to read the logs' bounds
            return EPOCH
        return resync_reason(self._cursor, self._info, await self._backend.bounds(self._session))

    async def _resync(self, reason: str) -> Event:
        """The session's state, at positions read before it (a later frame in the logs is newer or
        the same; receivers keep the newer of two by seq, revision and updatedAt)."""
        bounds = await self._backend.bounds(self._session)
        snapshot = await self._backend.snapshot(self._session)
        if await self._backend.session(self._session) != self._info:  # read after: the state was of its life
            raise AnotherLife
        self._cursor = resynced_cursor(self._info, bounds)
        self._metrics.resyncs.labels(reason).inc()
        return Event("resync", self._cursor, "", Resync(reason, snapshot))

    def _event(self, entry: LogEntry) -> Event:
        self._cursor = self._cursor.after(entry.kind, entry.id)
        if self._cursor.epoch != self._info.epoch:  # a fresh cursor (any other was resynced): its epoch is
            # the session's, whatever the client's said (ids it would carry could never resume)
            self._cursor = Cursor(self._info.epoch, self._cursor.frame, self._cursor.receipt, self._cursor.answer)
        return Event(entry.kind, self._cursor, entry.data)

    async def _live(self, listener: Listener) -> AsyncIterator[Event | None]:
        while time.monotonic() < self._deadline:
            entry = await listener.next(min(self._idle_s, max(0.0, self._deadline - time.monotonic())))
            if listener.closed:
                return  # the gateway stops: no heartbeat, the stream's last words are its caller's
            if listener.overflowed:
                self._metrics.resyncs.labels(SLOW_READER).inc()
                yield Event("resync", self._cursor, "", Resync(SLOW_READER, Snapshot()))
                return
            if entry is None:
                yield None
            elif entry.id > self._cursor.at(entry.kind):  # what the start already sent is dropped
                yield self._event(entry)
