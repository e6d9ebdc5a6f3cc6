"""The gateway's ASGI application: routes, error responses, security headers, CORS, metrics.

`create_app(settings=..., backend=...)` builds it around any `Backend`; `gateway.server`
builds the Redis one and runs it under uvicorn (`iui gateway`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from prometheus_client import CollectorRegistry
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from config.settings import Settings, origins_of

from .backend import UNAVAILABLE, Backend
from .context import Gateway
from .headers import Cors, SecurityHeaders
from .heap import keep_heap
from .hub import Hub
from .identity import Forbidden, Unauthorized, Verifier
from .metrics import REFUSED_CODES, GatewayMetrics
from .problems import Problem
from .routes import agui, events, health, operations, sessions, view_state, web
from .tickets import Tickets

REQUEST_HEADERS = ["authorization", "content-type", "idempotency-key", "if-match", "last-event-id"]


def routes() -> list[Route | Mount]:
    """Every route of the gateway."""
    session = "/v1/sessions/{session}"
    operation = session + "/operations/{operation}"
    state = session + "/messages/{message}/blocks/{block}/state"
    return [
        Route(session + "/events", events.events, methods=["GET"]),
        Route(session + "/ag-ui", agui.stream, methods=["GET", "POST"]),
        Route(session + "/tickets", sessions.ticket, methods=["POST"]),
        Route(session + "/calls", sessions.call, methods=["POST"]),
        Route(session, sessions.delete, methods=["DELETE"]),
        Route(session + "/operations", operations.reserve, methods=["POST"]),
        Route(session + "/operations", operations.listing, methods=["GET"]),
        Route(operation, operations.read, methods=["GET"]),
        Route(operation + "/confirm", operations.confirm, methods=["POST"]),
        Route(operation + "/cancel", operations.cancel, methods=["POST"]),
        Route(state, view_state.read, methods=["GET"]),
        Route(state, view_state.write, methods=["PUT"]),
        Route("/v1/catalog", operations.catalog, methods=["GET"]),
        Route("/healthz", health.healthz, methods=["GET"]),
        Route("/readyz", health.readyz, methods=["GET"]),
        Route("/metrics", health.metrics, methods=["GET"]),
        Route("/app", web.page, methods=["GET"]),
        Route("/app/", web.page, methods=["GET"]),
        Route("/app/s/{session}", web.page, methods=["GET"]),
        Mount("/app/static", app=web.static_files()),
    ]


def create_app(*, settings: Settings, backend: Backend, registry: CollectorRegistry | None = None,
               verifier: Verifier | None = None) -> Starlette:
    """The gateway application on `backend` (ValueError with one line for unusable settings)."""
    metrics = GatewayMetrics(registry=registry or CollectorRegistry())
    hub = Hub(backend, queue_events=settings.gateway_queue_events, queue_bytes=settings.gateway_queue_bytes,
              on_connect=metrics.reconnects.inc)
    gateway = Gateway(settings=settings, backend=backend, hub=hub, verifier=verifier or Verifier.of(settings),
                      tickets=Tickets(backend, settings.gateway_ticket_ttl_s), metrics=metrics)
    origins = origins_of(settings.gateway_origins)  # checked exact by the settings

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub.start()
        heap = asyncio.create_task(keep_heap(settings.gc_freeze_s, lambda: hub.left, metrics.full_collections.observe),
                                   name="iui-heap")
        try:
            yield
        finally:
            heap.cancel()
            await hub.stop()
            await backend.close()

    middleware = [Middleware(SecurityHeaders), Middleware(RequestMetrics, metrics=metrics), Middleware(EncodedSlashes)]
    if origins:
        middleware.insert(1, Middleware(Cors, allow_origins=origins, allow_credentials=False,
                                        allow_methods=["GET", "POST", "PUT", "DELETE"],
                                        allow_headers=REQUEST_HEADERS, expose_headers=["etag", "retry-after"],
                                        max_age=600))
    app = Starlette(routes=routes(), middleware=middleware, lifespan=lifespan,
                    exception_handlers={Problem: _problem, Unauthorized: _unauthorized, Forbidden: _forbidden,
                                        HTTPException: _http, **dict.fromkeys(UNAVAILABLE, _unavailable),
                                        Exception: _internal})
    app.router.redirect_slashes = False  # its redirect would repeat the path and Host header in `Location`
    metrics.declare_routes(route.path for route in app.router.routes if isinstance(route, Route))
    app.state.gateway = gateway
    return app


async def _problem(request: Request, error: Exception) -> Response:
    assert isinstance(error, Problem)
    if error.code in REFUSED_CODES:
        request.app.state.gateway.metrics.refused.labels(error.code).inc()
    return error.response()


async def _unauthorized(request: Request, error: Exception) -> Response:
    request.app.state.gateway.metrics.refused.labels("unauthorized").inc()
    return Problem("unauthorized", "a valid bearer token (or ticket) is required",
                   headers={"www-authenticate": 'Bearer realm="iui"'}).response()


async def _forbidden(request: Request, error: Exception) -> Response:
    request.app.state.gateway.metrics.refused.labels("forbidden").inc()
    return Problem("forbidden", "the token's role may not do this").response()


async def _http(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "bad_request")
    headers = {"allow": _allowed(request, error)} if error.status_code == 405 else None
    return Problem(code, "no such resource" if error.status_code == 404 else "not allowed here",
                   headers=headers).response()


def _allowed(request: Request, error: HTTPException) -> str:
    """The `Allow` of a 405 (RFC 9110 requires it): the methods of every route of the path, where
    Starlette names only the first route's (`/operations` has one route for GET, one for POST)."""
    methods = {method for route in request.app.router.routes if isinstance(route, Route)
               and route.methods and route.matches(request.scope)[0] is not Match.NONE for method in route.methods}
    return ", ".join(sorted(methods)) if methods else (error.headers or {}).get("Allow", "GET, HEAD")


