"""Malformed entries, dead letters, fencing and trimming: the partition never blocks."""

from __future__ import annotations

import json
import time

import pytest

from tests.integration.conftest import Runtime, example
from workers.redisio.keys import CONSUMER, GROUP, generation_field, ui_field
from workers.redisio.scripts import Acquired, CommitPlan, LostLease, Renewal, Scripts
from workers.wire.errors import Fenced, StaleCache

pytestmark = pytest.mark.integration
SESSION = "session-entries"


def raw_submit(rt: Runtime, fields: dict, session: str = SESSION, partition: int | None = None) -> None:
    p = rt.client.partition(session) if partition is None else partition
    rt.redis.xadd(rt.client.keys.input(p), fields)


def reply_of(rt: Runtime, request: str, session: str = SESSION, partition: int | None = None) -> dict:
    p = rt.client.partition(session) if partition is None else partition
    popped = rt.redis.blpop([rt.client.keys.reply(p, session, request)], timeout=10)
    assert popped is not None, f"no reply to {request}"
    return json.loads(popped[1])


def fields(request: str, **changes: str) -> dict:
    base = {"session": SESSION, "request": request, "kind": "tool", "name": "intelligent_ui_open",
            "call": f"call-{request}", "body": json.dumps({"document": example("stream-initial.json")})}
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def pending(rt: Runtime, session: str = SESSION) -> int:
    return rt.redis.xpending(rt.client.keys.input(rt.client.partition(session)), GROUP)["pending"]


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"name": None}, "malformed_entry"),
        ({"call": None}, "malformed_entry"),
        ({"body": None}, "malformed_entry"),
        ({"body": "{not json"}, "invalid_json"),
        ({"body": "[1, 2]"}, "invalid_arguments"),
        ({"body": json.dumps({"document": "{}"})}, "invalid_arguments"),
        ({"body": json.dumps({"document": {}, "html": "<b>"})}, "invalid_arguments"),
        ({"name": "intelligent_ui_explode"}, "unknown_tool"),
        ({"kind": "action"}, "unknown_request"),
        ({"kind": "sql"}, "malformed_entry"),
        ({"extra": "field"}, "malformed_entry"),
    ],
)
def test_a_malformed_entry_gets_an_error_reply_and_is_acked(runtime: Runtime, changes: dict, code: str) -> None:
    runtime.start()
    raw_submit(runtime, fields("bad", **changes))
    reply = reply_of(runtime, "bad")
    assert reply == {"ok": False, "request": "bad", "error": reply["error"]}
    assert reply["error"]["code"] == code
    raw_submit(runtime, fields("good"))
    assert reply_of(runtime, "good")["ok"] is True
    assert pending(runtime) == 0


def test_an_oversize_body_is_rejected_before_parsing(runtime: Runtime) -> None:
    runtime.configure(max_document_bytes=1_024).start()
    raw_submit(runtime, fields("big", body='{"document": "' + "x" * 10_000 + '"}'))
    assert reply_of(runtime, "big")["error"]["code"] == "oversize"


def test_an_entry_on_the_wrong_partition_is_answered_on_that_partition(runtime: Runtime) -> None:
    runtime.start()
    wrong = (runtime.client.partition(SESSION) + 1) % runtime.settings.partitions
    raw_submit(runtime, fields("lost"), partition=wrong)
    assert reply_of(runtime, "lost", partition=wrong)["error"]["code"] == "wrong_partition"


def test_an_entry_without_a_reply_address_goes_to_the_dead_letter_stream(runtime: Runtime) -> None:
    runtime.start()
    p = runtime.client.partition(SESSION)
    raw_submit(runtime, {"session": "has:colon", "request": "r1", "kind": "tool"}, partition=p)
    raw_submit(runtime, fields("after"))
    assert reply_of(runtime, "after")["ok"] is True
    dead = runtime.redis.xrange(runtime.client.keys.dead(p))
    assert len(dead) == 1 and dead[0][1][b"reason"] == b"no_reply_address"
    assert runtime.metrics.registry.get_sample_value("iui_dead_lettered_total", {"reason": "no_reply_address"}) == 1


def test_an_entry_delivered_too_often_is_dead_lettered_with_an_error_reply(runtime: Runtime) -> None:
    runtime.configure(dead_letter_after=2)
    p = runtime.client.partition(SESSION)
    stream = runtime.client.keys.input(p)
    runtime.redis.xgroup_create(stream, GROUP, id="0", mkstream=True)
    raw_submit(runtime, fields("poison"))
    for _ in range(2):  # two deliveries that never committed (crashed owners)
        runtime.redis.xreadgroup(GROUP, CONSUMER, {stream: "0" if _ else ">"})
    runtime.start()
    reply = reply_of(runtime, "poison")
    assert reply["error"]["code"] == "dead_letter"
    assert runtime.redis.xlen(runtime.client.keys.dead(p)) == 1
    assert pending(runtime) == 0


