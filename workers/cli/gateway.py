"""`iui gateway` (the browser gateway) and `iui token` (a bearer token for a local stack and tests)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from ..redisio.connection import location
from .common import CommandError, _settings, unlistenable

ROLES = ("viewer", "user", "agent", "admin")
MAX_TTL_S = 30 * 86_400


def cmd_gateway(args: argparse.Namespace) -> int:
    """Serve the gateway until SIGINT/SIGTERM."""
    import logging

    from gateway.identity import Verifier
    from gateway.server import Unlistenable, run

    settings = _settings(args)
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        Verifier.of(settings)  # one line now, not a traceback at the first request
    except ValueError as error:
        raise CommandError(str(error), 2) from None
    print(f"iui gateway: waiting for Redis at {location(settings.redis_url)}", file=sys.stderr, flush=True)

    def announce(connection_limit: int) -> None:
        print(f"iui gateway: serving on http://{settings.gateway_host}:{settings.gateway_port} "
              f"(at most {connection_limit:,} client connections)", file=sys.stderr, flush=True)

    try:
        run(settings, host=settings.gateway_host, port=settings.gateway_port, announce=announce)
    except Unlistenable as failure:
        raise unlistenable(args, settings, failure.error, "listen", ("gateway_host", "gateway_port")) from None
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    """Print an HS256 token signed with the gateway's secret (IUI_GATEWAY_JWT_SECRET or its _FILE)."""
    from gateway.identity import hs256_secret, mint

    settings = _settings(args)
    try:
        secret = hs256_secret(settings)  # the bytes `iui gateway` checks tokens with
    except ValueError as error:
        raise CommandError(str(error), 2) from None
    if secret is None:
        raise CommandError("neither IUI_GATEWAY_JWT_SECRET nor IUI_GATEWAY_JWT_SECRET_FILE is set: "
                           "iui token signs with that secret", 2)
    if not 1 <= args.ttl <= MAX_TTL_S:
        raise CommandError(f"--ttl must be 1-{MAX_TTL_S} seconds", 2)
    try:
        token = mint(secret=secret, principal=args.sub, project=args.project, role=args.role, ttl_s=args.ttl,
                     audience=settings.gateway_jwt_audience, issuer=settings.gateway_jwt_issuer)
    except ValueError as error:
        raise CommandError(str(error), 2) from None
    print(token)
    return 0


def add_gateway_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """The `gateway` and `token` subcommands."""
    p = sub.add_parser("gateway", help="run the browser gateway (HTTP + server-sent events)")
    common(p)
    p.add_argument("--host", dest="gateway_host", help="address to listen on (IUI_GATEWAY_HOST, default 127.0.0.1)")
    p.add_argument("--port", dest="gateway_port", type=int, help="port (IUI_GATEWAY_PORT, default 8080)")
    p.add_argument("--log-level", help="DEBUG, INFO, WARNING, ERROR or CRITICAL (IUI_LOG_LEVEL)")
    p.set_defaults(run=cmd_gateway)
    p = sub.add_parser("token", help="print a bearer token signed with IUI_GATEWAY_JWT_SECRET or the file "
                                     "IUI_GATEWAY_JWT_SECRET_FILE (HS256)")
    p.add_argument("--sub", required=True, help="the principal (1-128 printable ASCII, no space, ':', '{' or '}')")
    p.add_argument("--project", required=True, help="the project (same characters)")
    p.add_argument("--role", required=True, choices=ROLES, help="what the token may do")
    p.add_argument("--ttl", type=int, default=3_600, help="seconds until it expires (default 3600)")
    p.set_defaults(run=cmd_token)
