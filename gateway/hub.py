"""One pub/sub connection per gateway process, fanning each session's log entries out to its streams.

Pub/sub only wakes a session's feed: the feed then reads the session's logs after its own
position, so every event it hands out carries its log id, arrives in log order, and nothing
is lost when a message is (a restart of Redis, a dropped connection, a frame published before
the gateway subscribed).  The subscription is supervised: after any error it connects again,
subscribes to every channel its feeds need, and wakes every feed, which reads what it missed.
Only the hub's own tasks send pub/sub commands (the supervisor, and `_keep`, which brings the
subscribed channels in line with the routed ones after each change): a stream never does, so a
client gone mid-command cannot cut one half-done on the connection every stream shares.
A feed exists while a local stream of its session does; each stream gets the feed's entries on
a bounded queue, and one that falls behind is marked overflowed (its stream then ends).  When
the process stops (`Hub.close`), every listener is closed: each stream ends as its lifetime ends,
with its own last words (AG-UI's RUN_FINISHED), before the server's grace runs out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Collection

from workers.redisio.connection import Backoff

from .backend import LOG_KINDS, Backend, LogEntry, SessionInfo, Subscription
from .cursor import ZERO, Cursor, StreamId

log = logging.getLogger(__name__)
PAGE = 256  # log entries read per round trip


class Listener:
    """One event stream's place on its session's feed: a queue of log entries bounded in entries
    and in their bytes (a frame holds a whole document: 1,024 of them could be 256 MiB).

    Kept small (a deque, a future only while the stream waits): a gateway holds thousands."""

    __slots__ = ("_bytes", "_entries", "_waiter", "capacity", "closed", "life", "max_bytes", "overflowed", "session")

    def __init__(self, session: str, life: SessionInfo, capacity: int, max_bytes: int) -> None:
        self.session = session
        self.life = life  # the owner record its stream was allowed by: entries of another are never its
        self.capacity = capacity
        self.max_bytes = max_bytes  # of the queued entries' text (characters: the JSON is mostly ASCII)
        self._bytes = 0
        self.overflowed = False
        self.closed = False  # the gateway stops, or the session is another's now: the stream ends at its next wait
        self._entries: deque[LogEntry] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def offer(self, entry: LogEntry) -> None:
        """Queue an entry; a full queue marks the listener overflowed (the reader is too slow)."""
        if self.overflowed:
            return  # the stream ends at its next wait: nothing more is kept
        if len(self._entries) >= self.capacity or self._bytes + len(entry.data) > self.max_bytes:
            self.overflowed = True
        else:
            self._entries.append(entry)
            self._bytes += len(entry.data)
        self._wake()

    def close(self) -> None:
        """End the stream at its next wait (what is queued is dropped: it resumes from its cursor)."""
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def next(self, timeout: float) -> LogEntry | None:
        """The next queued entry, waiting at most `timeout` seconds (None: none came, or overflowed, or
        closed)."""
        if not self._entries and not self.overflowed and not self.closed:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                async with asyncio.timeout(timeout):
                    await self._waiter
            except TimeoutError:
                pass
            finally:
                self._waiter = None
        if not self._entries or self.overflowed or self.closed:
            return None
        entry = self._entries.popleft()
        self._bytes -= len(entry.data)
        return entry


class SessionFeed:
    """Reads one session's logs whenever pub/sub says they changed, and hands the entries out."""

    def __init__(self, backend: Backend, session: str) -> None:
        self._backend = backend
        self.session = session
        self.listeners: set[Listener] = set()
        self._position: dict[str, StreamId] = dict.fromkeys(LOG_KINDS, ZERO)
        self._dirty: set[str] = set()  # the logs pub/sub said changed since the last read
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopped = False  # `stop()` ran: a start still reading the logs' ends begins no reading
        self.ready: asyncio.Future[bool] = asyncio.get_running_loop().create_future()  # started (True) or failed

    async def start(self) -> None:
        """Begin at the logs' current ends (the caller subscribed before: nothing newer is missed)."""
        bounds = await self._backend.bounds(self.session)
        self._position = {kind: bounds[kind].last or ZERO for kind in LOG_KINDS}
        if not self._stopped:  # stopped meanwhile (the hub stops): a task made now would outlive it
            self._task = asyncio.create_task(self._run(), name=f"iui-feed-{self.session}")

    def wake(self, kind: str | None = None) -> None:
        """A log of the session (`kind`; None: any of them) may have grown."""
        self._dirty.update(LOG_KINDS if kind is None else (kind,))
        self._wake.set()

    def _hand_out(self, entries: list[LogEntry], life: SessionInfo | None) -> None:
        """Queue a page on every listener of the life it was read in; end the others' streams."""
        for entry in entries:
            self._position[entry.kind] = entry.id
        for listener in list(self.listeners):
            if listener.life != life:  # None (a page of two lives) is no stream's
                listener.close()  # its client reconnects: 404 for another's session, a resync for its own
                continue
            for entry in entries:
                listener.offer(entry)

    async def stop(self) -> None:
        """Stop reading (or, still starting, never begin)."""
        self._stopped = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        backoff = Backoff(first=0.05, limit=2.0)
        while True:
            await self._wake.wait()
            self._wake.clear()
            kinds, self._dirty = self._dirty, set()
            try:
                after = Cursor(frame=self._position["frame"], receipt=self._position["receipt"],
                               answer=self._position["answer"])
                async for entries, life in lived_pages(self._backend, self.session, after, kinds):
                    self._hand_out(entries, life)
                backoff.reset()
            except Exception as error:  # Redis away: read again once the hub reconnects (or soon)
                log.warning("gateway: reading the logs of a session failed (%s); retrying", type(error).__name__)
                await asyncio.sleep(backoff.next())
                self.wake()