def test_a_zombie_owner_cannot_commit_after_a_takeover(runtime: Runtime) -> None:
    keys = runtime.client.keys
    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=1000, frame_log_max=100)
    zombie = scripts.acquire(keys.lease(0), keys.epoch(0), "zombie", 100)
    time.sleep(0.2)  # the zombie stalls past its lease
    successor = scripts.acquire(keys.lease(0), keys.epoch(0), "successor", 10_000)
    assert successor.outcome is Acquired.ACQUIRED and successor.epoch > zombie.epoch
    runtime.redis.xgroup_create(keys.input(0), GROUP, id="0", mkstream=True)
    entry = runtime.redis.xadd(keys.input(0), {"session": "s"}).decode()
    runtime.redis.xreadgroup(GROUP, CONSUMER, {keys.input(0): ">"})
    plan = CommitPlan(session_keys=keys.session_keys(0, "s"), reply_key=keys.reply(0, "s", "r"),
                      expected_seq=0, expected_generation=0, new_generation=1, frame="{}",
                      reply="{}", channel=keys.channel(0, "s"), ui_field="ui:u", field_prefix="u:1:",
                      fields=[("seq", 1)])
    with pytest.raises(Fenced):
        scripts.commit(keys.lease(0), keys.input(0), zombie.fence, entry, plan)
    assert runtime.redis.exists(*keys.session_keys(0, "s"), keys.reply(0, "s", "r")) == 0
    assert runtime.redis.xpending(keys.input(0), GROUP)["pending"] == 1
    assert scripts.renew([(keys.lease(0), zombie.fence, ""), (keys.lease(0), successor.fence, "")],
                         1000) == [LostLease("successor", str(successor.epoch)), Renewal(pending=0)]
    assert not scripts.release(keys.lease(0), zombie.fence)
    scripts.commit(keys.lease(0), keys.input(0), successor.fence, entry, plan)
    assert runtime.redis.xpending(keys.input(0), GROUP)["pending"] == 0


def test_a_mismatched_partition_count_is_refused_and_writes_nothing(runtime: Runtime) -> None:
    from workers.runtime.pool import MetaMismatch, check_meta

    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=1000, frame_log_max=100)
    check_meta(scripts, runtime.client.keys, 4)
    stored = runtime.redis.hgetall(runtime.client.keys.meta)
    with pytest.raises(MetaMismatch, match="partitions=4, configured 8"):
        check_meta(scripts, runtime.client.keys, 8, streaming=False)
    assert runtime.redis.hgetall(runtime.client.keys.meta) == stored  # `streaming` too: still 1


def test_a_stale_cache_is_caught_by_the_commit_cas_and_reloaded(runtime: Runtime) -> None:
    runtime.start()
    open_reply = runtime.client.call(SESSION, "intelligent_ui_open", {"document": example("stream-initial.json")},
                                     call="open-1")
    frame = open_reply["result"]["frame"]
    key = runtime.client.keys.generations(runtime.client.partition(SESSION), SESSION)
    runtime.redis.hset(key, mapping={"sales-report:1:seq": 7, "sales-report:1:revision": 6})  # a foreign write the worker's cache has not seen
    args = {"sourceCallId": "open-1", "generation": 1, "baseRevision": frame["revision"],
            "mutation": example("stream-mutations.json")[0]}
    reply = runtime.client.call(SESSION, "intelligent_ui_patch", args, call="patch-1")
    assert reply["error"]["code"] == "cursor_conflict"
    assert "revision=6 seq=7" in reply["error"]["message"]
    assert runtime.log_length(SESSION) == 1


def test_an_unknown_entry_field_is_refused_without_echoing_its_name(runtime: Runtime) -> None:
    runtime.start()
    raw_submit(runtime, fields("odd", secretfieldname="x"))
    error = reply_of(runtime, "odd")["error"]
    assert error["code"] == "malformed_entry" and "secretfieldname" not in json.dumps(error)


def test_commit_refuses_an_open_beyond_the_generation_capacity(runtime: Runtime) -> None:
    keys, stream = runtime.client.keys, runtime.client.keys.input(0)
    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=1000, frame_log_max=100,
                      max_generations_per_session=2)
    fence = scripts.acquire(keys.lease(0), keys.epoch(0), "capacity", 10_000).fence
    runtime.redis.xgroup_create(stream, GROUP, id="0", mkstream=True)

    def open_ui(ui_id: str) -> None:
        entry = runtime.redis.xadd(stream, {"session": "cap"}).decode()
        runtime.redis.xreadgroup(GROUP, CONSUMER, {stream: ">"})
        plan = CommitPlan(session_keys=keys.session_keys(0, "cap"), reply_key=keys.reply(0, "cap", ui_id),
                          expected_seq=0, expected_generation=0, new_generation=1, frame="{}", reply="{}",
                          channel=keys.channel(0, "cap"), ui_field=ui_field(ui_id),
                          field_prefix=generation_field(ui_id, 1, ""), generations_increment=1, fields=[("seq", 1)])
        scripts.run(scripts.commit_call(keys.lease(0), stream, fence, entry, plan))

    open_ui("a")
    open_ui("b")
    with pytest.raises(StaleCache, match="maximum of generations"):  # decided again, it is refused
        open_ui("c")
    assert runtime.redis.hget(keys.session(0, "cap"), "generations") == b"2"
    assert runtime.redis.hget(keys.session(0, "cap"), ui_field("c")) is None  # nothing written, nothing replaced
    assert runtime.redis.llen(keys.reply(0, "cap", "c")) == 0
