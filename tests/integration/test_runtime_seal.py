"""Sealed generations: a cold session whose record's seal verifies is restored without a parse of
its tree, any other record is validated in full, and both answer every call as a warm worker does."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import orjson
import pytest

from core.json._frozen import thaw
from core.stream.lifecycle import advance_ui_stream, resume_ui_stream, start_ui_stream
from tests.integration.conftest import Runtime, cursor_args, example
from tests.integration.test_runtime_tools import (
    SESSION,
    CountedRedis,
    CountingPool,
    open_stream,
    patch,
    sessions_of_one_partition,
)
from workers.redisio.keys import generation_field, ui_field
from workers.redisio.scripts import GenerationRead, StoredGeneration
from workers.redisio.seal import SEAL_VERSION, Seal, facts_text, parse_facts, retired_of, snapshot_digest
from workers.sessions.snapshots import SnapshotShelf
from workers.sessions.store import FIELDS, READ_AHEAD_SHARE, SharedCache, Store, record_estimate

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


OTHER = "s-same-document"


def two_cold_sessions(rt: Runtime) -> dict[str, dict]:
    """SESSION and OTHER, each with the example stream opened under the seal's key; the pools stopped."""
    rt.configure(state_key=KEY)
    rt.start()
    frames = {session: open_stream(rt, session=session) for session in (SESSION, OTHER)}
    rt.stop()
    return frames


def sealed_store(rt: Runtime, session: str, shelf: SnapshotShelf, on_read: Any = None) -> Store:
    return Store(redis=rt.redis, keys=rt.client.keys, partition=rt.client.partition(session), seal=Seal(KEY.encode()),
                 snapshots=shelf, on_read=on_read)


def test_generation_lua_cuts_a_checkpoint_to_its_envelope_only_when_its_digest_is_named(runtime: Runtime) -> None:
    two_cold_sessions(runtime)
    record = runtime.generation(SESSION, UI_ID, 1)
    digest, checkpoint = record["snapshot_digest"], record["checkpoint"]
    assert digest == snapshot_digest(checkpoint)  # every commit stores it
    keys, partition = runtime.client.keys, runtime.client.partition(SESSION)
    read = GenerationRead(runtime.redis)

    def found(known: str) -> StoredGeneration:
        return read.of_ui(keys.session(partition, SESSION), keys.generations(partition, SESSION), UI_ID,
                          ui_field(""), FIELDS, known)

    whole = found("")
    assert not whole.cut and whole.fields[0] == checkpoint and whole.fields[1] == digest
    for known in (digest + " ", "0" * 64 + " " + digest + " "):
        cut = found(known)
        assert cut.cut and cut.fields[0] == checkpoint[:checkpoint.index(',"snapshot":')]
        assert cut.fields[1:] == whole.fields[1:] and cut.ledger == whole.ledger
    for known in ("0" * 64 + " ", digest, digest[1:] + " ", " "):  # another digest, or not as the script names them
        assert not found(known).cut
    assert record["envelope"] == checkpoint[:checkpoint.index(',"snapshot":')]  # every commit stores it
    generations = keys.generations(partition, SESSION)
    runtime.redis.hdel(generations, generation_field(UI_ID, 1, "envelope"))  # a record written before
    assert not found(digest + " ").cut and found(digest + " ").fields == whole.fields
    field = generation_field(UI_ID, 1, "snapshot_digest")
    for altered in (digest.upper(), digest + " ", digest[:63] + "g"):  # a stored digest that is not one
        runtime.redis.hset(generations, field, altered)
        assert not found(altered + " ").cut and not found(digest + " " + altered + " ").cut


def test_a_record_read_cut_is_made_whole_with_the_shelved_snapshot_and_restores_as_a_whole_read(
        runtime: Runtime) -> None:
    two_cold_sessions(runtime)
    shelf = SnapshotShelf(max_bytes=1 << 30)
    outcomes: list[str] = []
    first = sealed_store(runtime, SESSION, shelf, outcomes.append).current(SESSION, UI_ID)
    assert first is not None and first.stream_state() is not None and shelf.known()  # restored: shelved
    store = sealed_store(runtime, OTHER, shelf, outcomes.append)
    read = store.current(OTHER, UI_ID)
    assert outcomes == ["valid", "valid"] and read is not None
    whole = sealed_store(runtime, OTHER, SnapshotShelf(max_bytes=1 << 30)).current(OTHER, UI_ID)
    assert whole is not None and read == whole and read.checkpoint == runtime.generation(OTHER, UI_ID, 1)["checkpoint"]
    assert read.stream_state() == whole.stream_state()
    assert read.stream_state().document is first.stream_state().document  # the shelved snapshot, shared


