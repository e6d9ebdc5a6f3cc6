"""Sealed generations: a cold session whose record's seal verifies is restored without a parse of
its tree, any other record is validated in full, and both answer every call as a warm worker does."""

from __future__ import annotations

import hashlib
import hmac

import orjson
import pytest

from core.json._frozen import thaw
from core.stream.lifecycle import advance_ui_stream, resume_ui_stream
from tests.integration.conftest import Runtime, cursor_args, example
from tests.integration.test_runtime_tools import SESSION, open_stream, patch
from workers.redisio.keys import generation_field
from workers.redisio.seal import SEAL_VERSION, Seal, facts_text, parse_facts, retired_of
from workers.sessions.snapshots import _probe
from workers.sessions.store import FIELDS, Store

pytestmark = pytest.mark.integration
KEY = "k" * 32
UI_ID = "sales-report"


def reads(rt: Runtime, seal: str) -> float:
    """How many stored generations the pools read whose seal was `seal` (valid, missing, invalid)."""
    return rt.metrics.registry.get_sample_value("iui_state_reads_total", {"seal": seal}) or 0.0


def stored(rt: Runtime) -> dict[str, str]:
    return rt.generation(SESSION, UI_ID, 1)


def set_field(rt: Runtime, name: str, value: str | None) -> None:
    key = rt.client.keys.generations(rt.client.partition(SESSION), SESSION)
    field = generation_field(UI_ID, 1, name)
    if value is None:
        rt.redis.hdel(key, field)
    else:
        rt.redis.hset(key, field, value)


def opened_then_cold(rt: Runtime) -> dict:
    """Open and patch a stream, then restart the pool: the session is cold.  The last frame."""
    rt.start()
    frame = patch(rt, open_stream(rt), example("stream-mutations.json")[0], "patch-0")["result"]["frame"]
    rt.stop()
    return frame


def test_every_commit_stores_the_restore_facts_and_a_seal_over_checkpoint_counters_and_facts(
        runtime: Runtime) -> None:
    runtime.configure(state_key=KEY)
    frame = opened_then_cold(runtime)
    record = stored(runtime)
    state = resume_ui_stream(orjson.loads(record["checkpoint"]), frame_count=2, byte_count=int(record["bytes"]))
    assert parse_facts(record["facts"]) is not None and record["facts"] == facts_text(state.restore_facts)
    key = hashlib.sha256(SEAL_VERSION + b"\0" + KEY.encode()).digest()
    envelope, snapshot = record["checkpoint"].split(',"snapshot":', 1)
    digest = hashlib.sha256(f',"snapshot":{snapshot}'.encode()).hexdigest()
    message = f"{record['frames']} {record['bytes']} {record['facts']}\n{envelope}\n{digest}".encode()
    assert record["seal"] == hmac.new(key, message, hashlib.sha256).hexdigest()
    assert orjson.loads(record["checkpoint"]) == frame


def test_a_cold_session_with_a_valid_seal_is_restored_and_answers_as_a_warm_worker(runtime: Runtime) -> None:
    runtime.configure(state_key=KEY)
    frame = opened_then_cold(runtime)
    runtime.start()
    reply = patch(runtime, frame, example("stream-mutations.json")[1], "patch-1")
    assert reply["ok"], reply
    assert (reads(runtime, "valid"), reads(runtime, "missing"), reads(runtime, "invalid")) == (1, 0, 0)
    warm = patch(runtime, reply["result"]["frame"], example("stream-mutations.json")[2], "patch-2")
    assert warm["ok"] and reads(runtime, "valid") == 1  # the second call found it cached
    done = runtime.call(SESSION, "intelligent_ui_complete", cursor_args(warm["result"]["frame"]), call="done")
    assert done["ok"] and done["result"]["frame"]["type"] == "complete"


@pytest.mark.parametrize(("change", "outcome"), [
    ("no seal", "missing"),  # a record written before seals existed
    ("no facts", "missing"),
    ("other key", "invalid"),  # a worker of the deployment with another IUI_STATE_KEY
    ("altered checkpoint", "invalid"),
    ("altered counters", "invalid"),
    ("altered facts", "invalid"),
    ("facts not ascii", "invalid"),  # a seal check once raised on them
    ("sealed by version 1", "invalid"),  # a record written before the seal took the snapshot's digest
])
def test_a_record_whose_seal_does_not_verify_is_validated_in_full_and_decided_alike(
        runtime: Runtime, change: str, outcome: str) -> None:
    runtime.configure(state_key=KEY)
    frame = opened_then_cold(runtime)
    record = stored(runtime)
    if change == "no seal":
        set_field(runtime, "seal", None)
    elif change == "no facts":
        set_field(runtime, "facts", None)
    elif change == "other key":
        runtime.configure(state_key="o" * 32)
    elif change == "altered checkpoint":  # still a valid checkpoint: the full check accepts it
        set_field(runtime, "checkpoint", orjson.dumps(orjson.loads(record["checkpoint"])).decode() + " ")
    elif change == "altered counters":
        set_field(runtime, "bytes", str(int(record["bytes"]) + 1))
    elif change == "facts not ascii":
        set_field(runtime, "facts", "١" + record["facts"][1:])
    elif change == "sealed by version 1":
        key = hashlib.sha256(b"iui-generation-seal-1\0" + KEY.encode()).digest()
        message = f"{record['frames']} {record['bytes']} {record['facts']}\n{record['checkpoint']}".encode()
        set_field(runtime, "seal", hmac.new(key, message, hashlib.sha256).hexdigest())
    else:
        bytes_, depth, expressions = parse_facts(record["facts"]) or (0, 0, 0)
        set_field(runtime, "facts", facts_text((bytes_, depth, expressions + 1)))
    runtime.start()
    reply = patch(runtime, frame, example("stream-mutations.json")[1], "patch-1")
    assert reply["ok"], reply
    assert reads(runtime, outcome) == 1 and reads(runtime, "valid") == 0
    again = stored(runtime)  # the commit sealed the new record under the key in force
    assert Store(redis=runtime.redis, keys=runtime.client.keys, partition=runtime.client.partition(SESSION),
                 seal=Seal(runtime.settings.state_key.get_secret_value().encode()  # type: ignore[union-attr]
                           )).current(SESSION, UI_ID).restorable == parse_facts(again["facts"])


