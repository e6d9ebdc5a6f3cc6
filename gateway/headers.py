"""Security headers on every response, and which origins may call the gateway from a browser.

The page (`/app/`) gets a strict Content-Security-Policy: scripts, styles and connections only
from the gateway itself, no inline script, no framing.  API responses get a policy that allows
nothing at all, and are never cached.  CORS is off unless `IUI_GATEWAY_ORIGINS` names exact
origins (`scheme://host[:port]`): never `*`, never `null`, and no credentials (tokens travel in
the Authorization header, never in cookies).
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .problems import Problem

PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
               "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
               "frame-ancestors 'none'")
API_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
COMMON = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), payment=(), usb=()"),
)
class SecurityHeaders:
    """ASGI middleware adding the security headers (streaming responses included)."""

    def __init__(self, app: ASGIApp, *, page_prefixes: Sequence[str] = ("/app",)) -> None:
        self._app = app
        self._pages = tuple(page_prefixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        page = str(scope.get("path", "")).startswith(self._pages)
        policy = (PAGE_POLICY if page else API_POLICY).encode()

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                headers = [*message.get("headers", []), *(h for h in COMMON if h[0] not in names)]
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", policy))
                if not page and b"cache-control" not in names:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await self._app(scope, receive, with_headers)


class Cors(CORSMiddleware):
    """Starlette's CORS, whose refused preflight is the gateway's `bad_request` problem (Starlette
    answers it in plain text), with the same CORS headers."""

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code < 400:
            return response
        cors = {name: value for name, value in response.headers.items() if name.startswith("access-control-")}
        return Problem("bad_request", "this cross-origin request is not allowed", headers=cors).response()
