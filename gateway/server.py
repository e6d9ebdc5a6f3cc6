"""`iui gateway`: the Redis backend and the application under uvicorn."""

from __future__ import annotations

import asyncio
import logging
import resource
from collections.abc import Callable

import redis.asyncio as aioredis
import uvicorn

from config.settings import Settings
from workers.redisio.connection import TRANSIENT_ERRORS, Backoff

from .app import create_app
from .protocol import uvicorn_protocols
from .redis_backend import RedisBackend

log = logging.getLogger(__name__)
FILES_OF_ITS_OWN = 64  # the listening socket, the pub/sub connection, logs, the interpreter's own


def connection_pool(settings: Settings) -> aioredis.BlockingConnectionPool:
    """A bounded pool whose callers wait for a free connection rather than fail: a burst of streams
    starting at once (a thousand browsers reconnecting after a restart) must not be refused."""
    return aioredis.BlockingConnectionPool.from_url(
        settings.redis_url, max_connections=settings.gateway_redis_connections,
        timeout=settings.gateway_reply_timeout_s, health_check_interval=30, socket_keepalive=True,
        socket_connect_timeout=5)


async def serve(settings: Settings, *, host: str, port: int, announce: Callable[[], None] | None = None) -> None:
    """Serve until SIGINT/SIGTERM (uvicorn's handlers), then close the streams and Redis.

    `announce` is called once Redis has answered, just before the socket is bound.
    """
    raise_file_limit(settings.gateway_max_connections + settings.gateway_redis_connections + FILES_OF_ITS_OWN)
    redis = aioredis.Redis(connection_pool=connection_pool(settings))
    backend = await _backend(redis, settings)
    if announce is not None:
        announce()
    app = create_app(settings=settings, backend=backend)
    config = uvicorn.Config(app, host=host, port=port, log_level=settings.log_level.lower(), access_log=False,
                            proxy_headers=False, server_header=False, date_header=True, timeout_graceful_shutdown=5,
                            lifespan="on", **uvicorn_protocols(header_timeout_s=settings.gateway_header_timeout_s,
                                                               body_timeout_s=settings.gateway_body_timeout_s,
                                                               max_connections=settings.gateway_max_connections,
                                                               refused=app.state.gateway.metrics.refused_by_protocol))
    await uvicorn.Server(config).serve()


def raise_file_limit(wanted: int) -> int | None:
    """Raise this process's soft open-file limit to its hard limit (each client connection is a file,
    and the soft limit is often 1,024); warn when even that is below `wanted`. Returns the limit
    (None: unlimited)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return None
    target = max(soft, wanted) if hard == resource.RLIM_INFINITY else hard
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    if soft < wanted:
        log.warning("gateway: the open-file limit is %d, below the %d its connection limit and Redis pool may "
                    "need: raise the hard limit (ulimit -Hn) or lower IUI_GATEWAY_MAX_CONNECTIONS", soft, wanted)
    return soft


async def _backend(redis: aioredis.Redis, settings: Settings) -> RedisBackend:
    """The backend once Redis answers (a gateway started before its Redis waits for it, as workers do)."""
    backoff = Backoff(first=0.2, limit=5.0)
    while True:
        try:
            return await RedisBackend.of(redis, prefix=settings.key_prefix, partitions=settings.partitions)
        except TRANSIENT_ERRORS as error:
            log.warning("gateway: Redis unavailable (%s); retrying", type(error).__name__)
            await asyncio.sleep(backoff.next())


def run(settings: Settings, *, host: str, port: int, announce: Callable[[], None] | None = None) -> None:
    """Run the gateway in this process (on uvloop, as uvicorn.run would: a third less CPU per request)."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvicorn[standard] brings it
        asyncio.run(serve(settings, host=host, port=port, announce=announce))
        return
    uvloop.run(serve(settings, host=host, port=port, announce=announce))