def test_a_cut_read_takes_the_sealed_snapshot_not_an_altered_stored_copy(runtime: Runtime) -> None:
    """A record whose snapshot text was altered in Redis, its digest field kept, is read cut: the
    altered bytes never cross the wire, and the shelved text its seal names is what it restores."""
    two_cold_sessions(runtime)
    generations = runtime.client.keys.generations(runtime.client.partition(OTHER), OTHER)
    original = runtime.generation(OTHER, UI_ID, 1)["checkpoint"]
    runtime.redis.hset(generations, generation_field(UI_ID, 1, "checkpoint"),
                       original.replace('"Units sold"', '"Units Sold"'))
    shelf, outcomes = SnapshotShelf(max_bytes=1 << 30), list[str]()
    first = sealed_store(runtime, SESSION, shelf, outcomes.append).current(SESSION, UI_ID)
    assert first is not None and first.stream_state() is not None
    read = sealed_store(runtime, OTHER, shelf, outcomes.append).current(OTHER, UI_ID)
    assert outcomes == ["valid", "valid"] and read is not None and read.checkpoint == original
    outcomes.clear()  # read whole (nothing shelved), the altered text fails its seal
    alone = sealed_store(runtime, OTHER, SnapshotShelf(max_bytes=1 << 30), outcomes.append).current(OTHER, UI_ID)
    assert outcomes == ["invalid"] and alone is not None and '"Units Sold"' in alone.checkpoint


def test_a_digest_field_naming_another_shelved_snapshot_is_never_believed(runtime: Runtime) -> None:
    """The script cuts the record (the digest is named), the seal refuses the snapshot it names,
    and the record is read again whole: it is what it holds, its seal checked on its own text."""
    two_cold_sessions(runtime)
    shelf, outcomes = SnapshotShelf(max_bytes=1 << 30), list[str]()
    document = example("stream-initial.json")
    other = start_ui_stream({**document, "title": "Quarterly sales rePort"}, "open-1", 1)  # the same facts
    text = orjson.dumps(other.checkpoint).decode()
    shelf.restore(text, digest=snapshot_digest(text), facts=other.restore_facts, frame_count=1, byte_count=len(text))
    generations = runtime.client.keys.generations(runtime.client.partition(OTHER), OTHER)
    assert parse_facts(runtime.generation(OTHER, UI_ID, 1)["facts"]) == other.restore_facts
    runtime.redis.hset(generations, generation_field(UI_ID, 1, "snapshot_digest"), snapshot_digest(text))
    counted = CountedRedis(connection_pool=CountingPool(runtime.redis.connection_pool))  # type: ignore[arg-type]
    store = Store(redis=counted, keys=runtime.client.keys, partition=runtime.client.partition(OTHER),
                  seal=Seal(KEY.encode()), snapshots=shelf, on_read=outcomes.append)
    read = store.current(OTHER, UI_ID)
    assert counted.round_trips == 2  # cut, refused by the seal, read again whole
    assert read is not None and read.checkpoint == runtime.generation(OTHER, UI_ID, 1)["checkpoint"]
    assert outcomes == ["valid"] and read.snapshot_digest == snapshot_digest(read.checkpoint)
    assert read.stream_state().document["title"] == document["title"]


def test_a_cut_read_of_an_altered_envelope_field_is_read_again_whole(runtime: Runtime) -> None:
    """The envelope field is what a cut read takes for the checkpoint's text before its snapshot;
    one altered fails the seal, and the record is read again whole and checked on its own text."""
    two_cold_sessions(runtime)
    shelf, outcomes = SnapshotShelf(max_bytes=1 << 30), list[str]()
    first = sealed_store(runtime, SESSION, shelf).current(SESSION, UI_ID)
    assert first is not None and first.stream_state() is not None
    generations = runtime.client.keys.generations(runtime.client.partition(OTHER), OTHER)
    envelope = runtime.generation(OTHER, UI_ID, 1)["envelope"]
    runtime.redis.hset(generations, generation_field(UI_ID, 1, "envelope"), envelope.replace('"seq":1', '"seq":2'))
    counted = CountedRedis(connection_pool=CountingPool(runtime.redis.connection_pool))  # type: ignore[arg-type]
    store = Store(redis=counted, keys=runtime.client.keys, partition=runtime.client.partition(OTHER),
                  seal=Seal(KEY.encode()), snapshots=shelf, on_read=outcomes.append)
    read = store.current(OTHER, UI_ID)
    assert counted.round_trips == 2 and outcomes == ["valid"]
    assert read is not None and read.checkpoint == runtime.generation(OTHER, UI_ID, 1)["checkpoint"]
    assert read.stream_state().seq == 1


