"""The Client's stream receiver (`gateway/web/src/stream.js`, run in Node.js) keeps the last valid
view when a frame would replace it with one that breaks seed 000 §12: "重复 ID、未知组件、恶意属性…
都会拒绝候选，保留最后有效快照" (the candidate is refused, the last valid snapshot stays), the
envelope's revision rules, "连续帧仍要求正确 baseRevision，结构版本不能倒退，文档变化必须递增 revision",
and what a generation freezes.  Frames are core's (`tests.browser.frames`), then tampered with."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser.frames import stream_frames
from tests.unit.javascript import NODE, node_json

pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js to run the Client's JavaScript modules")

WEB = Path(__file__).resolve().parents[2] / "gateway" / "web" / "src"
SCRIPT = f"""
const {{ applyFrame }} = await import({json.dumps((WEB / 'stream.js').as_uri())});
let input = '';
process.stdin.on('data', (chunk) => {{ input += chunk; }});
process.stdin.on('end', () => {{
  const out = JSON.parse(input).map((frames) => {{
    let views = new Map();
    for (const frame of frames) views = applyFrame(views, frame);
    const view = [...views.values()][0];
    return {{ generation: view.generation, seq: view.seq, revision: view.revision, status: view.status,
              refused: view.refused, title: view.document.title }};
  }});
  process.stdout.write(JSON.stringify(out));
}});
"""
DOCUMENT: dict[str, Any] = {
    "version": "1.1", "id": "notes", "mode": "interactive_ui", "title": "Notes",
    "state": {"note": {"type": "string", "initial": ""}, "size": {"type": "string", "initial": "s"}},
    "derived": {}, "actions": {},
    "root": {"id": "card", "type": "Card", "props": {"title": "Draft"}, "children": [
        {"id": "note-input", "type": "Input", "props": {"label": "Note", "bind": "note"}},
        {"id": "size", "type": "Select", "props": {"label": "Size", "bind": "size", "options": [
            {"value": "s", "label": "Small"}, {"value": "l", "label": "Large"}]}},
        {"id": "echo", "type": "Text", "props": {"text": "hello"}},
    ]},
}
EVENTS: list[dict[str, Any]] = [
    {"type": "add", "parentId": "card", "index": 3, "node": {"id": "tip", "type": "Badge", "props": {"text": "Tip"}}},
    {"type": "update", "nodeId": "card", "props": {"title": "Final draft"}},
    {"type": "remove", "nodeId": "tip"},
    {"type": "complete"},
]


def frames() -> list[dict[str, Any]]:
    """Five frames of one generation: the snapshot (rev 0), three changes (rev 1-3), complete (rev 3)."""
    return stream_frames(DOCUMENT, EVENTS)


def tampered(frame: dict[str, Any], change: Any) -> dict[str, Any]:
    copied = copy.deepcopy(frame)
    change(copied)
    return copied


def run(cases: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    return dict(zip(cases, node_json(SCRIPT, json.dumps(list(cases.values()))), strict=True))


def test_valid_frames_replace_the_view_and_a_gap_of_frames_is_recovered() -> None:
    f = frames()
    found = run({"all": f, "gap": [f[0], f[3], f[4]], "duplicate and late": [f[0], f[2], f[2], f[1]]})
    assert found["all"] == {"generation": 1, "seq": 5, "revision": 3, "status": "complete", "refused": False,
                            "title": "Notes"}
    assert found["gap"]["seq"] == 5 and not found["gap"]["refused"]
    late = found["duplicate and late"]
    assert late["seq"] == 3 and not late["refused"]  # dropped, not refused


def test_a_frame_that_breaks_a_rule_is_refused_and_the_last_valid_view_kept() -> None:
    f = frames()

    def state_added(frame: dict[str, Any]) -> None:
        frame["snapshot"]["state"]["more"] = {"type": "string", "initial": ""}

    def select_widened(frame: dict[str, Any]) -> None:
        frame["snapshot"]["root"]["children"][1]["props"]["options"].append({"value": "m", "label": "Medium"})

    def retyped(frame: dict[str, Any]) -> None:
        frame["snapshot"]["root"]["children"][2]["type"] = "Heading"  # a Heading takes a Text's props

    def unknown_prop(frame: dict[str, Any]) -> None:
        frame["snapshot"]["root"]["props"]["onclick"] = "alert(1)"

    def repeated_id(frame: dict[str, Any]) -> None:
        frame["snapshot"]["root"]["children"][3]["id"] = "echo"

    cases = {
        "state definition added": [f[0], f[1], tampered(f[2], state_added)],
        "Select's option values changed": [f[0], f[1], tampered(f[2], select_widened)],
        "a node id changed its type": [f[0], f[1], tampered(f[2], retyped)],
        "an unknown prop": [f[0], f[1], tampered(f[2], unknown_prop)],
        "a repeated id": [f[0], f[1], tampered(f[2], repeated_id)],
        "document id changed": [f[0], f[1], tampered(f[2], lambda x: x["snapshot"].__setitem__("id", "other"))],
        "mode changed": [f[0], f[1], tampered(f[2], lambda x: x["snapshot"].__setitem__("mode", "structured_ui"))],
        "the revision back": [f[0], f[1], f[2], tampered(f[3], lambda x: x.update(baseRevision=0, revision=1))],
        "a broken chain": [f[0], f[1], tampered(f[2], lambda x: x.update(baseRevision=5, revision=6))],
        "a change that keeps its revision": [f[0], f[1], tampered(f[2], lambda x: x.update(revision=1))],
        "a second snapshot": [f[0], f[1], tampered(f[2], lambda x: x.update(type="snapshot", baseRevision=None))],
        "a snapshot with a base": [f[0], f[1], tampered(f[2], lambda x: x.update(baseRevision=0))],
        "a terminal frame that changes the document": [
            f[0], f[1], f[2], f[3], tampered(f[4], lambda x: x["snapshot"].__setitem__("title", "Changed"))],
        "another protocol": [f[0], f[1], tampered(f[2], lambda x: x.update(protocol="other"))],
        "seq not above revision": [f[0], f[1], tampered(f[2], lambda x: x.update(seq=9, revision=9, baseRevision=8))],
        "a root that is not a node": [f[0], f[1], tampered(f[2], lambda x: x["snapshot"].__setitem__("root", None))],
        "a snapshot that is not a document": [f[0], f[1], tampered(f[2], lambda x: x.__setitem__("snapshot", {}))],
    }
    found = run(cases)
    for name, view in found.items():
        kept = {"the revision back": 3, "a terminal frame that changes the document": 4}.get(name, 2)
        assert view["seq"] == kept and view["refused"] is True and view["title"] == "Notes", name
    # without the tampering each of them is accepted
    assert run({"control": [f[0], f[1], f[2]]})["control"] == {
        "generation": 1, "seq": 3, "revision": 2, "status": "streaming", "refused": False, "title": "Notes"}


def test_a_refused_frame_is_followed_by_the_next_valid_one_and_a_first_frame_is_shown_as_it_is() -> None:
    f = frames()
    broken = tampered(f[2], lambda x: x["snapshot"]["root"].__setitem__("type", "Nope"))
    later = stream_frames(DOCUMENT, EVENTS, generation=2)
    bad_generation = tampered(later[0], lambda x: x["snapshot"]["root"].__setitem__("type", "Nope"))
    found = run({
        "recovered": [f[0], f[1], broken, f[3]],
        "first frame invalid": [broken],
        "a new generation invalid": [f[0], f[1], bad_generation],
        "a new generation valid": [f[0], f[1], bad_generation, later[1]],
    })
    assert found["recovered"] == {"generation": 1, "seq": 4, "revision": 3, "status": "streaming", "refused": False,
                                  "title": "Notes"}
    assert found["first frame invalid"]["seq"] == 3 and found["first frame invalid"]["refused"] is False
    assert found["a new generation invalid"] == {"generation": 1, "seq": 2, "revision": 1, "status": "streaming",
                                                 "refused": True, "title": "Notes"}
    assert found["a new generation valid"]["generation"] == 2 and not found["a new generation valid"]["refused"]
