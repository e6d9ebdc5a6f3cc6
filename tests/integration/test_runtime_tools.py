"""The five UI tools through the real runtime: every rule, every rejection keeps the state."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from core.document.model import parse_document
from core.errors import UISchemaError
from core.json.safe import assert_safe_json
from core.limits import UI_LIMITS
from tests.integration.conftest import Runtime, big_document, cursor_args, example
from workers.redisio.keys import generation_field
from workers.sessions.store import (
    _COMPARED,
    READ_AHEAD_SHARE,
    Generation,
    SharedCache,
    Store,
    call_id_of,
    record_estimate,
)
from workers.streams import tools
from workers.wire.entry import dumps

pytestmark = pytest.mark.integration
SESSION = "session-tools"
OPEN, PATCH = "intelligent_ui_open", "intelligent_ui_patch"
COMPLETE, CANCEL = "intelligent_ui_complete", "intelligent_ui_cancel"


def open_stream(rt: Runtime, call: str = "open-1", session: str = SESSION) -> dict:
    reply = rt.call(session, OPEN, {"document": example("stream-initial.json")}, call=call)
    assert reply["ok"], reply
    return reply["result"]["frame"]


def patch(rt: Runtime, frame: dict, mutation: dict, call: str, session: str = SESSION) -> dict:
    return rt.call(session, PATCH, {**cursor_args(frame), "mutation": mutation}, call=call)


def patch_with_the_examples(rt: Runtime, frame: dict) -> list[dict]:
    """Apply the example mutations in order; the frame of each."""
    frames = []
    for index, mutation in enumerate(example("stream-mutations.json")):
        reply = patch(rt, frame, mutation, f"patch-{index}")
        assert reply["ok"], reply
        frame = reply["result"]["frame"]
        frames.append(frame)
    return frames


def assert_rejected_and_unchanged(rt: Runtime, reply: dict, code: str, before: dict, log: int) -> None:
    assert reply["ok"] is False
    assert reply["error"]["code"] == code
    assert rt.generation(SESSION, "sales-report", int(before["generation"])) == before
    assert rt.log_length(SESSION) == log
    assert rt.rejections(code) >= 1


def test_open_replies_with_the_snapshot_frame_and_a_receipt_naming_the_cursor(runtime: Runtime) -> None:
    runtime.start()
    reply = runtime.call(SESSION, OPEN, {"document": example("stream-initial.json")}, call="open-1")
    frame = reply["result"]["frame"]
    assert (frame["seq"], frame["revision"], frame["baseRevision"], frame["type"]) == (1, 0, None, "snapshot")
    assert frame["sourceCallId"] == "open-1" and frame["generation"] == 1 and frame["uiId"] == "sales-report"
    receipt = reply["result"]["receipt"]
    for part in ("sourceCallId=open-1", "uiId=sales-report", "generation=1", "revision=0", "seq=1", "type=snapshot"):
        assert part in receipt


def test_the_three_example_mutations_and_complete_are_applied_in_order(runtime: Runtime) -> None:
    runtime.start()
    frames = patch_with_the_examples(runtime, open_stream(runtime))
    for index, frame in enumerate(frames):
        assert (frame["seq"], frame["revision"], frame["baseRevision"]) == (index + 2, index + 1, index)
    reply = runtime.call(SESSION, COMPLETE, cursor_args(frames[-1]), call="complete-1")
    done = reply["result"]["frame"]
    assert (done["type"], done["seq"], done["revision"]) == ("complete", 5, 3)
    stored = runtime.generation(SESSION, "sales-report", 1)
    assert stored["status"] == "complete" and stored["seq"] == "5" and stored["frames"] == "5"
    assert runtime.log_length(SESSION) == 5


def test_a_cached_generation_keeps_its_current_frame_not_every_earlier_one(runtime: Runtime) -> None:
    """The worker stores each frame; the state it caches must not keep earlier frames alive
    to hash them (a long generation would hold ~2-8 KiB per patch beyond the cache estimate)."""
    runtime.start()
    frame = patch_with_the_examples(runtime, open_stream(runtime))[-1]
    pool, _ = runtime.pools[0]
    cached = [value for value, _ in pool._cache._entries.values() if getattr(value, "state", None) is not None]
    assert [record.seq for record in cached] == [frame["seq"]]
    assert list(cached[0].state.digests) == [frame["seq"]]


def test_cancel_keeps_the_last_snapshot_and_records_the_status(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime)
    reply = runtime.call(SESSION, CANCEL, cursor_args(frame), call="cancel-1")
    assert reply["result"]["frame"]["type"] == "cancel"
    assert reply["result"]["frame"]["snapshot"] == frame["snapshot"]
    assert runtime.generation(SESSION, "sales-report", 1)["status"] == "cancel"


def plain_store(rt: Runtime) -> Store:
    return Store(redis=rt.redis, keys=rt.client.keys, partition=rt.client.partition(SESSION))


def retitled(title: str) -> dict:
    document = example("compound-interest.json")
    document["title"] = title
    return document


def test_a_plain_intelligent_ui_call_is_stored_as_generation_zero(runtime: Runtime) -> None:
    runtime.start()
    reply = runtime.call(SESSION, "intelligent_ui", {"document": example("compound-interest.json")}, call="plain-1")
    assert reply["ok"], reply
    assert "generation=0 revision=0" in reply["result"]["receipt"]
    ui_id = reply["result"]["document"]["id"]
    assert plain_store(runtime).plain_document(SESSION, "plain-1", ui_id) == reply["result"]["document"]


def test_every_plain_document_of_a_session_is_kept_under_its_native_call_id(runtime: Runtime) -> None:
    runtime.start()
    first = runtime.call(SESSION, "intelligent_ui", {"document": retitled("First")}, call="plain-1")
    second = runtime.call(SESSION, "intelligent_ui", {"document": retitled("Second")}, call="plain-2")
    assert first["ok"] and second["ok"], (first, second)
    ui_id = first["result"]["document"]["id"]
    assert second["result"]["document"]["id"] == ui_id  # same uiId, two documents
    store = plain_store(runtime)
    assert store.plain_document(SESSION, "plain-1", ui_id)["title"] == "First"
    assert store.plain_document(SESSION, "plain-2", ui_id)["title"] == "Second"
    assert store.plain_document(SESSION, "plain-1", "other-ui") is None
    assert store.plain_document(SESSION, "plain-3", ui_id) is None


def test_a_plain_call_id_resent_with_the_same_content_returns_the_stored_document(runtime: Runtime) -> None:
    runtime.start()
    first = runtime.call(SESSION, "intelligent_ui", {"document": retitled("First")}, call="plain-1")
    again = runtime.call(SESSION, "intelligent_ui", {"document": retitled("First")}, call="plain-1")
    assert again == {**first, "request": again["request"]}
    other = runtime.call(SESSION, "intelligent_ui", {"document": retitled("Other")}, call="plain-1")
    assert other["error"]["code"] == "call_id_reused"
    assert plain_store(runtime).plain_document(SESSION, "plain-1", first["result"]["document"]["id"])["title"] == "First"
    assert plain_store(runtime).plain_count(SESSION) == 1


def test_a_call_id_is_either_a_plain_document_or_a_stream_source(runtime: Runtime) -> None:
    runtime.start()
    open_stream(runtime, call="call-1")
    reply = runtime.call(SESSION, "intelligent_ui", {"document": retitled("Plain")}, call="call-1")
    assert reply["error"]["code"] == "call_id_reused"
    assert runtime.call(SESSION, "intelligent_ui", {"document": retitled("Plain")}, call="call-2")["ok"]
    reply = runtime.call(SESSION, OPEN, {"document": example("stream-initial.json")}, call="call-2")
    assert reply["error"]["code"] == "call_id_reused"


def test_a_plain_document_beyond_the_session_capacity_is_rejected_never_overwriting(runtime: Runtime) -> None:
    runtime.configure(max_plain_per_session=2).start()
    for number in (1, 2):
        assert runtime.call(SESSION, "intelligent_ui", {"document": retitled(f"T{number}")}, call=f"plain-{number}")["ok"]
    reply = runtime.call(SESSION, "intelligent_ui", {"document": retitled("T3")}, call="plain-3")
    assert reply["error"]["code"] == "plain_capacity"
    store = plain_store(runtime)
    assert store.plain_count(SESSION) == 2
    assert store.plain_document(SESSION, "plain-3", "compound-interest") is None
    assert store.plain_document(SESSION, "plain-1", "compound-interest")["title"] == "T1"
    # A resend of a stored call is still answered from the store at capacity.
    assert runtime.call(SESSION, "intelligent_ui", {"document": retitled("T2")}, call="plain-2")["ok"]


def test_a_stale_base_revision_is_a_conflict_naming_the_current_cursor(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime)
    mutations = example("stream-mutations.json")
    frame2 = patch(runtime, frame, mutations[0], "patch-1")["result"]["frame"]
    before, log = runtime.generation(SESSION, "sales-report", 1), runtime.log_length(SESSION)
    reply = patch(runtime, frame, mutations[1], "patch-2")  # presents baseRevision 0, current is 1
    assert_rejected_and_unchanged(runtime, reply, "cursor_conflict", before, log)
    assert f"revision={frame2['revision']}" in reply["error"]["message"]
    assert "sourceCallId=open-1" in reply["error"]["message"]


def test_a_wrong_generation_is_a_conflict(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime)
    before, log = runtime.generation(SESSION, "sales-report", 1), runtime.log_length(SESSION)
    reply = patch(runtime, {**frame, "generation": 7}, example("stream-mutations.json")[0], "patch-1")
    assert_rejected_and_unchanged(runtime, reply, "cursor_conflict", before, log)


def test_an_unknown_source_call_id_is_rejected(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime)
    before, log = runtime.generation(SESSION, "sales-report", 1), runtime.log_length(SESSION)
    reply = patch(runtime, {**frame, "sourceCallId": "invented"}, example("stream-mutations.json")[0], "patch-1")
    assert_rejected_and_unchanged(runtime, reply, "unknown_source", before, log)


def test_an_invalid_mutation_is_rejected_with_located_issues(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime)
    before, log = runtime.generation(SESSION, "sales-report", 1), runtime.log_length(SESSION)
    reply = patch(runtime, frame, {"type": "remove", "nodeId": "no-such-node"}, "patch-1")
    assert_rejected_and_unchanged(runtime, reply, "invalid_mutation", before, log)
    assert reply["error"]["issues"] and len(reply["error"]["issues"]) <= 10
    assert all(set(issue) == {"path", "message"} for issue in reply["error"]["issues"])


@pytest.mark.parametrize("mutation", [{"type": "complete"}, {"type": "cancel"},
                                      {"type": "error", "message": "boom"}, {"type": ["add"]}])
def test_a_patch_applies_only_add_update_or_remove(runtime: Runtime, mutation: dict) -> None:
    # seed 001: "允许的 mutation 只有 add、update、remove", and no tool makes an error frame; a
    # patch once ended the stream (complete, cancel) or wrote an `error` frame
    runtime.start()
    frame = open_stream(runtime)
    before, log = runtime.generation(SESSION, "sales-report", 1), runtime.log_length(SESSION)
    reply = patch(runtime, frame, mutation, "patch-1")
    assert_rejected_and_unchanged(runtime, reply, "invalid_mutation", before, log)
    assert reply["error"]["issues"] == [{"path": "/mutation/type", "message": "a patch's mutation is an add, "
                                         "update or remove (end a stream with intelligent_ui_complete or "
                                         "intelligent_ui_cancel)"}]
    assert patch(runtime, frame, example("stream-mutations.json")[0], "patch-2")["ok"]


def test_an_invalid_document_is_rejected_by_open(runtime: Runtime) -> None:
    runtime.start()
    document = example("stream-initial.json")
    document["mode"] = "text"
    reply = runtime.call(SESSION, OPEN, {"document": document}, call="open-1")
    assert reply["error"]["code"] == "invalid_document"
    assert any(issue["path"] == "/mode" for issue in reply["error"]["issues"])
    assert runtime.log_length(SESSION) == 0


def test_an_identical_adjacent_resend_returns_the_stored_result(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime)
    mutation = example("stream-mutations.json")[0]
    first = patch(runtime, frame, mutation, "patch-1")
    again = patch(runtime, frame, mutation, "patch-1")
    assert again["ok"] and again["result"] == first["result"]
    assert runtime.generation(SESSION, "sales-report", 1)["seq"] == "2"
    assert runtime.log_length(SESSION) == 2


def test_an_open_resent_identically_returns_the_same_generation(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime)
    assert open_stream(runtime) == frame
    assert runtime.redis.hget(runtime.client.keys.session(runtime.client.partition(SESSION), SESSION),
                              "generations") == b"1"


def test_the_same_call_id_with_other_content_is_rejected(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime)
    mutations = example("stream-mutations.json")
    patch(runtime, frame, mutations[0], "patch-1")
    before, log = runtime.generation(SESSION, "sales-report", 1), runtime.log_length(SESSION)
    current = {**frame, "revision": 1}
    reply = patch(runtime, current, mutations[1], "patch-1")
    assert_rejected_and_unchanged(runtime, reply, "call_id_reused", before, log)


def test_reusing_an_older_call_id_is_rejected_even_with_the_current_cursor(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime)
    mutations = example("stream-mutations.json")
    frame = patch(runtime, frame, mutations[0], "patch-1")["result"]["frame"]
    frame = patch(runtime, frame, mutations[1], "patch-2")["result"]["frame"]
    before, log = runtime.generation(SESSION, "sales-report", 1), runtime.log_length(SESSION)
    reply = patch(runtime, frame, mutations[0], "patch-1")  # same content as before, not adjacent
    assert_rejected_and_unchanged(runtime, reply, "call_id_reused", before, log)


def test_a_patch_after_complete_is_rejected_as_closed(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime)
    frame = runtime.call(SESSION, COMPLETE, cursor_args(frame), call="complete-1")["result"]["frame"]
    before, log = runtime.generation(SESSION, "sales-report", 1), runtime.log_length(SESSION)
    reply = patch(runtime, frame, example("stream-mutations.json")[0], "patch-1")
    assert_rejected_and_unchanged(runtime, reply, "stream_closed", before, log)


def test_a_second_open_allocates_the_next_generation_and_retires_the_old_cursor(runtime: Runtime) -> None:
    runtime.start()
    first = open_stream(runtime, "open-1")
    second = open_stream(runtime, "open-2")
    assert (second["generation"], second["sourceCallId"]) == (2, "open-2")
    reply = patch(runtime, first, example("stream-mutations.json")[0], "patch-1")
    assert reply["error"]["code"] == "cursor_conflict"
    assert "generation=2" in reply["error"]["message"]
    assert runtime.generation(SESSION, "sales-report", 1)["seq"] == "1"  # the old generation is kept


def test_a_full_session_rejects_new_opens_without_overwriting(runtime: Runtime) -> None:
    runtime.configure(max_generations_per_session=2).start()
    open_stream(runtime, "open-1")
    open_stream(runtime, "open-2")
    before, log = runtime.generation(SESSION, "sales-report", 2), runtime.log_length(SESSION)
    reply = runtime.call(SESSION, OPEN, {"document": example("stream-initial.json")}, call="open-3")
    assert_rejected_and_unchanged(runtime, reply, "generation_capacity", before, log)
    assert runtime.generation(SESSION, "sales-report", 3) == {}


def test_the_frame_cap_keeps_room_for_the_terminal_frame(runtime: Runtime) -> None:
    runtime.configure(max_frames_per_generation=3).start()
    frame = open_stream(runtime)
    mutations = example("stream-mutations.json")
    frame = patch(runtime, frame, mutations[0], "patch-1")["result"]["frame"]
    before, log = runtime.generation(SESSION, "sales-report", 1), runtime.log_length(SESSION)
    reply = patch(runtime, frame, mutations[1], "patch-2")
    assert_rejected_and_unchanged(runtime, reply, "frame_budget", before, log)
    done = runtime.call(SESSION, COMPLETE, cursor_args(frame), call="complete-1")
    assert done["ok"] and done["result"]["frame"]["seq"] == 3


def test_the_byte_budget_keeps_room_for_the_terminal_frame(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime.start()
    frame = open_stream(runtime)
    stored = int(runtime.generation(SESSION, "sales-report", 1)["bytes"])
    # Leave room for this open frame plus one maximal terminal frame only.
    monkeypatch.setattr(tools, "MAX_STREAM_BYTES", stored + runtime.settings.max_document_bytes
                        + tools.ENVELOPE_BYTES + 10)
    before, log = runtime.generation(SESSION, "sales-report", 1), runtime.log_length(SESSION)
    reply = patch(runtime, frame, example("stream-mutations.json")[0], "patch-1")
    assert_rejected_and_unchanged(runtime, reply, "byte_budget", before, log)
    assert runtime.call(SESSION, CANCEL, cursor_args(frame), call="cancel-1")["ok"]


def _filled_document(size: int) -> dict:
    """The stream example with 4,000-character Text nodes (a string holds at most 4,096) added
    until it is about `size` bytes long."""
    document = big_document(0)
    children = document["root"]["children"]
    while assert_safe_json(document) < size - 4_100:
        children.append({"id": f"filler-{len(children)}", "type": "Text", "props": {"text": "x" * 4_000}})
    return document


def test_a_generation_patched_until_its_16_mib_are_spent_is_refused_byte_budget(runtime: Runtime) -> None:
    """A ~250 KB document patched until the next frame would leave no room for a maximal
    terminal frame: core refuses it before the worker measures the frame, and the reply is the
    budget's own code, not `invalid_mutation`; the terminal frame still fits."""
    runtime.start()
    frame = runtime.call(SESSION, OPEN, {"document": _filled_document(250_000)}, call="open-1")["result"]["frame"]
    reply: dict[str, Any] = {"ok": True}
    for index in range(1, 80):  # 16 MiB hold ~65 frames of 250 KB
        before, log = runtime.generation(SESSION, "sales-report", 1), runtime.log_length(SESSION)
        mutation = {"type": "update", "nodeId": "summary-card", "props": {"title": f"T{index}", "gap": "sm"}}
        reply = patch(runtime, frame, mutation, f"patch-{index}")
        if not reply["ok"]:
            break
        frame = reply["result"]["frame"]
    assert_rejected_and_unchanged(runtime, reply, "byte_budget", before, log)
    assert int(before["bytes"]) + 2 * tools.ENVELOPE_BYTES + 2 * 250_000 > tools.MAX_STREAM_BYTES
    done = runtime.call(SESSION, COMPLETE, cursor_args(frame), call="complete-1")
    assert done["ok"], done
    assert int(runtime.generation(SESSION, "sales-report", 1)["bytes"]) <= tools.MAX_STREAM_BYTES


