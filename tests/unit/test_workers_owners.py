"""The partition's cache of session owners (`workers/sessions/owners.py`) holds the sessions of the
last minute, at most CAPACITY: an audit found it kept every distinct session a partition saw (up to
65,536 each, ~580 B apiece), past the session cache's budget."""

from __future__ import annotations

from typing import Any

import pytest

from workers.sessions import owners
from workers.sessions.owners import CAPACITY, EXPIRY_MARGIN_S, FRESH_S, SessionOwners
from workers.wire.entry import InputEntry


class Scripts:
    def __init__(self, ttl_ms: int = -1) -> None:
        self.reads = 0
        self.ttl_ms = ttl_ms  # the session hash's PTTL owner.lua answers (-1: no expiry)

    def owner(self, lease: str, session_keys: tuple[str, ...], fence: str, identity: str,
              claim_ttl_ms: int) -> tuple[str, int]:
        self.reads += 1
        return identity, self.ttl_ms


def entry(session: str) -> InputEntry:
    return InputEntry(session=session, request="r", kind="tool", name="intelligent_ui_patch", call="c", body="{}",
                      principal="alice", project="demo")


def test_owners_read_a_minute_ago_are_forgotten_as_new_sessions_come(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(owners.time, "monotonic", lambda: clock[0])
    scripts: Any = Scripts()
    cache = SessionOwners(scripts=scripts, lease_key="lease", fence="f")
    for n in range(100):
        cache.check(entry(f"old-{n}"), (f"s:old-{n}",))
    cache.check(entry("old-0"), ("s:old-0",))  # within the minute: from the cache
    assert scripts.reads == 100 and len(cache._known) == 100
    clock[0] += FRESH_S
    cache.check(entry("new"), ("s:new",))
    assert len(cache._known) == 1 and scripts.reads == 101


def test_at_most_capacity_owners_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(owners.time, "monotonic", lambda: 1000.0)
    cache = SessionOwners(scripts=Scripts(), lease_key="lease", fence="f")  # type: ignore[arg-type]
    for n in range(CAPACITY + 10):
        cache.check(entry(f"s{n}"), (f"s:s{n}",))
    assert len(cache._known) == CAPACITY and "s0" not in cache._known and f"s{CAPACITY + 9}" in cache._known


@pytest.mark.parametrize(("ttl_ms", "trusted_s"), [(-1, FRESH_S), (3_600_000, FRESH_S), (20_000, 20 - EXPIRY_MARGIN_S),
                                                  (4_000, 0.0)])
def test_an_owner_is_trusted_no_longer_than_its_session_hash_may_live(
        monkeypatch: pytest.MonkeyPatch, ttl_ms: int, trusted_s: float) -> None:
    # An audit: an owner trusted past its session's expiry let the next commit make the session hash
    # anew without one, and the next identity take it.
    clock = [1000.0]
    monkeypatch.setattr(owners.time, "monotonic", lambda: clock[0])
    scripts = Scripts(ttl_ms)
    cache = SessionOwners(scripts=scripts, lease_key="lease", fence="f")  # type: ignore[arg-type]
    cache.check(entry("s"), ("s:s",))
    clock[0] += max(trusted_s - 0.01, 0.0)
    cache.check(entry("s"), ("s:s",))
    assert scripts.reads == (1 if trusted_s > 0.01 else 2)
    clock[0] += 0.02
    cache.check(entry("s"), ("s:s",))
    assert scripts.reads == (2 if trusted_s > 0.01 else 3)