def test_an_altered_checkpoint_that_is_not_valid_is_refused_as_before_seals(runtime: Runtime) -> None:
    runtime.configure(state_key=KEY)
    frame = opened_then_cold(runtime)
    record = stored(runtime)
    checkpoint = orjson.loads(record["checkpoint"])
    checkpoint["snapshot"]["root"]["children"].append({"id": "x", "type": "Marquee", "props": {}})
    set_field(runtime, "checkpoint", orjson.dumps(checkpoint).decode())  # the seal no longer verifies
    runtime.start()
    reply = patch(runtime, frame, example("stream-mutations.json")[1], "patch-1")
    assert reply["ok"] is False and reply["error"]["code"] == "invalid_mutation"
    assert any(issue["path"].startswith("/snapshot/root/children") for issue in reply["error"]["issues"])
    assert reads(runtime, "invalid") == 1
    assert stored(runtime)["checkpoint"] == orjson.dumps(checkpoint).decode()  # nothing written


def test_a_sealed_record_with_facts_no_document_has_is_validated_in_full(runtime: Runtime) -> None:
    """A seal proves who wrote the record, not that this build can restore it: a restore that
    refuses the facts falls back to the full check, which decides."""
    runtime.configure(state_key=KEY)
    frame = opened_then_cold(runtime)
    record = stored(runtime)
    facts = "1 3 0"  # no document of this header is one byte long
    seal = Seal(KEY.encode()).of(record["checkpoint"], int(record["frames"]), int(record["bytes"]), facts)
    set_field(runtime, "facts", facts)
    set_field(runtime, "seal", seal)
    runtime.start()
    reply = patch(runtime, frame, example("stream-mutations.json")[1], "patch-1")
    assert reply["ok"], reply
    assert reads(runtime, "valid") == 1


def test_the_store_reads_the_seal_and_the_facts_with_the_other_fields(runtime: Runtime) -> None:
    assert FIELDS[-4:] == ("facts", "seal", "calls", "retired")  # the optional fields, read with the required ones
    runtime.start()
    open_stream(runtime)
    runtime.stop()
    store = Store(redis=runtime.redis, keys=runtime.client.keys, partition=runtime.client.partition(SESSION))
    _, record = store.of_source(SESSION, "open-1")
    assert record is not None and record.restorable is not None  # keyless: sealed by the version alone
    assert record.restorable == parse_facts(record.facts) and record.seal == stored(runtime)["seal"]
    restored = record.stream_state()
    assert restored._memo is not None and restored._memo.cache._restored is not None  # no parse of the tree
    set_field(runtime, "seal", None)
    _, unsealed = Store(redis=runtime.redis, keys=runtime.client.keys,
                        partition=runtime.client.partition(SESSION)).of_source(SESSION, "open-1")
    assert unsealed is not None and unsealed.restorable is None
    parsed = unsealed.stream_state()
    assert parsed._memo is not None and parsed._memo.cache._restored is None  # parsed in full
    assert parsed == restored and parsed.document.model == restored.document.model


def test_cold_sessions_holding_the_same_snapshot_restore_it_once_and_each_answers_as_a_warm_worker(
        runtime: Runtime) -> None:
    """The pool shelves a restored snapshot by its stored text (workers/sessions/snapshots.py): the
    second cold session holding it restores only its envelope, and what one session's patches do
    never reaches the other's."""
    runtime.configure(state_key=KEY)
    runtime.start()
    sessions = (SESSION, "s-same-document")
    frames = {session: open_stream(runtime, session=session) for session in sessions}
    runtime.stop()
    runtime.start()
    shelf = runtime.pools[0][0]._snapshots  # the pool's shelf, shared by its partitions
    mutations = example("stream-mutations.json")
    expected = {session: resume_ui_stream(frame, frame_count=1, byte_count=len(orjson.dumps(frame)))
                for session, frame in frames.items()}
    for round_, picks in enumerate(((0, 1), (2, 0), (1, 2))):
        for session, pick in zip(sessions, picks, strict=True):
            reply = patch(runtime, frames[session], mutations[pick], f"patch-{round_}", session=session)
            assert reply["ok"], reply
            expected[session] = advance_ui_stream(expected[session], mutations[pick])
            assert reply["result"]["frame"] == thaw(expected[session].checkpoint)
            frames[session] = reply["result"]["frame"]
    shared = runtime.metrics.registry.get_sample_value("iui_restored_snapshots_shared_total")
    assert (shared, len(shelf)) == (1, 1)
    assert reads(runtime, "valid") == 2


