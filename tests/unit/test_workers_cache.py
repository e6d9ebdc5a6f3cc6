"""The process-wide generation cache: bounded by estimated bytes, least recently used first out."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from core.stream.lifecycle import start_ui_stream
from workers.sessions.cache import ENTRY_OVERHEAD, MISSING, PARSED_FACTOR, GenerationCache, estimate
from workers.sessions.store import Generation


def test_an_entry_is_estimated_at_its_parsed_size() -> None:
    assert estimate("x" * 1000) == ENTRY_OVERHEAD + PARSED_FACTOR * 1000
    assert estimate(None) == ENTRY_OVERHEAD


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
