"""A checkpoint's snapshot is measured inside the frame's walk, not walked again: the parse of a
frame must come out exactly as with a second walk of the snapshot (the reference below), for
valid frames and for every way a snapshot can fail the document's own measure."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from core.document._revalidation import DocumentCache
from core.errors import UISchemaError, UIStreamError
from core.json.canonical import canonical_json_string
from core.json.safe import SafeJson, assert_safe_json, count_safe_json, measure_safe_json
from core.limits import UI_LIMITS
from core.stream._checkpoint import _FRAME_LIMITS, _measured_snapshot, envelope_issues, parse_checkpoint
from core.stream.lifecycle import start_ui_stream

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MAX_DEPTH, MAX_VALUES, MAX_BYTES = UI_LIMITS["maxJsonDepth"], UI_LIMITS["maxJsonValues"], UI_LIMITS["maxDocumentBytes"]


def opened_frame() -> dict[str, Any]:
    document = json.loads((EXAMPLES / "stream-initial.json").read_text("utf-8"))
    frame: dict[str, Any] = json.loads(json.dumps(start_ui_stream(document, "call-1", 1).checkpoint))
    return frame


def nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def with_snapshot_value(key: str, value: Any) -> dict[str, Any]:
    frame = opened_frame()
    frame["snapshot"][key] = value
    return frame


def padded(extra: int) -> dict[str, Any]:
    """A frame whose snapshot is `extra` bytes beyond the document budget (a padded title)."""
    frame = opened_frame()
    frame["snapshot"]["root"]["props"]["title"] = ""
    size = measure_safe_json(frame["snapshot"])[0]
    frame["snapshot"]["root"]["props"]["title"] = "x" * (MAX_BYTES - size + extra)
    return frame


def cases() -> dict[str, dict[str, Any]]:
    floats = opened_frame()
    floats["generation"], floats["seq"], floats["revision"] = 1.0, 1.0, 0.0  # JS numbers 1 and 0
    floats["snapshot"]["x"] = [0.1, 1e-7, 1e15, -0.0, 2.5e-300, 123456.789]
    text = opened_frame()
    text["snapshot"]["root"]["props"]["title"] = "Ünïcödé ✓ 😀 \u2028 \"quoted\" \\ \t"
    shallow, values = opened_frame(), opened_frame()
    depth = measure_safe_json(shallow["snapshot"])[1]
    return {
        "opened": opened_frame(),
        "floats in the envelope and the snapshot": floats,
        "non-ASCII and escaped text": text,
        "snapshot at the depth limit": with_snapshot_value("x", nested(MAX_DEPTH - 1)),
        "snapshot one level over the depth limit": with_snapshot_value("x", nested(MAX_DEPTH)),
        "snapshot three levels over the depth limit": with_snapshot_value("x", nested(MAX_DEPTH + 2)),
        "snapshot of its own depth": with_snapshot_value("x", nested(depth - 1)),
        "snapshot at the value limit": with_snapshot_value("x", [0] * (MAX_VALUES - values_of(values) - 1)),
        "snapshot one value over the limit": with_snapshot_value("x", [0] * (MAX_VALUES - values_of(values))),
        "snapshot 60 values over the limit": with_snapshot_value("x", [0] * (MAX_VALUES - values_of(values) + 59)),
        "snapshot at the byte budget": padded(0),
        "snapshot one byte over the byte budget": padded(1),
        "a list snapshot": {**opened_frame(), "snapshot": [1, 2]},
        "a text snapshot": {**opened_frame(), "snapshot": "text"},
        "a null snapshot": {**opened_frame(), "snapshot": None},
        "a container in the envelope": {**opened_frame(), "message": ["a"]},
        "a lone surrogate in the snapshot": with_snapshot_value("x", "\ud800"),
        "a number beyond 1e15 in the snapshot": with_snapshot_value("x", 1e16),
        "a non-string key": with_snapshot_value("x", {1: "a"}),
        "a snapshot with an unknown property": with_snapshot_value("x", 7),
    }


def values_of(frame: dict[str, Any]) -> int:
    """How many values the document's walk counts in the frame's snapshot before "x" is added."""
    return count_safe_json(frame["snapshot"])[2] + 1  # "x" itself


def outcome(parse: Any, frame: Any) -> tuple[Any, ...]:
    try:
        checkpoint, size, cache = parse(frame)
    except UIStreamError as error:
        return ("rejected", [(issue.path, issue.message, issue.code) for issue in error.issues])
    root = cache._memo[id(cache.document["root"])]
    return ("accepted", size, canonical_json_string(checkpoint), cache.info.byte_size, root.size, root.children_size,
            root.children_depth, root.json_depth)


def reference(frame: Any) -> Any:
    """parse_checkpoint as it was: the snapshot walked a second time by its own parse."""
    try:
        size = assert_safe_json(frame, **_FRAME_LIMITS)
    except UISchemaError as error:
        raise UIStreamError(error.issues) from None
    issues = envelope_issues(frame)
    if issues:
        raise UIStreamError(issues)
    try:
        cache = DocumentCache.parsed(frame["snapshot"])
    except UISchemaError as error:
        raise UIStreamError([issue.prefixed("/snapshot") for issue in error.issues]) from None
    if frame["uiId"] != cache.document["id"]:
        raise UIStreamError([])
    fields = {key: frame[key] for key in frame}
    for key in ("generation", "seq", "baseRevision", "revision"):
        if fields.get(key) is not None:
            fields[key] = int(fields[key])
    fields["snapshot"] = cache.document
    return fields, size, cache


CASES = cases()


@pytest.mark.parametrize("name", list(CASES))
def test_a_frame_parses_as_with_a_second_walk_of_its_snapshot(name: str) -> None:
    frame = CASES[name]
    expected = outcome(reference, copy.deepcopy(frame))
    assert outcome(parse_checkpoint, copy.deepcopy(frame)) == expected


@pytest.mark.parametrize("name", list(CASES))
def test_the_measure_handed_to_the_parse_is_the_snapshots_own(name: str) -> None:
    frame = CASES[name]
    try:
        size, depth, values = count_safe_json(frame, **_FRAME_LIMITS)
    except UISchemaError:
        return  # the frame's own walk rejects it: nothing is handed on
    handed = _measured_snapshot(frame, size, depth, values)
    try:
        own = measure_safe_json(frame["snapshot"])
    except UISchemaError:
        assert handed is frame["snapshot"]  # walked again by its parse, which reports why
        return
    if type(handed) is SafeJson:
        assert (handed.value, handed.size, handed.depth) == (frame["snapshot"], *own)
    else:
        assert handed is frame["snapshot"]


def test_the_walk_is_saved_for_a_valid_frame_and_kept_for_an_overdeep_snapshot() -> None:
    """Neither branch is dead: a valid frame's snapshot is handed on measured, an over-deep one is not."""
    # (A snapshot over the value limit cannot reach this point: 140,000 values take more than the
    # frame's 266,240 bytes, so the frame's own budget rejects it, as the cases above check.)
    for name, measured in (("opened", True), ("snapshot one level over the depth limit", False),
                           ("snapshot at the depth limit", True)):
        frame = CASES[name]
        handed = _measured_snapshot(frame, *count_safe_json(frame, **_FRAME_LIMITS))
        assert (type(handed) is SafeJson) is measured, name