def test_a_lowered_document_budget_rejects_a_larger_open_and_patch(runtime: Runtime) -> None:
    runtime.configure(max_document_bytes=1_024).start()
    reply = runtime.call(SESSION, OPEN, {"document": big_document(600)}, call="open-big")
    assert reply["error"]["code"] == "document_too_large"
    frame = open_stream(runtime)
    before, log = runtime.generation(SESSION, "sales-report", 1), runtime.log_length(SESSION)
    node = {"id": "filler", "type": "Text", "props": {"text": "y" * 600}}
    reply = patch(runtime, frame, {"type": "add", "parentId": "report", "index": 0, "node": node}, "patch-big")
    assert_rejected_and_unchanged(runtime, reply, "document_too_large", before, log)


def _sized_document(size: int) -> dict:
    """A valid document of exactly `size` bytes of JSON.stringify: non-ASCII text, and the
    example's non-integral numbers (24.5), whose text JavaScript and Python print alike."""
    document = big_document(0)
    document["root"]["children"][-1]["props"]["text"] = "é€😀"
    padding = size - assert_safe_json(document)
    document["root"]["children"][-1]["props"]["text"] += "x" * padding
    assert assert_safe_json(document) == size
    return document


def test_the_document_budget_counts_json_stringify_bytes_exactly(runtime: Runtime) -> None:
    # The open sizes the document from the canonical text of its arguments: non-ASCII text
    # counts its UTF-8 bytes, as JSON.stringify's, and the limit itself is accepted.
    runtime.configure(max_document_bytes=2_048).start()
    reply = runtime.call(SESSION, OPEN, {"document": _sized_document(2_049)}, call="open-over")
    assert reply["error"]["code"] == "document_too_large"
    assert reply["error"]["message"] == "document is 2049 bytes; the limit is 2048"
    assert runtime.call(SESSION, OPEN, {"document": _sized_document(2_048)}, call="open-at")["ok"]


