"""answer-view-state@1 on a real redis-server: CAS races, idempotent retries, budgets at the
exact byte, receipts, migration, identity, and deletion racing late writes."""

from __future__ import annotations

import copy
import threading
from typing import Any

import pytest

from core import UI_VIEW_STATE_LIMITS, canonical_json_string, view_state_schema_digest
from tests.integration.conftest import Runtime
from workers.answers.runtime import answer_limits
from workers.answers.scripts import AnswerScripts
from workers.answers.views import ViewHandler
from workers.client import AnswerClient
from workers.redisio.keys import GROUP
from workers.redisio.scripts import Scripts
from workers.wire.entry import InputEntry
from workers.wire.errors import StaleCache

pytestmark = pytest.mark.integration
SESSION = "session-views"
MAX_BLOCK_STATE_BYTES = UI_VIEW_STATE_LIMITS["maxBlockStateBytes"]
MAX_SESSION_STATE_BYTES = UI_VIEW_STATE_LIMITS["maxSessionStateBytes"]
MESSAGE = "msg-1"


def view_block(block_id: str = "view", series: tuple[str, ...] = ("J-17", "J-18"), fields: int = 10,
               phase: str = "final") -> dict[str, Any]:
    """A final block with one element of every stateful component."""
    categories = ["01:00", "02:00", "03:00"]
    elements = {
        "root": {"type": "Stack", "props": {}, "children": ["chart", "table", "form", "evidence", "metric"]},
        "chart": {"type": "Chart", "props": {"title": "Pressure", "categories": categories,
                                             "series": [{"name": n, "values": [0.3, 0.29, 0.3]} for n in series]}},
        "table": {"type": "Table", "props": {"columns": ["Time", "MPa"], "rows": [["01:00", 0.3]]}},
        "form": {"type": "FollowUpForm", "props": {"title": "Note", "fields": [
            {"name": f"f{i}", "label": f"Field {i}", "type": "textarea"} for i in range(fields)]}},
        "evidence": {"type": "Evidence", "props": {"items": [
            {"id": "ev-1", "summary": "Reading", "source": "Records", "category": "monitoring"},
            {"id": "ev-2", "summary": "Visit", "source": "Log", "category": "inspection"}]}},
        "metric": {"type": "Metric", "props": {"label": "Pressure", "value": 0.3}},
    }
    return {"version": "answer-ui@1", "block_id": block_id, "phase": phase, "fallback_text": "Pressure view.",
            "spec": {"root": "root", "elements": elements}}


NODES = {
    "chart": {"view": "bar", "hidden_series": ["J-18"], "range": {"start": "01:00", "end": "02:00"},
              "selected_point": {"series": "J-17", "category": "02:00"}, "detail_open": True,
              "table": {"search": "0.3", "sort": {"column": "J-17", "direction": "asc"}, "selection": []}},
    "table": {"search": "01", "sort": {"column": "MPa", "direction": "desc"}, "selection": []},
    "form": {"drafts": {"f0": "valve half open", "f1": ""}},
    "evidence": {"category": "monitoring", "expanded": ["ev-1"]},
}


def client(rt: Runtime, principal: str = "user-1", project: str = "project-1") -> AnswerClient:
    return AnswerClient(client=rt.client, principal=principal, project=project)


def publish(rt: Runtime, *blocks: dict[str, Any], message: str = MESSAGE) -> None:
    for block in blocks:
        assert client(rt).present_answer(SESSION, message, block)["ok"]


def views(rt: Runtime) -> dict[str, str]:
    key = rt.client.keys.views(rt.client.partition(SESSION), SESSION)
    return {k.decode(): v.decode() for k, v in rt.redis.hgetall(key).items()}


