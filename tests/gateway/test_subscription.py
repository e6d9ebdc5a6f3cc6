"""The gateway's pub/sub connection on a real Redis (`gateway.redis_backend.RedisSubscription`, the
hub's supervision): a connection Redis drops is never made again behind the hub's back.

An audit of a flaky test (streams reset while they start left a session's channels subscribed):
redis-py's `PubSub` reconnects on its own (the read's retries, its health check, a read on a
dropped connection) and subscribes again what *it* remembers, which includes channels whose
UNSUBSCRIBE was sent but not yet confirmed; the hub never learnt of it, so it neither woke its
feeds (entries written meanwhile waited for the session's next publish) nor fixed the channel set.
Its health check also read a PONG on the pub/sub connection from the task that subscribed, while
the hub's listener read the same socket."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from gateway.backend import BackendUnavailable, SessionInfo
from gateway.hub import Hub
from gateway.redis_backend import RedisBackend
from workers.redisio.keys import Keys, partition_of

pytestmark = pytest.mark.integration
LIFE = SessionInfo("alice demo", 1)
SESSION = "hub-drop"


async def backend_on(url: str, **pool: Any) -> tuple[RedisBackend, aioredis.Redis]:
    """The gateway's backend on `url`, with the server's pool options (`health_check_interval`...)."""
    redis = aioredis.Redis(connection_pool=aioredis.BlockingConnectionPool.from_url(url, **pool))
    return RedisBackend(redis=redis, keys=Keys("iui"), partitions=4), redis


async def next_message(messages: AsyncIterator[str], timeout: float = 5.0) -> str:
    return await asyncio.wait_for(anext(messages), timeout)


async def channels_left(redis: aioredis.Redis, pattern: str) -> list[bytes | str]:
    """The channels matching `pattern` still subscribed after at most 2 s (Redis drops a closed
    connection's channels once it reads the close)."""
    for _ in range(200):
        if not await redis.pubsub_channels(pattern):
            break
        await asyncio.sleep(0.01)
    return list(await redis.pubsub_channels(pattern))


def test_a_subscription_whose_connection_redis_dropped_ends_rather_than_subscribing_again(
        redis_url: str) -> None:
    async def run() -> None:
        backend, redis = await backend_on(redis_url)
        subscription = await backend.subscription()
        messages = subscription.messages()
        await subscription.subscribe(["dropped-a", "dropped-b"])
        await redis.publish("dropped-a", "1")
        assert await next_message(messages) == "dropped-a"
        await redis.client_kill_filter(_type="pubsub")
        with contextlib.suppress(ConnectionError):  # sent on a dead connection: never confirmed
            await subscription.unsubscribe(["dropped-b"])
        with pytest.raises(BackendUnavailable):
            await next_message(messages)
        await subscription.close()
        assert await channels_left(redis, "dropped-*") == []  # before: both subscribed again, for good
        await backend.close()

    asyncio.run(run())


def test_a_subscription_idle_past_the_pool_s_health_check_subscribes_while_it_is_read(redis_url: str) -> None:
    async def run() -> None:
        backend, redis = await backend_on(redis_url, health_check_interval=1)
        subscription = await backend.subscription()
        messages = subscription.messages()
        reading = asyncio.create_task(next_message(messages, timeout=10))
        await asyncio.sleep(1.3)  # no channel, no traffic: redis-py's health check was due
        await subscription.subscribe(["idle-a"])  # its PING's answer was read here, beside `reading`
        await redis.publish("idle-a", "1")
        assert await reading == "idle-a"
        assert await redis.pubsub_channels("idle-*") == [b"idle-a"]
        await subscription.close()
        await backend.close()

    asyncio.run(run())


def test_a_quiet_subscription_pings_and_one_that_gets_no_pong_ends(redis_url: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import gateway.redis_backend as module

    monkeypatch.setattr(module, "PING_AFTER_S", 0.2)
    monkeypatch.setattr(module, "PONG_TIMEOUT_S", 0.5)

    async def run() -> None:
        backend, redis = await backend_on(redis_url)
        subscription = await backend.subscription()
        messages = subscription.messages()
        await subscription.subscribe(["quiet-a"])
        reading = asyncio.create_task(next_message(messages, timeout=10.0))
        await asyncio.sleep(1.0)  # quiet: PINGs sent and answered, it reads on
        assert not reading.done()
        await redis.client_pause(3000)  # Redis takes no command: the next PING gets no answer
        with pytest.raises(BackendUnavailable):
            await reading
        await redis.client_unpause()
        await subscription.close()
        await backend.close()

    asyncio.run(run())


def test_the_hub_replaces_a_dropped_subscription_and_its_feeds_read_what_was_written_meanwhile(
        redis_url: str) -> None:
    async def run() -> None:
        backend, redis = await backend_on(redis_url)
        hub = Hub(backend, queue_events=16, queue_bytes=1 << 20)
        hub.start()
        for _ in range(200):
            if hub.connected:
                break
            await asyncio.sleep(0.01)
        keys, partition = Keys("iui"), partition_of(SESSION, 4)
        await redis.hset(keys.session(partition, SESSION), mapping={"owner": LIFE.owner, "epoch": LIFE.epoch})
        listener = await hub.join(SESSION, LIFE)
        await redis.client_kill_filter(_type="pubsub")
        # written while no connection listened: no message
        await redis.xadd(keys.frame_log(partition, SESSION), {"frame": '{"seq":1}'})
        entry = await listener.next(5.0)
        assert entry is not None and entry.data == '{"seq":1}'
        assert hub.reconnects == 2
        subscribed = sorted(await redis.pubsub_channels("*hub-drop*"))
        assert subscribed == sorted(c.encode() for c in backend.channels(SESSION))
        hub.leave(listener)
        assert await channels_left(redis, "*hub-drop*") == []
        await hub.stop()
        await backend.close()

    asyncio.run(run())