def test_a_patched_document_and_the_byte_budget_count_json_stringify_bytes(runtime: Runtime) -> None:
    # orjson writes 0.000001 as 1e-6, four bytes shorter than JSON.stringify: a patch measured by
    # orjson's text passed a lowered limit that an open of the same document did not.
    limit = 2_048
    runtime.configure(max_document_bytes=limit).start()
    small = {"id": "tiny", "type": "Progress", "props": {"value": 1e-6}}
    at_limit = _sized_document(limit - assert_safe_json(small) - 1)  # room for the node and its comma
    reply = runtime.call(SESSION, OPEN, {"document": at_limit}, call="open-1")
    assert reply["ok"], reply
    frame = reply["result"]["frame"]
    over = {**small, "props": {"value": 1.5e-6}}  # 0.0000015: one byte longer than 0.000001
    before, log = runtime.generation(SESSION, "sales-report", 1), runtime.log_length(SESSION)
    rejected = patch(runtime, frame, {"type": "add", "parentId": "report", "index": 0, "node": over}, "patch-over")
    assert rejected["error"]["message"] == f"the patched document would be {limit + 1} bytes; the limit is {limit}"
    assert_rejected_and_unchanged(runtime, rejected, "document_too_large", before, log)
    accepted = patch(runtime, frame, {"type": "add", "parentId": "report", "index": 0, "node": small}, "patch-at")
    assert accepted["ok"], accepted
    stored = runtime.generation(SESSION, "sales-report", 1)
    frames = [frame, accepted["result"]["frame"]]
    assert int(stored["bytes"]) == sum(assert_safe_json(f) for f in frames)  # JSON.stringify's, each frame


