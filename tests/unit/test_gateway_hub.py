"""The hub's feeds and channels (`gateway/hub.py`): a stream cut while it starts, a failed start and
the last leave each leave no feed and no subscription behind, and a session joined again keeps
its channels (an audit: a client that reset its connection while its stream started left the
session's feed without listeners and its channels subscribed for the process's life; the
session's later streams then got no live event, only what they read at their start)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest

from gateway.backend import LOG_KINDS, LogBounds, LogEntry, SessionInfo
from gateway.hub import PAGE, Hub

LIFE = SessionInfo("alice demo", 1)


class Subscription:
    """Channels as Redis would hold them; a command can be held at a gate, or fail once; a
    cancelled command is recorded (on redis-py, it leaves the connection in an unknown state)."""

    def __init__(self) -> None:
        self.channels: set[str] = set()
        self.messages_in: asyncio.Queue[str | None] = asyncio.Queue()
        self.gate: asyncio.Event | None = None
        self.settle_gate: asyncio.Event | None = None  # Redis has not applied the commands yet
        self.failure: Exception | None = None
        self.cancelled = 0
        self.closed = False

    async def _command(self) -> None:
        if self.failure is not None:
            failure, self.failure = self.failure, None
            raise failure
        if self.gate is not None:
            try:
                await self.gate.wait()
            except asyncio.CancelledError:
                self.cancelled += 1
                raise

    async def subscribe(self, channels: Sequence[str]) -> None:
        await self._command()
        self.channels.update(channels)

    async def unsubscribe(self, channels: Sequence[str]) -> None:
        await self._command()
        self.channels.difference_update(channels)

    async def settled(self) -> None:
        await self._command()
        if self.settle_gate is not None:
            await self.settle_gate.wait()

    async def messages(self) -> AsyncIterator[str]:
        while (channel := await self.messages_in.get()) is not None:
            yield channel
        raise ConnectionError("closed")

    async def close(self) -> None:
        self.closed = True
        self.channels.clear()  # Redis drops a closed connection's channels
        self.messages_in.put_nowait(None)


class Backend:
    """Bounds that take `delay_s` (or raise `failure`), and a count of the reads a wake causes."""

    def __init__(self) -> None:
        self.delay_s = 0.0
        self.failure: Exception | None = None
        self.subscription_made = Subscription()
        self.made = 0  # subscriptions made: each is one (re)connect
        self.held: dict[str, asyncio.Event] = {}  # sessions whose logs' ends are read once set
        self.reads = 0
        self.log: list[LogEntry] = []  # the frame log
        self.life: SessionInfo | None = LIFE  # the session's owner record
        self.life_after_read: SessionInfo | None = None  # the record a read leaves behind

    def channels(self, session: str) -> tuple[str, str, str]:
        return (f"{session}:frame", f"{session}:receipt", f"{session}:answer")

    async def subscription(self) -> Subscription:
        self.made += 1
        if self.subscription_made.closed:
            self.subscription_made = Subscription()
        return self.subscription_made

    async def bounds(self, session: str) -> dict[str, LogBounds]:
        await asyncio.sleep(self.delay_s)
        if session in self.held:
            await self.held[session].wait()
        if self.failure is not None:
            raise self.failure
        return dict.fromkeys(LOG_KINDS, LogBounds(None, None, False))

    async def read(self, session: str, after: dict[str, tuple[int, int]], count: int
                   ) -> tuple[dict[str, list[LogEntry]], SessionInfo | None]:
        """The frame log's entries after its position (the other logs are empty), with the record
        of that moment (as one transaction)."""
        self.reads += 1
        life = self.life
        if self.life_after_read is not None:
            self.life = self.life_after_read
        pages: dict[str, list[LogEntry]] = {kind: [] for kind in after}
        if "frame" in after:
            pages["frame"] = [entry for entry in self.log if entry.id > after["frame"]][:count]
        return pages, life

    async def session(self, session: str) -> SessionInfo | None:
        return self.life


async def connected_hub(backend: Backend) -> Hub:
    hub = Hub(backend, queue_events=16, queue_bytes=1 << 20)  # type: ignore[arg-type]
    hub.start()
    for _ in range(100):
        if hub.connected:
            return hub
        await asyncio.sleep(0.001)
    raise AssertionError("the hub never connected")


async def settled(hub: Hub) -> None:
    for _ in range(5):  # the release tasks: a feed's stop, then the unsubscribe under the lock
        await asyncio.sleep(0)
    await asyncio.sleep(0.01)


def test_a_join_cancelled_while_its_feed_starts_leaves_no_feed_and_no_channel() -> None:
    async def run() -> None:
        backend = Backend()
        hub = await connected_hub(backend)
        backend.delay_s = 0.05
        joining = asyncio.create_task(hub.join("s1", LIFE))
        await asyncio.sleep(0.01)  # subscribed, reading where the logs end: the client goes
        assert backend.subscription_made.channels == set(backend.channels("s1"))
        joining.cancel()
        with pytest.raises(asyncio.CancelledError):
            await joining
        await settled(hub)
        assert hub.sessions == 0 and backend.subscription_made.channels == set()
        # the session's next stream gets its live events: its feed reads when a message comes
        backend.delay_s = 0.0
        listener = await hub.join("s1", LIFE)
        assert backend.subscription_made.channels == set(backend.channels("s1"))
        reads = backend.reads
        await backend.subscription_made.messages_in.put("s1:frame")
        await settled(hub)
        assert backend.reads > reads
        hub.leave(listener)
        await hub.stop()

    asyncio.run(run())


def test_a_feed_still_starting_when_the_hub_stops_begins_no_reading() -> None:
    async def run() -> None:
        backend = Backend()
        hub = await connected_hub(backend)
        backend.held["s1"] = asyncio.Event()
        joining = asyncio.create_task(hub.join("s1", LIFE))
        await settled(hub)  # subscribed, reading where the logs end
        stopping = asyncio.create_task(hub.stop())
        await settled(hub)
        backend.held["s1"].set()  # the read ends after the hub stopped
        await stopping
        await asyncio.gather(joining, return_exceptions=True)
        await settled(hub)
        feeds = [task for task in asyncio.all_tasks() if task.get_name().startswith("iui-feed-")]
        assert feeds == []  # before: a reading task made after the stop, cancelled by no one

    asyncio.run(run())


def test_a_join_whose_start_fails_leaves_no_feed_and_no_channel() -> None:
    async def run() -> None:
        backend = Backend()
        hub = await connected_hub(backend)
        backend.failure = ConnectionError("Redis away")
        with pytest.raises(ConnectionError):
            await hub.join("s1", LIFE)
        await settled(hub)
        assert hub.sessions == 0 and backend.subscription_made.channels == set()
        await hub.stop()

    asyncio.run(run())


def test_the_last_leave_unsubscribes_unless_the_session_was_joined_again_first() -> None:
    async def run() -> None:
        backend = Backend()
        hub = await connected_hub(backend)
        first, second = await hub.join("s1", LIFE), await hub.join("s1", LIFE)
        hub.leave(first)
        hub.leave(first)  # twice: nothing more
        await settled(hub)
        assert hub.sessions == 1 and backend.subscription_made.channels == set(backend.channels("s1"))
        hub.leave(second)
        again = await hub.join("s1", LIFE)  # before the release ran: the channels stay
        await settled(hub)
        assert hub.sessions == 1 and backend.subscription_made.channels == set(backend.channels("s1"))
        hub.leave(second)  # a listener of the retired feed: the new feed keeps its own
        assert hub.sessions == 1
        hub.leave(again)
        await settled(hub)
        assert hub.sessions == 0 and backend.subscription_made.channels == set()
        await hub.stop()

    asyncio.run(run())


def test_a_feed_hands_a_page_only_to_streams_of_the_life_it_was_read_in() -> None:
    """An audit: a stream allowed by alice's session kept forwarding after the session expired and
    bob created it again (its new entries sort after the old ones): bob's frames reached alice."""
    async def run() -> None:
        backend = Backend()
        hub = await connected_hub(backend)
        alices = await hub.join("s1", LIFE)
        backend.log.append(LogEntry("frame", (1, 0), '{"seq":1}'))
        await backend.subscription_made.messages_in.put("s1:frame")
        first = await alices.next(1.0)
        assert first is not None and first.data == '{"seq":1}'
        backend.life = SessionInfo("bob other", 2)  # expired, then created again by bob
        bobs = await hub.join("s1", backend.life)  # the same feed, another life
        backend.log.append(LogEntry("frame", (2, 0), '{"bob":1}'))
        await backend.subscription_made.messages_in.put("s1:frame")
        got = await bobs.next(1.0)
        assert got is not None and got.data == '{"bob":1}'
        assert alices.closed and await alices.next(0.1) is None
        hub.leave(alices)
        hub.leave(bobs)
        await hub.stop()

    asyncio.run(run())


