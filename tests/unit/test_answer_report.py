"""`parse_report_ui_blocks`: at most 8 final blocks, 400,000 bytes, every ref an existing evidence id."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import UISchemaError, parse_report_ui_blocks
from core.json._frozen import FrozenList

from .answer_documents import SECRET, block, sized_block, text

EVIDENCE = ["ev-1", "ev-2"]


def _entry(block_id: str = "b1", refs: tuple[str, ...] = ("ev-1",), **envelope: Any) -> dict[str, Any]:
    return {"block": block({"root": text()}, block_id=block_id, **envelope), "evidence_refs": list(refs)}


def _utf8_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def _report_of_size(total: int) -> list[dict[str, Any]]:
    """Five ASCII blocks whose `ui_blocks` array is exactly `total` bytes of UTF-8 JSON."""
    entries = [{"block": sized_block(80_000, block_id=f"b{i}"), "evidence_refs": ["ev-1"]} for i in range(5)]
    rest = _utf8_size(entries) - _utf8_size(entries[4]["block"])
    entries[4]["block"] = sized_block(total - rest, block_id="b4")
    assert _utf8_size(entries) == total
    return entries


def test_final_and_phaseless_blocks_citing_existing_evidence_are_accepted():
    parsed = parse_report_ui_blocks([_entry("a", phase="final"), _entry("b", ("ev-1", "ev-2"))], EVIDENCE)
    assert isinstance(parsed, FrozenList) and len(parsed) == 2
    assert "phase" not in parsed[1]["block"]
    with pytest.raises(TypeError):
        parsed[0]["evidence_refs"].append("ev-2")


REJECTED = [
    ("not an array", {"ui_blocks": []}, "", "type"),
    ("nine blocks", [_entry(f"b{i}") for i in range(9)], "", "too_many"),
    ("a process block", [_entry(phase="process")], "/0/block/phase", "process_block"),
    ("an unknown evidence id", [_entry(refs=(SECRET,))], "/0/evidence_refs/0", "unknown_evidence"),
    ("no evidence", [_entry(refs=())], "/0/evidence_refs", "length"),
    ("a duplicate evidence ref", [_entry(refs=("ev-1", "ev-1"))], "/0/evidence_refs/1", "duplicate"),
    ("a duplicate block id", [_entry("b"), _entry("b")], "/1/block/block_id", "duplicate"),
    ("an unknown entry key", [_entry() | {SECRET: SECRET}], "/0", "unknown_property"),
    ("an invalid block", [{"block": block({"root": {"type": SECRET, "props": {}}}), "evidence_refs": ["ev-1"]}],
     "/0/block/spec/elements/root/type", "unknown_component"),
    ("an oversized block", [{"block": sized_block(100_001), "evidence_refs": ["ev-1"]}], "/0/block", "too_large"),
    ("over 400,000 bytes", _report_of_size(400_001), "", "too_large"),
]


@pytest.mark.parametrize(("value", "path", "code"), [case[1:] for case in REJECTED], ids=[case[0] for case in REJECTED])
def test_rejected_report_blocks_name_the_exact_path_and_code_and_echo_nothing(value, path, code):
    with pytest.raises(UISchemaError) as caught:
        parse_report_ui_blocks(value, EVIDENCE)
    first = caught.value.issues[0]
    assert (first.path, first.code) == (path, code), caught.value.issues
    assert SECRET not in str(caught.value) and all(SECRET not in i.path + i.message for i in caught.value.issues)


def test_exactly_400000_bytes_are_accepted():
    assert len(parse_report_ui_blocks(_report_of_size(400_000), EVIDENCE)) == 5


@pytest.mark.parametrize("evidence", [None, 7, "ev-1"])
def test_evidence_ids_that_are_not_a_collection_raise_uischemaerror(evidence):
    with pytest.raises(UISchemaError):
        parse_report_ui_blocks([_entry()], evidence)


def test_eight_blocks_are_accepted():
    assert len(parse_report_ui_blocks([_entry(f"b{i}") for i in range(8)], EVIDENCE)) == 8


JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | st.sampled_from(EVIDENCE),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["block", "evidence_refs", "phase", SECRET]), inner, max_size=3),
    max_leaves=16,
)


@settings(max_examples=300, deadline=None)
@given(JUNK, st.lists(JUNK, max_size=3))
def test_arbitrary_json_only_ever_raises_uischemaerror(value, evidence):
    try:
        parse_report_ui_blocks(value, evidence)
    except UISchemaError as error:
        assert all(SECRET not in issue.path + issue.message for issue in error.issues)