def test_a_document_beyond_the_protocol_limit_is_an_invalid_document(runtime: Runtime) -> None:
    runtime.start()
    limit = UI_LIMITS["maxDocumentBytes"]
    reply = runtime.call(SESSION, OPEN, {"document": _sized_document(limit + 1)}, call="open-huge")
    assert reply["error"]["code"] == "invalid_document"
    assert reply["error"]["issues"] == [{"path": "", "message": f"JSON is {limit + 1} bytes; the limit is {limit}"}]


@pytest.mark.parametrize("tool", [OPEN, "intelligent_ui"])
@pytest.mark.parametrize("number", [10**15 + 1, -(10**15) - 0.5])
def test_a_number_beyond_the_protocol_magnitude_is_located_as_the_parse_locates_it(
        runtime: Runtime, tool: str, number: float) -> None:
    # Canonical JSON (within 2**53), so the arguments' walk vouches for no measure and the
    # parse runs its own safe-JSON walk, which names the number's place.
    runtime.start()
    document = example("stream-initial.json")
    document["root"]["children"].append({"id": "huge", "type": "Text", "props": {"text": number}})
    with pytest.raises(UISchemaError) as expected:
        parse_document(document)
    reply = runtime.call(SESSION, tool, {"document": document}, call=f"{tool}-huge")
    assert reply["error"]["code"] == "invalid_document"
    assert reply["error"]["issues"] == [{"path": issue.path, "message": issue.message}
                                        for issue in expected.value.issues]
    assert reply["error"]["issues"][0]["path"].endswith("/props/text")