async def lived_pages(backend: Backend, session: str, after: Cursor,
                      kinds: Collection[str] = LOG_KINDS) -> AsyncIterator[tuple[list[LogEntry], SessionInfo | None]]:
    """`merged`'s entries a page at a time, each with the life they were read in: the session's
    owner record when every read so far saw the same one, else None.

    A session that expired and was created again (by anyone) has a new owner record, and its
    logs' new entries sort after the old ones.  Each log read returns the record of the moment it
    read (one transaction, `Backend.read`); records never come back, so entries whose reads all
    saw one record were written in its life, and a stream takes a page only if that is its own."""
    lives: list[SessionInfo | None] = []
    page: list[LogEntry] = []
    async for entry in merged(backend, session, after, kinds, lives):
        page.append(entry)
        if len(page) == PAGE:
            yield page, _one(lives)
            page = []
    if page:
        yield page, _one(lives)


def _one(lives: list[SessionInfo | None]) -> SessionInfo | None:
    """The record every read saw, or None (two records: a page read across a new life goes to no stream)."""
    return lives[0] if lives and all(life == lives[0] for life in lives) else None


async def merged(backend: Backend, session: str, after: Cursor, kinds: Collection[str],
                 lives: list[SessionInfo | None]) -> AsyncIterator[LogEntry]:
    """Every entry of the session's logs `kinds` after `after`, merged in id order (ties: frame,
    receipt, answer), read a page at a time; the owner record each read saw is added to `lives`."""
    position = {kind: after.at(kind) for kind in LOG_KINDS}
    buffers: dict[str, deque[LogEntry]] = {kind: deque() for kind in LOG_KINDS}
    done: set[str] = {kind for kind in LOG_KINDS if kind not in kinds}
    while True:
        # Every log whose page ran out, in one transaction (a stream's start reads all three at once).
        wanted = {kind: position[kind] for kind in LOG_KINDS if not buffers[kind] and kind not in done}
        if wanted:
            pages, life = await backend.read(session, wanted, PAGE)
            lives.append(life)
            for kind, page in pages.items():
                buffers[kind] = deque(page)
                if len(page) < PAGE:
                    done.add(kind)
                if page:
                    position[kind] = page[-1].id
        heads = [(buffer[0].id, LOG_KINDS.index(kind), kind) for kind, buffer in buffers.items() if buffer]
        if not heads:
            return
        _, _, kind = min(heads)
        yield buffers[kind].popleft()


