"""Batched writes: one read batch's commits go out in one round trip, still exactly once and in order."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.integration.conftest import Runtime, cursor_args, example
from workers.client import Client
from workers.redisio.connection import RoundTrip
from workers.runtime import pool
from workers.runtime.build import COMPILED
from workers.runtime.dispatcher import Dispatcher
from workers.runtime.partition import PartitionConsumer
from workers.sessions.store import Store
from workers.wire.entry import dumps

# These tests watch the dispatcher's round from inside (they patch its methods): the compiled
# build calls its own methods natively, so a patch changes nothing there.  The pure build runs
# them; the round's code is the same source.
patches_the_round = pytest.mark.skipif(COMPILED, reason="patches the dispatcher's methods, which the compiled "
                                                        "worker calls natively")

pytestmark = pytest.mark.integration
SESSION = "batched"
PATCH = "intelligent_ui_patch"


def _submit_together(client: Client, calls: list[tuple[str, dict[str, Any]]], sessions: list[str] | None = None,
                     ) -> list[str]:
    """XADD several patches in one MULTI, so the owner reads them as one batch (one round)."""
    pipe = client._redis.pipeline(transaction=True)
    requests = []
    for (call, args), session in zip(calls, sessions or [SESSION] * len(calls), strict=True):
        request = f"req-{call}"
        pipe.xadd(client.keys.input(client.partition(session)),
                  {"session": session, "request": request, "kind": "tool", "name": PATCH, "call": call,
                   "body": dumps(args)})
        requests.append(request)
    pipe.execute()
    return requests


def _update(i: int) -> dict[str, Any]:
    return {"type": "update", "nodeId": "summary-card", "props": {"title": f"T{i}", "gap": "sm"}}


def test_a_batch_of_patches_is_applied_in_order_with_one_reply_each(runtime: Runtime) -> None:
    runtime.start()
    frame = runtime.call(SESSION, "intelligent_ui_open", {"document": example("stream-initial.json")},
                         call="open-1")["result"]["frame"]
    calls = [(f"p{i}", {**cursor_args(frame), "baseRevision": i, "mutation": _update(i)}) for i in range(20)]
    calls.append(("late", {**cursor_args(frame), "baseRevision": 3, "mutation": _update(99)}))  # a stale cursor
    replies = [runtime.client.reply(SESSION, r, timeout=10) for r in _submit_together(runtime.client, calls)]
    assert all(reply["ok"] for reply in replies[:20])
    assert [reply["result"]["frame"]["revision"] for reply in replies[:20]] == list(range(1, 21))
    assert replies[20]["error"]["code"] == "cursor_conflict" and "revision=20 seq=21" in replies[20]["error"]["message"]
    assert runtime.log_length(SESSION) == 21


def test_commits_that_fail_their_cas_inside_a_batch_are_decided_again_not_lost(runtime: Runtime) -> None:
    runtime.start()
    frame = runtime.call(SESSION, "intelligent_ui_open", {"document": example("stream-initial.json")},
                         call="open-1")["result"]["frame"]
    key = runtime.client.keys.generations(runtime.client.partition(SESSION), SESSION)
    runtime.redis.hset(key, mapping={"sales-report:1:seq": 7, "sales-report:1:revision": 6})  # unseen by the cache
    calls = [(f"p{i}", {**cursor_args(frame), "baseRevision": i, "mutation": _update(i)}) for i in range(3)]
    calls.append(("behind", {**cursor_args(frame), "baseRevision": 2, "mutation": _update(9)}))
    replies = [runtime.client.reply(SESSION, r, timeout=10) for r in _submit_together(runtime.client, calls)]
    # Decided on the cache, p0..p2 were queued as commits; their CAS failed, so each was decided
    # again on the stored cursor, and so was the rejection that followed them.
    for reply in replies:
        assert reply["error"]["code"] == "cursor_conflict", reply
        assert "revision=6 seq=7" in reply["error"]["message"]
    for request in [f"req-{call}" for call, _ in calls]:
        assert runtime.client.peek_reply(SESSION, request) is None
    assert runtime.log_length(SESSION) == 1


def test_one_round_writes_several_partitions_and_a_failed_cas_in_one_leaves_the_others_alone(
        runtime: Runtime) -> None:
    runtime.start()
    stale, fresh = "round-a", "round-b"
    assert runtime.client.partition(stale) != runtime.client.partition(fresh)
    frames = {s: runtime.call(s, "intelligent_ui_open", {"document": example("stream-initial.json")},
                              call=f"open-{s}")["result"]["frame"] for s in (stale, fresh)}
    key = runtime.client.keys.generations(runtime.client.partition(stale), stale)
    runtime.redis.hset(key, mapping={"sales-report:1:seq": 7, "sales-report:1:revision": 6})  # unseen by the cache
    calls, sessions = [], []
    for i in range(5):
        for s in (stale, fresh):
            calls.append((f"{s}-{i}", {**cursor_args(frames[s]), "baseRevision": i, "mutation": _update(i)}))
            sessions.append(s)
    replies = dict(zip([c for c, _ in calls], (runtime.client.reply(s, r, timeout=10) for s, r in
                                                  zip(sessions, _submit_together(runtime.client, calls, sessions),
                                                      strict=True)), strict=True))
    assert [replies[f"{fresh}-{i}"]["result"]["frame"]["revision"] for i in range(5)] == [1, 2, 3, 4, 5]
    assert all(replies[f"{stale}-{i}"]["error"]["code"] == "cursor_conflict" for i in range(5))
    assert (runtime.log_length(fresh), runtime.log_length(stale)) == (6, 1)
    for call, _ in calls:
        session = stale if call.startswith(stale) else fresh
        assert runtime.client.peek_reply(session, f"req-{call}") is None  # one reply each


def _two_partitions_in_one_round(runtime: Runtime, monkeypatch: pytest.MonkeyPatch,
                                 turn: Any = None) -> list[dict[str, Any]]:
    """While the loop decides a trigger entry, patches of two more partitions arrive, so the next
    round brings both; `turn(taken)` runs before each partition of a round is decided, with the
    (session, request) pairs decided before it in that round.  Returns the two replies."""
    runtime.start()
    trigger, first, second = "overlap-t", "overlap-a", "overlap-b"
    assert len({runtime.client.partition(s) for s in (trigger, first, second)}) == 3
    frames = {s: runtime.call(s, "intelligent_ui_open", {"document": example("stream-initial.json")},
                              call=f"open-{s}")["result"]["frame"] for s in (trigger, first, second)}
    calls = [(f"{s}-1", {**cursor_args(frames[s]), "mutation": _update(1)}) for s in (first, second)]
    requests: list[str] = []
    taken: list[tuple[str, str]] = []
    original, exchange = PartitionConsumer.take, Dispatcher._exchange

    def counted(loop: Dispatcher, readers: Any, *args: Any) -> Any:
        if readers:  # a round's read (not a settle within the round): only its partitions count
            taken.clear()
        return exchange(loop, readers, *args)

    def take(consumer: PartitionConsumer, entries: list[tuple[Any, Any]], *, defer: bool = False) -> Any:
        sessions = [fields[b"session"].decode() for _, fields in entries]
        if trigger in sessions:  # the loop is busy, not blocked: the next read brings both patches
            requests.extend(_submit_together(runtime.client, calls, [first, second]))
        elif turn is not None:
            turn(taken)
        result = original(consumer, entries, defer=defer)
        taken.extend((fields[b"session"].decode(), fields[b"request"].decode()) for _, fields in entries)
        return result

    monkeypatch.setattr(Dispatcher, "_exchange", counted)
    monkeypatch.setattr(PartitionConsumer, "take", take)
    runtime.client.submit(trigger, PATCH, {**cursor_args(frames[trigger]), "mutation": _update(1)}, call="t-1")
    deadline = time.monotonic() + 10
    while len(requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    return [runtime.client.reply(s, r, timeout=10) for s, r in zip((first, second), requests, strict=True)]


@patches_the_round
def test_a_partitions_writes_reach_redis_while_the_next_partition_is_decided(
        runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    # The first partition's commit is sent before the second partition is decided, so it is in
    # Redis (its reply pushed) while the second is being decided.
    seen_during_turn: list[bool] = []

    def turn(taken: list[tuple[str, str]]) -> None:
        for session, request in taken:  # an earlier partition of this round: wait for its commit
            deadline = time.monotonic() + 2
            while runtime.client.peek_reply(session, request) is None and time.monotonic() < deadline:
                time.sleep(0.005)  # no BLPOP meanwhile: it would take the reply the turn looks for
            seen_during_turn.append(runtime.client.peek_reply(session, request) is not None)

    replies = _two_partitions_in_one_round(runtime, monkeypatch, turn)
    assert all(reply["ok"] for reply in replies)
    assert seen_during_turn == [True]


@patches_the_round
def test_each_partitions_writes_go_out_before_the_next_and_the_last_ones_with_the_read(
        runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two partitions with one entry each in one round: the first one's commit goes out in a socket
    # write of its own as soon as it is decided (never held to share a write: its caller would wait
    # for the round's last decision); the last one's rides in one write with the round's read.
    writes: list[bytes] = []
    send = RoundTrip.send

    def recorded(trip: RoundTrip, commands: Any) -> None:
        writes.append(b"".join(c if isinstance(c, bytes) else repr(c).encode() for c in commands))
        send(trip, commands)

    monkeypatch.setattr(RoundTrip, "send", recorded)
    replies = _two_partitions_in_one_round(runtime, monkeypatch)
    assert all(reply["ok"] for reply in replies)
    first, second = b"req-overlap-a-1", b"req-overlap-b-1"  # in their commits' reply keys
    carrying = [w for w in writes if first in w or second in w]
    assert len(carrying) == 2, carrying
    assert [(first in w, second in w) for w in carrying] in ([(True, False), (False, True)],
                                                              [(False, True), (True, False)])  # either first
    assert b"XREADGROUP" not in carrying[0] and b"XREADGROUP" in carrying[1]


def test_a_live_pool_makes_no_cyclic_garbage(runtime: Runtime) -> None:
    """The worker freezes its heap every second (workers.heap): only safe while it makes no cycles."""
    import gc

    runtime.start()
    frame = runtime.call(SESSION, "intelligent_ui_open", {"document": example("stream-initial.json")},
                         call="open-1")["result"]["frame"]
    runtime.call(SESSION, PATCH, {**cursor_args(frame), "mutation": _update(0)}, call="warm")
    gc.collect()
    gc.disable()
    try:
        for i in range(1, 40):
            assert runtime.call(SESSION, PATCH, {**cursor_args(frame), "baseRevision": i, "mutation": _update(i)},
                                call=f"p{i}")["ok"]
            assert not runtime.call(SESSION, PATCH, {**cursor_args(frame), "baseRevision": 0,
                                                     "mutation": _update(i)}, call=f"stale{i}")["ok"]
            assert not runtime.call(SESSION, "no_such_tool", {}, call=f"x{i}")["ok"]
        assert gc.collect() == 0
    finally:
        gc.enable()


@pytest.mark.parametrize("scripts_lost", [False, True])
def test_cold_sessions_read_ahead_and_resumed_make_no_cyclic_garbage(runtime: Runtime, scripts_lost: bool) -> None:
    """The worker also freezes its heap whenever 50,000 young objects accumulate (workers.heap):
    the read-ahead and the resume of cold sessions must make no cycles either, nor the NOSCRIPT
    error replies of a server that lost its scripts (kept among a pipeline's replies)."""
    import gc

    runtime.start()
    sessions = [f"cold-gc-{n}" for n in range(8)]
    frames = [runtime.call(s, "intelligent_ui_open", {"document": example("stream-initial.json")},
                           call="open-1")["result"]["frame"] for s in sessions]
    runtime.stop()
    runtime.start()  # a new pool: every session is cold
    runtime.call("cold-gc-warm-up", "no_such_tool", {}, call="x")
    if scripts_lost:
        runtime.redis.script_flush()  # the read-ahead and the batch's commits come back NOSCRIPT
    gc.collect()
    gc.disable()
    try:
        calls = [(f"p-{s}", {**cursor_args(f), "mutation": _update(1)}) for s, f in zip(sessions, frames, strict=True)]
        calls.append(("unknown", {**cursor_args(frames[0]), "sourceCallId": "never-opened", "mutation": _update(1)}))
        requests = _submit_together(runtime.client, calls, [*sessions, sessions[0]])
        replies = [runtime.client.reply(s, r, timeout=10) for s, r in zip([*sessions, sessions[0]], requests,
                                                                         strict=True)]
        assert [reply["ok"] for reply in replies] == [True] * len(sessions) + [False]
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_batch_after_the_server_lost_its_scripts_is_written_once_each(runtime: Runtime) -> None:
    runtime.start()
    frame = runtime.call(SESSION, "intelligent_ui_open", {"document": example("stream-initial.json")},
                         call="open-1")["result"]["frame"]
    runtime.redis.script_flush()  # what a restart or SCRIPT FLUSH leaves: every EVALSHA fails NOSCRIPT
    calls = [(f"p{i}", {**cursor_args(frame), "baseRevision": i, "mutation": _update(i)}) for i in range(6)]
    replies = [runtime.client.reply(SESSION, r, timeout=10) for r in _submit_together(runtime.client, calls)]
    assert [reply["result"]["frame"]["revision"] for reply in replies] == list(range(1, 7))
    for request in [f"req-{call}" for call, _ in calls]:
        assert runtime.client.peek_reply(SESSION, request) is None
    assert runtime.log_length(SESSION) == 7


@patches_the_round
def test_a_round_that_holds_its_share_of_the_cache_confirms_it_before_deciding_more(
        runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each decided write holds its entry's new state until its reply is settled; a round of many
    # partitions must not hold more than its share of IUI_CACHE_BYTES (a worker with a 128 MiB
    # cache reached 470 MiB this way).  With a 1 KiB share one small-document state is beyond the
    # round's share: the first partition's commit is sent and settled before the second is decided,
    # not only sent.
    monkeypatch.setattr(pool, "HELD_SHARE", 1024)  # the smallest cache (1 MiB) then allows 1 KiB a round
    runtime.configure(cache_bytes=1024 * 1024)
    states: list[tuple[bool, int]] = []

    def turn(taken: list[tuple[str, str]]) -> None:
        loop = runtime.pools[0][0]._dispatcher
        for session, request in taken:
            states.append((runtime.client.peek_reply(session, request) is not None, len(loop._unsettled)))

    replies = _two_partitions_in_one_round(runtime, monkeypatch, turn)
    assert all(reply["ok"] for reply in replies)
    assert states == [(True, 0)]  # committed and settled: the round holds nothing of it any more


@patches_the_round
def test_a_round_of_cold_sessions_sends_every_partitions_reads_before_it_decides_the_first(
        runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that starts with cold sessions queued on several partitions: the round's reads of
    their stored generations all go out before the first partition is decided (Redis runs the
    later ones meanwhile), each partition's read-ahead reads the replies of its own, and every
    call is decided as one by one."""
    runtime.start()
    sessions = [f"cold-prefetch-{n}" for n in range(12)]
    frames = [runtime.call(s, "intelligent_ui_open", {"document": example("stream-initial.json")},
                           call="open-1")["result"]["frame"] for s in sessions]
    runtime.stop()
    events: list[tuple[str, int, bool]] = []
    prefetch, read_ahead = Store.prefetch, Store.read_ahead

    def recorded_prefetch(store: Store, calls: Any, shared: Any = None) -> None:
        calls = list(calls)
        events.append(("prefetch", store._partition, bool(calls)))
        assert shared is not None  # the round's one connection
        prefetch(store, calls, shared)

    def recorded_read_ahead(store: Store, calls: Any) -> None:
        events.append(("read", store._partition, store._sent is not None))
        read_ahead(store, calls)

    monkeypatch.setattr(Store, "prefetch", recorded_prefetch)
    monkeypatch.setattr(Store, "read_ahead", recorded_read_ahead)
    requests = [runtime.client.submit(s, PATCH, {**cursor_args(f), "mutation": _update(1)}, call=f"p-{s}")
                for s, f in zip(sessions, frames, strict=True)]  # queued while no worker runs
    runtime.start()  # a new pool: every session is cold
    replies = [runtime.client.reply(s, r, timeout=10) for s, r in zip(sessions, requests, strict=True)]
    assert [reply["result"]["frame"]["revision"] for reply in replies] == [1] * len(sessions)
    partitions = {runtime.client.partition(s) for s in sessions}
    assert len(partitions) > 1
    prefetched = [(n, p) for n, (kind, p, sent) in enumerate(events) if kind == "prefetch" and sent]
    assert len(prefetched) > 1, events
    first_read = next(n for n, (kind, _, _) in enumerate(events) if kind == "read" and n > prefetched[0][0])
    assert prefetched[1][0] < first_read, events  # two partitions' reads sent before the round's first decision
    for n, partition in prefetched:  # each partition's read-ahead found its reads sent, in the same round
        assert next(e for e in events[n + 1:] if e[1] == partition and e[0] == "read")[2], events