def test_sessions_are_isolated(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime, "open-1", session="session-a")
    reply = patch(runtime, frame, example("stream-mutations.json")[0], "patch-1", session="session-b")
    assert reply["error"]["code"] == "unknown_source"


def test_a_cold_store_reads_the_generation_of_a_source_in_one_command(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime)
    patched = patch(runtime, frame, example("stream-mutations.json")[0], "patch-0")["result"]["frame"]
    runtime.stop()  # nothing else talks to Redis now
    assert plain_store(runtime).of_source(SESSION, "never-opened") == (None, None)  # also loads the script
    runtime.redis.config_resetstat()
    ui_id, record = plain_store(runtime).of_source(SESSION, "open-1")  # a new store: nothing cached
    commands = {name: stats["calls"] for name, stats in runtime.redis.info("commandstats").items()}
    # One command sent; Redis counts the script's own commands as well: HGET uiId, HGET generation,
    # HMGET fields, HGET the checkpoint (not read when the reader holds its snapshot), HGET seq and
    # HMGET the call ledger's fields.
    assert commands == {"cmdstat_config|resetstat": 1, "cmdstat_evalsha": 1, "cmdstat_hget": 4,
                        "cmdstat_hmget": 2}, commands
    assert ui_id == "sales-report" and record is not None
    assert (record.generation, record.seq, record.revision) == (1, 2, patched["revision"])
    assert record == plain_store(runtime).current(SESSION, ui_id)  # the two reads agree field by field


def test_a_cold_store_finds_no_generation_once_its_fields_expired(runtime: Runtime) -> None:
    runtime.start()
    open_stream(runtime)
    key = runtime.client.keys.generations(runtime.client.partition(SESSION), SESSION)
    runtime.redis.hdel(key, generation_field("sales-report", 1, "checkpoint"))  # as if expired in between
    assert plain_store(runtime).of_source(SESSION, "open-1") == ("sales-report", None)


