"""The gateway's parsers of client input refuse anything else with their own error, whatever its
type: cursors (`BadCursor`) and tickets (`Unauthorized`, also for a stored payload it never wrote)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gateway.cursor import BadCursor, Cursor
from gateway.identity import Unauthorized
from gateway.tickets import Tickets

TICKET = "A" * 43


@pytest.mark.parametrize("text", [None, 5, b"v1.1.0-0.0-0.0-0", ["v1"], "", "v1." + "9" * 30])
def test_anything_but_a_cursor_is_bad_cursor(text: Any) -> None:
    with pytest.raises(BadCursor):
        Cursor.parse(text)


class _Stored:
    """A backend whose one stored ticket payload is `payload`."""

    def __init__(self, payload: bytes | None) -> None:
        self.payload = payload

    async def take_ticket(self, digest: str) -> bytes | None:
        return self.payload


@pytest.mark.parametrize(("ticket", "payload"), [
    (None, b"{}"), (5, b"{}"), (b"A" * 43, b"{}"),
    (TICKET, None), (TICKET, b"[]"), (TICKET, b"not json"), (TICKET, b'{"session": "s1"}'),
    (TICKET, b'{"session": "s2", "principal": "a", "project": "p", "role": "viewer"}'),
])
def test_a_ticket_that_is_not_one_is_unauthorized(ticket: Any, payload: bytes | None) -> None:
    tickets = Tickets(_Stored(payload), 60)  # type: ignore[arg-type]
    with pytest.raises(Unauthorized):
        asyncio.run(tickets.redeem(ticket, "s1"))


def test_a_ticket_it_wrote_is_its_identity() -> None:
    stored = _Stored(b'{"session": "s1", "principal": "a", "project": "p", "role": "viewer"}')
    identity = asyncio.run(Tickets(stored, 60).redeem(TICKET, "s1"))  # type: ignore[arg-type]
    assert (identity.principal, identity.project, identity.role) == ("a", "p", "viewer")
