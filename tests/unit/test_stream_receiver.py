"""The receiver's incremental path against the full check of every frame.

`accept_checkpoint` checks a plain successor frame in proportion to its change and leaves
everything else to the full check (`_accept_fully`).  Differentially, on producer frames,
frames after gaps and frames mutated anywhere (junk values, non-JSON Python objects, NaN,
tuples, a bool for a 1, reordered keys, changed headers, envelopes and types), both give the
same verdict, the same issues on rejection and the same state on acceptance.
"""

from __future__ import annotations

import copy
import enum
import json
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import UIStreamError
from core.json.canonical import canonical_json_string
from core.stream import lifecycle
from core.stream.lifecycle import UIStreamState, _accept_fully, accept_checkpoint, advance_ui_stream, start_ui_stream
from tests.unit.test_stream_properties import (
    base_document,
    events,
    nodes_of,
    outcome,
    path_to,
    untouched_nodes_are_shared,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Text(str):
    pass


class Table(dict):  # type: ignore[type-arg]
    pass


class Color(enum.Enum):
    RED = "red"

    def __eq__(self, other: object) -> bool:  # a hostile equality: claims to be anything
        return True

    __hash__ = enum.Enum.__hash__


JUNK = st.sampled_from([
    None, True, False, 0, 1, 1.0, -0.0, 0.5, 2, "", "x", "red", [], {}, [1], {"a": 1},
    float("nan"), float("inf"), 10**16, 2**70, (1, 2), ("red",), "\ud800", Text("red"), Table(), Color.RED,
])  # fmt: skip


def generation(data: Any) -> list[UIStreamState]:
    """A producer's states: a snapshot, then the accepted ones of some random events."""
    states = [start_ui_stream(base_document(), "call-d", 2)]
    for _ in range(data.draw(st.integers(1, 8))):
        result, value = outcome(states[-1], data.draw(events(states[-1].document)))
        if result == "ok":
            states.append(value)
    if data.draw(st.booleans()):
        states.append(advance_ui_stream(states[-1], {"type": data.draw(st.sampled_from(["complete", "error"]))}))
    return states


def wire(state: UIStreamState) -> Any:
    return json.loads(json.dumps(state.checkpoint))


def containers(value: Any) -> list[Any]:
    """Every dict and list inside `value` (itself included)."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (dict, list)):
            found.append(item)
            stack.extend(item.values() if isinstance(item, dict) else item)
    return found


@st.composite
def mutated(draw: Any, frame: dict[str, Any]) -> Any:
    """`frame`, or a copy with one change anywhere: a value, a key, an order, an envelope field."""
    frame = copy.deepcopy(frame)
    how = draw(st.sampled_from(["none", "none", "value", "value", "value", "drop", "reorder", "envelope", "type"]))
    if how == "none":
        return frame
    if how == "envelope":
        key = draw(st.sampled_from(["seq", "revision", "baseRevision", "type", "uiId", "sourceCallId", "generation",
                                    "protocol", "message", "extra"]))
        frame[key] = draw(st.one_of(JUNK, st.integers(-1, 300), st.sampled_from(["update", "complete", "snapshot"])))
        return frame
    if how == "type":
        node = draw(st.sampled_from(nodes_of(frame["snapshot"]["root"])))
        node["type"] = draw(st.sampled_from(["Text", "Card", "Row", "Badge", "Select"]))
        return frame
    target = draw(st.sampled_from(containers(frame["snapshot"])))
    if not target:
        return frame
    if isinstance(target, list):
        position = draw(st.integers(0, len(target) - 1))
        if how == "value":
            target[position] = draw(JUNK)
        elif how == "drop":
            del target[position]
        else:
            target.append(copy.deepcopy(target[position]))
        return frame
    key = draw(st.sampled_from(sorted(target)))
    if how == "value":
        target[key] = draw(JUNK)
    elif how == "drop":
        del target[key]
    else:
        items = list(target.items())[::-1]
        target.clear()
        target.update(items)
    return frame


def verdict(call: Any) -> tuple[str, Any]:
    try:
        return "ok", call()
    except UIStreamError as error:
        return "rejected", error.issues


def assert_same_state(fast: UIStreamState, full: UIStreamState) -> None:
    assert fast == full
    assert canonical_json_string(fast.checkpoint) == canonical_json_string(full.checkpoint)
    assert orjson.dumps(fast.checkpoint) == orjson.dumps(full.checkpoint)
    assert fast.document.model == full.document.model
    assert (fast.status, fast.frame_count, fast.byte_count) == (full.status, full.frame_count, full.byte_count)


@SETTINGS
@given(st.data())
def test_the_incremental_receiver_agrees_with_the_full_check_on_any_frame(data):
    states = generation(data)
    held = None
    for state in states[: data.draw(st.integers(1, len(states)))]:
        held = accept_checkpoint(held, wire(state))
    for _ in range(data.draw(st.integers(1, 3))):
        frame = data.draw(mutated(wire(data.draw(st.sampled_from(states)))))
        fast = verdict(lambda frame=frame, held=held: accept_checkpoint(held, copy.deepcopy(frame)))
        full = verdict(lambda frame=frame, held=held: _accept_fully(held, copy.deepcopy(frame)))
        assert fast[0] == full[0], (fast, full)
        if fast[0] == "rejected":
            assert fast[1] == full[1]
        else:
            assert_same_state(fast[1], full[1])
            if data.draw(st.booleans()):
                held = fast[1]


@SETTINGS
@given(st.data())
def test_a_subscriber_following_every_frame_shares_what_did_not_change_and_ends_where_the_producer_ends(data):
    producer = start_ui_stream(base_document(), "call-d", 4)
    held = accept_checkpoint(None, wire(producer))
    for _ in range(data.draw(st.integers(1, 10))):
        event = data.draw(events(producer.document))
        result, value = outcome(producer, event)
        if result != "ok":
            continue
        producer, previous = value, held
        held = accept_checkpoint(held, wire(producer))
        changed = path_to(previous.document, event.get("parentId") or event.get("nodeId"))
        assert untouched_nodes_are_shared(previous.document, held.document, changed)
    assert held.checkpoint == producer.checkpoint
    assert held.digests == producer.digests


def test_a_plain_successor_never_takes_the_full_check(monkeypatch):
    producer = start_ui_stream(base_document(), "call-d", 1)
    held = accept_checkpoint(None, wire(producer))
    producer = advance_ui_stream(producer, {"type": "update", "nodeId": "hello", "props": {"text": "changed"}})
    monkeypatch.setattr(lifecycle, "_accept_fully", lambda *args: pytest.fail("the full check ran"))
    received = accept_checkpoint(held, wire(producer))
    assert received.checkpoint == producer.checkpoint
    assert untouched_nodes_are_shared(held.document, received.document, {"root", "hello"})


def deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = {"op": "not", "args": [value]}
    return {"expr": value}


# (where, what): a non-JSON value or a bool where the held snapshot holds an equal-looking one
# (`True == 1`, `False == 0`, NaN printed as null by orjson, a tuple for a list, a hostile `==`),
# or an unsafe value inside the changed node itself.
HOSTILE = [
    (("state", "units", "step"), True),
    (("state", "units", "min"), False),
    (("state", "units", "min"), 0.0),
    (("state", "units", "initial"), float("nan")),
    (("root", "children", 0, "props", "options"),
     ({"label": "RED", "value": "red"}, {"label": "GREEN", "value": "green"})),
    (("root", "children", 0, "props", "options", 0, "value"), Color.RED),
    (("root", "children", 0, "props", "options", 0, "value"), Text("red")),
    (("root", "children", 2, "props"), Table(text="changed")),
    (("root", "children", 2, "props", "text"), "\ud800"),
    (("root", "children", 2, "props", "text"), 10**16),
    (("root", "children", 2, "props", "text"), deep(200)),
]


@pytest.mark.parametrize(("where", "junk"), HOSTILE)
def test_a_successor_with_a_hostile_value_gets_the_full_check_verdict(where, junk):
    producer = start_ui_stream(base_document(), "call-d", 1)
    held = accept_checkpoint(None, wire(producer))
    producer = advance_ui_stream(producer, {"type": "update", "nodeId": "hello", "props": {"text": "changed"}})
    frame = wire(producer)
    target = frame["snapshot"]
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = junk
    fast = verdict(lambda: accept_checkpoint(held, copy.deepcopy(frame)))
    full = verdict(lambda: _accept_fully(held, copy.deepcopy(frame)))
    assert fast[0] == full[0] == ("ok" if junk == 0.0 and type(junk) is float else "rejected")
    assert fast[1] == full[1]


@pytest.mark.parametrize(("held", "ambiguous"), [
    (1, True), (True, True), (0, True), (10, False), ({"a": 1}, True), ([0, 2], True), ("1", False),
    ({"a": "1"}, False), ({"a": 1.5}, False), ({"a": [False]}, True), ({"a": -1}, False),
])  # fmt: skip
def test_a_held_value_holding_a_bool_0_or_1_is_compared_by_bytes_too(held, ambiguous):
    from core.stream._receiver import HeldBytes

    assert HeldBytes().ambiguous(held) is ambiguous


@SETTINGS
@given(st.data())
def test_a_held_node_s_flag_from_its_parts_is_set_wherever_its_whole_json_holds_a_bool_0_or_1(data):
    # A layout's flag is its own entries' and its children's, so that a new layout costs its own
    # entries: it may never miss a bool, 0 or 1 its whole JSON holds (extra flags only cost a byte
    # comparison).
    from core.stream._receiver import _AMBIGUOUS, HeldBytes

    held = generation(data)[-1].document
    memo = HeldBytes()
    for node in containers(held):
        if _AMBIGUOUS.search(orjson.dumps(node)) is not None:
            assert memo.ambiguous(node)


def chain_with_table(levels: int, rows: int) -> dict[str, Any]:
    """A document whose Text sits `levels` layouts deep, beside a Table of `rows` rows."""
    columns = [{"key": f"c{i}", "label": f"C{i}"} for i in range(8)]
    table = {"id": "tbl", "type": "Table",
             "props": {"columns": columns, "rows": [{f"c{i}": f"cell-{r}-{i}" for i in range(8)} for r in range(rows)]}}
    node: dict[str, Any] = {"id": "leaf", "type": "Column", "props": {},
                            "children": [table, {"id": "t", "type": "Text", "props": {"text": "x0"}}]}
    for level in range(levels - 2):
        node = {"id": f"c{level}", "type": "Column", "props": {}, "children": [node]}
    return {"version": "1.1", "id": "d", "mode": "interactive_ui", "title": "t", "state": {}, "derived": {},
            "actions": {}, "root": node}


def test_a_subscriber_of_a_deep_document_holds_memory_for_its_document_not_for_every_frame():
    # An audit: the memo kept each held layout's whole JSON bytes, and each frame's path built new
    # layouts: 16 levels above a 380-row Table, 120 frames held ~100 MB (250 frames 230 MB), each
    # frame encoding the whole spine.  Now a few MB whatever the frame count.
    producer = start_ui_stream(chain_with_table(16, 380), "call-d", 1)
    frames = [orjson.dumps(producer.checkpoint)]
    for n in range(1, 120):
        producer = advance_ui_stream(producer, {"type": "update", "nodeId": "t", "props": {"text": f"x{n}"}})
        frames.append(orjson.dumps(producer.checkpoint))
    del producer
    held, grown = followed(frames)
    assert held.checkpoint["seq"] == 120
    assert grown < 20_000_000


def followed(frames: list[bytes]) -> tuple[UIStreamState, int]:
    """A subscriber's state after every frame, and the bytes it allocated and kept meanwhile."""
    import tracemalloc

    tracemalloc.start()
    try:
        held = None
        for frame in frames:
            held = accept_checkpoint(held, orjson.loads(frame))
        grown = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held is not None
    return held, grown


def test_the_memo_emptied_at_its_limit_flags_every_value_as_before():
    from core.stream._receiver import HeldBytes

    held = start_ui_stream(base_document(), "call-d", 1).document
    values = containers(held)
    whole, limited = HeldBytes(), HeldBytes(limit=8)
    for _ in range(3):
        for value in values:
            assert limited.ambiguous(value) is whole.ambiguous(value)
            assert len(limited._memo) <= 8 and len(limited._lists) <= 8


def test_a_subscriber_keeps_a_bounded_number_of_frames_unhashed_and_the_producer_s_digests():
    # An audit: the incremental path left every frame unhashed until `digests` was read, and an
    # unhashed frame keeps what it changed alive: 128 frames each replacing a 60 KB Table held 40 MB.
    from core.stream.lifecycle import RECEIVER_PENDING

    columns = [{"key": f"c{i:02d}", "label": f"C{i}"} for i in range(32)]

    def rows(n: int) -> list[dict[str, int]]:
        return [{f"c{i:02d}": (n * 7 + k * 3 + i) % 997 for i in range(32)} for k in range(195)]

    document = {"version": "1.1", "id": "d", "mode": "interactive_ui", "title": "t", "state": {}, "derived": {},
                "actions": {}, "root": {"id": "root", "type": "Card", "props": {"title": "r"}, "children": [
                    {"id": "tbl", "type": "Table", "props": {"columns": columns, "rows": rows(0)}}]}}
    producer = start_ui_stream(document, "call-t", 1)
    frames = [orjson.dumps(producer.checkpoint)]
    for n in range(1, 64):
        producer = advance_ui_stream(producer, {"type": "update", "nodeId": "tbl",
                                                "props": {"columns": columns, "rows": rows(n)}})
        frames.append(orjson.dumps(producer.checkpoint))
    held, grown = followed(frames)
    unhashed, log = 0, held._log
    while log is not None:
        unhashed += log._frame is not None
        log = log.previous
    assert unhashed <= RECEIVER_PENDING
    assert grown < 12_000_000  # ~21 MB before (64 frames, 4 MB of JSON on the wire)
    assert held.digests == producer.digests
