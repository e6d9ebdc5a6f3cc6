"""Properties of the stream: rejected events leave no trace, the incremental patch path
agrees with a from-scratch parse, and any delivery of a generation converges."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.document.model import parse_document
from core.errors import UISchemaError, UIStreamError
from core.json._frozen import thaw
from core.json.canonical import canonical_json_string
from core.stream.lifecycle import (
    UIStreamState,
    accept_checkpoint,
    advance_ui_stream,
    restore_envelope,
    restore_snapshot,
    restore_ui_stream,
    resume_ui_stream,
    start_ui_stream,
)

LAYOUTS = ("Row", "Column", "Card", "Form")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def base_document() -> dict:
    def select(node_id: str, field: str, values: list[str]) -> dict:
        options = [{"label": value.upper(), "value": value} for value in values]
        return {"id": node_id, "type": "Select", "props": {"label": "Pick", "bind": field, "options": options}}

    return {
        "version": "1.0", "id": "playground", "mode": "interactive_ui", "title": "Playground",
        "state": {
            "color": {"type": "string", "initial": "red"},
            "size": {"type": "string", "initial": "s"},
            "name": {"type": "string", "initial": ""},
            "units": {"type": "number", "initial": 5, "min": 0, "max": 100, "step": 1},
        },
        "derived": {},
        "root": {"id": "root", "type": "Column", "props": {}, "children": [
            select("color-a", "color", ["red", "green"]),
            select("size-a", "size", ["s", "m"]),
            {"id": "hello", "type": "Text", "props": {"text": "hi"}},
            {"id": "box", "type": "Card", "props": {"title": "Box"}, "children": [
                {"id": "name-in", "type": "Input", "props": {"label": "Name", "bind": "name"}},
            ]},
        ]},
    }  # fmt: skip


def nodes_of(node: Any) -> list[Any]:
    found = [node]
    for child in node.get("children", ()):
        found.extend(nodes_of(child))
    return found


# ------------------------------------------------------------------ event strategies

NODE_IDS = st.sampled_from(["n1", "n2", "n3", "n4", "n5", "hello", "box", "color-a", "9bad"])
LEAF_PROPS = {
    "Text": st.sampled_from([{"text": "a"}, {"text": 1}, {"text": {"expr": {"state": "name"}}}, {"text": {"state": "x"}}]),
    "Badge": st.sampled_from([{"text": "b"}, {"text": "b", "tone": "success"}, {"text": "b", "tone": "loud"}]),
    "Loading": st.sampled_from([{}, {"label": "wait"}, {"label": 5}, {"bogus": 1}]),
    "Input": st.sampled_from([{"label": "L", "bind": "name"}, {"label": "L", "bind": "units"}, {"label": "L"}]),
    "NumberInput": st.sampled_from([{"label": "U", "bind": "units"}, {"label": "U", "bind": "units", "max": 50}]),
    "Select": st.sampled_from(
        [
            {"label": "C", "bind": "color", "options": [{"label": "G", "value": "green"}, {"label": "R", "value": "red"}]},
            {"label": "C", "bind": "color", "options": [{"label": "R", "value": "red"}, {"label": "B", "value": "blue"}]},
            {"label": "S", "bind": "size", "options": [{"label": "S", "value": "s"}, {"label": "M", "value": "m"}]},
            {"label": "N", "bind": "name", "options": [{"label": "E", "value": ""}]},
        ]
    ),
    "Widget": st.just({}),
}
LAYOUT_PROPS = {
    "Row": st.sampled_from([{}, {"gap": "sm"}, {"gap": "huge"}]),
    "Column": st.sampled_from([{}, {"gap": "lg"}]),
    "Card": st.sampled_from([{}, {"title": "T"}, {"title": 3}]),
    "Form": st.just({"submitLabel": "Go", "action": {"type": "reset"}}),
}


def leaf() -> st.SearchStrategy[dict]:
    return st.sampled_from(sorted(LEAF_PROPS)).flatmap(
        lambda kind: st.builds(lambda i, p: {"id": i, "type": kind, "props": p}, NODE_IDS, LEAF_PROPS[kind])
    )


def layout(children: st.SearchStrategy[dict]) -> st.SearchStrategy[dict]:
    return st.sampled_from(LAYOUTS).flatmap(
        lambda kind: st.builds(
            lambda i, p, c: {"id": i, "type": kind, "props": p, "children": c},
            NODE_IDS, LAYOUT_PROPS[kind], st.lists(children, max_size=2),
        )
    )  # fmt: skip


NODES = st.recursive(leaf(), layout, max_leaves=4)


@st.composite
def events(draw: Any, document: Any) -> Any:
    """One event against `document`: mostly well-aimed, sometimes malformed or misdirected."""
    existing = [node for node in nodes_of(document["root"])]
    ids = [node["id"] for node in existing] + ["ghost"]
    kind = draw(st.sampled_from(["add", "add", "update", "update", "remove", "junk"]))
    if kind == "add":
        layouts = [node for node in existing if node["type"] in LAYOUTS]
        parent = draw(st.sampled_from(layouts * 6 + existing))
        width = len(parent.get("children", ()))
        index = draw(st.sampled_from([*range(width + 1)] * 4 + [-1, width + 1]))
        parent_id = draw(st.sampled_from([parent["id"]] * 5 + ["ghost"]))
        return {"type": "add", "parentId": parent_id, "index": index, "node": draw(NODES)}
    if kind == "update":
        target = draw(st.sampled_from(existing))
        strategy = {**LEAF_PROPS, **LAYOUT_PROPS}.get(target["type"], st.just({}))
        props = draw(st.one_of(strategy, st.sampled_from([{}, {"text": "x"}, {"label": "L", "bind": "color"}])))
        return {"type": "update", "nodeId": draw(st.sampled_from([target["id"]] * 5 + ["ghost"])), "props": props}
    if kind == "remove":
        return {"type": "remove", "nodeId": draw(st.sampled_from(ids))}
    return draw(st.sampled_from([{"type": "nope"}, {"type": "add"}, {"type": "remove", "nodeId": 3}, [], "add"]))


# ------------------------------------------------------------------ a from-scratch reference


def reference(document: Any, event: Any, seen_types: dict) -> tuple[str, Any]:
    """What a from-scratch implementation decides: ('event' | 'schema' | 'frozen' | 'ok', detail)."""
    if not isinstance(event, dict) or event.get("type") not in ("add", "update", "remove"):
        return "event", None
    candidate = thaw(document)
    found = {node["id"]: node for node in nodes_of(candidate["root"])}
    parents = {child["id"]: node for node in found.values() for child in node.get("children", ())}
    if event["type"] == "add":
        parent = found.get(event.get("parentId"))
        if parent is None or parent["type"] not in LAYOUTS or not 0 <= event["index"] <= len(parent["children"]):
            return "event", None
        parent["children"].insert(event["index"], copy.deepcopy(event["node"]))
    else:
        target = found.get(event.get("nodeId"))
        if target is None or not isinstance(event.get("nodeId"), str):
            return "event", None
        if event["type"] == "update":
            target["props"] = copy.deepcopy(event["props"])
        elif target is candidate["root"]:
            return "event", None
        else:
            parents[target["id"]]["children"].remove(target)
    try:
        parsed = parse_document(candidate)
    except UISchemaError as error:
        return "schema", error.issues
    if parsed.model.select_domains != document.model.select_domains:
        return "frozen", None
    if any(seen_types.get(i, t) != t for i, t in parsed.model.node_types.items()):
        return "frozen", None
    return "ok", parsed


def outcome(state: UIStreamState, event: Any) -> tuple[str, Any]:
    try:
        return "ok", advance_ui_stream(state, event)
    except UIStreamError as error:
        return "rejected", error.issues


@SETTINGS
@given(st.data())
def test_the_incremental_patch_agrees_with_a_from_scratch_parse_of_the_whole_candidate(data):
    state = start_ui_stream(base_document(), "call-p", 1)
    seen_types = dict(state.document.model.node_types)
    for _ in range(data.draw(st.integers(1, 12))):
        event = data.draw(events(state.document))
        verdict, detail = reference(state.document, event, seen_types)
        result, value = outcome(state, event)
        if verdict == "ok":
            assert result == "ok", value
            assert canonical_json_string(value.document) == canonical_json_string(detail)
            seen_types.update(detail.model.node_types)
            state = value
        elif verdict == "schema":
            assert result == "rejected" and value == detail
        elif verdict == "frozen":
            assert result == "rejected" and all(issue.code in ("frozen", "frozen_domain") for issue in value)
        else:
            assert result == "rejected" and not any(issue.path.startswith("/root") for issue in value)


@SETTINGS
@given(st.data())
def test_after_valid_and_invalid_events_the_state_equals_the_state_after_only_the_valid_ones(data):
    start = start_ui_stream(base_document(), "call-p", 3)
    state, valid = start, []
    for _ in range(data.draw(st.integers(1, 15))):
        event = data.draw(events(state.document))
        result, value = outcome(state, event)
        if result == "ok":
            state, valid = value, [*valid, event]
    if data.draw(st.booleans()):
        state = advance_ui_stream(state, {"type": "complete"})
        valid.append({"type": "complete"})
    replayed = start_ui_stream(base_document(), "call-p", 3)
    for event in valid:
        replayed = advance_ui_stream(replayed, event)
    assert replayed == state
    assert replayed.digests == state.digests and replayed.byte_count == state.byte_count


def restored(state: UIStreamState) -> UIStreamState:
    """`state` as a host rebuilds it from its stored checkpoint, restore facts and retired types
    (no walk of the tree)."""
    frame = json.loads(json.dumps(state.checkpoint))
    return restore_ui_stream(frame, frame_count=state.frame_count, byte_count=state.byte_count,
                             facts=state.restore_facts, retired_types=json.loads(json.dumps(state.retired_types)))


@SETTINGS
@given(st.data())
def test_a_producer_restored_from_its_stored_checkpoint_decides_every_event_as_the_live_one(data):
    """Restored at random points (a worker's cold session), the producer must accept and reject
    every event exactly as the live producer does, with the same frames and restore facts; and
    a restored state is the state a full parse of the checkpoint resumes."""
    live = start_ui_stream(base_document(), "call-r", 2)
    cold = restored(live)
    for _ in range(data.draw(st.integers(1, 12))):
        assert cold.without_history() == resume_ui_stream(json.loads(json.dumps(cold.checkpoint)),
                                                          frame_count=cold.frame_count, byte_count=cold.byte_count)
        event = data.draw(events(live.document))
        expected, got = outcome(live, event), outcome(cold, event)
        assert expected[0] == got[0] and (expected[0] == "ok" or expected[1] == got[1])
        if expected[0] == "ok":
            live, cold = expected[1], got[1]
            assert cold.without_history() == live.without_history() and cold.document.model == live.document.model
            assert cold.retired_types == live.retired_types
            assert set(live.retired_types).isdisjoint(live.document.model.node_types)
            bytes_, depth, expressions = cold.restore_facts
            assert (bytes_, expressions) == (live.restore_facts[0], live.restore_facts[2])
            assert depth >= live.restore_facts[1]  # an upper bound, never below the live one's
            if data.draw(st.booleans()):
                cold = restored(cold)


@SETTINGS
@given(st.data())
def test_producers_restored_around_one_shared_snapshot_each_decide_as_their_live_one(data):
    """Cold sessions that stored the same snapshot share one `RestoredSnapshot` (the worker's
    shelf): whatever events one of them takes, each must decide every event as its own live
    producer does, and the shared snapshot must stay as it was restored."""
    lives = [start_ui_stream(base_document(), f"call-{n}", n + 1) for n in range(2)]
    frames = [json.loads(json.dumps(live.checkpoint)) for live in lives]
    shared = restore_snapshot(frames[0]["snapshot"], facts=lives[0].restore_facts)
    pristine = canonical_json_string(thaw(shared.document))
    colds = [restore_envelope({key: value for key, value in frame.items() if key != "snapshot"}, shared,
                              frame_count=live.frame_count, byte_count=live.byte_count)
             for frame, live in zip(frames, lives, strict=True)]
    for _ in range(data.draw(st.integers(1, 16))):
        n = data.draw(st.integers(0, 1))
        event = data.draw(events(lives[n].document))
        expected, got = outcome(lives[n], event), outcome(colds[n], event)
        assert expected[0] == got[0] and (expected[0] == "ok" or expected[1] == got[1])
        if expected[0] == "ok":
            lives[n], colds[n] = expected[1], got[1]
            assert colds[n].without_history() == lives[n].without_history()
            assert colds[n].document.model == lives[n].document.model
    assert canonical_json_string(thaw(shared.document)) == pristine


def untouched_nodes_are_shared(before: Any, after: Any, changed_ids: set[str]) -> bool:
    old = {node["id"]: node for node in nodes_of(before["root"])}
    return all(
        node is old[node["id"]]
        for node in nodes_of(after["root"])
        if node["id"] in old and node["id"] not in changed_ids
    )


def path_to(document: Any, node_id: str) -> set[str]:
    """The ids of a node and its ancestors."""
    def walk(node: Any, trail: list[str]) -> set[str] | None:
        trail = [*trail, node["id"]]
        if node["id"] == node_id:
            return set(trail)
        for child in node.get("children", ()):
            found = walk(child, trail)
            if found:
                return found
        return None

    return walk(document["root"], []) or set()


@SETTINGS
@given(st.data())
def test_only_the_path_to_a_change_gets_new_node_objects(data):
    state = start_ui_stream(base_document(), "call-p", 1)
    for _ in range(data.draw(st.integers(1, 10))):
        event = data.draw(events(state.document))
        result, value = outcome(state, event)
        if result != "ok":
            continue
        anchor = event.get("parentId") or event.get("nodeId")
        changed = path_to(state.document, anchor)
        assert untouched_nodes_are_shared(state.document, value.document, changed)
        state = value


def producer_frames(data: Any) -> list[dict]:
    state = start_ui_stream(base_document(), "call-r", 5)
    frames = [state]
    for _ in range(data.draw(st.integers(0, 10))):
        result, value = outcome(frames[-1], data.draw(events(frames[-1].document)))
        if result == "ok":
            frames.append(value)
    if data.draw(st.booleans()):
        frames.append(advance_ui_stream(frames[-1], {"type": data.draw(st.sampled_from(["complete", "cancel"]))}))
    return [json.loads(json.dumps(each.checkpoint)) for each in frames]


@SETTINGS
@given(st.data())
def test_any_delivery_of_a_generation_converges_to_its_newest_frame_and_never_moves_back(data):
    frames = producer_frames(data)
    picks = data.draw(st.lists(st.integers(0, len(frames) - 1), min_size=1, max_size=2 * len(frames)))
    state, newest = None, 0
    for index in picks:
        previous = state
        state = accept_checkpoint(state, copy.deepcopy(frames[index]))
        if previous is not None:
            assert (state.seq, state.revision) >= (previous.seq, previous.revision)
            if frames[index]["seq"] <= previous.seq:
                assert state is previous
        newest = max(newest, frames[index]["seq"])
    assert state is not None and state.seq == newest
    assert json.loads(json.dumps(state.checkpoint)) == frames[newest - 1]
    running, forward = 0, 0
    for index in picks:
        if frames[index]["seq"] > running:
            running, forward = frames[index]["seq"], forward + 1
    assert state.frame_count == forward == len(state.digests)