class CountingPool:
    """The runtime's connection pool, counting checkouts: every round trip takes one connection
    (a command, a pipeline's execute, a `RoundTrip`), so the count is the round trips."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool
        self.checkouts = 0

    def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        self.checkouts += 1
        self.last = self._pool.get_connection(*args, **kwargs)
        return self.last

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)


class CountedRedis(redis.Redis):
    """A real client, sharing the runtime's connections, that counts the round trips sent
    through it."""

    @property
    def round_trips(self) -> int:
        return int(self.connection_pool.checkouts)

    @round_trips.setter
    def round_trips(self, count: int) -> None:
        self.connection_pool.checkouts = count


def counted_store(rt: Runtime) -> tuple[Store, CountedRedis]:
    counted = CountedRedis(connection_pool=CountingPool(rt.redis.connection_pool))  # type: ignore[arg-type]
    return Store(redis=counted, keys=rt.client.keys, partition=rt.client.partition(SESSION)), counted


def sessions_of_one_partition(rt: Runtime, count: int) -> list[str]:
    partition = rt.client.partition(SESSION)
    return [s for s in (f"cold-{n}" for n in range(200)) if rt.client.partition(s) == partition][:count]


def test_a_cold_store_reads_ahead_the_generations_of_a_batch_in_one_round_trip(runtime: Runtime) -> None:
    runtime.start()
    sessions = sessions_of_one_partition(runtime, 3)
    for session in sessions:
        open_stream(runtime, "open-1", session=session)
    expired = sessions[2]
    runtime.redis.hdel(runtime.client.keys.generations(runtime.client.partition(expired), expired),
                       generation_field("sales-report", 1, "checkpoint"))
    runtime.stop()
    calls = [(sessions[0], "open-1"), (sessions[1], "open-1"), (expired, "open-1"), (sessions[0], "never-opened"),
             (sessions[0], "open-1")]
    expected = [plain_store(runtime).of_source(*call) for call in calls]  # one new store (nothing cached) each
    store, counted = counted_store(runtime)
    store.read_ahead(calls)
    assert counted.round_trips == 1
    runtime.redis.config_resetstat()
    # What the batch's decisions read then comes from the cache, but the unknown source's
    # (never cached: a call earlier in the batch may still open it).
    assert [store.of_source(*call) for call in calls] == expected
    assert counted.round_trips == 2
    commands = {name: stats["calls"] for name, stats in runtime.redis.info("commandstats").items()}
    assert commands == {"cmdstat_config|resetstat": 1, "cmdstat_evalsha": 1, "cmdstat_hget": 1}, commands
    assert expected[0][1] is not None and expected[2] == ("sales-report", None) and expected[3] == (None, None)
    store.read_ahead(calls[:3])  # all cached now: nothing is read
    assert counted.round_trips == 2


def test_a_read_ahead_never_replaces_a_newer_cached_generation(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime)
    runtime.stop()
    store = plain_store(runtime)
    stored = plain_store(runtime).of_source(SESSION, "open-1")[1]
    assert stored is not None
    # As a batch's optimistic commit, unconfirmed: cached under its uiId, its source not yet remembered.
    newer = Generation(**{**{name: getattr(stored, name) for name in _COMPARED}, "seq": stored.seq + 1})
    store.remember(SESSION, newer, opened=False)
    store.read_ahead([(SESSION, "open-1")])
    assert store.of_source(SESSION, "open-1") == ("sales-report", newer)
    assert frame["seq"] == stored.seq


def test_patches_of_cold_sessions_and_hostile_entries_read_ahead_are_decided_as_one_by_one(runtime: Runtime) -> None:
    runtime.start()
    sessions = [f"cold-e2e-{n}" for n in range(12)]
    frames = {session: open_stream(runtime, "open-1", session=session) for session in sessions}
    runtime.stop()  # the next worker holds nothing of them: every session is cold
    mutation = example("stream-mutations.json")[0]
    client = runtime.client
    good = {session: client.submit(session, PATCH, {**cursor_args(frames[session]), "mutation": mutation},
                                   call="patch-1") for session in sessions}
    first = sessions[0]
    hostile = {
        "not json": client.add(client.entry(first, PATCH, "{not json", call="bad-1")),
        "no source": client.submit(first, PATCH, {"generation": 1, "baseRevision": 0, "mutation": mutation},
                                   call="bad-2"),
        "source not a string": client.submit(first, COMPLETE, {**cursor_args(frames[first]), "sourceCallId": 7},
                                             call="bad-3"),
        "unknown source": client.submit(sessions[1], CANCEL, {**cursor_args(frames[sessions[1]]),
                                                              "sourceCallId": "never-opened"}, call="bad-4"),
        "stale cursor": client.submit(sessions[2], PATCH, {**cursor_args(frames[sessions[2]]), "mutation": mutation},
                                      call="patch-2"),
        "array body": client.add(client.entry(sessions[3], CANCEL, "[1, 2]", call="bad-5")),
    }
    runtime.start()
    for session, request in good.items():
        reply = client.reply(session, request, timeout=10)
        assert reply["ok"], reply
        assert reply["result"]["frame"]["seq"] == frames[session]["seq"] + 1
    codes = {name: client.reply(session, hostile[name], timeout=10)["error"]["code"]
             for name, session in (("not json", first), ("no source", first), ("source not a string", first),
                                   ("unknown source", sessions[1]), ("stale cursor", sessions[2]),
                                   ("array body", sessions[3]))}
    assert codes == {"not json": "invalid_json", "no source": "invalid_arguments",
                     "source not a string": "invalid_source_call_id", "unknown source": "unknown_source",
                     "stale cursor": "cursor_conflict", "array body": "invalid_arguments"}, codes
    for session in sessions:
        assert runtime.log_length(session) == 2  # the open and the one accepted patch, nothing else


def test_the_tool_handler_reads_ahead_only_the_well_formed_advances_of_cold_sessions(runtime: Runtime) -> None:
    runtime.start()
    cold, other, held = sessions_of_one_partition(runtime, 3)
    frames = {session: open_stream(runtime, "open-1", session=session) for session in (cold, other, held)}
    runtime.stop()
    store, counted = counted_store(runtime)
    handler = tools.ToolHandler(settings=runtime.settings, keys=runtime.client.keys,
                                partition=runtime.client.partition(SESSION), store=store)
    store.of_source(held, "open-1")
    counted.round_trips = 0

    def entry(session: str, name: str, body: Any, kind: str = "tool") -> dict[str, str]:
        return runtime.client.entry(session, name, body, kind=kind)

    args = {**cursor_args(frames[cold]), "mutation": {"type": "noop"}}
    hostile = [
        entry(cold, OPEN, args), entry(cold, "intelligent_ui", args), entry(cold, PATCH, args, kind="action"),
        entry(cold, PATCH, "{not json"), entry(cold, PATCH, "[1]"), entry(cold, PATCH, '"text"'),
        entry(cold, PATCH, {**args, "sourceCallId": 7}), entry(cold, PATCH, {**args, "sourceCallId": "x" * 257}),
        entry(cold, PATCH, {**args, "sourceCallId": "tab\there"}), entry(cold, PATCH, {k: v for k, v in args.items()
                                                                                        if k != "sourceCallId"}),
        entry(cold, PATCH, {**args, "pad": "x" * (runtime.settings.max_document_bytes + 5_000)}),
        {**entry(cold, PATCH, args), "session": "bad:session"},  # made by hand: the client refuses it
        {"kind": "tool", "name": PATCH, "body": dumps(args)},
        entry(held, CANCEL, cursor_args(frames[held])),  # the store holds it: its body is not even parsed
    ]
    handler.read_ahead(hostile)
    assert counted.round_trips == 0
    handler.read_ahead([*hostile, entry(cold, PATCH, args), entry(other, COMPLETE, cursor_args(frames[other]))])
    assert counted.round_trips == 1
    assert store.of_source(cold, "open-1")[1] is not None and store.of_source(other, "open-1")[1] is not None
    assert counted.round_trips == 1


def test_a_read_ahead_caches_no_more_than_its_share_of_the_cache_the_earliest_calls_first(runtime: Runtime) -> None:
    runtime.start()
    sessions = sessions_of_one_partition(runtime, 3)
    for session in sessions:
        open_stream(runtime, "open-1", session=session)
    runtime.stop()
    record = plain_store(runtime).of_source(sessions[0], "open-1")[1]
    assert record is not None
    each = record_estimate(record)  # the three records are alike but for the session
    counted = CountedRedis(connection_pool=CountingPool(runtime.redis.connection_pool))  # type: ignore[arg-type]
    # The read-ahead's share holds one generation and not two.
    cache = SharedCache(max_bytes=READ_AHEAD_SHARE * (2 * each - 1))
    store = Store(redis=counted, keys=runtime.client.keys, partition=runtime.client.partition(SESSION), cache=cache)
    store.read_ahead([(session, "open-1") for session in sessions])
    assert counted.round_trips == 1
    assert store.of_source(sessions[0], "open-1")[1] == record
    assert counted.round_trips == 1  # the first call's generation was kept
    for session in sessions[1:]:
        assert store.of_source(session, "open-1")[1] is not None
    assert counted.round_trips == 3  # the others are read at their decision, as without a read-ahead


def test_the_call_ledger_is_one_field_per_accepted_call(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime)
    mutations = example("stream-mutations.json")
    frame = patch(runtime, frame, mutations[0], "patch-1")["result"]["frame"]
    patch(runtime, frame, mutations[1], "patch-2")
    stored = runtime.generation(SESSION, "sales-report", 1)
    assert "calls" not in stored  # no ledger string: a commit never reads what it appends to
    ledger = [stored[f"call:{seq}"] for seq in (1, 2, 3)]
    assert ledger[2] == stored["last_digest"] and len(set(ledger)) == 3
    assert not any(name.startswith("call:") and name not in ("call:1", "call:2", "call:3") for name in stored)
    runtime.stop()
    _, record = plain_store(runtime).of_source(SESSION, "open-1")  # cold: the read script gathers them
    assert record is not None and record.call_ids == frozenset(call_id_of(digest) for digest in ledger)
    assert record == plain_store(runtime).current(SESSION, "sales-report")  # and `_load` too


def test_a_ledger_stored_as_one_string_before_is_still_honoured(runtime: Runtime) -> None:
    runtime.start()
    frame = open_stream(runtime)
    mutations = example("stream-mutations.json")
    frame = patch(runtime, frame, mutations[0], "patch-1")["result"]["frame"]
    runtime.stop()
    # Rewrite the record as a worker before the per-call ledger stored it: one `calls` field.
    key = runtime.client.keys.generations(runtime.client.partition(SESSION), SESSION)
    stored = runtime.generation(SESSION, "sales-report", 1)
    legacy = " ".join(stored[f"call:{seq}"] for seq in (1, 2))
    runtime.redis.hdel(key, *(generation_field("sales-report", 1, f"call:{seq}") for seq in (1, 2)))
    runtime.redis.hset(key, generation_field("sales-report", 1, "calls"), legacy)
    runtime.start()  # a fresh worker: the session is cold
    reply = patch(runtime, frame, mutations[1], "patch-1")  # an id of the legacy ledger, other content
    assert reply["error"]["code"] == "call_id_reused", reply
    frame = patch(runtime, frame, mutations[1], "patch-2")["result"]["frame"]  # continued: a field of its own
    runtime.stop()
    stored = runtime.generation(SESSION, "sales-report", 1)
    assert stored["calls"] == legacy and stored["call:3"] == stored["last_digest"]
    _, record = plain_store(runtime).of_source(SESSION, "open-1")
    assert record is not None and record.call_ids == frozenset(
        call_id_of(digest) for digest in (*legacy.split(), stored["call:3"]))
    assert record == plain_store(runtime).current(SESSION, "sales-report")
    runtime.start()
    assert patch(runtime, frame, mutations[2], "patch-2")["error"]["code"] == "call_id_reused"  # the new field's


def cold_sessions(rt: Runtime, count: int) -> tuple[list[str], list[tuple[str | None, Generation | None]]]:
    """`count` sessions of one partition, each with a stream opened by "open-1", the pools stopped;
    with what a new store (nothing cached) reads of each."""
    rt.start()
    sessions = sessions_of_one_partition(rt, count)
    for session in sessions:
        open_stream(rt, "open-1", session=session)
    rt.stop()
    return sessions, [plain_store(rt).of_source(session, "open-1") for session in sessions]


def test_a_read_ahead_that_meets_noscript_loads_the_script_and_reads_in_one_more_round_trip(
        runtime: Runtime) -> None:
    """A restarted server without persistence holds no scripts: the read-ahead's EVALSHAs come
    back NOSCRIPT, the script is loaded and only they are sent again."""
    sessions, expected = cold_sessions(runtime, 2)
    runtime.redis.script_flush()
    store, counted = counted_store(runtime)
    store.read_ahead([(session, "open-1") for session in sessions])
    assert counted.round_trips == 3  # the EVALSHAs, SCRIPT LOAD, the EVALSHAs again
    assert [store.of_source(session, "open-1") for session in sessions] == expected
    assert counted.round_trips == 3 and expected[0][1] is not None


def test_a_session_evicted_from_the_cache_is_cold_again_read_ahead_and_read_in_one_round_trip(
        runtime: Runtime) -> None:
    """A worker holding more sessions than its cache: the one evicted is read again like a cold
    one (with its batch's read-ahead, else at its decision in one `generation.lua` round trip),
    not with one read for its uiId and another of every possible ledger field."""
    sessions, expected = cold_sessions(runtime, 10)
    each = record_estimate(expected[0][1])
    counted = CountedRedis(connection_pool=CountingPool(runtime.redis.connection_pool))  # type: ignore[arg-type]
    # Eight generations at a time; a read-ahead caches one (its share, an eighth).
    cache = SharedCache(max_bytes=READ_AHEAD_SHARE * each + each // 2)
    store = Store(redis=counted, keys=runtime.client.keys, partition=runtime.client.partition(SESSION), cache=cache)
    assert [store.of_source(session, "open-1") for session in sessions] == expected
    assert counted.round_trips == 10
    assert [store.holds(session) for session in sessions] == [False] * 2 + [True] * 8  # the first two evicted
    store.read_ahead([(session, "open-1") for session in sessions])  # only the evicted are read
    assert counted.round_trips == 11 and store.holds(sessions[0])
    assert store.of_source(sessions[0], "open-1") == expected[0] and counted.round_trips == 11
    runtime.redis.config_resetstat()
    assert store.of_source(sessions[1], "open-1") == expected[1]  # beyond the read-ahead's share
    assert counted.round_trips == 12
    commands = {name: stats["calls"] for name, stats in runtime.redis.info("commandstats").items()}
    assert commands["cmdstat_evalsha"] == 1, commands  # generation.lua (its HGETs and HMGETs count too)


def test_the_current_generation_of_a_named_ui_is_read_in_one_round_trip(runtime: Runtime) -> None:
    """An open of a uiId the session has, or an action on it, after a restart: `generation.lua`
    with the uiId named (its ledger exactly), not an HGET and an HMGET of every possible field."""
    sessions, expected = cold_sessions(runtime, 1)
    store, counted = counted_store(runtime)
    assert store.current(sessions[0], "sales-report") == expected[0][1] and counted.round_trips == 1
    assert store.current(sessions[0], "no-such-ui") is None and counted.round_trips == 2
    assert store.current(sessions[0], "sales-report") == expected[0][1] and counted.round_trips == 2  # cached


def test_a_prefetch_sends_the_reads_and_the_read_ahead_reads_their_replies(runtime: Runtime) -> None:
    """A dispatcher's round sends every partition's read-ahead before it decides the first
    (`Store.prefetch`): the read-ahead of the same calls then reads those replies, no new read."""
    sessions, expected = cold_sessions(runtime, 3)
    calls = [(session, "open-1") for session in sessions]
    store, counted = counted_store(runtime)
    store.prefetch(calls)
    assert counted.round_trips == 1 and not any(store.holds(session) for session in sessions)  # nothing read yet
    store.read_ahead(calls)
    assert counted.round_trips == 1 and all(store.holds(session) for session in sessions)
    assert [store.of_source(*call) for call in calls] == expected and counted.round_trips == 1
    store.prefetch(calls)  # all cached now: nothing is sent
    store.read_ahead(calls)
    assert counted.round_trips == 1 and expected[0][1] is not None


def test_a_read_ahead_reads_at_once_what_the_prefetch_did_not_send(runtime: Runtime) -> None:
    sessions, expected = cold_sessions(runtime, 3)
    calls = [(session, "open-1") for session in sessions]
    store, counted = counted_store(runtime)
    store.prefetch(calls[:2])
    store.read_ahead(calls)
    assert counted.round_trips == 2 and all(store.holds(session) for session in sessions)
    assert [store.of_source(*call) for call in calls] == expected and counted.round_trips == 2


@pytest.mark.parametrize("how", ["abandoned", "sent again"])
def test_a_prefetch_given_up_leaves_no_reply_for_the_connections_next_user(runtime: Runtime, how: str) -> None:
    """Replies left unread on a pooled connection would answer whoever borrows it next: a prefetch
    given up (its partition stopped before its turn; a second prefetch first) closes its connection."""
    sessions, expected = cold_sessions(runtime, 3)
    calls = [(session, "open-1") for session in sessions]
    store, counted = counted_store(runtime)
    store.prefetch(calls)
    socket = counted.connection_pool.last._sock  # the prefetch's connection
    if how == "abandoned":
        store.abandon_prefetch()
        assert socket.fileno() == -1  # closed, not returned to the pool with its replies pending
        assert counted.ping() is True  # the pool's next connection answers its own command
        assert counted.get("no-such-key") is None
        store.read_ahead(calls)  # read anew: nothing was kept of the prefetch
        assert counted.round_trips == 4
    else:
        store.prefetch(calls[:1])  # the first one's connection is closed, its replies never read
        assert socket.fileno() == -1
        assert counted.ping() is True
        store.read_ahead(calls)
        assert counted.round_trips == 4  # the two prefetches, the PING, the two calls the second did not send
    assert [store.of_source(*call) for call in calls] == expected and counted.round_trips == 4
    store.abandon_prefetch()  # nothing pending: nothing happens
    assert counted.ping() is True


def test_a_late_resend_refused_by_a_later_generations_ledger_names_that_generation(runtime: Runtime) -> None:
    # an audit: the refusal said "already used in this generation", of a call sent for generation 1
    runtime.start()
    first = open_stream(runtime, call="open-1")
    mutation = example("stream-mutations.json")[0]
    assert patch(runtime, first, mutation, "p1")["ok"]
    second = open_stream(runtime, call="open-2")
    assert second["generation"] == 2
    assert patch(runtime, second, mutation, "p1")["ok"]  # the ledger is per generation
    late = patch(runtime, first, mutation, "p1")
    assert late["error"]["code"] == "call_id_reused"
    assert "generation 2" in late["error"]["message"], late["error"]["message"]
