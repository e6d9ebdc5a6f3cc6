"""The process-wide generation cache: bounded by estimated bytes, least recently used first out."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from core.stream.lifecycle import start_ui_stream
from workers.sessions.cache import (
    CALL_ID_BYTES,
    ENTRY_OVERHEAD,
    MISSING,
    PARSED_FACTOR,
    RETIRED_FACTOR,
    GenerationCache,
    estimate,
)
from workers.sessions.store import Generation, record_estimate


def test_an_entry_is_estimated_at_its_parsed_size() -> None:
    assert estimate("x" * 1000) == ENTRY_OVERHEAD + PARSED_FACTOR * 1000
    assert estimate(None) == ENTRY_OVERHEAD


def test_a_generation_s_retired_types_and_call_ids_count_in_its_estimate() -> None:
    expected = ENTRY_OVERHEAD + PARSED_FACTOR * 10 + RETIRED_FACTOR * 1000 + 3 * CALL_ID_BYTES
    assert estimate("x" * 10, "r" * 1000, 3) == expected
    record = Generation(ui_id="u", generation=1, source="c", seq=2, revision=1, status="streaming", frames=2, bytes=20,
                        checkpoint="x" * 10, last_call="c", last_digest="d", last_receipt="{}",
                        call_ids=frozenset({"a:", "b:"}), retired="r" * 1000)
    assert record_estimate(record) == estimate("x" * 10, "r" * 1000, 2)
    assert record_estimate(None) == estimate(None)


def test_a_generation_that_removed_thousands_of_ids_holds_no_more_than_its_estimate() -> None:
    # An audit: 31 rounds of adding and removing a 190-node Card left a 356-byte checkpoint and 5,921
    # retired ids: the state held 1.3 MB where the estimate counted 10.6 KB (124 rounds: 451x), and a
    # worker's RSS grew ~9 MB a session within a cache that counted 0.04 MB.
    import gc
    import tracemalloc

    import orjson

    from core.stream.lifecycle import advance_ui_stream, resume_ui_stream

    state = start_ui_stream({"version": "1.1", "id": "d", "mode": "interactive_ui", "title": "t", "state": {},
                             "derived": {}, "actions": {},
                             "root": {"id": "root", "type": "Card", "props": {"title": "r"}, "children": []}}, "c", 1)
    for n in range(31):
        children = [{"id": f"n{n:04d}x{i:03d}" + "a" * 55, "type": "Text", "props": {"text": "x"}} for i in range(190)]
        state = advance_ui_stream(state, {"type": "add", "parentId": "root", "index": 0, "node": {
            "id": f"g{n:04d}" + "b" * 59, "type": "Card", "props": {"title": "g"}, "children": children}})
        state = advance_ui_stream(state, {"type": "remove", "nodeId": f"g{n:04d}" + "b" * 59}).without_history()
    checkpoint, retired = orjson.dumps(state.checkpoint).decode(), orjson.dumps(dict(state.retired_types)).decode()
    gc.collect()
    tracemalloc.start()
    try:
        resumed = resume_ui_stream(orjson.loads(checkpoint), frame_count=state.frame_count,
                                   byte_count=state.byte_count, retired_types=orjson.loads(retired))
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(resumed.retired_types) == 31 * 191
    assert held + len(retired) <= estimate(checkpoint, retired, 62)


def test_a_cached_none_is_not_a_miss() -> None:
    cache = GenerationCache(max_bytes=10_000)
    assert cache.get("k") is MISSING
    cache.put("k", None, 10)
    assert cache.get("k") is None


def test_the_least_recently_used_entries_are_evicted_beyond_the_budget() -> None:
    cache = GenerationCache(max_bytes=300)
    for key in "abc":
        cache.put(key, key.upper(), 100)
    cache.get("a")  # a is now the most recently used
    cache.put("d", "D", 100)
    assert cache.get("b") is MISSING and cache.get("a") == "A" and cache.get("d") == "D"
    assert cache.bytes == 300 and len(cache) == 3


def test_replacing_and_dropping_keep_the_byte_count_exact() -> None:
    cache = GenerationCache(max_bytes=1_000)
    cache.put("a", 1, 400)
    cache.put("a", 2, 100)
    assert cache.bytes == 100 and cache.get("a") == 2
    cache.drop("a")
    cache.drop("a")
    assert cache.bytes == 0 and len(cache) == 0


def test_one_entry_larger_than_the_budget_is_still_kept_alone() -> None:
    cache = GenerationCache(max_bytes=100)
    cache.put("small", 1, 50)
    cache.put("huge", 2, 500)
    assert cache.get("huge") == 2 and cache.get("small") is MISSING and cache.bytes == 500


def test_core_makes_no_reference_cycles_accepting_or_rejecting() -> None:
    """The worker freezes its heap (workers.heap): that is only safe while core makes no cycles."""
    import gc

    import orjson

    from core import (
        UIError,
        accept_checkpoint,
        advance_ui_stream,
        evaluate_derived,
        initial_state,
        parse_document,
        start_ui_stream,
    )
    from core.stream.lifecycle import resume_ui_stream
    from tests.unit.documents import base_document

    def churn() -> None:
        document = parse_document(base_document())
        evaluate_derived(document, initial_state(document))
        state = start_ui_stream(base_document(), "call-1", 1)
        root = state.document["root"]
        frame = orjson.loads(orjson.dumps(state.checkpoint))
        received = accept_checkpoint(None, frame)
        state = resume_ui_stream(frame, frame_count=1, byte_count=100)
        for i in range(3):
            props = {**root["props"], "gap": ["sm", "md"][i % 2]}
            state = advance_ui_stream(state, {"type": "update", "nodeId": root["id"], "props": props})
            received = accept_checkpoint(received, orjson.loads(orjson.dumps(state.checkpoint)))
        for bad in ({**base_document(), "extra": 1}, {"type": "update", "nodeId": "nope", "props": {}}):
            with contextlib.suppress(UIError):
                parse_document(bad) if "version" in bad else advance_ui_stream(state, bad)

    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        churn()
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_hostile_inputs_to_every_public_core_function_leave_no_cyclic_garbage() -> None:
    import gc

    from bench.fuzz import run

    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        tally, _ = run("core", seconds=60, seed=5, max_inputs=1_500)
        assert tally.inputs == 1_500
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_generations_are_equal_by_every_stored_field_and_never_by_their_core_state() -> None:
    stored = {"ui_id": "u", "generation": 1, "source": "c1", "seq": 2, "revision": 1, "status": "streaming",
              "frames": 2, "bytes": 10, "checkpoint": "{}", "last_call": "c2", "last_digest": "d",
              "last_receipt": "r", "call_ids": frozenset({"a:"}), "facts": "1 3 0", "seal": "s", "retired": "",
              "snapshot_digest": "0" * 64}
    # a new attribute must be listed here and compared (a compiled class lists them in `__mypyc_attrs__`)
    assert set(stored) | {"state", "restorable", "snapshots"} == set(getattr(Generation, "__slots__", None)
                                                        or Generation.__mypyc_attrs__)
    base = Generation(**stored)
    document = json.loads((Path(__file__).resolve().parents[2] / "examples" / "stream-initial.json").read_text("utf-8"))
    assert base == Generation(**stored, state=start_ui_stream(document, "c1", 1))
    for name, value in stored.items():
        other = {**stored, name: frozenset({"b:"}) if name == "call_ids" else value + 1 if isinstance(value, int)
                 else value + "x"}
        assert base != Generation(**other), name
