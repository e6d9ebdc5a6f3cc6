"""The component stream protocol (seed 000 section 12): producer, receiver, envelope."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from core.document.model import parse_document
from core.errors import UNKNOWN_PROPERTY, UISchemaError, UIStreamError
from core.json._frozen import thaw
from core.stream.lifecycle import UIStreamState, accept_checkpoint, advance_ui_stream, start_ui_stream

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ENVELOPE_KEYS = {
    "protocol", "version", "sourceCallId", "uiId", "generation", "seq",
    "baseRevision", "revision", "type", "snapshot",
}  # fmt: skip


def load(name: str) -> Any:
    return json.loads((EXAMPLES / name).read_text(encoding="utf-8"))


def wire(state: UIStreamState) -> dict:
    """The frame as a client decodes it from the wire."""
    return json.loads(json.dumps(state.checkpoint))


def json_bytes(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def rejected(call, *args) -> list[tuple[str, str]]:
    with pytest.raises(UIStreamError) as caught:
        call(*args)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def paths(call, *args) -> list[str]:
    return [path for path, _ in rejected(call, *args)]


def find(node: Any, node_id: str) -> Any:
    if node["id"] == node_id:
        return node
    for child in node.get("children", ()):
        found = find(child, node_id)
        if found is not None:
            return found
    return None


@pytest.fixture
def initial() -> dict:
    return load("stream-initial.json")


@pytest.fixture
def mutations() -> list[dict]:
    return load("stream-mutations.json")


@pytest.fixture
def opened(initial) -> UIStreamState:
    return start_ui_stream(initial, "call_open-1", 1)


def run(state: UIStreamState, events: list[dict]) -> list[UIStreamState]:
    states = [state]
    for event in events:
        states.append(advance_ui_stream(states[-1], event))
    return states


# A document with Select fields, for the freeze rules.
def select_document() -> dict:
    def select(node_id: str, field: str, values: list[str]) -> dict:
        options = [{"label": value.title(), "value": value} for value in values]
        return {"id": node_id, "type": "Select", "props": {"label": "Pick", "bind": field, "options": options}}

    return {
        "version": "1.0", "id": "picker", "mode": "interactive_ui", "title": "Picker",
        "state": {
            "color": {"type": "string", "initial": "red"},
            "size": {"type": "string", "initial": "s"},
            "note": {"type": "string", "initial": "n"},
        },
        "derived": {},
        "root": {
            "id": "root", "type": "Column", "props": {},
            "children": [
                select("color-a", "color", ["red", "green"]),
                select("color-b", "color", ["green", "red"]),
                {"id": "size-box", "type": "Card", "props": {}, "children": [select("size-only", "size", ["s", "m"])]},
                {"id": "hello", "type": "Text", "props": {"text": "hi"}},
            ],
        },
    }  # fmt: skip


@pytest.fixture
def picker() -> UIStreamState:
    return start_ui_stream(select_document(), "call-2", 7)


# ------------------------------------------------------------------ the example flow


def test_the_example_flow_emits_every_frame_with_exact_cursors(opened, mutations):
    states = run(opened, [*mutations, {"type": "complete"}])
    cursors = [
        (s.checkpoint["type"], s.checkpoint["seq"], s.checkpoint["baseRevision"], s.checkpoint["revision"], s.status)
        for s in states
    ]
    assert cursors == [
        ("snapshot", 1, None, 0, "streaming"),
        ("add", 2, 0, 1, "streaming"),
        ("update", 3, 1, 2, "streaming"),
        ("remove", 4, 2, 3, "streaming"),
        ("complete", 5, 3, 3, "complete"),
    ]


def test_the_example_flow_reaches_the_document_the_mutations_describe(initial, opened, mutations):
    expected = copy.deepcopy(initial)
    card = find(expected["root"], "summary-card")
    card["children"].insert(2, mutations[0]["node"])
    card["props"] = mutations[1]["props"]
    expected["root"]["children"] = [c for c in expected["root"]["children"] if c["id"] != "loading"]
    final = run(opened, mutations)[-1]
    assert thaw(final.document) == expected
    assert final.document == parse_document(expected)


def test_every_frame_carries_exactly_the_envelope_fields_and_a_valid_snapshot(opened, mutations):
    for state in run(opened, [*mutations, {"type": "cancel", "message": "stopped"}]):
        frame = wire(state)
        extra = {"message"} if state.status == "cancel" else set()
        assert set(frame) == ENVELOPE_KEYS | extra
        assert frame["protocol"] == "dsh.intelligent-ui.stream" and frame["version"] == "1.0"
        assert frame["sourceCallId"] == "call_open-1" and frame["uiId"] == "sales-report"
        assert frame["generation"] == 1
        parse_document(frame["snapshot"])


def test_the_bookkeeping_counts_frames_and_their_exact_json_bytes(opened, mutations):
    states = run(opened, [*mutations, {"type": "error", "message": "model failed"}])
    total = 0
    for count, state in enumerate(states, start=1):
        total += json_bytes(wire(state))
        assert (state.frame_count, state.byte_count) == (count, total)
    assert sorted(states[-1].digests) == [1, 2, 3, 4, 5]


def test_a_receiver_fed_the_frames_in_order_ends_equal_to_the_producer(opened, mutations):
    states = run(opened, [*mutations, {"type": "complete"}])
    received = None
    for state in states:
        received = accept_checkpoint(received, wire(state))
        assert received == state
    assert received.status == "complete"
    assert received.digests == states[-1].digests


def test_the_state_and_its_checkpoint_are_immutable(opened):
    with pytest.raises(dataclasses.FrozenInstanceError):
        opened.status = "complete"  # type: ignore[misc]
    with pytest.raises(TypeError):
        opened.checkpoint["seq"] = 9  # type: ignore[index]
    with pytest.raises(TypeError):
        opened.document["root"]["children"].append({})


def test_no_field_of_a_state_can_be_assigned_deleted_or_added_and_a_copy_is_the_state(opened, mutations):
    state = run(opened, mutations)[-1]
    for name in ("checkpoint", "status", "frame_count", "byte_count", "_log", "_memo", "_built", "extra"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(state, name, None)
    for name in ("checkpoint", "_memo", "extra"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(state, name)
    assert copy.copy(state) is state and copy.deepcopy(state) is state
    assert state == run(opened, mutations)[-1] and state.digests  # unchanged by the attempts


def test_unchanged_subtrees_keep_their_object_identity_across_patches(opened, mutations):
    added, updated, removed = run(opened, mutations)[1:]
    before = opened.document["root"]
    assert find(added.document["root"], "loading") is find(before, "loading")
    assert find(added.document["root"], "units-input") is find(before, "units-input")
    assert added.document["state"] is opened.document["state"]
    assert find(updated.document["root"], "revenue-result") is find(added.document["root"], "revenue-result")
    assert find(updated.document["root"], "summary-card") is not find(added.document["root"], "summary-card")
    assert find(removed.document["root"], "summary-card") is find(updated.document["root"], "summary-card")
    assert removed.document["root"]["props"] is before["props"]


def test_a_terminal_frame_keeps_the_very_same_snapshot(opened):
    done = advance_ui_stream(opened, {"type": "complete"})
    assert done.document is opened.document
    assert (done.checkpoint["seq"], done.checkpoint["revision"]) == (2, 0)


# ------------------------------------------------------------------ start_ui_stream


def test_start_returns_the_initial_snapshot_frame(initial):
    state = start_ui_stream(initial, "c", 2.0)
    assert state.checkpoint["generation"] == 2 and type(state.checkpoint["generation"]) is int
    assert (state.seq, state.revision, state.checkpoint["baseRevision"]) == (1, 0, None)
    assert state.ui_id == initial["id"] and state.status == "streaming"


@pytest.mark.parametrize("source", ["", "x" * 257, "caf\u00e9", "tab\there", 12, None])
def test_start_rejects_a_source_call_id_that_is_not_short_printable_ascii(initial, source):
    assert paths(start_ui_stream, initial, source, 1) == ["/sourceCallId"]


@pytest.mark.parametrize("generation", [0, 1_000_000_001, 1.5, True, "1", None])
def test_start_rejects_a_generation_outside_one_to_a_billion(initial, generation):
    assert paths(start_ui_stream, initial, "c", generation) == ["/generation"]


def test_start_rejects_an_invalid_document_with_its_document_path(initial):
    initial["root"]["children"][0]["props"]["label"] = 5
    assert paths(start_ui_stream, initial, "c", 1) == ["/root/children/0/props/label"]


# ------------------------------------------------------------------ advance: event shapes


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ([], [""]),
        ({"type": "replace"}, ["/type"]),
        ({"parentId": "report"}, ["/type"]),
        ({"type": "add", "parentId": "report", "index": 0}, ["/node"]),
        ({"type": "add", "parentId": "report", "index": 0, "node": [], "extra": 1}, ["", "/node"]),
        ({"type": "add", "parentId": 3, "index": 0, "node": {}}, ["/parentId"]),
        ({"type": "update", "nodeId": "loading"}, ["/props"]),
        ({"type": "update", "nodeId": "loading", "props": {}, "type2": 1}, [""]),
        ({"type": "update", "nodeId": "loading", "props": {}, "children": []}, [""]),
        ({"type": "update", "nodeId": "loading", "props": "x"}, ["/props"]),
        ({"type": "remove"}, ["/nodeId"]),
        ({"type": "remove", "nodeId": "loading", "index": 0}, [""]),
        ({"type": "complete", "reason": "x"}, [""]),
        ({"type": "error", "message": 5}, ["/message"]),
        ({"type": "cancel", "message": "x" * 513}, ["/message"]),
    ],
)
def test_an_event_of_the_wrong_shape_is_rejected_with_event_paths(opened, event, expected):
    assert paths(advance_ui_stream, opened, event) == expected


@pytest.mark.parametrize(
    ("event", "path", "code"),
    [
        ({"type": "add", "parentId": "nowhere", "index": 0}, "/parentId", "not_found"),
        ({"type": "add", "parentId": "loading", "index": 0}, "/parentId", "not_layout"),
        ({"type": "add", "parentId": "report", "index": 3}, "/index", "range"),
        ({"type": "add", "parentId": "report", "index": -1}, "/index", "range"),
        ({"type": "add", "parentId": "report", "index": 0.5}, "/index", "type"),
        ({"type": "add", "parentId": "report", "index": True}, "/index", "type"),
    ],
)
def test_an_add_needs_an_existing_layout_parent_and_an_index_within_its_children(opened, event, path, code):
    event["node"] = {"id": "fresh", "type": "Text", "props": {"text": "t"}}
    assert rejected(advance_ui_stream, opened, event) == [(path, code)]


def test_an_add_accepts_the_last_position_and_an_integral_float_index(opened):
    end = advance_ui_stream(opened, {"type": "add", "parentId": "report", "index": 2.0,
                                     "node": {"id": "fresh", "type": "Text", "props": {"text": "t"}}})
    assert [c["id"] for c in end.document["root"]["children"]] == ["loading", "summary-card", "fresh"]


def test_an_update_or_remove_of_an_unknown_node_is_rejected_at_node_id(opened):
    assert paths(advance_ui_stream, opened, {"type": "update", "nodeId": "ghost", "props": {}}) == ["/nodeId"]
    assert paths(advance_ui_stream, opened, {"type": "remove", "nodeId": "ghost"}) == ["/nodeId"]


def test_the_root_cannot_be_removed(opened):
    assert rejected(advance_ui_stream, opened, {"type": "remove", "nodeId": "report"}) == [("/nodeId", "root")]


def test_a_mutation_over_64_kib_is_rejected_before_anything_else(opened):
    event = {"type": "update", "nodeId": "ghost", "props": {"label": "x" * 65_536}}
    assert rejected(advance_ui_stream, opened, event) == [("", "too_large")]


def test_unsafe_json_in_an_event_is_rejected_relative_to_the_event(opened):
    event = {"type": "update", "nodeId": "loading", "props": {"label": float("nan")}}
    assert paths(advance_ui_stream, opened, event) == ["/props/label"]


# ------------------------------------------------------------------ advance: the candidate


def test_an_added_subtree_with_a_duplicate_id_is_rejected_at_its_document_path(opened):
    event = {"type": "add", "parentId": "summary-card", "index": 2,
             "node": {"id": "units-input", "type": "Text", "props": {"text": "again"}}}
    assert paths(advance_ui_stream, opened, event) == ["/root/children/1/children/2/id"]


def test_an_added_subtree_is_validated_in_full_with_document_paths(opened):
    node = {"id": "box", "type": "Row", "props": {}, "children": [
        {"id": "fine", "type": "Text", "props": {"text": "ok"}},
        {"id": "bad", "type": "Widget", "props": {}},
        {"id": "worse", "type": "Text", "props": {"text": {"state": "units"}}},
    ]}  # fmt: skip
    event = {"type": "add", "parentId": "report", "index": 1, "node": node}
    assert paths(advance_ui_stream, opened, event) == [
        "/root/children/1/children/1/type",
        "/root/children/1/children/2/props/text",
    ]


def test_an_update_replaces_all_props_and_is_validated_at_the_node(opened):
    event = {"type": "update", "nodeId": "units-input", "props": {"label": "Units"}}
    assert paths(advance_ui_stream, opened, event) == ["/root/children/1/children/0/props/bind"]
    state = advance_ui_stream(opened, {"type": "update", "nodeId": "loading", "props": {}})
    assert state.document["root"]["children"][0] == {"id": "loading", "type": "Loading", "props": {}}


def test_a_form_cannot_be_added_inside_a_form(opened):
    form = {"id": "f1", "type": "Form", "props": {"submitLabel": "Go", "action": {"type": "reset"}}, "children": []}
    state = advance_ui_stream(opened, {"type": "add", "parentId": "report", "index": 0, "node": form})
    inner = {**form, "id": "f2"}
    assert paths(advance_ui_stream, state, {"type": "add", "parentId": "f1", "index": 0, "node": inner}) == [
        "/root/children/0/children/0"
    ]


def test_an_added_node_nested_beyond_the_json_depth_reports_what_a_full_parse_reports(opened):
    deep: Any = "x"
    for _ in range(120):
        deep = [deep]
    node = {"id": "deep", "type": "Text", "props": {"text": {"expr": {"op": "concat", "args": deep}}}}
    event = {"type": "add", "parentId": "summary-card", "index": 0, "node": node}
    candidate = copy.deepcopy(load("stream-initial.json"))
    candidate["root"]["children"][1]["children"].insert(0, node)
    with pytest.raises(UISchemaError) as expected:
        parse_document(candidate)
    with pytest.raises(UIStreamError) as caught:
        advance_ui_stream(opened, event)
    assert caught.value.issues == expected.value.issues


def test_a_rejected_event_leaves_the_current_state_untouched(opened, mutations):
    before = wire(opened)
    with pytest.raises(UIStreamError):
        advance_ui_stream(opened, {"type": "remove", "nodeId": "report"})
    assert wire(opened) == before
    assert advance_ui_stream(opened, mutations[0]) == run(start_ui_stream(load("stream-initial.json"),
                                                                           "call_open-1", 1), mutations[:1])[-1]


# ------------------------------------------------------------------ advance: freeze rules


def test_an_update_cannot_change_the_option_set_of_a_select(picker):
    props = {"label": "Pick", "bind": "color", "options": [{"label": "R", "value": "red"}, {"label": "B", "value": "blue"}]}
    event = {"type": "update", "nodeId": "color-b", "props": props}
    # The document itself already rejects two Selects of one field with different sets.
    assert paths(advance_ui_stream, picker, event) == ["/root/children/1/props/options"]
    only = advance_ui_stream(picker, {"type": "remove", "nodeId": "color-a"})
    assert rejected(advance_ui_stream, only, {**event}) == [("/root/children/0/props/options", "frozen_domain")]


def test_an_update_may_relabel_and_reorder_a_selects_options(picker):
    props = {"label": "Colour", "bind": "color", "options": [{"label": "G", "value": "green"}, {"label": "R", "value": "red"}]}
    state = advance_ui_stream(picker, {"type": "update", "nodeId": "color-a", "props": props})
    assert state.document["root"]["children"][0]["props"]["label"] == "Colour"


def test_a_new_select_must_reuse_its_fields_option_set(picker):
    node = {"id": "more", "type": "Select", "props": {"label": "L", "bind": "size",
            "options": [{"label": "S", "value": "s"}, {"label": "M", "value": "m"}, {"label": "L", "value": "l"}]}}
    event = {"type": "add", "parentId": "root", "index": 4, "node": node}
    assert rejected(advance_ui_stream, picker, event) == [("/root/children/4/props/options", "select_domain")]
    node["props"]["options"] = node["props"]["options"][1::-1]
    assert advance_ui_stream(picker, event).revision == 1


def test_a_first_select_on_a_free_field_would_narrow_its_domain_and_is_rejected(picker):
    node = {"id": "noted", "type": "Select", "props": {"label": "N", "bind": "note", "options": [{"label": "N", "value": "n"}]}}
    event = {"type": "add", "parentId": "size-box", "index": 1, "node": node}
    assert rejected(advance_ui_stream, picker, event) == [("/root/children/2/children/1/props/options", "frozen_domain")]


def test_removing_the_last_select_of_a_field_is_rejected_but_not_one_of_two(picker):
    assert rejected(advance_ui_stream, picker, {"type": "remove", "nodeId": "size-box"}) == [
        ("/root/children/2/children/0", "frozen_domain")
    ]
    one_left = advance_ui_stream(picker, {"type": "remove", "nodeId": "color-a"})
    assert rejected(advance_ui_stream, one_left, {"type": "remove", "nodeId": "color-b"}) == [
        ("/root/children/0", "frozen_domain")
    ]


def test_a_removed_node_id_may_come_back_only_with_its_type(picker):
    gone = advance_ui_stream(picker, {"type": "remove", "nodeId": "hello"})
    event = {"type": "add", "parentId": "root", "index": 0,
             "node": {"id": "hello", "type": "Badge", "props": {"text": "again"}}}
    assert rejected(advance_ui_stream, gone, event) == [("/root/children/0/type", "frozen")]
    event["node"]["type"] = "Text"
    assert advance_ui_stream(gone, event).document["root"]["children"][0]["props"]["text"] == "again"


# ------------------------------------------------------------------ advance: terminal and budgets


@pytest.mark.parametrize("kind", ["complete", "cancel", "error"])
def test_after_a_terminal_event_nothing_more_applies(opened, mutations, kind):
    ended = advance_ui_stream(opened, {"type": kind, "message": "bye"})
    assert ended.status == kind and ended.checkpoint["message"] == "bye"
    for event in [mutations[0], {"type": "complete"}, {"type": kind}]:
        assert rejected(advance_ui_stream, ended, event) == [("", "ended")]


def test_the_frame_budget_keeps_seq_256_for_a_terminal_frame(opened):
    state = opened
    for n in range(254):
        state = advance_ui_stream(state, {"type": "update", "nodeId": "loading", "props": {"label": f"step {n}"}})
    assert (state.seq, state.revision) == (255, 254)
    assert rejected(advance_ui_stream, state, {"type": "update", "nodeId": "loading", "props": {}}) == [("", "budget")]
    done = advance_ui_stream(state, {"type": "complete"})
    assert (done.seq, done.revision, done.frame_count) == (256, 254, 256)


def big_document(text_bytes: int) -> dict:
    chunks = [{"id": f"md{i}", "type": "Markdown", "props": {"text": "m" * 16_000}} for i in range(text_bytes // 16_000)]
    return {"version": "1.0", "id": "big", "mode": "structured_ui", "title": "Big", "state": {}, "derived": {},
            "root": {"id": "root", "type": "Column", "props": {}, "children": chunks}}


def test_the_byte_budget_always_leaves_room_for_one_maximal_terminal_frame():
    state = start_ui_stream(big_document(240_000), "c", 1)
    frames = [state]
    while True:
        try:
            state = advance_ui_stream(state, {"type": "update", "nodeId": "md0", "props": {"text": f"{len(frames)}"
                                                                                           + "m" * 15_990}})
        except UIStreamError as error:
            assert [(i.path, i.code) for i in error.issues] == [("", "budget")]
            break
        frames.append(state)
    assert state.byte_count + 266_240 <= 16_777_216 < state.byte_count + 2 * 266_240
    done = advance_ui_stream(state, {"type": "cancel", "message": "x" * 512})
    assert done.byte_count <= 16_777_216 and done.status == "cancel"
    received = None
    for each in frames:
        received = accept_checkpoint(received, wire(each))
    one_more = evolve(wire(state), state.seq + 1, lambda d: d["root"]["children"][1]["props"].update(text="new"))
    assert rejected(accept_checkpoint, received, one_more) == [("", "budget")]
    assert accept_checkpoint(received, wire(done)) == done


def test_a_patch_that_pushes_the_document_over_its_byte_limit_is_rejected_as_a_full_parse_would():
    state = start_ui_stream(big_document(256_000), "c", 1)
    node = {"id": "extra", "type": "Markdown", "props": {"text": "z" * 16_000}}
    event = {"type": "add", "parentId": "root", "index": 0, "node": node}
    assert state.byte_count < 262_144
    candidate = {**thaw(state.document), "root": {**thaw(state.document["root"])}}
    candidate["root"]["children"].insert(0, node)
    with pytest.raises(UISchemaError) as expected:
        parse_document(candidate)
    with pytest.raises(UIStreamError) as caught:
        advance_ui_stream(state, event)
    assert caught.value.issues == expected.value.issues
    assert [(i.path, i.code) for i in caught.value.issues] == [("", "too_large")]


def test_a_structured_ui_stream_cannot_gain_an_input():
    state = start_ui_stream(big_document(16_000), "c", 1)
    node = {"id": "typed", "type": "Input", "props": {"label": "L", "bind": "x"}}
    event = {"type": "add", "parentId": "root", "index": 1, "node": node}
    assert paths(advance_ui_stream, state, event) == ["/root/children/1/type", "/root/children/1/props/bind"]


# ------------------------------------------------------------------ the checkpoint envelope


def frame_with(state: UIStreamState, **changes: Any) -> dict:
    frame = wire(state)
    frame.update(changes)
    return frame


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"protocol": "dsh.intelligent-ui"}, "/protocol"),
        ({"version": "1.1"}, "/version"),
        ({"version": 1.0}, "/version"),
        ({"sourceCallId": ""}, "/sourceCallId"),
        ({"uiId": "9lives"}, "/uiId"),
        ({"generation": 0}, "/generation"),
        ({"generation": 1_000_000_001}, "/generation"),
        ({"generation": "1"}, "/generation"),
        ({"seq": 0}, "/seq"),
        ({"seq": 257}, "/seq"),
        ({"seq": 2.5}, "/seq"),
        ({"revision": -1}, "/revision"),
        ({"revision": 257}, "/revision"),
        ({"baseRevision": 257}, "/baseRevision"),
        ({"baseRevision": False}, "/baseRevision"),
        ({"type": "patch"}, "/type"),
        ({"snapshot": []}, "/snapshot"),
        ({"message": "m" * 513}, "/message"),
        ({"message": None}, "/message"),
    ],
)
def test_an_envelope_field_out_of_its_domain_is_rejected_at_its_path(opened, changes, path):
    assert paths(accept_checkpoint, None, frame_with(opened, **changes)) == [path]


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"seq": 1, "revision": 1, "baseRevision": 0, "type": "add"}, "/seq"),
        ({"seq": 3, "revision": 3, "baseRevision": 3, "type": "complete"}, "/seq"),
        ({"seq": 2, "revision": 0, "baseRevision": 0}, "/baseRevision"),
        ({"seq": 2, "revision": 1, "baseRevision": None, "type": "update"}, "/baseRevision"),
        ({"seq": 3, "revision": 2, "baseRevision": 0, "type": "add"}, "/revision"),
        ({"seq": 3, "revision": 1, "baseRevision": 1, "type": "remove"}, "/revision"),
        ({"seq": 4, "revision": 2, "baseRevision": 1, "type": "cancel"}, "/revision"),
    ],
)
def test_the_envelope_arithmetic_of_seq_and_revisions_is_enforced(opened, changes, path):
    assert paths(accept_checkpoint, None, frame_with(opened, **changes)) == [path]


def test_the_envelope_arithmetic_accepts_each_frame_kind_at_its_rule(opened):
    for changes in [
        {"seq": 9, "revision": 3, "baseRevision": None, "type": "snapshot"},
        {"seq": 9, "revision": 4, "baseRevision": 3, "type": "update"},
        {"seq": 9, "revision": 4, "baseRevision": 4, "type": "error", "message": ""},
    ]:
        assert accept_checkpoint(None, frame_with(opened, **changes)).seq == 9


def test_an_unknown_or_missing_envelope_field_is_rejected(opened):
    assert rejected(accept_checkpoint, None, frame_with(opened, extra=1)) == [("", "unknown_property")]
    frame = wire(opened)
    del frame["baseRevision"]
    assert paths(accept_checkpoint, None, frame) == ["/baseRevision"]
    with pytest.raises(UIStreamError) as caught:
        accept_checkpoint(None, frame_with(opened, extra=1))
    assert caught.value.issues[0].message == UNKNOWN_PROPERTY


def test_a_frame_over_266240_bytes_is_rejected_whole():
    frame = {"protocol": "dsh.intelligent-ui.stream", "snapshot": "x" * 266_240}
    assert rejected(accept_checkpoint, None, frame) == [("", "too_large")]


def test_the_snapshot_is_validated_again_with_snapshot_paths(opened):
    frame = wire(opened)
    frame["snapshot"]["root"]["children"][1]["props"]["gap"] = "xl"
    assert paths(accept_checkpoint, None, frame) == ["/snapshot/root/children/1/props/gap"]


def test_the_ui_id_must_be_the_snapshots_document_id(opened):
    assert rejected(accept_checkpoint, None, frame_with(opened, uiId="other")) == [("/uiId", "binding")]


def test_a_non_object_frame_or_state_is_a_stream_error(opened):
    assert paths(accept_checkpoint, None, [1]) == [""]
    assert paths(accept_checkpoint, "state", wire(opened)) == [""]
    assert paths(advance_ui_stream, None, {"type": "complete"}) == [""]


# ------------------------------------------------------------------ accept_checkpoint


@pytest.fixture
def frames(opened, mutations) -> list[dict]:
    return [wire(state) for state in run(opened, [*mutations, {"type": "complete"}])]


def test_the_first_visible_frame_may_start_anywhere_in_the_history(frames):
    state = accept_checkpoint(None, frames[3])
    assert (state.seq, state.revision, state.frame_count, state.status) == (4, 3, 1, "streaming")
    assert state.byte_count == json_bytes(frames[3])


def test_an_identical_repeated_frame_returns_the_very_same_state(frames):
    state = accept_checkpoint(accept_checkpoint(None, frames[0]), frames[1])
    assert accept_checkpoint(state, copy.deepcopy(frames[1])) is state
    assert accept_checkpoint(state, copy.deepcopy(frames[0])) is state


def test_the_same_seq_with_other_content_is_a_conflict(frames):
    state = accept_checkpoint(None, frames[1])
    other = copy.deepcopy(frames[1])
    other["snapshot"]["title"] = "Another title"
    assert rejected(accept_checkpoint, state, other) == [("/seq", "conflict")]


def test_a_stale_frame_never_overwrites_the_newer_view(frames):
    state = accept_checkpoint(None, frames[3])
    assert accept_checkpoint(state, frames[1]) is state
    assert accept_checkpoint(state, frames[0]) is state


def test_a_gap_is_healed_by_the_full_snapshot(frames):
    state = accept_checkpoint(accept_checkpoint(None, frames[0]), frames[3])
    assert state.document == frames[3]["snapshot"] and state.frame_count == 2
    assert sorted(state.digests) == [1, 4]


def test_an_older_generation_never_overwrites_and_a_newer_one_replaces(initial, frames):
    newer = wire(start_ui_stream(initial, "call_open-1", 2))
    state = accept_checkpoint(accept_checkpoint(None, frames[2]), newer)
    assert (state.generation, state.seq, state.frame_count) == (2, 1, 1)
    assert accept_checkpoint(state, frames[4]) is state


@pytest.mark.parametrize(("field", "value"), [("sourceCallId", "call-other")])
def test_a_frame_of_another_source_is_rejected(frames, field, value):
    state = accept_checkpoint(None, frames[0])
    assert rejected(accept_checkpoint, state, {**frames[1], field: value}) == [("/sourceCallId", "binding")]


def test_a_frame_of_another_ui_is_rejected(frames, picker):
    state = accept_checkpoint(None, frames[0])
    other = wire(advance_ui_stream(start_ui_stream(select_document(), "call_open-1", 1), {"type": "complete"}))
    assert rejected(accept_checkpoint, state, other) == [("/uiId", "binding")]


def test_a_terminal_frame_ends_the_generation_for_the_receiver(frames):
    done = accept_checkpoint(None, frames[4])
    assert done.status == "complete"
    later = {**frames[4], "seq": 6, "type": "cancel"}
    assert rejected(accept_checkpoint, done, later) == [("/seq", "ended")]
    assert accept_checkpoint(done, frames[2]) is done


def test_the_structure_revision_never_goes_backwards(frames):
    state = accept_checkpoint(None, frames[2])  # seq 3, revision 2
    back = {**frames[1], "seq": 5, "type": "complete", "baseRevision": 1, "revision": 1}
    assert rejected(accept_checkpoint, state, back) == [("/revision", "sequence")]


def test_a_consecutive_frame_needs_the_previous_revision_as_its_base(frames):
    state = accept_checkpoint(None, frames[1])  # seq 2, revision 1
    skewed = {**frames[4], "seq": 3, "baseRevision": 0, "revision": 0}
    assert rejected(accept_checkpoint, state, skewed) == [("/baseRevision", "sequence")]


def test_a_document_change_must_increase_the_revision(frames):
    state = accept_checkpoint(None, frames[1])  # seq 2, revision 1
    same_revision = {**frames[2], "seq": 4, "type": "complete", "baseRevision": 1, "revision": 1}
    assert rejected(accept_checkpoint, state, same_revision) == [("/revision", "sequence")]


def test_a_snapshot_frame_cannot_continue_a_generation(frames):
    state = accept_checkpoint(None, frames[0])
    again = {**frames[1], "seq": 2, "type": "snapshot", "baseRevision": None}
    assert rejected(accept_checkpoint, state, again) == [("/type", "sequence")]


def evolve(frame: dict, seq: int, change) -> dict:
    """A later update frame of the same generation with a changed snapshot."""
    later = copy.deepcopy(frame)
    later.update(seq=seq, type="update", baseRevision=seq - 2, revision=seq - 1)
    change(later["snapshot"])
    return later


@pytest.mark.parametrize(
    ("change", "path", "code"),
    [
        (lambda d: d["state"]["note"].update(initial="m"), "/snapshot/state", "frozen"),
        (lambda d: d.update(version="1.1", actions={}), "/snapshot/version", "frozen"),
        (lambda d: d["root"].update(id="root2"), "/snapshot/root/id", "frozen"),
        (lambda d: d["root"].update(type="Row"), "/snapshot/root/type", "frozen"),
        (lambda d: d["root"]["children"][3].update(type="Badge"), "/snapshot/root/children/3/type", "frozen"),
        (lambda d: d["root"]["children"][2]["children"][0]["props"]["options"].append({"label": "L", "value": "l"}),
         "/snapshot/root/children/2/children/0/props/options", "frozen_domain"),
        (lambda d: d["root"]["children"].pop(2), "/snapshot/state/size", "frozen_domain"),
    ],
)
def test_the_receiver_enforces_the_generations_freeze_rules(picker, change, path, code):
    state = accept_checkpoint(None, wire(picker))
    assert rejected(accept_checkpoint, state, evolve(wire(picker), 3, change))[0] == (path, code)


def test_the_receiver_accepts_a_title_change_and_keeps_untouched_nodes_identical(picker):
    state = accept_checkpoint(None, wire(picker))
    later = accept_checkpoint(state, evolve(wire(picker), 2, lambda d: d.update(title="Renamed")))
    assert later.document["title"] == "Renamed"
    assert later.document["root"] is state.document["root"]
    retexted = evolve(wire(picker), 4, lambda d: d["root"]["children"][3]["props"].update(text="bye"))
    last = accept_checkpoint(later, retexted)
    old_children, new_children = later.document["root"]["children"], last.document["root"]["children"]
    assert [a is b for a, b in zip(old_children, new_children, strict=False)] == [True, True, True, False]
    assert last.document["state"] is later.document["state"]


def test_a_receiver_rejects_a_non_terminal_frame_at_seq_256_but_takes_a_terminal_one(frames):
    late = {**frames[1], "seq": 256, "baseRevision": 254, "revision": 255}
    assert rejected(accept_checkpoint, None, late) == [("", "budget")]
    final = {**frames[4], "seq": 256, "baseRevision": 254, "revision": 254}
    assert accept_checkpoint(None, final).status == "complete"


def test_a_received_state_can_be_advanced_by_a_resuming_producer(frames, mutations):
    resumed = accept_checkpoint(None, frames[2])
    state = advance_ui_stream(resumed, mutations[2])
    assert (state.seq, state.revision, state.frame_count) == (4, 3, 2)
    assert state.document == frames[3]["snapshot"]


def test_a_message_is_counted_in_utf8_bytes_as_javascript_serializes_it(opened):
    message = "caf\u00e9 \n\t\u0001 \u2028 \U0001F600 \"q\" \\"
    ended = advance_ui_stream(opened, {"type": "error", "message": message})
    assert ended.byte_count - opened.byte_count == json_bytes(wire(ended))
    assert accept_checkpoint(None, wire(ended)).byte_count == json_bytes(wire(ended))


def test_integral_floats_in_a_frame_come_back_as_integers(frames):
    frame = {**frames[1], "generation": 1.0, "seq": 2.0, "baseRevision": 0.0, "revision": 1.0}
    state = accept_checkpoint(None, frame)
    assert [type(state.checkpoint[k]) for k in ("generation", "seq", "baseRevision", "revision")] == [int] * 4
    assert accept_checkpoint(state, frames[1]) is state


def test_an_older_seen_seq_with_other_content_is_also_a_conflict(frames):
    state = accept_checkpoint(accept_checkpoint(None, frames[0]), frames[2])
    other = copy.deepcopy(frames[0])
    other["snapshot"]["title"] = "Changed"
    assert rejected(accept_checkpoint, state, other) == [("/seq", "conflict")]


def test_a_resumed_producer_keeps_the_stored_budget_counters():
    from core.stream.lifecycle import resume_ui_stream

    document = json.loads((EXAMPLES / "stream-initial.json").read_text())
    first = start_ui_stream(document, "call-1", 1)
    resumed = resume_ui_stream(first.checkpoint, frame_count=255, byte_count=first.byte_count)
    assert resumed.frame_count == 255 and resumed.checkpoint == first.checkpoint
    with pytest.raises(UIStreamError) as caught:
        advance_ui_stream(resumed, {"type": "remove", "nodeId": "loading"})
    assert caught.value.issues[0].code == "budget"
    assert advance_ui_stream(resumed, {"type": "complete"}).status == "complete"
    with pytest.raises(UIStreamError):
        resume_ui_stream(first.checkpoint, frame_count=0, byte_count=1)
    with pytest.raises(UIStreamError):
        resume_ui_stream(first.checkpoint, frame_count=True, byte_count=1)


def test_a_state_without_history_is_the_resumed_state_without_a_parse(opened, mutations):
    from core.json.canonical import hash_canonical_json
    from core.stream.lifecycle import resume_ui_stream

    full = run(opened, mutations)[-1]
    trimmed = full.without_history()
    resumed = resume_ui_stream(wire(full), frame_count=full.frame_count, byte_count=full.byte_count)
    assert trimmed == resumed and trimmed.checkpoint is full.checkpoint
    assert dict(trimmed.digests) == {full.seq: hash_canonical_json(full.checkpoint)} == dict(resumed.digests)
    assert trimmed.without_history() is trimmed
    assert full.digests.keys() == {1, 2, 3, 4}  # the original keeps its own history


def test_advancing_a_state_without_history_gives_the_same_frames(opened, mutations):
    kept, trimmed = opened, opened.without_history()
    for event in [*mutations, {"type": "complete"}]:
        kept, trimmed = advance_ui_stream(kept, event), advance_ui_stream(trimmed, event).without_history()
        assert trimmed.checkpoint == kept.checkpoint and trimmed.status == kept.status
        assert (trimmed.frame_count, trimmed.byte_count) == (kept.frame_count, kept.byte_count)
        assert trimmed.digests[trimmed.seq] == kept.digests[kept.seq]
    assert rejected(advance_ui_stream, trimmed, mutations[0]) == rejected(advance_ui_stream, kept, mutations[0])


def test_a_long_generation_without_history_keeps_the_memory_of_its_current_frame(opened):
    """A producer that stores each frame (the worker) must not keep every earlier frame alive:
    250 patches used to keep ~2.8 KiB each (720 KiB in all for this small document)."""
    import gc
    import tracemalloc

    def retained(patches: int) -> int:
        tracemalloc.start()
        try:
            state = opened.without_history()
            for i in range(patches):
                event = {"type": "update", "nodeId": "loading", "props": {"label": f"Revision {i}"}}
                state = advance_ui_stream(state, event).without_history()
            gc.collect()
            return tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()

    assert retained(250) < retained(5) + 64 * 1024


def _restore_case(change: str) -> tuple[Any, Any]:
    """A stored frame and its restore facts with one thing wrong."""
    from core.json._frozen import thaw

    document = json.loads((EXAMPLES / "stream-initial.json").read_text())
    state = start_ui_stream(document, "call-1", 1)
    frame, facts = thaw(state.checkpoint), state.restore_facts
    if change.startswith("facts:"):
        return frame, {"facts:none": None, "facts:list": list(facts), "facts:two": facts[:2],
                       "facts:float": (float(facts[0]), *facts[1:]), "facts:bool": (facts[0], True, facts[2]),
                       "facts:huge": (10**9, *facts[1:]), "facts:zero": (0, *facts[1:]),
                       "facts:expressions": (*facts[:2], 10**6)}[change]
    if change == "snapshot:not-object":
        frame["snapshot"] = [1, 2]
    elif change == "snapshot:no-root":
        del frame["snapshot"]["root"]
    elif change == "snapshot:duplicate-id":
        frame["snapshot"]["root"]["children"].append(dict(frame["snapshot"]["root"]["children"][0]))
    elif change == "snapshot:unknown-component":
        frame["snapshot"]["root"]["children"].append({"id": "x", "type": "Marquee", "props": {}})
    elif change == "snapshot:children-not-list":
        frame["snapshot"]["root"]["children"] = {"0": 1}
    elif change == "snapshot:set":
        frame["snapshot"]["title"] = {1, 2}
    elif change == "snapshot:nan":
        frame["snapshot"]["root"]["props"]["gap"] = float("nan")
    elif change == "snapshot:bad-state":
        frame["snapshot"]["state"] = {"x": {"type": "decimal"}}
    elif change == "envelope:seq":
        frame["seq"] = 0
    elif change == "envelope:uiId":
        frame["uiId"] = "another"
    elif change == "envelope:unknown-key":
        frame["extra"] = 1
    elif change == "envelope:lone-surrogate":
        frame["message"] = "\ud800"
    elif change == "envelope:int-key":  # an audit: compiled, a bare TypeError
        frame[1] = 1
    return frame, facts


@pytest.mark.parametrize(("change", "path", "code"), [
    ("facts:none", "/facts", "type"), ("facts:list", "/facts", "type"), ("facts:two", "/facts", "type"),
    ("facts:float", "/facts", "type"), ("facts:bool", "/facts", "type"),
    ("facts:huge", "/snapshot", "restore"), ("facts:zero", "/snapshot", "restore"),
    ("facts:expressions", "/snapshot", "restore"),
    ("snapshot:not-object", "/snapshot", "type"), ("snapshot:no-root", "/snapshot", "restore"),
    ("snapshot:duplicate-id", "/snapshot", "restore"), ("snapshot:unknown-component", "/snapshot", "restore"),
    ("snapshot:children-not-list", "/snapshot", "restore"), ("snapshot:set", "/snapshot", "restore"),
    ("snapshot:nan", "/snapshot", "restore"), ("snapshot:bad-state", "/snapshot/state/x/type", "enum"),
    ("envelope:seq", "/seq", "range"), ("envelope:uiId", "/uiId", "binding"),
    ("envelope:unknown-key", "", "unknown_property"), ("envelope:lone-surrogate", "/message", "unsafe_json"),
    ("envelope:int-key", "", "unsafe_json"),
])
def test_a_restore_refuses_what_no_stored_state_is_with_a_located_issue(change: str, path: str, code: str) -> None:
    from core.stream.lifecycle import restore_ui_stream, resume_ui_stream

    frame, facts = _restore_case(change)
    with pytest.raises(UIStreamError) as caught:
        restore_ui_stream(frame, frame_count=1, byte_count=100, facts=facts)
    issue = caught.value.issues[0]
    assert (issue.path, issue.code) == (path, code), caught.value.issues
    if not change.startswith("facts:"):  # what the full check of the same frame says first, where both see it
        with pytest.raises(UIStreamError) as full:
            resume_ui_stream(frame, frame_count=1, byte_count=100)
        if code != "restore":
            assert full.value.issues[0].path.startswith(path) and full.value.issues[0].code == code


@pytest.mark.parametrize(("change", "path", "code"), [
    ("facts:none", "/facts", "type"), ("facts:two", "/facts", "type"), ("facts:huge", "/snapshot", "restore"),
    ("snapshot:not-object", "/snapshot", "type"), ("snapshot:duplicate-id", "/snapshot", "restore"),
    ("snapshot:nan", "/snapshot", "restore"), ("snapshot:bad-state", "/snapshot/state/x/type", "enum"),
    ("envelope:seq", "/seq", "range"), ("envelope:uiId", "/uiId", "binding"),
    ("envelope:unknown-key", "", "unknown_property"), ("envelope:lone-surrogate", "/message", "unsafe_json"),
])
def test_a_restore_in_two_halves_refuses_what_the_whole_restore_refuses(change: str, path: str, code: str) -> None:
    """`restore_snapshot` then `restore_envelope` (a host sharing restored snapshots) say what
    `restore_ui_stream` says of the same frame and facts."""
    from core.stream.lifecycle import restore_envelope, restore_snapshot

    frame, facts = _restore_case(change)
    envelope = {key: value for key, value in frame.items() if key != "snapshot"}
    with pytest.raises(UIStreamError) as caught:
        restore_envelope(envelope, restore_snapshot(frame["snapshot"], facts=facts), frame_count=1, byte_count=100)
    assert (caught.value.issues[0].path, caught.value.issues[0].code) == (path, code), caught.value.issues


def test_an_envelope_restored_around_a_shared_snapshot_is_the_whole_restore() -> None:
    from core.stream.lifecycle import restore_envelope, restore_snapshot, restore_ui_stream

    frame, facts = _restore_case("none")
    snapshot = restore_snapshot(frame["snapshot"], facts=facts)
    envelope = {key: value for key, value in frame.items() if key != "snapshot"}
    whole = restore_ui_stream(frame, frame_count=1, byte_count=100, facts=facts)
    halves = restore_envelope(envelope, snapshot, frame_count=1, byte_count=100)
    assert halves == whole and halves.document.model == whole.document.model
    assert halves.restore_facts == whole.restore_facts
    assert halves.document is snapshot.document  # shared, not copied


@pytest.mark.parametrize(("envelope", "snapshot", "path", "code"), [
    ([], "own", "", "type"),
    ({1: "x"}, "own", "", "unsafe_json"),
    ("with-snapshot", "own", "/snapshot", "restore"),
    ("own", None, "/snapshot", "type"),
    ("own", "frame", "/snapshot", "type"),
])
def test_restore_envelope_refuses_what_is_not_an_envelope_and_a_restored_snapshot(
        envelope: Any, snapshot: Any, path: str, code: str) -> None:
    from core.stream.lifecycle import restore_envelope, restore_snapshot

    frame, facts = _restore_case("none")
    own = {key: value for key, value in frame.items() if key != "snapshot"}
    envelope = {"own": own, "with-snapshot": frame}.get(envelope, envelope) if isinstance(envelope, str) else envelope
    snapshot = {"own": restore_snapshot(frame["snapshot"], facts=facts), "frame": frame["snapshot"]}.get(
        snapshot, snapshot) if isinstance(snapshot, str) else snapshot
    with pytest.raises(UIStreamError) as caught:
        restore_envelope(envelope, snapshot, frame_count=1, byte_count=100)
    assert (caught.value.issues[0].path, caught.value.issues[0].code) == (path, code), caught.value.issues


def _removed_then_stored() -> tuple[Any, Any, Any]:
    """A producer that removed the `loading` node, its stored frame and restore facts."""
    from core.json._frozen import thaw

    state = start_ui_stream(json.loads((EXAMPLES / "stream-initial.json").read_text()), "call-1", 1)
    state = advance_ui_stream(state, {"type": "remove", "nodeId": "loading"})
    return state, thaw(state.checkpoint), state.restore_facts


READD = {"type": "add", "parentId": "report", "index": 0,
         "node": {"id": "loading", "type": "Text", "props": {"text": "back, as another type"}}}


@pytest.mark.parametrize("rebuild", ["resume", "restore", "envelope"])
def test_a_producer_rebuilt_with_its_retired_types_refuses_a_removed_id_of_another_type_as_the_live_one(
        rebuild: str) -> None:
    """Seed 000 §12: an existing node id never changes its component type within a generation;
    no frame says which ids were removed, so the host stores `retired_types` with the checkpoint."""
    from core.stream.lifecycle import restore_envelope, restore_snapshot, restore_ui_stream, resume_ui_stream

    live, frame, facts = _removed_then_stored()
    assert live.retired_types == {"loading": "Loading"}
    retired = json.loads(json.dumps(live.retired_types))
    counters = {"frame_count": live.frame_count, "byte_count": live.byte_count, "retired_types": retired}
    if rebuild == "resume":
        cold = resume_ui_stream(frame, **counters)
    elif rebuild == "restore":
        cold = restore_ui_stream(frame, facts=facts, **counters)
    else:
        envelope = {key: value for key, value in frame.items() if key != "snapshot"}
        cold = restore_envelope(envelope, restore_snapshot(frame["snapshot"], facts=facts), **counters)
    assert cold.retired_types == live.retired_types
    with pytest.raises(UIStreamError) as expected:
        advance_ui_stream(live, READD)
    with pytest.raises(UIStreamError) as got:
        advance_ui_stream(cold, READD)
    assert got.value.issues == expected.value.issues and expected.value.issues[0].code == "frozen"
    same_type = {**READD, "node": {"id": "loading", "type": "Loading", "props": {}}}
    assert advance_ui_stream(cold, same_type).without_history() == advance_ui_stream(live, same_type).without_history()


@pytest.mark.parametrize(("retired", "code"), [
    ([["loading", "Loading"]], "type"), ("loading", "type"), ({"loading": "Gadget"}, "type"),
    ({"loading": 1}, "type"), ({1: "Text"}, "type"), ({"summary-card": "Card"}, "restore"),
    ({"1-not-an-id": "Text"}, "format"), ({"__proto__": "Text"}, "format"), ({"a" * 65: "Text"}, "format"),
    ({"lone\ud800": "Text"}, "format"),
])
def test_retired_types_that_no_producer_has_are_refused(retired: Any, code: str) -> None:
    from core.stream.lifecycle import restore_ui_stream, resume_ui_stream

    live, frame, facts = _removed_then_stored()
    for rebuild in (lambda: resume_ui_stream(frame, frame_count=2, byte_count=live.byte_count, retired_types=retired),
                    lambda: restore_ui_stream(frame, frame_count=2, byte_count=live.byte_count, facts=facts,
                                              retired_types=retired)):
        with pytest.raises(UIStreamError) as caught:
            rebuild()
        assert [(issue.path, issue.code) for issue in caught.value.issues] == [("/retired_types", code)]
        assert "Gadget" not in str(caught.value)


def test_a_producer_that_removed_nothing_has_no_retired_types_and_takes_none_or_empty() -> None:
    from core.stream.lifecycle import resume_ui_stream

    state = start_ui_stream(json.loads((EXAMPLES / "stream-initial.json").read_text()), "call-1", 1)
    assert state.retired_types == {}
    frame = json.loads(json.dumps(state.checkpoint))
    for retired in (None, {}):
        assert resume_ui_stream(frame, frame_count=1, byte_count=state.byte_count, retired_types=retired) == state


def test_retired_types_follow_removes_and_re_adds_and_an_update_keeps_the_very_object() -> None:
    live, _, _ = _removed_then_stored()
    updated = advance_ui_stream(live, {"type": "update", "nodeId": "summary-card", "props": {"title": "T"}})
    assert updated.retired_types is live.retired_types  # unchanged: a host stores it again only when not
    back = advance_ui_stream(updated, {**READD, "node": {"id": "loading", "type": "Loading", "props": {}}})
    assert back.retired_types == {}
    removed = advance_ui_stream(back, {"type": "remove", "nodeId": "summary-card"})
    assert removed.retired_types == {"summary-card": "Card", "units-input": "NumberInput",
                                     "price-input": "NumberInput"}
    done = advance_ui_stream(removed, {"type": "complete"})
    assert done.retired_types is removed.retired_types


@pytest.mark.parametrize("junk", [None, {}, "document", 1])
def test_a_restored_snapshot_is_made_by_restore_snapshot_only(junk: Any) -> None:
    from core.stream.lifecycle import RestoredSnapshot

    with pytest.raises(UIStreamError) as caught:
        RestoredSnapshot(junk)
    assert [(issue.path, issue.code) for issue in caught.value.issues] == [("/snapshot", "type")]


def readded(frame: dict, kind: str, props: dict) -> dict:
    """The next add frame of `frame`'s generation, putting `loading` back as a `kind` node."""
    later = copy.deepcopy(frame)
    seq, revision = frame["seq"] + 1, frame["revision"] + 1
    later.update(seq=seq, type="add", baseRevision=revision - 1, revision=revision)
    later["snapshot"]["root"]["children"].insert(0, {"id": "loading", "type": kind, "props": props})
    return later


