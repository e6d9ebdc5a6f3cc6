"""The partition's cache of session owners (`workers/sessions/owners.py`) holds the sessions of the
last minute, at most CAPACITY: an audit found it kept every distinct session a partition saw (up to
65,536 each, ~580 B apiece), past the session cache's budget."""

from __future__ import annotations

from typing import Any

import pytest

from workers.sessions import owners
from workers.sessions.owners import CAPACITY, FRESH_S, SessionOwners
from workers.wire.entry import InputEntry


class Scripts:
    def __init__(self) -> None:
        self.reads = 0

    def owner(self, lease: str, session_key: str, fence: str, identity: str) -> str:
        self.reads += 1
        return identity


def entry(session: str) -> InputEntry:
    return InputEntry(session=session, request="r", kind="tool", name="intelligent_ui_patch", call="c", body="{}",
                      principal="alice", project="demo")


def test_owners_read_a_minute_ago_are_forgotten_as_new_sessions_come(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(owners.time, "monotonic", lambda: clock[0])
    scripts: Any = Scripts()
    cache = SessionOwners(scripts=scripts, lease_key="lease", fence="f")
    for n in range(100):
        cache.check(entry(f"old-{n}"), f"s:old-{n}")
    cache.check(entry("old-0"), "s:old-0")  # within the minute: from the cache
    assert scripts.reads == 100 and len(cache._known) == 100
    clock[0] += FRESH_S
    cache.check(entry("new"), "s:new")
    assert len(cache._known) == 1 and scripts.reads == 101


def test_at_most_capacity_owners_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(owners.time, "monotonic", lambda: 1000.0)
    cache = SessionOwners(scripts=Scripts(), lease_key="lease", fence="f")  # type: ignore[arg-type]
    for n in range(CAPACITY + 10):
        cache.check(entry(f"s{n}"), f"s:s{n}")
    assert len(cache._known) == CAPACITY and "s0" not in cache._known and f"s{CAPACITY + 9}" in cache._known