def test_a_page_read_while_the_owner_record_changed_goes_to_no_stream() -> None:
    """A review: a page whose reads saw two owner records (alice's first page of the frame log,
    then bob's rest of it) was of no one life; it goes to no stream."""
    async def run() -> None:
        backend = Backend()
        hub = await connected_hub(backend)
        bob = SessionInfo("bob other", 2)
        alices, bobs = await hub.join("s1", LIFE), await hub.join("s1", bob)
        backend.log.extend(LogEntry("frame", (n, 0), f'{{"alice":{n}}}') for n in range(1, PAGE + 2))
        backend.life_after_read = bob  # alice's session expires, bob's begins, between two reads
        hub._feeds["s1"].wake()  # two reads: a full page in alice's life, then the last entry in bob's
        await settled(hub)
        assert backend.reads == 2
        assert alices.closed and bobs.closed
        assert await bobs.next(0.1) is None
        hub.leave(alices)
        hub.leave(bobs)
        await hub.stop()

    asyncio.run(run())


def test_a_stream_cancelled_while_its_channels_are_subscribed_never_cuts_the_command() -> None:
    """An audit of a flaky test: a stream's join sent SUBSCRIBE itself, so a client gone at that
    moment cancelled a command on the shared pub/sub connection (redis-py then drops the connection
    and makes it again, subscribing what it remembers).  Commands are the hub's own task's."""
    async def run() -> None:
        backend = Backend()
        hub = await connected_hub(backend)
        subscription = backend.subscription_made
        subscription.gate = asyncio.Event()
        joining = asyncio.create_task(hub.join("s1", LIFE))
        await asyncio.sleep(0.01)  # its SUBSCRIBE is on its way
        joining.cancel()
        with pytest.raises(asyncio.CancelledError):
            await joining
        subscription.gate.set()
        await settled(hub)
        assert subscription.cancelled == 0
        assert hub.sessions == 0 and subscription.channels == set()
        await hub.stop()

    asyncio.run(run())


