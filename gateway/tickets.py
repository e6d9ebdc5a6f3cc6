"""EventSource tickets: a browser's `EventSource` cannot send headers, and a long-lived token
must never appear in a URL, so a page trades its token for a ticket first.

A ticket opens one event stream of one session, once, within `IUI_GATEWAY_TICKET_TTL_S`
(at most 60 s).  Redis keeps only the SHA-256 of its secret (`{prefix}:gw:ticket:<digest>`)
with the identity it stands for, and `GETDEL` takes it, so it works once across every
gateway replica.
"""

from __future__ import annotations

import hashlib
import re
import secrets

import orjson

from .backend import Backend
from .identity import Identity, Unauthorized

_TICKET = re.compile(r"[A-Za-z0-9_\-]{43}")  # token_urlsafe(32)


def _digest(ticket: str) -> str:
    return hashlib.sha256(ticket.encode("ascii")).hexdigest()


class Tickets:
    """Issues and redeems tickets through the backend."""

    def __init__(self, backend: Backend, ttl_s: int) -> None:
        self._backend = backend
        self.ttl_s = ttl_s

    async def issue(self, identity: Identity, session: str) -> str:
        """A new ticket for `identity` on `session`."""
        ticket = secrets.token_urlsafe(32)
        payload = orjson.dumps({"principal": identity.principal, "project": identity.project, "role": identity.role,
                                "session": session}).decode()
        await self._backend.put_ticket(_digest(ticket), payload, self.ttl_s)
        return ticket

    async def redeem(self, ticket: object, session: str) -> Identity:
        """The identity a ticket stands for (it is used up), or `Unauthorized`."""
        if type(ticket) is not str or not _TICKET.fullmatch(ticket):
            raise Unauthorized("a valid ticket is required")
        payload = await self._backend.take_ticket(_digest(ticket))
        if payload is None:
            raise Unauthorized("a valid ticket is required")
        try:
            held = orjson.loads(payload)
            if held.get("session") != session:
                raise Unauthorized("a valid ticket is required")
            return Identity(str(held["principal"]), str(held["project"]), str(held["role"]))
        except (orjson.JSONDecodeError, AttributeError, KeyError):  # a stored payload this gateway never wrote
            raise Unauthorized("a valid ticket is required") from None
