"""`iui gateway`: the Redis backend and the application under uvicorn."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
from collections.abc import Callable
from types import FrameType
from typing import Any

import redis.asyncio as aioredis
import uvicorn
from starlette.applications import Starlette

from config.settings import Settings
from workers.redisio.connection import TRANSIENT_ERRORS, Backoff, socket_options

from .app import create_app
from .context import STOP_ANSWER_S, Gateway
from .protocol import uvicorn_protocols
from .redis_backend import RedisBackend
from .stalls import quiet_stalls

log = logging.getLogger(__name__)
FILES_OF_ITS_OWN = 64  # the listening socket, the pub/sub connection, logs, the interpreter's own
UNBOUNDED = 1_000_000_000  # the connection limit of a process whose open files are unlimited


def connection_pool(settings: Settings) -> aioredis.BlockingConnectionPool:
    """A bounded pool whose callers wait for a free connection rather than fail: a burst of streams
    starting at once (a thousand browsers reconnecting after a restart) must not be refused."""
    return aioredis.BlockingConnectionPool.from_url(
        settings.redis_url, max_connections=settings.gateway_redis_connections,
        timeout=settings.gateway_reply_timeout_s, health_check_interval=30, socket_connect_timeout=5,
        **socket_options(settings.redis_url))


async def serve(settings: Settings, *, host: str, port: int, announce: Callable[[int], None] | None = None) -> None:
    """Serve until SIGINT/SIGTERM (uvicorn's handlers), then close the streams and Redis.

    `announce(connection_limit)` is called once Redis has answered and the socket is bound (a
    socket that cannot be is `Unlistenable`, before anything says the gateway serves).
    """
    limit = connection_limit(settings)
    redis = aioredis.Redis(connection_pool=connection_pool(settings))
    backend = await _backend(redis, settings)
    listening = listening_socket(host, port)
    if announce is not None:
        announce(limit)
    app = create_app(settings=settings, backend=backend)
    server = gateway_server(app, settings, limit, host=host, port=port, log_level=settings.log_level.lower(),
                            proxy_headers=False, date_header=True, timeout_graceful_shutdown=5)
    await server.serve(sockets=[listening])


class Unlistenable(Exception):
    """The gateway's address cannot be listened on; `error` says why (the CLI names the setting to blame)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host and port (as uvicorn binds one), or `Unlistenable`."""
    try:
        listening = socket.socket(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0], socket.SOCK_STREAM)
    except OSError as error:
        raise Unlistenable(error) from None
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host, port))
    except OSError as error:
        listening.close()
        raise Unlistenable(error) from None
    return listening


def gateway_server(app: Starlette, settings: Settings, limit: int, **options: Any) -> uvicorn.Server:
    """uvicorn serving the gateway's `app` (`iui gateway`, `iui demo --serve`) with its own HTTP
    protocol (read timeouts, the connection `limit`, the refusals it answers counted) and its open
    connections exported; `options` are the rest of `uvicorn.Config`."""
    metrics = app.state.gateway.metrics
    config = uvicorn.Config(app, access_log=False, server_header=False, lifespan="on", **options,
                            **uvicorn_protocols(header_timeout_s=settings.gateway_header_timeout_s,
                                                body_timeout_s=settings.gateway_body_timeout_s,
                                                send_timeout_s=settings.gateway_send_timeout_s,
                                                max_connections=limit, refused=metrics.refused_by_protocol))
    quiet_stalls()  # after the Config, which configured uvicorn's loggers
    server = GatewayServer(config, app.state.gateway)
    metrics.watch_connections(lambda: len(server.server_state.connections), limit)
    return server


class GatewayServer(uvicorn.Server):
    """uvicorn's server, whose stop also tells the gateway (`Gateway.stop`).

    uvicorn stops by waiting up to its graceful timeout (5 s) for open connections, then cancels
    what is left and answers it a bare 500.  sse-starlette's own watcher cancels the event streams
    within half a second, with no last words.  The signal now ends each stream as its lifetime
    ends (AG-UI's STEP_FINISHED and RUN_FINISHED with the cursor to resume from), and answers a
    request still waiting for its reply 504 `timeout` before the grace runs out."""

    def __init__(self, config: uvicorn.Config, gateway: Gateway) -> None:
        super().__init__(config)
        self._gateway = gateway

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        # A signal handler runs between two steps of the loop's own thread: the close is scheduled,
        # and the thread-safe call wakes the loop's selector.
        with contextlib.suppress(RuntimeError):  # no running loop: nothing streams
            asyncio.get_running_loop().call_soon_threadsafe(self._gateway.stop, self._answer_within_s())

    def _answer_within_s(self) -> float:
        """How long a request waiting for its reply still waits: 2 s before uvicorn's grace ends."""
        grace = self.config.timeout_graceful_shutdown
        return STOP_ANSWER_S if grace is None else min(STOP_ANSWER_S, max(0.5, grace - 2.0))


def connection_limit(settings: Settings) -> int:
    """The client connections the gateway holds: `IUI_GATEWAY_MAX_CONNECTIONS`, or, unset, what the
    open-file limit (raised to the hard one first) leaves after the Redis pool and the process's
    own files; a warning when the configured limit needs more files than the process may open."""
    reserved = settings.gateway_redis_connections + FILES_OF_ITS_OWN
    files = raise_file_limit()
    allowed = None if files is None else files - reserved
    if allowed is not None and allowed < (settings.gateway_max_connections or 1):
        log.warning("gateway: the open-file limit is %d: after the Redis pool and its own files (%d) it leaves "
                    "room for %d client connections; raise the hard limit (ulimit -Hn) or lower "
                    "IUI_GATEWAY_MAX_CONNECTIONS", files, reserved, max(allowed, 0))
    if settings.gateway_max_connections is not None:
        return settings.gateway_max_connections
    return UNBOUNDED if allowed is None else max(allowed, 1)


def raise_file_limit() -> int | None:
    """Raise this process's soft open-file limit to its hard limit (each client connection is a file,
    and the soft limit is often 1,024); the limit now (None: unlimited)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return None
    if hard != resource.RLIM_INFINITY and soft < hard:  # an infinite hard limit: the kernel caps it, leave it
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        return int(hard)
    return int(soft)


async def _backend(redis: aioredis.Redis, settings: Settings) -> RedisBackend:
    """The backend once Redis answers (a gateway started before its Redis waits for it, as workers do)."""
    backoff = Backoff(first=0.2, limit=5.0)
    while True:
        try:
            return await RedisBackend.of(redis, prefix=settings.key_prefix, partitions=settings.partitions)
        except TRANSIENT_ERRORS as error:
            log.warning("gateway: Redis unavailable (%s); retrying", type(error).__name__)
            await asyncio.sleep(backoff.next())


def run(settings: Settings, *, host: str, port: int, announce: Callable[[int], None] | None = None) -> None:
    """Run the gateway in this process (on uvloop, as uvicorn.run would: a third less CPU per request)."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvicorn[standard] brings it
        asyncio.run(serve(settings, host=host, port=port, announce=announce))
        return
    uvloop.run(serve(settings, host=host, port=port, announce=announce))