async def _unavailable(request: Request, error: Exception) -> Response:
    return Problem("unavailable", "Redis is unavailable; retry later", headers={"retry-after": "1"}).response()


def _internal_problem() -> Problem:
    return Problem("unavailable", "the gateway could not answer this request")


async def _internal(request: Request, error: Exception) -> Response:
    return _internal_problem().response()


class RequestMetrics:
    """ASGI middleware counting requests by route template and status, and timing them (not streams)."""

    def __init__(self, app: ASGIApp, *, metrics: GatewayMetrics) -> None:
        self._app = app
        self._metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started, status = time.perf_counter(), [500]

        async def counted(message: Any) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            await self._app(scope, receive, counted)
        except Exception:
            # The outermost error middleware answers with `_internal` after this one has
            # seen the exception: count the status the client is given, not a 500.
            if status[0] == 500:
                status[0] = _internal_problem().status
            raise
        finally:
            route = _route(scope)
            self._metrics.requests.labels(route, str(status[0])).inc()
            if not route.endswith(("/events", "/ag-ui")):
                self._metrics.latency.labels(route).observe(time.perf_counter() - started)


class EncodedSlashes:
    """ASGI middleware: a path whose raw form encodes a slash (`%2F`) names no route (404).  Starlette
    routes the decoded path, where the encoded slash would act as a real one (`DELETE /v1%2Fsessions%2Fs1`
    served as `DELETE /v1/sessions/s1`), and a proxy or firewall rule matching the raw path would see
    another route than the one served."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and b"%2f" in bytes(scope.get("raw_path") or b"").lower():
            await Problem("not_found", "no such resource").response()(scope, receive, send)
            return
        await self._app(scope, receive, send)


def _route(scope: Scope) -> str:
    """The matched route's template (never the raw path: session ids are not labels)."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return str(path) if path else "unmatched"
