"""An unexpected error inside a route: a 503 problem that names nothing of the error, counted as 503."""

from __future__ import annotations

import asyncio
from typing import Any

import fakeredis
import httpx
from prometheus_client import CollectorRegistry

from config.settings import Settings
from gateway.app import create_app
from gateway.backend import SessionInfo
from gateway.identity import Verifier, mint
from gateway.redis_backend import RedisBackend

SECRET = b"secret-of-the-internal-error-test-0123456789"
SESSION = "s-internal"


class Broken(RedisBackend):
    """A backend whose session lookup fails in a way no handler expects."""

    async def session(self, session: str) -> SessionInfo | None:
        raise RuntimeError("private detail: key iui:secret")


async def _get(path: str) -> tuple[httpx.Response, CollectorRegistry]:
    settings = Settings()
    backend = await Broken.of(fakeredis.FakeAsyncRedis(), prefix=settings.key_prefix,
                              partitions=settings.partitions)
    registry = CollectorRegistry()
    verifier = Verifier(audience=settings.gateway_jwt_audience, issuer=settings.gateway_jwt_issuer, secret=SECRET)
    app = create_app(settings=settings, backend=backend, registry=registry, verifier=verifier)
    token = mint(secret=SECRET, principal="alice", project="demo", role="user", ttl_s=60,
                 audience=settings.gateway_jwt_audience, issuer=settings.gateway_jwt_issuer)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
        response = await client.get(path, headers={"authorization": f"Bearer {token}"})
    return response, registry


def _count(registry: CollectorRegistry, **labels: Any) -> float:
    value = registry.get_sample_value("iui_gateway_requests_total", labels)
    return value or 0.0


def test_an_unexpected_error_is_a_503_problem_that_echoes_nothing_and_is_counted_as_503() -> None:
    response, registry = asyncio.run(_get(f"/v1/sessions/{SESSION}/operations"))
    assert response.status_code == 503
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["code"] == "unavailable"
    assert "private" not in response.text and "iui:secret" not in response.text
    route = "/v1/sessions/{session}/operations"
    assert _count(registry, route=route, status="503") == 1
    assert _count(registry, route=route, status="500") == 0


def test_every_route_exports_its_5xx_counts_from_zero() -> None:
    # an audit: a route's first 503 or 504 created its series at 1, which rate() and increase() never see:
    # IUIGatewayErrors missed three 504s of a quiet gateway
    _, registry = asyncio.run(_get(f"/v1/sessions/{SESSION}/operations"))
    for route in ("/v1/sessions/{session}/calls", "/v1/sessions/{session}/events", "/readyz",
                  "/v1/sessions/{session}/operations/{operation}/confirm"):
        for status in ("503", "504"):
            assert registry.get_sample_value("iui_gateway_requests_total", {"route": route, "status": status}) == 0
    assert _count(registry, route="/v1/sessions/{session}/operations", status="503") == 1
