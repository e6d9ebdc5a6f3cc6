"""Liveness, readiness and Prometheus metrics (no token: for probes and scrapers)."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.requests import Request
from starlette.responses import Response

from ..context import Gateway
from ..responses import JSONResponse


async def healthz(request: Request) -> JSONResponse:
    """GET /healthz: the process answers."""
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> JSONResponse:
    """GET /readyz: Redis answers and the pub/sub subscription is up (503 otherwise)."""
    gateway: Gateway = request.app.state.gateway
    redis = await gateway.backend.ping()
    ready = redis and gateway.hub.connected
    return JSONResponse({"status": "ready" if ready else "unavailable", "redis": redis,
                         "subscription": gateway.hub.connected}, status_code=200 if ready else 503)


async def metrics(request: Request) -> Response:
    """GET /metrics: the Prometheus text exposition."""
    gateway: Gateway = request.app.state.gateway
    return Response(generate_latest(gateway.metrics.registry), media_type=CONTENT_TYPE_LATEST)
