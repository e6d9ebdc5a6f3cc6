"""What the gateway's alerts read is real: a Redis outage shows on a real `iui gateway`'s /metrics
as 5xx answers (IUIGatewayErrors) and as one more subscription (re)connect once Redis is back
(IUIGatewaySubscriptionFlapping)."""

from __future__ import annotations

import asyncio
import tempfile
import time

import httpx
import pytest
import redis.asyncio as aioredis
from prometheus_client.parser import text_string_to_metric_families

from config.settings import Settings
from gateway.backend import BackendUnavailable
from gateway.redis_backend import RedisBackend
from gateway.server import connection_pool
from tests.gateway.conftest import GatewayProcess, auth
from workers.redisio.local_server import start_redis_server

pytestmark = pytest.mark.integration


def _samples(gateway: GatewayProcess) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(gateway.url + "/metrics", timeout=5).text
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def _reconnects(gateway: GatewayProcess) -> float:
    return _samples(gateway)[("iui_gateway_subscription_reconnects_total", ())]


def _server_errors(gateway: GatewayProcess) -> float:
    return sum(value for (name, labels), value in _samples(gateway).items()
               if name == "iui_gateway_requests_total" and dict(labels)["status"].startswith("5"))


def _wait_ready(gateway: GatewayProcess, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(gateway.url + "/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "the gateway did not become ready again"
        time.sleep(0.1)


def test_a_redis_outage_shows_as_5xx_answers_and_one_more_subscription_connect() -> None:
    with tempfile.TemporaryDirectory() as directory:
        server, port = start_redis_server(directory)
        gateway = GatewayProcess(f"redis://127.0.0.1:{port}/0").start()
        try:
            assert _reconnects(gateway) == 1  # the first subscription counts: (re)established
            before = _server_errors(gateway)  # a /readyz polled before the subscription was up is a 503 too
            server.kill()
            server.wait()
            refused = httpx.post(gateway.url + "/v1/sessions/s1/tickets", headers=auth("viewer"), timeout=30)
            assert refused.status_code == 503
            assert _server_errors(gateway) == before + 1  # what IUIGatewayErrors counts (status=~"5..")
            server, _ = start_redis_server(directory, port=port)
            _wait_ready(gateway)
            assert _reconnects(gateway) == 2
        finally:
            gateway.stop()
            server.kill()
            server.wait()


def test_a_subscription_to_a_redis_that_just_died_is_refused_not_counted() -> None:
    """The pool's idle connection to a server killed a moment ago still takes a write (the peer's
    reset comes later): a subscription that only sent its PING would count a (re)connect that never
    happened, and the hub would count another once Redis is back (a CI run saw 3 for 2)."""
    with tempfile.TemporaryDirectory() as directory:
        server, port = start_redis_server(directory)

        async def scenario() -> None:
            redis = aioredis.Redis(connection_pool=connection_pool(
                Settings(redis_url=f"redis://127.0.0.1:{port}/0")))
            backend = await RedisBackend.of(redis, prefix="iui", partitions=1)
            try:
                assert await backend.ping()  # an idle connection now waits in the pool
                server.kill()  # blocking: the event loop has not seen the connection's end yet
                server.wait()
                with pytest.raises(BackendUnavailable):
                    await backend.subscription()
            finally:
                await backend.close()

        try:
            asyncio.run(scenario())
        finally:
            server.kill()
            server.wait()