def test_a_receiver_keeps_a_removed_ids_type_for_the_generation(opened, mutations):
    # seed 000 §12: "已有节点 ID 不能换成另一种组件类型"; the producer refuses it (retired_types),
    # and a receiver that saw the remove accepted it while one that missed it refused it
    frames = [wire(state) for state in run(opened, mutations)]  # the last removes `loading`
    hostile = readded(frames[3], "Text", {"text": "spoofed"})
    expected = [("/snapshot/root/children/0/type", "frozen")]
    after_remove = accept_checkpoint(accept_checkpoint(None, frames[2]), frames[3])
    assert after_remove.retired_types == {"loading": "Loading"}
    assert rejected(accept_checkpoint, after_remove, hostile) == expected
    assert rejected(accept_checkpoint, accept_checkpoint(None, frames[2]), hostile) == expected  # missed it
    healed = accept_checkpoint(accept_checkpoint(None, frames[0]), frames[3])  # a gap over the remove
    assert rejected(accept_checkpoint, healed, hostile) == expected
    assert rejected(accept_checkpoint, healed, {**hostile, "seq": 7}) == expected  # and after a gap
    back = accept_checkpoint(after_remove, readded(frames[3], "Loading", {"label": "again"}))
    assert back.retired_types == {} and back.document["root"]["children"][0]["type"] == "Loading"


def test_a_receivers_retired_ids_serve_a_producer_advanced_from_it(opened, mutations):
    frames = [wire(state) for state in run(opened, mutations)]
    received = accept_checkpoint(accept_checkpoint(None, frames[2]), frames[3])
    add = {"type": "add", "parentId": "report", "index": 0,
           "node": {"id": "loading", "type": "Text", "props": {"text": "spoofed"}}}
    assert rejected(advance_ui_stream, received, add)[0][1] == "frozen"


def test_a_state_refuses_pickling_and_names_what_to_store_instead(initial: Any) -> None:
    # It failed with "'UIStreamState' object has no attribute '_built'" (pure) on its way out of
    # pickle; copies stay the state itself (immutable).
    import copy
    import pickle

    state = start_ui_stream(initial, "call-p", 1)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        with pytest.raises(TypeError, match="cannot be pickled: store its checkpoint, frame_count, byte_count and "
                                            "retired_types, and rebuild it with resume_ui_stream"):
            pickle.dumps(state, protocol=protocol)
    assert copy.copy(state) is state and copy.deepcopy(state) is state