class Hub:
    """The process's one subscription and its session feeds."""

    def __init__(self, backend: Backend, *, queue_events: int, queue_bytes: int,
                 on_connect: Callable[[], object] | None = None) -> None:
        self._backend = backend
        self._capacity = queue_events
        self._max_bytes = queue_bytes
        self._feeds: dict[str, SessionFeed] = {}
        self._by_channel: dict[str, tuple[SessionFeed, str]] = {}  # channel -> its feed and log
        self._subscription: Subscription | None = None
        self._subscribed: set[str] = set()  # the channels SUBSCRIBEd on `_subscription`
        self._connected = asyncio.Event()
        self._commands = asyncio.Lock()  # the subscription's commands, and its replacement
        self._changed = asyncio.Event()  # the routed channels changed: the keeper brings Redis in line
        self._kept: list[asyncio.Future[None]] = []  # joins waiting for the keeper's next pass
        self._woken = True  # every feed read after the current subscription took its channels
        self._task: asyncio.Task[None] | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._releases: set[asyncio.Task[None]] = set()  # retired feeds being stopped
        self.left = 0  # listeners that left: streams that ended (the heap policy counts them)
        self.reconnects = 0
        self.closed = False  # the process stops: no stream waits for more
        self._on_connect = on_connect  # the metric of (re)connects: IUIGatewaySubscriptionFlapping reads it

    @property
    def connected(self) -> bool:
        """True while the subscription is up."""
        return self._connected.is_set()

    def start(self) -> None:
        """Start the supervised subscription."""
        self._task = asyncio.create_task(self._supervise(), name="iui-hub")
        self._keeper = asyncio.create_task(self._keep(), name="iui-hub-channels")

    async def stop(self) -> None:
        """Stop the subscription and every feed."""
        for task in (self._task, self._keeper):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        for feed in list(self._feeds.values()):
            await feed.stop()
        self._feeds.clear()
        for release in list(self._releases):
            with contextlib.suppress(Exception):
                await release
        if self._subscription is not None:
            await self._subscription.close()

    def close(self) -> None:
        """The process stops: every stream's listener is closed, and a stream that joins later is
        closed from its start (it ends at once, its client resumes on another gateway)."""
        self.closed = True
        for feed in self._feeds.values():
            for listener in feed.listeners:
                listener.close()

    async def join(self, session: str, life: SessionInfo) -> Listener:
        """A listener on the session's feed (subscribed, positioned at the logs' ends).

        A join cancelled or failed before its listener is added (a client gone while the stream
        starts, Redis away) leaves no feed behind: a feed left without listeners would keep its
        channels forever, and the session's later streams would share its dead reading.  The join
        never sends a pub/sub command itself (`_keep` does): a client gone at that moment would
        cancel it half-done on the connection every stream shares.  Joins of other sessions do not
        wait for this one (the keeper subscribes their channels in one pass); joins of the same
        session wait for the first one's start and share its feed."""
        listener = Listener(session, life, self._capacity, self._max_bytes)
        while True:
            feed = self._feeds.get(session)
            if feed is None:
                feed = self._new_feed(session)
                try:
                    await self._kept_in_line()
                    await feed.start()
                except BaseException:
                    feed.ready.set_result(False)  # the joins waiting for it look again
                    self._retire(feed)
                    raise
                feed.ready.set_result(True)
            elif not feed.ready.done():
                await asyncio.shield(feed.ready)  # another join starts it (cancelled: only this wait is)
                continue  # look again: it failed, or its listeners all left meanwhile, or it is live
            feed.listeners.add(listener)
            break
        if self.closed:  # the process stops, or began to while this one joined
            listener.close()
        return listener

    def _new_feed(self, session: str) -> SessionFeed:
        """A session's feed, routed (so no message of its channels is dropped while it subscribes)
        and found by the session's other joins, which wait for its start."""
        feed = SessionFeed(self._backend, session)
        for channel, kind in zip(self._backend.channels(session), LOG_KINDS, strict=True):
            self._by_channel[channel] = (feed, kind)
        self._feeds[session] = feed
        return feed

    async def _kept_in_line(self) -> None:
        """Wait for the keeper's pass that subscribes what is routed now (none while disconnected:
        the next subscription subscribes every routed channel, and wakes every feed)."""
        if not self.connected:
            return
        passed = asyncio.get_running_loop().create_future()
        self._kept.append(passed)
        self._changed.set()
        await passed  # a cancelled join stops waiting here; the keeper's command runs to its end

    def leave(self, listener: Listener) -> None:
        """Remove a listener; the last one of a session retires its feed and its channels.

        Synchronous: it runs in a stream's `finally`, where a cancelled task (anyio cancels a
        scope at every await) would never get past an await."""
        feed = self._feeds.get(listener.session)
        if feed is None or listener not in feed.listeners:
            return
        feed.listeners.discard(listener)
        self.left += 1
        if not feed.listeners:
            self._retire(feed)

    def _retire(self, feed: SessionFeed) -> None:
        """Forget a feed and its channels now (the keeper unsubscribes them, unless the session is
        joined again first); stop its reading in a task of the hub's own."""
        if self._feeds.get(feed.session) is feed:
            del self._feeds[feed.session]
        for channel in self._backend.channels(feed.session):
            if self._by_channel.get(channel, (None,))[0] is feed:
                del self._by_channel[channel]
        self._changed.set()
        task = asyncio.create_task(feed.stop(), name=f"iui-release-{feed.session}")
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    async def _keep(self) -> None:
        """The channels' keeper: after each change, SUBSCRIBE what is routed and not subscribed,
        UNSUBSCRIBE what is subscribed and no longer routed.  A failed command makes the subscription
        a lost one: the supervisor makes a new one with every routed channel."""
        while True:
            await self._changed.wait()
            self._changed.clear()
            passed, self._kept = self._kept, []
            try:
                async with self._commands:
                    await self._bring_in_line()
            except Exception:  # a defect: the joins must not wait for ever, nor later changes go unheard
                log.exception("gateway: the pub/sub channels' keeper failed a pass")
            finally:
                for waiter in passed:
                    if not waiter.done():
                        waiter.set_result(None)

    async def _bring_in_line(self) -> None:
        subscription = self._subscription
        if subscription is None or not self.connected:
            return  # the next subscription subscribes every routed channel
        wanted = set(self._by_channel)
        gone, new = self._subscribed - wanted, wanted - self._subscribed
        try:
            if gone:
                await subscription.unsubscribe(sorted(gone))
                self._subscribed -= gone
            if new:
                await subscription.subscribe(sorted(new))
                self._subscribed |= new
            if new or not self._woken:
                # A stream reads where the logs end once Redis has its channels (a SUBSCRIBE only
                # sent could be applied after that read, and a publish between them go unheard).
                await subscription.settled()
            if not self._woken:  # a new subscription: every feed reads what it missed
                self._woken = True
                for feed in self._feeds.values():
                    feed.wake()
        except Exception as error:
            log.warning("gateway: a pub/sub command failed (%s); subscribing again", type(error).__name__)
            self._connected.clear()
            await subscription.close()  # its reader fails: the supervisor replaces it

    @property
    def sessions(self) -> int:
        """How many sessions have a feed (each holds its channels' subscription)."""
        return len(self._feeds)

    async def _supervise(self) -> None:
        backoff = Backoff(first=0.1, limit=2.0)
        while True:
            try:
                await self._connect()
                backoff.reset()
                await self._listen()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning("gateway: the pub/sub connection failed (%s); reconnecting", type(error).__name__)
            self._connected.clear()
            if self._subscription is not None:
                await self._subscription.close()
                self._subscription = None
            await asyncio.sleep(backoff.next())

    async def _connect(self) -> None:
        """Connect and subscribe to every channel the feeds need; the keeper wakes every feed to read
        what it missed once Redis applied the SUBSCRIBE (`_bring_in_line`)."""
        subscription = await self._backend.subscription()
        async with self._commands:
            wanted = set(self._by_channel)
            try:
                await subscription.subscribe(sorted(wanted))
            except BaseException:
                await subscription.close()
                raise
            self._subscription, self._subscribed, self._woken = subscription, wanted, False
            self._connected.set()
            self.reconnects += 1
            if self._on_connect is not None:
                self._on_connect()
        self._changed.set()  # the keeper wakes every feed once Redis has the channels

    async def _listen(self) -> None:
        assert self._subscription is not None
        async for channel in self._subscription.messages():
            found = self._by_channel.get(channel)
            if found is not None:
                found[0].wake(found[1])
