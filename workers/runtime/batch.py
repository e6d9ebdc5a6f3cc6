"""The writes of one read batch of a partition, sent to Redis in one pipelined round trip.

The owner decides each entry in order against its cache, which it updates as if every
earlier commit had happened; each queued script still checks the fence and its own CAS
atomically, so an entry whose predecessor failed fails too and is decided again.  A decision
that is not a CAS-protected commit (a rejection, a resend, a plain document) must not rest
on an unconfirmed commit, so it waits until its session's queued commits are confirmed; and
one session's queued commits all concern one UI, so a failure stops the whole chain after it.
"""

from __future__ import annotations

import time

from redis.typing import EncodableT

from ..redisio.client import Reply
from ..redisio.scripts import ScriptBatch, ScriptCall
from ..streams.tools import Decision


class Queued:
    """One entry whose write is queued, with what deciding it again needs.

    A plain class, not a dataclass: one is built per entry, and a dataclass's generated `__init__`
    stays interpreted in the compiled build (docs/decisions.md, "Plain classes")."""

    __slots__ = ("decision", "entry_id", "fields", "outcome", "session", "started")

    def __init__(self, entry_id: str, fields: dict[str, str], session: str, outcome: str,
                 started: float | None = None, decision: Decision | None = None) -> None:
        self.entry_id = entry_id
        self.fields = fields
        self.session = session
        self.outcome = outcome  # the metric outcome when the write succeeds
        self.started = time.perf_counter() if started is None else started
        self.decision = decision  # the tool decision of a commit (its frame is counted, its state cached)


class WriteBatch:
    """Queued script calls of one read batch and the sessions whose commits are unconfirmed."""

    def __init__(self, scripts: ScriptBatch) -> None:
        self._scripts = scripts
        self.queued: list[Queued] = []
        self._chains: dict[str, str] = {}  # session -> the uiId of its unconfirmed commits

    def __len__(self) -> int:
        return len(self.queued)

    def can_queue(self, session: str, ui_id: str | None) -> bool:
        """True if a write of `session` may join the batch: a commit extending the session's
        chain of the same UI (`ui_id`), or any write of a session with nothing unconfirmed."""
        chain = self._chains.get(session)
        return chain is None or (ui_id is not None and chain == ui_id)

    def dirty(self, session: str) -> bool:
        """True while the session has commits in the batch that Redis has not confirmed."""
        return session in self._chains

    def add(self, call: ScriptCall, queued: Queued, *, chain_ui: str | None = None) -> None:
        """Queue a call; a commit (`chain_ui` set) extends its session's chain."""
        self._scripts.add(call)
        self.queued.append(queued)
        if chain_ui is not None:
            self._chains[queued.session] = chain_ui

    def execute(self) -> list[tuple[Queued, BaseException | None]]:
        """Send the queued calls; each entry with None (done) or its `Fenced`/`OutOfOrder`/`StaleCache`.

        When sending fails (a Redis error), the queue and `sessions()` are kept, so the caller
        can drop the optimistic cache of every session whose commit may not have happened.
        """
        return self._settled(self._scripts.execute())

    def commands(self) -> list[tuple[EncodableT, ...]]:
        """The queued calls as commands for a round trip of the caller's (one reply each)."""
        return self._scripts.commands()

    def complete(self, results: list[Reply]) -> list[tuple[Queued, BaseException | None]]:
        """`execute` for calls the caller sent (`commands`): their replies, in order."""
        return self._settled(self._scripts.outcomes(results))

    def _settled(self, outcomes: list[BaseException | None]) -> list[tuple[Queued, BaseException | None]]:
        queued, self.queued, self._chains = self.queued, [], {}
        return list(zip(queued, outcomes, strict=True))

    def sessions(self) -> set[str]:
        """Sessions with unconfirmed commits (their cached state is optimistic)."""
        return set(self._chains)