def test_a_cut_read_whose_snapshot_left_the_shelf_since_it_was_sent_is_read_again_whole(runtime: Runtime) -> None:
    two_cold_sessions(runtime)
    shelf, outcomes = SnapshotShelf(max_bytes=1 << 30), list[str]()
    first = sealed_store(runtime, SESSION, shelf).current(SESSION, UI_ID)
    assert first is not None and first.stream_state() is not None and first.restorable is not None
    counted = CountedRedis(connection_pool=CountingPool(runtime.redis.connection_pool))  # type: ignore[arg-type]
    store = Store(redis=counted, keys=runtime.client.keys, partition=runtime.client.partition(OTHER),
                  seal=Seal(KEY.encode()), snapshots=shelf, on_read=outcomes.append)
    store.prefetch([(OTHER, "open-1")])  # sent naming the shelved digest: the reply is cut
    shelf._shelf.drop((first.restorable, first.snapshot_digest))  # evicted before the reply is read
    store.read_ahead([(OTHER, "open-1")])
    assert counted.round_trips == 2
    _, read = store.of_source(OTHER, "open-1")
    assert outcomes == ["valid"] and read is not None and counted.round_trips == 2
    assert read.checkpoint == runtime.generation(OTHER, UI_ID, 1)["checkpoint"]
    alone = sealed_store(runtime, OTHER, SnapshotShelf(max_bytes=1 << 30)).current(OTHER, UI_ID)
    assert alone is not None and read == alone and read.stream_state() == alone.stream_state()


def test_cold_sessions_read_cut_answer_every_call_as_a_warm_worker(runtime: Runtime) -> None:
    """Through the pool: the second cold session's read is cut, and both answer as warm ones."""
    frames = two_cold_sessions(runtime)
    runtime.start()
    mutation = example("stream-mutations.json")[1]
    for session in (SESSION, OTHER):
        reply = patch(runtime, frames[session], mutation, "patch-1", session=session)
        assert reply["ok"], reply
        expected = advance_ui_stream(resume_ui_stream(frames[session], frame_count=1,
                                                      byte_count=len(orjson.dumps(frames[session]))), mutation)
        assert reply["result"]["frame"] == thaw(expected.checkpoint)
    assert (reads(runtime, "valid"), reads(runtime, "invalid")) == (2, 0)
    assert runtime.metrics.registry.get_sample_value("iui_restored_snapshots_shared_total") == 1


def test_a_read_ahead_counts_a_cut_record_as_the_whole_record_it_caches(runtime: Runtime) -> None:
    """The read-ahead's share of the cache bounds the records it caches by what the cache counts of
    them: a record read cut is counted with the shelved snapshot that makes it whole, not as its
    envelope alone (or a batch of cut reads would overrun the share)."""
    runtime.configure(state_key=KEY)
    runtime.start()
    sessions = sessions_of_one_partition(runtime, 4)
    for session in sessions:
        open_stream(runtime, "open-1", session=session)
    runtime.stop()
    shelf = SnapshotShelf(max_bytes=1 << 30)
    first = sealed_store(runtime, sessions[0], shelf).current(sessions[0], UI_ID)
    assert first is not None and first.stream_state() is not None and shelf.known()
    each = record_estimate(first)
    counted = CountedRedis(connection_pool=CountingPool(runtime.redis.connection_pool))  # type: ignore[arg-type]
    cache = SharedCache(max_bytes=READ_AHEAD_SHARE * (2 * each - 1))  # the share holds one generation, not two
    store = Store(redis=counted, keys=runtime.client.keys, partition=runtime.client.partition(sessions[1]),
                  seal=Seal(KEY.encode()), snapshots=shelf, cache=cache)
    store.read_ahead([(session, "open-1") for session in sessions[1:]])
    assert counted.round_trips == 1
    assert [store.holds(session) for session in sessions[1:]] == [True, False, False]
    for session in sessions[1:]:
        _, record = store.of_source(session, "open-1")
        assert record is not None and record.checkpoint == runtime.generation(session, UI_ID, 1)["checkpoint"]
    assert counted.round_trips == 3  # the others are read at their decision (cut, as the read-ahead's)