def test_a_cold_session_refuses_a_removed_id_of_another_type_as_the_warm_worker_does(runtime: Runtime) -> None:
    """No frame says which ids a generation removed; the record's facts carry them (sealed), so a
    restored producer refuses what the live one refuses (seed 000 §12: an id keeps its type)."""
    runtime.configure(state_key=KEY)
    runtime.start()
    removed = patch(runtime, open_stream(runtime), {"type": "remove", "nodeId": "loading"}, "remove")
    assert removed["ok"], removed
    record = stored(runtime)
    assert retired_of(record["facts"], record["retired"]) == {"loading": "Loading"}
    frame = removed["result"]["frame"]
    readd = {"type": "add", "parentId": "report", "index": 0,
             "node": {"id": "loading", "type": "Text", "props": {"text": "back, as another type"}}}
    warm = patch(runtime, frame, readd, "readd-warm")
    runtime.stop()
    runtime.start()
    cold = patch(runtime, frame, readd, "readd-cold")
    assert warm["ok"] is False and cold["ok"] is False
    assert cold["error"] == warm["error"], (cold, warm)
    assert reads(runtime, "valid") == 1
    again = patch(runtime, frame, {**readd, "node": {"id": "loading", "type": "Loading", "props": {}}}, "readd")
    assert again["ok"], again
    record = stored(runtime)
    assert (record["retired"], record["facts"].count(" ")) == ("", 2)  # none: the facts name no digest


def test_the_retired_types_are_written_by_the_commits_that_change_them_and_checked_by_their_digest(
        runtime: Runtime) -> None:
    """A generation that removed many nodes would otherwise write them with every later commit."""
    runtime.configure(state_key=KEY)
    runtime.start()
    removed = patch(runtime, open_stream(runtime), {"type": "remove", "nodeId": "loading"}, "remove")
    record = stored(runtime)
    set_field(runtime, "retired", record["retired"] + " ")  # what a commit that rewrote it would mend
    update = {"type": "update", "nodeId": "summary-card", "props": {"title": "Summary"}}
    updated = patch(runtime, removed["result"]["frame"], update, "update")
    assert updated["ok"], updated
    after = stored(runtime)
    assert after["retired"] == record["retired"] + " " and after["facts"].split(" ")[3] == record["facts"].split(" ")[3]
    runtime.stop()
    runtime.start()  # cold: the altered field no longer has the facts' digest, so the record is parsed in full
    readd = {"type": "add", "parentId": "report", "index": 0,
             "node": {"id": "loading", "type": "Text", "props": {"text": "back, as another type"}}}
    cold = patch(runtime, updated["result"]["frame"], readd, "readd")
    assert cold["ok"] is True  # without the retired types, as a record written before them
    assert reads(runtime, "valid") == 1


def test_a_shelved_snapshot_never_vouches_for_another_sessions_altered_copy(runtime: Runtime) -> None:
    """A cold read's seal check takes the digest of a snapshot the shelf holds from the shelf
    (workers/sessions/snapshots.py, `digest`): a record whose snapshot was altered after its seal,
    keeping the shelf's probe of the text, is still read as unsealed and validated in full."""
    runtime.configure(state_key=KEY)
    runtime.start()
    other = "s-same-document"
    frames = {session: open_stream(runtime, session=session) for session in (SESSION, other)}
    runtime.stop()
    key = runtime.client.keys.generations(runtime.client.partition(other), other)
    text = runtime.generation(other, UI_ID, 1)["checkpoint"]
    altered = text.replace('"Units sold"', '"Units Sold"')
    start = text.index(',"snapshot":') + len(',"snapshot":')
    facts = parse_facts(runtime.generation(other, UI_ID, 1)["facts"]) or (0, 0, 0)
    assert altered != text and _probe(facts, altered, start) == _probe(facts, text, start)
    runtime.redis.hset(key, generation_field(UI_ID, 1, "checkpoint"), altered)
    runtime.start()
    mutation = example("stream-mutations.json")[1]
    assert patch(runtime, frames[SESSION], mutation, "patch-1")["ok"]  # restored and shelved
    assert (reads(runtime, "valid"), reads(runtime, "invalid")) == (1, 0)
    reply = patch(runtime, frames[other], mutation, "patch-1", session=other)
    assert reply["ok"], reply
    assert (reads(runtime, "valid"), reads(runtime, "invalid")) == (1, 1)
    assert '"Units Sold"' in runtime.generation(other, UI_ID, 1)["checkpoint"]  # the full check took it as stored
