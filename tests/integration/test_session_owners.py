"""Session ownership: the first identity (principal + project) that reaches a session owns it.

Every later entry with another identity, whatever its kind, is answered `unknown_session`
and changes nothing; entries without an identity (a producer speaking Redis without tenancy)
and job reports (which carry their operation's secret) are not checked.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.integration.conftest import Runtime, cursor_args, example
from workers.sessions.owners import CLAIM_TTL_S

pytestmark = pytest.mark.integration
OPEN, PATCH = "intelligent_ui_open", "intelligent_ui_patch"
ALICE = {"principal": "alice", "project": "demo"}


def send(rt: Runtime, name: str, body: Any, *, kind: str = "tool", call: str | None = None,
         **identity: str) -> dict[str, Any]:
    return rt.client.send(rt.client.entry("s-own", name, body, kind=kind, call=call, **identity), timeout=10)


def test_a_stranger_cannot_call_act_or_read_in_a_session_another_identity_owns(runtime: Runtime) -> None:
    runtime.start()
    opened = send(runtime, OPEN, {"document": example("stream-initial.json")}, call="open-1", **ALICE)
    assert opened["ok"]
    frame = opened["result"]["frame"]
    patch = {**cursor_args(frame), "mutation": example("stream-mutations.json")[0]}
    for stranger in ({"principal": "mallory", "project": "demo"}, {"principal": "alice", "project": "other"}):
        for reply in (send(runtime, PATCH, patch, call="p-1", **stranger),
                      send(runtime, OPEN, {"document": example("stream-initial.json")}, call="open-2", **stranger),
                      send(runtime, "catalog", {}, kind="action", **stranger),
                      send(runtime, "get", {"operationId": "op-x"}, kind="action", **stranger)):
            assert reply["error"] == {"code": "unknown_session", "message": "no such session"}, reply
    assert runtime.log_length("s-own") == 1  # nothing changed
    assert send(runtime, PATCH, patch, call="p-1", **ALICE)["ok"]
    assert send(runtime, "catalog", {}, kind="action", **ALICE)["ok"]


def test_an_entry_without_an_identity_is_not_checked_and_claims_nothing(runtime: Runtime) -> None:
    runtime.start()
    assert send(runtime, OPEN, {"document": example("stream-initial.json")}, call="open-1")["ok"]
    key = runtime.client.keys.session(runtime.client.partition("s-own"), "s-own")
    assert runtime.redis.hget(key, "owner") is None
    assert send(runtime, "catalog", {}, kind="action", **ALICE)["ok"]  # the first identity claims it
    assert runtime.redis.hget(key, "owner") == b"alice demo"
    assert send(runtime, "catalog", {}, kind="action")["ok"]  # the harness still may


def test_principal_without_project_is_a_malformed_entry(runtime: Runtime) -> None:
    runtime.start()
    reply = send(runtime, "catalog", {}, kind="action", principal="alice")
    assert reply["error"]["code"] == "malformed_entry"
    assert runtime.redis.hget(runtime.client.keys.session(runtime.client.partition("s-own"), "s-own"), "owner") is None


def test_a_stranger_s_refused_calls_do_not_keep_a_session_alive(runtime: Runtime) -> None:
    # An audit: each refused call slid the session's expiry, so a stranger who knew a session id kept
    # it alive for ever, past its owner's last call.
    runtime.configure(session_ttl_s=3).start()
    assert send(runtime, OPEN, {"document": example("stream-initial.json")}, call="open-1", **ALICE)["ok"]
    key = runtime.client.keys.session(runtime.client.partition("s-own"), "s-own")
    time.sleep(1.5)
    before = runtime.redis.pttl(key)
    reply = send(runtime, OPEN, {"document": example("stream-initial.json")}, call="open-2",
                 principal="mallory", project="demo")
    assert reply["error"]["code"] == "unknown_session"
    assert 0 < runtime.redis.pttl(key) <= before


def test_an_owner_is_trusted_no_longer_than_its_session_may_live(runtime: Runtime) -> None:
    # An audit (a session TTL under a minute): the worker trusted a cached owner for 60 s, the session
    # expired meanwhile, the owner's next open made the session hash anew without an owner, and the
    # next identity to call took the session with the owner's generations.
    runtime.configure(session_ttl_s=2).start()
    assert send(runtime, OPEN, {"document": example("stream-initial.json")}, call="open-1", **ALICE)["ok"]
    key = runtime.client.keys.session(runtime.client.partition("s-own"), "s-own")
    time.sleep(2.3)
    assert runtime.redis.exists(key) == 0
    assert send(runtime, OPEN, {"document": example("stream-initial.json")}, call="open-2", **ALICE)["ok"]
    assert runtime.redis.hget(key, "owner") == b"alice demo" and runtime.redis.hget(key, "epoch") is not None
    reply = send(runtime, OPEN, {"document": example("stream-initial.json")}, call="open-3",
                 principal="mallory", project="demo")
    assert reply["error"]["code"] == "unknown_session"


def test_a_session_whose_every_call_was_refused_lives_only_as_long_as_its_claim(runtime: Runtime) -> None:
    # An audit: a first call refused (an invalid document) recorded its owner for the session's whole
    # TTL (7 days by default), and each refused call slid it again: an agent's token left a key a
    # week for every session id it tried.  A claim alone lives CLAIM_TTL_S past its last owner check.
    runtime.configure(session_ttl_s=3600).start()
    key = runtime.client.keys.session(runtime.client.partition("s-own"), "s-own")
    claim_ms = CLAIM_TTL_S * 1000
    for call in ("open-1", "open-2"):
        refused = send(runtime, OPEN, {"document": {"version": "nope"}}, call=call, **ALICE)
        assert refused["error"]["code"] == "invalid_document", refused
        assert runtime.redis.hget(key, "owner") == b"alice demo"  # claimed: another identity is refused meanwhile
        assert 0 < runtime.redis.pttl(key) <= claim_ms
    stranger = send(runtime, OPEN, {"document": example("stream-initial.json")}, call="open-x",
                    principal="mallory", project="demo")
    assert stranger["error"]["code"] == "unknown_session"
    opened = send(runtime, OPEN, {"document": example("stream-initial.json")}, call="open-3", **ALICE)
    assert opened["ok"], opened
    assert runtime.redis.pttl(key) > claim_ms  # the first accepted call gives it the session's TTL
    refused = send(runtime, OPEN, {"document": {"version": "nope"}}, call="open-4", **ALICE)
    assert refused["error"]["code"] == "invalid_document"
    assert runtime.redis.pttl(key) > 3_500_000  # a session with content slides on its refusals as before


def test_a_claim_with_content_in_its_other_keys_is_not_cut_short(runtime: Runtime) -> None:
    # A session whose accepted calls wrote only its action keys (a catalog read writes nothing; a
    # reserve writes the operations hash) keeps its owner as long as that content.
    runtime.configure(session_ttl_s=3600).start()
    key = runtime.client.keys.session(runtime.client.partition("s-own"), "s-own")
    other = runtime.client.keys.operations(runtime.client.partition("s-own"), "s-own")
    runtime.redis.hset(other, "req:r-1", "op-1")  # content of the session, as an accepted reserve leaves it
    runtime.redis.pexpire(other, 3_600_000)
    assert send(runtime, "catalog", {}, kind="action", **ALICE)["ok"]
    assert runtime.redis.hget(key, "owner") == b"alice demo"
    assert CLAIM_TTL_S * 1000 < runtime.redis.pttl(key) <= 3_600_000
