"""`iui demo --serve`: the demo in one process, followed live in the browser.

The embedded Redis (fakeredis with Lua; `IUI_REDIS_URL` names a real one instead) serves the
worker pools (threads), the capability jobs (the demo's job thread, as `iui demo` runs them)
and the gateway (uvicorn in this process, on a `redis.asyncio` client of the same server).
Tokens are signed with a random secret made for this run and never shown; the one token the
demo mints rides in the viewer URL's fragment (`#token=...`), which browsers never send.  The
demo agent's story (`demo_story`) plays in its session until Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from config.capabilities import load_catalog
from config.settings import Settings

from ..client.client import Client
from ..observability.metrics import Metrics
from .common import CommandError
from .demo import EXAMPLES, _start_pools
from .demo_actions import JobThread
from .demo_story import PRINCIPAL, PROJECT, DemoStory

HOST = "127.0.0.1"  # the demo's token grants its session: it is never served beyond this machine
TOKEN_TTL_S = 24 * 3_600
WORKERS = 2


@dataclass(frozen=True)
class Connections:
    """Clients of one Redis: synchronous ones for the workers, asynchronous ones for the gateway."""

    sync: Callable[[], Any]
    aio: Callable[[], Any]
    where: str


def connections(settings: Settings, embedded: bool) -> Connections:
    """The embedded server (one FakeServer shared by every client), or the configured Redis."""
    if embedded:
        import fakeredis

        server = fakeredis.FakeServer()
        return Connections(lambda: fakeredis.FakeRedis(server=server),
                           lambda: fakeredis.FakeAsyncRedis(server=server),
                           "embedded in-process Redis (fakeredis with Lua)")
    import redis.asyncio as aioredis

    from ..redisio.connection import connect, location

    return Connections(lambda: connect(settings.redis_url), lambda: aioredis.Redis.from_url(settings.redis_url),
                       f"Redis at {location(settings.redis_url)}")


def bind(port: int) -> socket.socket:
    """The listening address, bound before anything starts (one line when it is taken)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as error:
        sock.close()
        raise CommandError(f"cannot listen on {HOST}:{port}: {error.strerror or error}", 2) from None
    return sock


@contextlib.contextmanager
def job_thread(settings: Settings, redis: Any) -> Iterator[Path]:
    """The capability jobs, run in this process under a temporary files root the reader can read."""
    with tempfile.TemporaryDirectory(prefix="iui-demo-files-") as directory:
        root = Path(directory)
        (root / "docs").mkdir()
        (root / "docs" / "CHANGELOG.md").write_text("# Changelog\n\n- 1.1: host actions\n- 1.0: first\n", "utf-8")
        job_settings = settings.model_copy(update={"files_root": root})
        with JobThread(redis=redis, settings=job_settings, catalog=load_catalog(settings.capabilities)):
            yield root


def serve_demo(settings: Settings, *, embedded: bool, port: int, pause: float,
               out: Callable[[str], None] = print, examples: Path = EXAMPLES) -> int:
    """Serve the demo until Ctrl-C (uvicorn re-raises it: the caller's KeyboardInterrupt)."""
    sock = bind(port)
    clients = connections(settings, embedded)
    out(f"iui demo --serve: using {clients.where}; {WORKERS} worker pools, {settings.partitions} partitions")
    pools = _start_pools(settings, clients.sync, Metrics(registry=CollectorRegistry()), WORKERS)
    stop = threading.Event()
    try:
        with job_thread(settings, clients.sync()) as root:
            out(f"files root of the capabilities: {root}")
            client = Client(redis=clients.sync(), prefix=settings.key_prefix, partitions=settings.partitions)
            story = DemoStory(client=client, session=f"demo-{uuid.uuid4().hex[:8]}", examples=examples, pause=pause,
                              out=out, stop=stop)
            story.open()
            asyncio.run(_serve(settings, clients, sock, story, out))
    finally:
        stop.set()
        sock.close()
        for pool, _ in pools:
            pool.stop()
        for _, thread in pools:
            thread.join(timeout=10)
    return 0


async def _serve(settings: Settings, clients: Connections, sock: socket.socket, story: DemoStory,
                 out: Callable[[str], None]) -> None:
    from gateway.app import create_app
    from gateway.identity import Verifier, mint
    from gateway.redis_backend import RedisBackend
    from gateway.server import connection_limit, gateway_server

    secret = secrets.token_bytes(32)  # this run's only signing key: never printed or stored
    verifier = Verifier(audience=settings.gateway_jwt_audience, issuer=settings.gateway_jwt_issuer, secret=secret)
    token = mint(secret=secret, principal=PRINCIPAL, project=PROJECT, role="user", ttl_s=TOKEN_TTL_S,
                 audience=settings.gateway_jwt_audience, issuer=settings.gateway_jwt_issuer)
    backend = await RedisBackend.of(clients.aio(), prefix=settings.key_prefix, partitions=settings.partitions)
    registry = CollectorRegistry()
    app = create_app(settings=settings, backend=backend, registry=registry, verifier=verifier)
    server = gateway_server(app, settings, connection_limit(settings), log_level="warning", timeout_graceful_shutdown=2)
    url = f"http://{HOST}:{sock.getsockname()[1]}/app/s/{story.session}#token={token}"
    threading.Thread(target=_tell, args=(server, registry, story, url, out), name="demo-story", daemon=True).start()
    await server.serve(sockets=[sock])


def _tell(server: Any, registry: CollectorRegistry, story: DemoStory, url: str, out: Callable[[str], None]) -> None:
    """Print the viewer URL once the server listens, then play the story to the page."""
    while not server.started:
        if story.stop.wait(0.05):
            return
    out("open the viewer (the token rides in the URL's fragment, which the browser never sends):")
    out(f"  {url}")
    try:
        story.play(lambda: (registry.get_sample_value("iui_gateway_streams") or 0) >= 1)
    except Exception as error:  # the server keeps serving what the session holds
        out(f"the demo's story stopped: {' '.join(str(error).split()) or type(error).__name__}")
