"""Who owns a session: the first principal and project that reach it, and nobody else.

The trusted producer (the browser gateway) sets `principal` and `project` on every entry it
writes, from a verified token.  The partition owner records them as the session's owner
(`owner` in the session hash, `workers/redisio/lua/owner.lua`) before it decides the first entry of the
session that carries them, and refuses an entry with another identity as if the session did
not exist (`unknown_session`; nothing changes).  Entries without an identity come from a
producer that holds Redis credentials and needs no tenancy (an agent harness speaking Redis);
job reports prove themselves with the operation's secret instead.

The partition owner is the session's only writer, so its cache of owners is exact while the
lease lasts and the session lives: an owner is trusted for `FRESH_S`, and never past the time
its session hash could expire (its TTL when read, less `EXPIRY_MARGIN_S` for the commits of the
round still to run).  Trusted past it (a session TTL under a minute), an owner outlived its
session: the next commit made the session hash anew without one, and the next identity to call
took the session and its generations (an audit).

A session holding nothing but its owner record (a claim: every call of it so far was refused,
or only read) expires `CLAIM_TTL_S` after its owner's last check, not a session TTL later: an
audit found that an agent's token left a key for 7 days for every session id whose first call
was refused.  Its first accepted call gives it the session's TTL (the writing scripts' sliding
expiry); refusals do not slide a claim (`reply.lua`).
"""

from __future__ import annotations

import time
from collections import OrderedDict

from ..redisio.scripts import Scripts
from ..wire.entry import InputEntry
from ..wire.errors import ErrorCode, HostError, MalformedEntry

FRESH_S = 60.0  # a cached owner is read again after this long
CLAIM_TTL_S = 300  # a session holding nothing but its owner record expires this long after its owner's last check
EXPIRY_MARGIN_S = 5.0  # a cached owner is read again this long before its session hash could expire
CAPACITY = 4_096  # sessions whose owner a partition remembers (least recently used go first; store.CACHE_SIZE)


class SessionOwners:
    """The owners of one partition's sessions, checked and recorded under one lease."""

    def __init__(self, *, scripts: Scripts, lease_key: str, fence: str) -> None:
        self._scripts = scripts
        self._lease = lease_key
        self._fence = fence
        self._known: OrderedDict[str, tuple[str, float, float]] = OrderedDict()  # session -> (owner, read, until)

    def check(self, entry: InputEntry, session_keys: tuple[str, ...]) -> None:
        """Raise `HostError(unknown_session)` unless the entry's identity owns its session
        (recording it when the session has no owner yet); entries without one pass.
        `session_keys`: the session's `Keys.sliding_keys`, its hash first."""
        if (entry.principal is None and entry.project is None) or entry.kind == "result":
            return
        if entry.principal is None or entry.project is None:
            raise MalformedEntry("entry fields 'principal' and 'project' come together")
        identity = f"{entry.principal} {entry.project}"
        if self._owner(entry.session, session_keys, identity) != identity:
            raise HostError("no such session", code=ErrorCode.UNKNOWN_SESSION)

    def _owner(self, session: str, session_keys: tuple[str, ...], identity: str) -> str:
        now = time.monotonic()
        known = self._known.get(session)
        if known is not None and now < known[2]:
            self._known.move_to_end(session)
            return known[0]
        owner, ttl_ms = self._scripts.owner(self._lease, session_keys, self._fence, identity, CLAIM_TTL_S * 1000)
        trusted = FRESH_S if ttl_ms < 0 else min(FRESH_S, ttl_ms / 1000 - EXPIRY_MARGIN_S)
        self._known[session] = (owner, now, now + trusted)
        self._known.move_to_end(session)
        self._forget_stale(now)
        return owner

    def _forget_stale(self, now: float) -> None:
        """Drop least recently used owners read `FRESH_S` ago (each would be read again anyway) and
        any beyond CAPACITY: the cache holds the sessions of the last minute, not every session the
        partition ever saw (an audit: ~580 B per distinct session, past the session cache's budget)."""
        known = self._known
        while len(known) > CAPACITY or (known and now - next(iter(known.values()))[1] >= FRESH_S):
            known.popitem(last=False)