def test_a_failed_subscribe_makes_a_new_subscription_with_every_channel_streams_need() -> None:
    """An audit: a failed SUBSCRIBE was ignored, and the session's stream got no live event."""
    async def run() -> None:
        backend = Backend()
        hub = await connected_hub(backend)
        backend.subscription_made.failure = ConnectionError("reset")
        listener = await hub.join("s1", LIFE)
        for _ in range(100):
            if backend.made == 2 and hub.connected:
                break
            await asyncio.sleep(0.01)
        assert backend.made == 2 and hub.reconnects == 2
        assert backend.subscription_made.channels == set(backend.channels("s1"))
        reads = backend.reads
        await backend.subscription_made.messages_in.put("s1:frame")
        await settled(hub)
        assert backend.reads > reads  # the new subscription wakes the feed
        hub.leave(listener)
        await settled(hub)
        assert backend.subscription_made.channels == set()
        await hub.stop()

    asyncio.run(run())


def test_a_stream_reads_where_the_logs_end_only_once_redis_applied_its_subscribe() -> None:
    """A review: a SUBSCRIBE only sent could be applied after the stream read where the logs end,
    and an entry published between the two went unheard until the session's next one."""
    async def run() -> None:
        backend = Backend()
        hub = await connected_hub(backend)
        subscription = backend.subscription_made
        subscription.settle_gate = asyncio.Event()
        joining = asyncio.create_task(hub.join("s1", LIFE))
        await settled(hub)
        assert subscription.channels == set(backend.channels("s1")) and not joining.done()
        subscription.settle_gate.set()
        listener = await asyncio.wait_for(joining, 1.0)
        hub.leave(listener)
        await hub.stop()

    asyncio.run(run())


def test_a_session_s_join_does_not_wait_for_another_session_s_start() -> None:
    """A review: every join waited on one lock while a feed started (a SUBSCRIBE, its PONG and the
    logs' ends read): a thousand browsers reconnecting after a restart started one at a time."""
    async def run() -> None:
        backend = Backend()
        hub = await connected_hub(backend)
        backend.held["slow"] = asyncio.Event()
        slow = asyncio.create_task(hub.join("slow", LIFE))
        await settled(hub)
        quick = await asyncio.wait_for(hub.join("quick", LIFE), 1.0)
        assert not slow.done()
        backend.held["slow"].set()
        hub.leave(await slow)
        hub.leave(quick)
        await settled(hub)
        assert hub.sessions == 0 and backend.subscription_made.channels == set()
        await hub.stop()

    asyncio.run(run())


def test_joins_of_one_session_share_its_feed_and_outlive_a_cancelled_first_join() -> None:
    async def run() -> None:
        backend = Backend()
        hub = await connected_hub(backend)
        backend.held["s1"] = asyncio.Event()
        first = asyncio.create_task(hub.join("s1", LIFE))
        await settled(hub)
        second = asyncio.create_task(hub.join("s1", LIFE))
        third = asyncio.create_task(hub.join("s1", LIFE))
        await settled(hub)
        first.cancel()  # its client went while the feed started
        with pytest.raises(asyncio.CancelledError):
            await first
        backend.held["s1"].set()
        listeners = await asyncio.wait_for(asyncio.gather(second, third), 1.0)
        assert hub.sessions == 1 and backend.subscription_made.channels == set(backend.channels("s1"))
        assert listeners[0] is not listeners[1]
        reads = backend.reads
        await backend.subscription_made.messages_in.put("s1:frame")
        await settled(hub)
        assert backend.reads > reads  # the feed they share reads
        for listener in listeners:
            hub.leave(listener)
        await settled(hub)
        assert hub.sessions == 0 and backend.subscription_made.channels == set()
        await hub.stop()

    asyncio.run(run())