def put(rt: Runtime, nodes: Any, revision: int, block: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
    block = block or view_block()
    return client(rt).put(SESSION, MESSAGE, block["block_id"], nodes, expected_revision=revision,
                          schema_digest=view_state_schema_digest(block), **options)


def form_nodes(size: int, fields: int = 10) -> dict[str, Any]:
    """Form drafts whose canonical state is exactly `size` bytes."""
    drafts = {f"f{i}": "" for i in range(fields)}
    base = len(canonical_json_string({"form": {"drafts": drafts}}).encode())
    remaining = size - base
    for i in range(fields):
        take = min(remaining, 4_096)
        drafts[f"f{i}"] = "x" * take
        remaining -= take
    assert remaining == 0
    nodes = {"form": {"drafts": drafts}}
    assert len(canonical_json_string(nodes).encode()) == size
    return nodes


def test_a_block_never_saved_reads_as_an_empty_state_at_revision_zero(runtime: Runtime) -> None:
    runtime.start()
    publish(runtime, view_block())
    reply = client(runtime).get(SESSION, MESSAGE, "view")
    assert reply["result"] == {"version": "answer-view-state@1", "message_id": MESSAGE, "block_id": "view",
                               "revision": 0, "schema_digest": view_state_schema_digest(view_block()), "nodes": {},
                               "migrated": False}


def test_a_put_is_read_back_with_the_next_revision(runtime: Runtime) -> None:
    runtime.start()
    publish(runtime, view_block())
    reply = put(runtime, NODES, 0)
    assert reply["result"]["revision"] == 1 and reply["result"]["migrated"] is False
    read = client(runtime).get(SESSION, MESSAGE, "view")["result"]
    assert (read["revision"], read["nodes"]) == (1, NODES)
    assert views(runtime)["bytes"] == str(len(canonical_json_string(NODES).encode()))


def test_two_writers_racing_on_one_block_one_wins_per_revision_the_other_gets_conflict(runtime: Runtime) -> None:
    runtime.start(2)
    publish(runtime, view_block())
    for revision in range(5):
        replies: list[dict[str, Any]] = []
        nodes = [{"table": {"search": f"w{w}-r{revision}", "selection": []}} for w in range(2)]
        threads = [threading.Thread(target=lambda n=n, r=revision, out=replies: out.append(put(runtime, n, r)))
                   for n in nodes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        winners = [r for r in replies if r["ok"]]
        losers = [r for r in replies if not r["ok"]]
        assert len(winners) == 1 and len(losers) == 1, replies
        assert winners[0]["result"]["revision"] == revision + 1
        conflict = losers[0]["error"]
        assert conflict["code"] == "conflict" and conflict["revision"] == revision + 1
        assert conflict["nodes"] in nodes  # the winner's state
    assert client(runtime).get(SESSION, MESSAGE, "view")["result"]["revision"] == 5


def test_a_retry_with_the_same_request_id_and_content_returns_the_original_result(runtime: Runtime) -> None:
    runtime.start()
    publish(runtime, view_block())
    first = put(runtime, NODES, 0, request_id="click-1")
    second = put(runtime, {"table": {"search": "later", "selection": []}}, 1, request_id="click-2")
    retry = put(runtime, NODES, 0, request_id="click-1")
    assert retry["result"] == first["result"]
    assert client(runtime).get(SESSION, MESSAGE, "view")["result"]["revision"] == second["result"]["revision"] == 2


def test_the_same_request_id_with_other_content_is_rejected_and_changes_nothing(runtime: Runtime) -> None:
    runtime.start()
    publish(runtime, view_block())
    put(runtime, NODES, 0, request_id="click-1")
    before = views(runtime)
    reply = put(runtime, {"table": {"search": "other", "selection": []}}, 1, request_id="click-1")
    assert reply["error"]["code"] == "request_id_reused"
    assert views(runtime) == before


def test_the_receipt_window_keeps_the_last_32_and_the_revision_check_still_protects(runtime: Runtime) -> None:
    runtime.start()
    publish(runtime, view_block())
    for revision in range(33):
        assert put(runtime, {"table": {"search": f"s{revision}", "selection": []}}, revision,
                   request_id=f"req-{revision}")["ok"]
    record = "user-1:project-1:msg-1:view"
    window = views(runtime)[f"rw:{record}"].split()
    assert window == [f"req-{i}" for i in range(1, 33)]
    assert f"rr:{record}:req-0" not in views(runtime)
    expired = put(runtime, {"table": {"search": "s0", "selection": []}}, 0, request_id="req-0")
    assert expired["error"]["code"] == "conflict" and expired["error"]["revision"] == 33
    kept = put(runtime, {"table": {"search": "s1", "selection": []}}, 1, request_id="req-1")
    assert kept["ok"] and kept["result"]["revision"] == 2


def test_a_block_state_of_exactly_32_kib_is_accepted_and_one_byte_more_is_too_large(runtime: Runtime) -> None:
    runtime.start()
    publish(runtime, view_block())
    assert put(runtime, form_nodes(MAX_BLOCK_STATE_BYTES), 0)["ok"]
    before = views(runtime)
    reply = put(runtime, form_nodes(MAX_BLOCK_STATE_BYTES + 1), 1)
    assert reply["error"]["code"] == "too_large"
    assert views(runtime) == before


def test_a_session_of_exactly_1_mib_is_accepted_and_any_byte_more_is_too_large(runtime: Runtime) -> None:
    runtime.start()
    count = MAX_SESSION_STATE_BYTES // MAX_BLOCK_STATE_BYTES  # 32 full blocks
    blocks = [view_block(f"b{i}") for i in range(count + 1)]
    publish(runtime, *blocks)
    for block in blocks[:count]:
        assert put(runtime, form_nodes(MAX_BLOCK_STATE_BYTES), 0, block)["ok"]
    assert views(runtime)["bytes"] == str(MAX_SESSION_STATE_BYTES)
    before = views(runtime)
    reply = put(runtime, {}, 0, blocks[count])  # "{}" is 2 bytes
    assert reply["error"]["code"] == "too_large"
    assert views(runtime) == before
    assert put(runtime, form_nodes(MAX_BLOCK_STATE_BYTES - 2), 1, blocks[0])["ok"]  # shrinking one
    assert put(runtime, {}, 0, blocks[count])["ok"]
    assert views(runtime)["bytes"] == str(MAX_SESSION_STATE_BYTES)


@pytest.mark.parametrize(("nodes", "path"), [
    ({"metric": {}}, "/nodes"),
    ({"nowhere": {}}, "/nodes"),
    ({"table": {"search": "x"}}, "/nodes/table/selection"),
    ({"table": {"selection": [0]}}, "/nodes/table/selection"),
    ({"table": {"selection": [], "raw": "secret"}}, "/nodes/table"),
    ({"table": {"selection": [], "sort": {"column": "Nope", "direction": "asc"}}}, "/nodes/table/sort/column"),
    ({"chart": {"hidden_series": ["J-99"]}}, "/nodes/chart/hidden_series"),
    ({"chart": {"detail_open": True}}, "/nodes/chart/detail_open"),
    ({"chart": {"range": {"start": "03:00", "end": "01:00"}}}, "/nodes/chart/range"),
    ({"form": {"drafts": {"password": "hunter2"}}}, "/nodes/form/drafts"),
    ({"evidence": {"expanded": ["ev-9"]}}, "/nodes/evidence/expanded"),
    ({"evidence": {"category": "finance"}}, "/nodes/evidence/category"),
    ([], "/nodes"),
])
def test_only_the_fields_each_component_allows_are_stored(runtime: Runtime, nodes: Any, path: str) -> None:
    runtime.start()
    publish(runtime, view_block())
    reply = put(runtime, nodes, 0)
    assert reply["error"]["code"] == "invalid_view_state", reply
    assert reply["error"]["issues"][0]["path"] == path
    assert "secret" not in str(reply) and "hunter2" not in str(reply) and "nowhere" not in str(reply)
    assert views(runtime) == {}


def test_process_blocks_and_unknown_blocks_cannot_be_read_or_written(runtime: Runtime) -> None:
    runtime.start()
    process = view_block("working", phase="process")
    publish(runtime, process)
    for reply in (client(runtime).get(SESSION, MESSAGE, "working"), put(runtime, {}, 0, process),
                  client(runtime).get(SESSION, "msg-9", "working"), client(runtime).get(SESSION, MESSAGE, "nope")):
        assert reply["error"]["code"] == "unknown_block", reply
    assert views(runtime) == {}


def test_another_principal_or_project_is_answered_as_if_the_session_did_not_exist(runtime: Runtime) -> None:
    runtime.start()
    publish(runtime, view_block())
    put(runtime, NODES, 0)  # the first request with an identity: user-1 / project-1 own the session
    strangers = [client(runtime, principal="user-2"), client(runtime, project="project-2")]
    for stranger in strangers:
        for reply in (stranger.get(SESSION, MESSAGE, "view"),
                      stranger.put(SESSION, MESSAGE, "view", {}, expected_revision=1,
                                   schema_digest=view_state_schema_digest(view_block())),
                      stranger.delete_session(SESSION)):
            assert reply["error"] == {"code": "unknown_session", "message": "no such session"}, reply
    mine = client(runtime).get(SESSION, MESSAGE, "view")["result"]
    assert (mine["revision"], mine["nodes"]) == (1, NODES)  # nothing changed
    assert runtime.rejections("unknown_session") == 6
    missing = client(runtime, principal="")  # the producer did not set the trusted field
    reply = missing.get(SESSION, MESSAGE, "view")
    assert reply["error"]["code"] == "malformed_entry"


def test_the_first_identity_to_reach_a_session_owns_it(runtime: Runtime) -> None:
    runtime.start()
    first = client(runtime, principal="early").get("fresh", MESSAGE, "view")
    assert first["error"]["code"] == "unknown_block"  # nothing published yet, but the session is early's now
    late = client(runtime).get("fresh", MESSAGE, "view")
    assert late["error"]["code"] == "unknown_session"
    key = runtime.client.keys.session(runtime.client.partition("fresh"), "fresh")
    assert runtime.redis.hget(key, "owner") == b"early project-1"
    assert 0 < runtime.redis.pttl(key) <= runtime.settings.session_ttl_s * 1000  # it expires with the session


def test_a_changed_block_migrates_the_state_keeping_only_compatible_fields(runtime: Runtime) -> None:
    runtime.start()
    old = view_block()
    publish(runtime, old)
    put(runtime, NODES, 0)
    new = view_block(series=("J-17", "J-19"))  # same id in the same open turn: replaced
    new["spec"]["elements"]["form"]["props"]["fields"][1]["type"] = "text"
    new["spec"]["elements"]["evidence"]["props"]["items"].pop(0)
    publish(runtime, new)
    read = client(runtime).get(SESSION, MESSAGE, "view")["result"]
    assert read["migrated"] is True and read["revision"] == 1 and read["schema_digest"] == view_state_schema_digest(new)
    chart = read["nodes"]["chart"]
    assert chart["view"] == "bar" and "hidden_series" not in chart and "sort" not in chart["table"]
    assert chart["range"] == NODES["chart"]["range"] and chart["detail_open"] is True
    assert read["nodes"]["table"] == NODES["table"]
    assert read["nodes"]["form"] == {"drafts": {"f0": "valve half open"}}  # f1 changed type
    assert read["nodes"]["evidence"] == {}  # ev-1 and its category are gone
    stale = put(runtime, NODES, 1, block=old)  # a client that still shows the old block
    assert stale["ok"] and stale["result"]["migrated"] is True
    assert stale["result"]["nodes"] == read["nodes"]
    assert client(runtime).get(SESSION, MESSAGE, "view")["result"]["migrated"] is False


def test_deleting_the_session_leaves_a_tombstone_that_refuses_late_writes(runtime: Runtime) -> None:
    runtime.start()
    publish(runtime, view_block())
    put(runtime, NODES, 0)
    answers = client(runtime)
    deleting = answers.submit_view(SESSION, "delete_session", {})
    late = [answers.submit_view(SESSION, "put", {"message_id": MESSAGE, "block_id": "view", "expected_revision": 1,
                                                 "schema_digest": view_state_schema_digest(view_block()),
                                                 "request_id": "late", "nodes": {}}),
            runtime.client.submit(SESSION, "present_answer", {"message_id": MESSAGE, "block": view_block()})]
    assert runtime.client.reply(SESSION, deleting, timeout=10)["result"] == {"deleted": True}
    for request in late:
        assert runtime.client.reply(SESSION, request, timeout=10)["error"]["code"] == "session_deleted"
    assert views(runtime) == {} and answers.events(SESSION) == []
    assert runtime.redis.exists(runtime.client.keys.tombstone(runtime.client.partition(SESSION), SESSION))
    assert answers.get(SESSION, MESSAGE, "view")["error"]["code"] == "session_deleted"
    assert answers.delete_session(SESSION)["ok"]


def test_a_write_decided_before_the_deletion_is_refused_by_the_script(runtime: Runtime) -> None:
    runtime.start()
    publish(runtime, view_block())
    runtime.stop()  # this test is now the partition's owner
    keys, partition = runtime.client.keys, runtime.client.partition(SESSION)
    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=60_000, frame_log_max=16)
    attempt = scripts.acquire(keys.lease(partition), keys.epoch(partition), "test", 60_000)
    answer_scripts = AnswerScripts(redis=runtime.redis, group=GROUP, limits=answer_limits(runtime.settings))
    entry = InputEntry(session=SESSION, request="late", kind="view", name="put", call="late", body="{}",
                       principal="user-1", project="project-1")
    body = {"message_id": MESSAGE, "block_id": "view", "schema_digest": view_state_schema_digest(view_block()),
            "expected_revision": 0, "request_id": "late", "nodes": copy.deepcopy(NODES)}
    decision = ViewHandler(redis=runtime.redis, keys=keys, partition=partition).decide(entry, body)
    assert decision.put is not None
    answer_scripts.view_delete(keys.lease(partition), keys.input(partition), attempt.fence, "0-1",
                               keys.tombstone(partition, SESSION), keys.reply(partition, SESSION, "delete"),
                               keys.answer_keys(partition, SESSION), 1, '{"ok":true}')
    with pytest.raises(StaleCache):
        answer_scripts.view_put(keys.lease(partition), keys.input(partition), attempt.fence, "0-2", decision.put)
    assert views(runtime) == {}
    assert not runtime.redis.exists(keys.answers(partition, SESSION))


def test_a_stale_expected_revision_is_refused_by_the_script_itself(runtime: Runtime) -> None:
    runtime.start()
    publish(runtime, view_block())
    runtime.stop()
    keys, partition = runtime.client.keys, runtime.client.partition(SESSION)
    scripts = Scripts(redis=runtime.redis, group=GROUP, reply_ttl_ms=60_000, frame_log_max=16)
    fence = scripts.acquire(keys.lease(partition), keys.epoch(partition), "test", 60_000).fence
    answer_scripts = AnswerScripts(redis=runtime.redis, group=GROUP, limits=answer_limits(runtime.settings))
    handler = ViewHandler(redis=runtime.redis, keys=keys, partition=partition)
    entries = [InputEntry(session=SESSION, request=f"r{i}", kind="view", name="put", call=f"r{i}", body="{}",
                          principal="user-1", project="project-1") for i in range(2)]
    bodies = [{"message_id": MESSAGE, "block_id": "view", "schema_digest": view_state_schema_digest(view_block()),
               "expected_revision": 0, "request_id": f"r{i}", "nodes": {"table": {"search": str(i), "selection": []}}}
              for i in range(2)]
    # Both decisions read revision 0 before either is written.
    plans = [handler.decide(entry, body).put for entry, body in zip(entries, bodies, strict=True)]
    assert plans[0] is not None and plans[1] is not None
    assert answer_scripts.view_put(keys.lease(partition), keys.input(partition), fence, "0-1", plans[0]) == 1
    before = views(runtime)
    with pytest.raises(StaleCache):
        answer_scripts.view_put(keys.lease(partition), keys.input(partition), fence, "0-2", plans[1])
    assert views(runtime) == before


def test_expected_revision_is_a_json_integer_an_integral_float_included(runtime: Runtime) -> None:
    # JSON 0.0 is the JavaScript number 0: accepted as 0 is, as the stream tools accept integral numbers;
    # a fraction, a negative number, a boolean or a string is refused, nothing written.
    runtime.start()
    publish(runtime, view_block())
    for bad in (0.5, -1, True, "0", None, -0.5):
        refused = put(runtime, NODES, bad)  # type: ignore[arg-type]
        assert refused["error"]["code"] == "invalid_request", bad
        assert refused["error"]["message"] == "field 'expected_revision' must be an integer >= 0"
    assert views(runtime) == {}
    first = put(runtime, NODES, 0.0)  # type: ignore[arg-type]
    assert first["ok"] and first["result"]["revision"] == 1, first
    second = put(runtime, NODES, 1.0)  # type: ignore[arg-type]
    assert second["ok"] and second["result"]["revision"] == 2, second
