"""What every route shares: the caller's identity, the session check, and one request to the runtime.

Principal and project reach the runtime only from the verified token (`principal` and
`project` entry fields, set here), never from a body or a query.  A session the caller does not
own, whether it belongs to another identity or does not exist, is the same 404.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request

from config.settings import Settings
from workers.wire.entry import dumps, is_request_id, is_session_id

from .backend import UNAVAILABLE, Backend, ReplyTimeout, SessionInfo
from .hub import Hub
from .identity import Forbidden, Identity, Permission, Unauthorized, Verifier
from .metrics import GatewayMetrics
from .problems import Problem, from_reply, not_found
from .tickets import Tickets

BEARER = "bearer "
# A request still waiting for its reply when the gateway stops is answered `timeout` (504) this long
# after the stop, within uvicorn's graceful 5 s (past it uvicorn answers a bare 500 in text/plain);
# a server with a shorter grace answers sooner (`GatewayServer`).
STOP_ANSWER_S = 3.0


@dataclass
class Gateway:
    """The parts of one gateway process."""

    settings: Settings
    backend: Backend
    hub: Hub
    verifier: Verifier
    tickets: Tickets
    metrics: GatewayMetrics
    _answer_s: float | None = None  # once stopping: how long a request still waits for its reply
    _waits: set[asyncio.Timeout] = field(default_factory=set)  # the requests waiting for their replies

    def stop(self, answer_within_s: float = STOP_ANSWER_S) -> None:
        """The process stops (SIGTERM): every event stream ends now (`Hub.close`), and a request
        waiting for its reply waits `answer_within_s` more at most, then is answered 504 `timeout`: a
        retry with its Idempotency-Key, on another replica, gets the same reply, never a second run."""
        self._answer_s = answer_within_s
        self.hub.close()
        by = asyncio.get_running_loop().time() + answer_within_s
        for wait in self._waits:
            when = wait.when()
            if when is None or when > by:
                wait.reschedule(by)

    @contextlib.asynccontextmanager
    async def _until_stopped(self) -> AsyncIterator[None]:
        """The body's wait, cut short `stop()`'s answer time after the stop (asyncio's TimeoutError)."""
        async with asyncio.timeout(self._answer_s) as wait:
            self._waits.add(wait)
            try:
                yield
            finally:
                self._waits.discard(wait)

    def identity(self, request: Request, permission: Permission) -> Identity:
        """The bearer token's identity, holding `permission` (401 / 403 otherwise)."""
        headers = request.headers.getlist("authorization")
        header = headers[0] if len(headers) == 1 else ""  # two: a proxy in front may have read the other
        if not header[: len(BEARER)].lower() == BEARER:
            raise Unauthorized("a bearer token is required")
        identity = self.verifier.verify(header[len(BEARER):].strip())
        identity.require(permission)
        return identity

    async def owned(self, session: str, identity: Identity) -> SessionInfo:
        """The session's owner record when `identity` owns it; the one 404 otherwise.  Every route
        but the agents' calls checks it first: only a call may create (and so claim) a session,
        and a read never tells a missing session from another owner's."""
        info = await self.backend.session(session)
        if info is None or info.owner != identity.owner:
            raise not_found()
        return info

    async def caller(self, request: Request, permission: Permission) -> Caller:
        """The verified caller of a route on an existing session it owns (401, 403, 404 otherwise)."""
        identity = self.identity(request, permission)
        session = session_of(request)
        await self.owned(session, identity)
        return Caller(self, identity, session)

    async def request(self, identity: Identity, session: str, kind: str, name: str, body: Mapping[str, Any], *,
                      call: str | None = None) -> Any:
        """One entry for the runtime with the caller's identity; its result, or the reply's error as a problem.
        The entry's request id, its reply's address, is always a fresh one of the gateway's: no
        other request, of this caller or another, can read that reply or take it away."""
        if await self.backend.lag(session) > self.settings.gateway_max_lag:
            raise Problem("backpressure", "the session's partition is far behind; retry later",
                          headers={"retry-after": "1"})
        request_id = uuid.uuid4().hex
        fields = {"session": session, "request": request_id, "kind": kind, "name": name,
                  "call": call or request_id, "body": dumps(body),
                  "principal": identity.principal, "project": identity.project}
        return await self._send(fields)

    async def anonymous(self, session: str, kind: str, name: str, body: Mapping[str, Any]) -> Any:
        """A request that concerns no session of the caller (the catalog): sent without an identity,
        so it claims nothing."""
        request_id = uuid.uuid4().hex
        return await self._send({"session": session, "request": request_id, "kind": kind, "name": name,
                                 "call": request_id, "body": dumps(body)})

    async def _send(self, fields: dict[str, str]) -> Any:
        try:
            async with self._until_stopped():
                reply = await self.backend.send(fields, self.settings.gateway_reply_timeout_s)
        except (ReplyTimeout, TimeoutError):
            raise Problem("timeout", "the runtime did not answer in time; send the same request again "
                          "(same Idempotency-Key): it is never applied twice") from None
        except UNAVAILABLE:
            raise Problem("unavailable", "Redis is unavailable; retry later", headers={"retry-after": "1"}) from None
        if not reply.get("ok"):
            raise from_reply(reply.get("error") or {})
        return reply.get("result")


@dataclass(frozen=True, slots=True)
class Caller:
    """A verified caller and the session it owns: what a route asks the runtime on its behalf."""

    gateway: Gateway
    identity: Identity
    session: str

    async def ask(self, kind: str, name: str, body: Mapping[str, Any]) -> Any:
        """One entry with the caller's identity; its result (or its error as a problem)."""
        return await self.gateway.request(self.identity, self.session, kind, name, body)


def session_of(request: Request) -> str:
    """The `{session}` path parameter, checked (404 for anything that cannot be a session id)."""
    session = str(request.path_params.get("session", ""))
    if not is_session_id(session):
        raise not_found()
    return session


def path_id(request: Request, name: str) -> str:
    """A message, block or operation id of the path (404 when it cannot be one)."""
    value = str(request.path_params.get(name, ""))
    if not is_session_id(value):
        raise Problem("not_found", f"no such {name.replace('_', ' ')}")
    return value


def idempotency_key(request: Request) -> str | None:
    """The `Idempotency-Key` header (1-128 printable ASCII), or None."""
    key = request.headers.get("idempotency-key")
    if key is None:
        return None
    if not is_request_id(key):
        raise Problem("bad_request", "Idempotency-Key must be 1-128 printable ASCII characters")
    return key


__all__ = ["Caller", "Forbidden", "Gateway", "Identity", "Permission", "Unauthorized", "idempotency_key",
           "path_id", "session_of"]
