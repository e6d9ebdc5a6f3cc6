"""Retention: a session's keys share one sliding expiry; the frame log is capped by count and bytes."""

from __future__ import annotations

import time

import pytest

from tests.integration.conftest import Runtime, cursor_args, example

pytestmark = pytest.mark.integration
SESSION = "session-retention"
PLAIN, OPEN, PATCH = "intelligent_ui", "intelligent_ui_open", "intelligent_ui_patch"


def session_keys(rt: Runtime) -> tuple[str, ...]:
    return rt.client.keys.session_keys(rt.client.partition(SESSION), SESSION)


def ttls(rt: Runtime) -> list[int]:
    """PTTL of every session key (-2: missing, -1: no expiry)."""
    return [rt.redis.pttl(key) for key in session_keys(rt)]


def start_session(rt: Runtime) -> dict:
    assert rt.call(SESSION, PLAIN, {"document": example("compound-interest.json")}, call="plain-1")["ok"]
    reply = rt.call(SESSION, OPEN, {"document": example("stream-initial.json")}, call="open-1")
    assert reply["ok"], reply
    return reply["result"]["frame"]


def retitle(number: int) -> dict:
    return {"type": "update", "nodeId": "summary-card", "props": {"title": f"Summary {number}", "gap": "sm"}}


def test_every_key_of_a_session_expires_after_the_session_ttl(runtime: Runtime) -> None:
    runtime.configure(session_ttl_s=1).start()
    start_session(runtime)
    assert all(0 < ttl <= 1_000 for ttl in ttls(runtime)), ttls(runtime)
    time.sleep(1.3)
    assert runtime.redis.exists(*session_keys(runtime)) == 0


def test_an_accepted_or_rejected_call_slides_the_expiry_of_every_session_key(runtime: Runtime) -> None:
    runtime.configure(session_ttl_s=2).start()
    frame = start_session(runtime)
    time.sleep(1.2)
    assert all(0 < ttl < 1_000 for ttl in ttls(runtime)), ttls(runtime)
    mutation = example("stream-mutations.json")[0]
    assert runtime.call(SESSION, PATCH, {**cursor_args(frame), "mutation": mutation}, call="patch-1")["ok"]
    assert all(ttl > 1_500 for ttl in ttls(runtime)), ttls(runtime)
    time.sleep(1.2)  # past the deadline the open set: the patch moved it
    assert runtime.redis.exists(*session_keys(runtime)) == 4
    stale = runtime.call(SESSION, PATCH, {**cursor_args(frame), "mutation": mutation}, call="patch-2")
    assert stale["error"]["code"] == "cursor_conflict"
    assert all(ttl > 1_500 for ttl in ttls(runtime)), ttls(runtime)
    time.sleep(2.3)
    assert runtime.redis.exists(*session_keys(runtime)) == 0


def test_a_session_ttl_of_zero_never_expires(runtime: Runtime) -> None:
    runtime.configure(session_ttl_s=0).start()
    start_session(runtime)
    assert ttls(runtime) == [-1, -1, -1, -1]


def test_the_frame_log_keeps_exactly_the_newest_frames_within_the_count_cap(runtime: Runtime) -> None:
    runtime.configure(frame_log_max=16).start()
    frame = start_session(runtime)
    for number in range(20):
        reply = runtime.call(SESSION, PATCH, {**cursor_args(frame), "mutation": retitle(number)}, call=f"p{number}")
        assert reply["ok"], reply
        frame = reply["result"]["frame"]
    logged = [f for _, f in runtime.client.frame_log(SESSION)]
    assert len(logged) == 16
    assert logged[-1] == frame
    assert [f["seq"] for f in logged] == list(range(frame["seq"] - 15, frame["seq"] + 1))


