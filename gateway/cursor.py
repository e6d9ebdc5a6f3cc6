"""The event stream's cursor: where a client is in the session's three logs, and in which life.

`v1.<epoch>.<frame-id>.<receipt-id>.<answer-id>`: the stream ids of the last frame, receipt
change and answer event delivered (`0-0` before the first), and the session's epoch (the
Redis time in ms at which its owner was recorded), so a cursor of a session that was deleted
and created again is never read as a position in the new one.  A cursor is the client's own
position: a forged one can only make the gateway send that client other events of a session
it may read, and a malformed one is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

_ID = r"([0-9]{1,20})-([0-9]{1,20})"  # ASCII digits: `\d` also takes other scripts' digits, which int() reads
_CURSOR = re.compile(rf"v1\.([0-9]{{1,20}})\.{_ID}\.{_ID}\.{_ID}")
MAX_CURSOR_CHARS = 256
# Redis stream ids are two unsigned 64-bit numbers, and reading after an id needs one above it.
MAX_NUMBER = 2**64 - 2
LOGS = ("frame", "receipt", "answer")
ZERO = (0, 0)

StreamId = tuple[int, int]


def parse_id(text: str) -> StreamId:
    """A stream id "<ms>-<seq>" as a pair that orders as Redis orders ids (ids Redis returned: a
    client's ids arrive in a cursor, which `Cursor.parse` checks)."""
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


def format_id(stream_id: StreamId) -> str:
    """The "<ms>-<seq>" text of an id."""
    return f"{stream_id[0]}-{stream_id[1]}"


class BadCursor(ValueError):
    """A `Last-Event-ID` that is not a cursor of this gateway (400)."""


@dataclass(frozen=True, slots=True)
class Cursor:
    """An epoch and the last id delivered of each log."""

    epoch: int = 0
    frame: StreamId = ZERO
    receipt: StreamId = ZERO
    answer: StreamId = ZERO

    @classmethod
    def parse(cls, text: object) -> Cursor:
        """The cursor of a `Last-Event-ID`; `BadCursor` for anything else."""
        match = _CURSOR.fullmatch(text) if type(text) is str and len(text) <= MAX_CURSOR_CHARS else None
        n = [int(group) for group in match.groups()] if match is not None else []
        if not n or max(n) > MAX_NUMBER:
            raise BadCursor("Last-Event-ID is not a cursor of this gateway")
        return cls(n[0], (n[1], n[2]), (n[3], n[4]), (n[5], n[6]))

    def text(self) -> str:
        """The `id:` of an event."""
        return (f"v1.{self.epoch}.{format_id(self.frame)}.{format_id(self.receipt)}."
                f"{format_id(self.answer)}")

    def at(self, log: str) -> StreamId:
        """The last delivered id of one log."""
        position: StreamId = getattr(self, log)
        return position

    def after(self, log: str, stream_id: StreamId) -> Cursor:
        """This cursor once the entry `stream_id` of `log` was delivered."""
        if log == "frame":
            return replace(self, frame=stream_id)
        if log == "receipt":
            return replace(self, receipt=stream_id)
        return replace(self, answer=stream_id)

    def is_fresh(self) -> bool:
        """True for a client that has seen nothing yet."""
        return self.frame == self.receipt == self.answer == ZERO
