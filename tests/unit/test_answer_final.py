"""Final answers: marker rules on write (`parse_final_answer`) and the read projection (`answer_parts`)."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import UISchemaError, answer_parts, parse_answer_block, parse_final_answer
from core.json._frozen import FrozenList

from .answer_documents import SECRET, block, text


def _published(block_id: str, phase: str | None = "final", note: str = "shown") -> Any:
    envelope = {"block_id": block_id} | ({"phase": phase} if phase else {})
    return parse_answer_block(block({"root": text(note)}, fallback_text=note, **envelope))


TURN = [_published("summary"), _published("trend"), _published("progress", "process", note=f"{SECRET} process")]


def _final(answer: str, *ids: str) -> dict[str, Any]:
    return {"answer": answer, "ui_block_ids": list(ids)}


TWO_MARKERS = "Checked.\n\n[[ui:summary]]\n\nWhy it dipped.\n\n[[ui:trend]]\n"


def _kinds(parts: FrozenList) -> list[tuple[str, str]]:
    return [(part["type"], part.get("block_id") or part.get("text")) for part in parts]


def test_two_markers_in_order_are_accepted_and_projected_in_place():
    final = parse_final_answer(_final(TWO_MARKERS, "summary", "trend"), TURN)
    assert _kinds(answer_parts(final, TURN)) == [
        ("text", "Checked."), ("block", "summary"), ("text", "Why it dipped."), ("block", "trend"),
    ]


def test_a_block_part_carries_the_published_block():
    part = answer_parts(_final("[[ui:summary]]", "summary"), TURN)[0]
    assert part["block"] == TURN[0]


REJECTED = [
    ("ids in another order", _final(TWO_MARKERS, "trend", "summary"), "/ui_block_ids", "marker_mismatch"),
    ("an id without its marker", _final("[[ui:summary]]", "summary", "trend"), "/ui_block_ids", "marker_mismatch"),
    ("a marker without its id", _final(TWO_MARKERS, "summary"), "/ui_block_ids", "marker_mismatch"),
    ("a duplicate id", _final("[[ui:summary]]", "summary", "summary"), "/ui_block_ids/1", "duplicate"),
    ("an unpublished block", _final("[[ui:summary]]\n[[ui:ghost]]", "summary", "ghost"), "/ui_block_ids/1", "unpublished_block"),
    ("a process block", _final("[[ui:progress]]", "progress"), "/ui_block_ids/0", "not_final"),
    ("a marker-less answer listing a block", _final("结果见下方组件。", "summary"), "/ui_block_ids", "missing_markers"),
    ("a marker-less answer listing a process block", _final("No markers.", "progress"), "/ui_block_ids",
     "missing_markers"),
    ("ids whose markers sit only in a fence", _final("```\n[[ui:summary]]\n```", "summary"), "/ui_block_ids",
     "missing_markers"),
    ("ids whose markers sit only in indented code", _final("Text.\n\n    [[ui:summary]]", "summary"),
     "/ui_block_ids", "missing_markers"),
    ("an unknown key", _final("x") | {SECRET: SECRET}, "", "unknown_property"),
    ("an answer that is not a string", {"answer": [SECRET], "ui_block_ids": []}, "/answer", "type"),
    ("an id that is not an identifier", _final("x", f"{SECRET} x"), "/ui_block_ids/0", "format"),
    ("an answer over 100,000 UTF-16 units", _final("\U0001f600" * 50_001), "/answer", "length"),
]


@pytest.mark.parametrize(("value", "path", "code"), [case[1:] for case in REJECTED], ids=[case[0] for case in REJECTED])
def test_rejected_final_answer_names_the_exact_path_and_code_and_echoes_nothing(value, path, code):
    with pytest.raises(UISchemaError) as caught:
        parse_final_answer(value, TURN)
    first = caught.value.issues[0]
    assert (first.path, first.code) == (path, code), caught.value.issues
    assert SECRET not in str(caught.value) and all(SECRET not in i.path + i.message for i in caught.value.issues)


def test_a_new_final_answer_without_markers_lists_no_blocks():
    # Seed 004: the marker-less form is how old answers were stored; new ones never rely on it.
    with pytest.raises(UISchemaError) as caught:
        parse_final_answer(_final("结果见下方组件。", "summary", "trend"), TURN)
    assert [(i.path, i.code) for i in caught.value.issues] == [("/ui_block_ids", "missing_markers")]
    assert "marker" in caught.value.issues[0].message
    assert list(parse_final_answer(_final("结果见下方组件。"), TURN)["ui_block_ids"]) == []


def test_a_stored_legacy_answer_without_markers_is_still_read_by_answer_parts():
    stored = _final("结果见下方组件。", "summary")
    assert _kinds(answer_parts(stored, TURN)) == [("text", "结果见下方组件。"), ("block", "summary")]


def test_a_block_published_without_phase_cannot_be_referenced_by_a_new_final_answer():
    legacy = [_published("old", phase=None)]
    with pytest.raises(UISchemaError) as caught:
        parse_final_answer(_final("[[ui:old]]", "old"), legacy)
    assert caught.value.issues[0].code == "not_final"


def test_the_latest_publication_of_a_block_id_in_the_turn_counts():
    replaced = [_published("summary", note="first"), _published("summary", note="second")]
    part = answer_parts(parse_final_answer(_final("[[ui:summary]]", "summary"), replaced), replaced)[0]
    assert part["block"]["fallback_text"] == "second"


LITERAL = [
    ("backtick fence", "```\n[[ui:summary]]\n```"),
    ("tilde fence", "~~~md\n[[ui:summary]]\n~~~"),
    ("unclosed fence", "```\n[[ui:summary]]"),
    ("fence closed only by a like fence", "````\n```\n[[ui:summary]]\n~~~~\n"),
    ("indented code (four spaces)", "Text.\n\n    [[ui:summary]]"),
    ("indented code (tab)", "\t[[ui:summary]]"),
    ("block quote", "> [[ui:summary]]"),
    ("nested block quote", ">> [[ui:summary]]"),
    ("inline with text", "See [[ui:summary]] here."),
    ("two markers on one line", "[[ui:summary]][[ui:trend]]"),
    ("id that is not an identifier", "[[ui:constructor]]"),
    # CommonMark's containers (found against its reference parser, commonmark.py)
    ("fence on a list item's line", "Steps:\n\n- ```\n  [[ui:summary]]\n  ```"),
    ("fence on an ordered item's line", "1. ```\n   [[ui:summary]]\n   ```"),
    ("fence in a nested item", "- 1. ~~~\n     [[ui:summary]]"),
    ("fence in the outer item after the inner one ends", "- 1. ```\n    ```\n   [[ui:summary]]"),
    ("closing fence followed by an ideographic space", "```\ncode\n```\u3000\n[[ui:summary]]\n```"),
    ("closing fence followed by a no-break space", "```\n```\u00a0\n[[ui:summary]]"),
    ("lazy line of a block quote's paragraph", "> quoted\n[[ui:summary]]"),
    ("lazy lines after a quoted list item", "> - point\nmore\n[[ui:summary]]"),
    ("quote in a list item", "- > quoted\n  [[ui:summary]]"),
    ("indented code in a list item", "- item\n\n      [[ui:summary]]"),
]


@pytest.mark.parametrize("answer", [case[1] for case in LITERAL], ids=[case[0] for case in LITERAL])
def test_markers_in_code_quotes_or_running_text_stay_literal(answer):
    final = parse_final_answer(_final(answer), TURN)  # no markers: no ids needed
    parts = answer_parts(final, TURN)
    assert [part["type"] for part in parts] == ["text"]
    assert "[[ui:" in parts[0]["text"]


@pytest.mark.parametrize("line", ["[[ui:summary]]", "   [[ui:summary]]", "[[ui:summary]]  \t", "[[ui:summary]]\r"])
def test_a_marker_may_have_up_to_three_leading_spaces_and_trailing_blanks(line):
    parts = answer_parts(parse_final_answer(_final(f"a\n{line}\nb", "summary"), TURN), TURN)
    assert [part["type"] for part in parts] == ["text", "block", "text"]


LIVE = [
    ("after a fenced list item ends", "- ```\n  code\n[[ui:summary]]"),
    ("after an indented fence of a list item ends", "2. item\n   ```\n[[ui:summary]]"),
    ("in a list item's paragraph", "- item\n  [[ui:summary]]"),
    ("after a quote and a blank line", "> quoted\n\n[[ui:summary]]"),
    ("after a quoted fence", "> ```\n[[ui:summary]]"),
    ("after a quoted heading", "> # Title\n[[ui:summary]]"),
    ("after a list item ends a quote", "> quoted\n- item\n\n[[ui:summary]]"),
    ("after an empty item and a blank line", "-\n\n   [[ui:summary]]"),
    ("closing fence followed by spaces and a tab", "```\n```  \t\n[[ui:summary]]"),
    ("after a setext heading in a quote", "> Title\n> ===\n[[ui:summary]]"),
]


@pytest.mark.parametrize("answer", [case[1] for case in LIVE], ids=[case[0] for case in LIVE])
def test_a_marker_outside_code_and_quotes_is_live(answer):
    parts = answer_parts(parse_final_answer(_final(answer, "summary"), TURN), TURN)
    assert ("block", "summary") in _kinds(parts)


def test_a_marker_after_a_closed_fence_is_live():
    answer = "```\n[[ui:trend]]\n```\n[[ui:summary]]"
    parts = answer_parts(parse_final_answer(_final(answer, "summary"), TURN), TURN)
    assert _kinds(parts)[-1] == ("block", "summary")


def test_a_repeated_marker_mounts_once():
    answer = "[[ui:summary]]\nagain:\n[[ui:summary]]"
    final = parse_final_answer(_final(answer, "summary"), TURN)
    assert _kinds(answer_parts(final, TURN)) == [("block", "summary"), ("text", "again:")]


def test_process_missing_and_unlisted_markers_project_to_unavailable_and_leak_nothing():
    stored = _final("[[ui:progress]]\n[[ui:ghost]]\n[[ui:trend]]", "progress", "ghost")  # trend is not listed
    parts = answer_parts(stored, TURN)
    assert _kinds(parts) == [("unavailable", "progress"), ("unavailable", "ghost"), ("unavailable", "trend")]
    assert all(set(part) == {"type", "block_id"} for part in parts)
    assert SECRET not in repr(parts)


def test_a_legacy_answer_without_markers_appends_its_blocks():
    stored = _final("Done.", "summary", "progress")
    assert _kinds(answer_parts(stored, TURN)) == [("text", "Done."), ("block", "summary"), ("unavailable", "progress")]


def test_a_legacy_block_without_phase_mounts_and_is_not_rewritten():
    legacy = [_published("old", phase=None)]
    part = answer_parts(_final("[[ui:old]]", "old"), legacy)[0]
    assert part["type"] == "block" and "phase" not in part["block"]


def test_the_projection_is_deep_immutable():
    parts = answer_parts(_final(TWO_MARKERS, "summary", "trend"), TURN)
    with pytest.raises(TypeError):
        parts.append(parts[0])
    with pytest.raises(TypeError):
        parts[1]["block"]["spec"]["root"] = "x"


def test_published_blocks_may_be_given_by_id():
    final = parse_final_answer(_final("[[ui:summary]]", "summary"), {"summary": TURN[0]})
    assert answer_parts(final, {"summary": TURN[0]})[0]["type"] == "block"


@pytest.mark.parametrize("blocks", [None, 3, "summary"])
def test_published_blocks_that_are_not_a_collection_raise_uischemaerror(blocks):
    with pytest.raises(UISchemaError):
        answer_parts(_final("x"), blocks)


def test_malformed_published_entries_are_ignored_not_raised():
    odd: list[Any] = [None, 1, {"block_id": 5}, {"phase": "final"}, TURN[0]]
    assert answer_parts(_final("[[ui:summary]]", "summary"), odd)[0]["type"] == "block"


JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
    | st.sampled_from(["[[ui:summary]]", "```", "> [[ui:trend]]", "summary", "progress"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["answer", "ui_block_ids", "phase", "block_id", SECRET]), inner, max_size=4),
    max_leaves=16,
)
LINES = st.lists(st.sampled_from(["[[ui:summary]]", "[[ui:trend]]", "[[ui:progress]]", "```", "~~~", "    x",
                                  "> q", "text", "", "[[ui:ghost]]"]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(JUNK, JUNK)
def test_arbitrary_json_only_ever_raises_uischemaerror(value, blocks):
    for call in (lambda: parse_final_answer(value, TURN), lambda: answer_parts(value, TURN),
                 lambda: answer_parts(_final("x"), blocks if isinstance(blocks, list) else [blocks])):
        with contextlib.suppress(UISchemaError):
            call()


@settings(max_examples=300, deadline=None)
@given(LINES, st.lists(st.sampled_from(["summary", "trend", "progress", "ghost"]), unique=True, max_size=4))
def test_every_mounted_block_is_listed_final_and_mounted_once(lines, ids):
    parts = answer_parts(_final("\n".join(lines), *ids), TURN)
    mounted = [part["block_id"] for part in parts if part["type"] == "block"]
    assert len(mounted) == len(set(mounted)) and set(mounted) <= set(ids) - {"progress", "ghost"}
    assert SECRET not in repr(parts)