def test_the_frame_log_is_capped_by_bytes_and_keeps_the_newest_frame(runtime: Runtime) -> None:
    runtime.configure(frame_log_max_bytes=300_000).start()
    document = example("stream-initial.json")
    document["root"]["children"] += [{"id": f"text-{n}", "type": "Text", "props": {"text": "x" * 3_500}}
                                     for n in range(30)]  # frames of about 106 KB
    reply = runtime.call(SESSION, OPEN, {"document": document}, call="open-1")
    assert reply["ok"], reply
    frame = reply["result"]["frame"]
    for number in range(4):
        reply = runtime.call(SESSION, PATCH, {**cursor_args(frame), "mutation": retitle(number)}, call=f"p{number}")
        assert reply["ok"], reply
        frame = reply["result"]["frame"]
    rows = runtime.redis.xrange(runtime.client.keys.frame_log(runtime.client.partition(SESSION), SESSION))
    sizes = [len(fields[b"frame"]) for _, fields in rows]
    assert len(rows) == 2 and sum(sizes) <= 300_000
    assert runtime.client.frame_log(SESSION)[-1][1] == frame
    stored = runtime.redis.hget(runtime.client.keys.session(runtime.client.partition(SESSION), SESSION), "log_bytes")
    assert int(stored) == sum(sizes)


def test_an_expired_session_starts_afresh_although_its_owner_cached_it(runtime: Runtime) -> None:
    runtime.configure(session_ttl_s=1, max_generations_per_session=1).start()
    first = runtime.call(SESSION, OPEN, {"document": example("stream-initial.json")}, call="open-1")
    assert first["ok"] and first["result"]["frame"]["generation"] == 1
    time.sleep(1.3)
    assert runtime.redis.exists(*session_keys(runtime)) == 0
    # Neither call_id_reused from a cached source nor generation_capacity from a cached count.
    again = runtime.call(SESSION, OPEN, {"document": example("stream-initial.json")}, call="open-1")
    assert again["ok"], again
    assert again["result"]["frame"]["generation"] == 1
    assert runtime.generation(SESSION, "sales-report", 1)["seq"] == "1"  # committed, not a cached resend
    second = runtime.call(SESSION, OPEN, {"document": example("stream-initial.json")}, call="open-2")
    assert second["error"]["code"] == "generation_capacity"


def test_every_kind_of_call_slides_the_session_s_action_and_answer_keys_too(runtime: Runtime) -> None:
    # An audit: stream and plain calls slid only the four base keys, so a session kept alive by them
    # lost its operations (their requestId index) and answers first: a retried reserve with the same
    # requestId became a second operation, its capability run twice.
    runtime.configure(session_ttl_s=4).start()
    opened = frame = start_session(runtime)
    partition = runtime.client.partition(SESSION)
    keys = runtime.client.keys
    hashes = (keys.operations(partition, SESSION), keys.answers(partition, SESSION), keys.views(partition, SESSION))
    streams = (keys.receipt_log(partition, SESSION), keys.agent_inbox(partition, SESSION),
               keys.answer_log(partition, SESSION))
    assert set(hashes + streams) == set(keys.action_keys(partition, SESSION) + keys.answer_keys(partition, SESSION))
    for number, kind in enumerate(("patch", "plain", "rejected")):
        for key in hashes:
            runtime.redis.hset(key, "probe", "1")
        for key in streams:
            runtime.redis.xadd(key, {"probe": "1"})
        for key in hashes + streams:
            runtime.redis.pexpire(key, 500)
        if kind == "patch":
            reply = runtime.call(SESSION, PATCH, {**cursor_args(frame), "mutation": retitle(number)}, call="patch-1")
            assert reply["ok"], reply
            frame = reply["result"]["frame"]
        elif kind == "plain":
            assert runtime.call(SESSION, PLAIN, {"document": example("compound-interest.json")}, call="plain-2")["ok"]
        else:
            stale = runtime.call(SESSION, PATCH, {**cursor_args(opened), "mutation": retitle(number)}, call="p-2")
            assert stale["error"]["code"] == "cursor_conflict"
        ttls = [runtime.redis.pttl(key) for key in hashes + streams]
        assert all(ttl > 3_000 for ttl in ttls), (kind, ttls)
