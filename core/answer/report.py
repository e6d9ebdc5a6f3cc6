"""`parse_report_ui_blocks`: the `ui_blocks` of a formal report, each bound to its evidence.

At most 8 `{block, evidence_refs}` entries and 400,000 bytes of UTF-8 JSON in all; each
block is a full answer-ui@1 block with `phase: "final"` or, as older reports stored them,
no phase (a process block never enters a report); each block cites at least one evidence
id that the report already holds.  Block ids are distinct within the report.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core._rules import Issues, Rule, closed_object, descend, text
from core.answer._catalog import MAX_REPORT_BLOCKS, MAX_REPORT_BYTES
from core.answer._rules import checked
from core.answer.block import block_issues
from core.errors import Issue, UISchemaError
from core.json._frozen import ARRAY_KINDS, FrozenList, freeze

MAX_EVIDENCE_REFS = 32
EVIDENCE_ID_LENGTH = 256
_COLLECTION_KINDS = ARRAY_KINDS | {tuple, set, frozenset}


def _final_block(value: Any) -> Issues:
    problems = block_issues(value)
    if problems:
        yield from problems
    elif value.get("phase") == "process":
        yield Issue("/phase", "a report accepts only final blocks", "process_block")


def _evidence_refs(evidence: frozenset[str]) -> Rule:
    item = text(1, EVIDENCE_ID_LENGTH)

    def rule(value: Any) -> Issues:
        if type(value) not in ARRAY_KINDS:
            yield Issue("", "expected an array", "type")
            return
        if not 1 <= len(value) <= MAX_EVIDENCE_REFS:
            yield Issue("", f"must cite 1 to {MAX_EVIDENCE_REFS} evidence ids", "length")
            return
        seen: set[str] = set()
        for index, ref in enumerate(value):
            problems = list(item(ref))
            if problems:
                yield from descend(problems, index)
                continue
            if ref in seen:
                yield Issue(f"/{index}", "duplicate evidence id", "duplicate")
            elif ref not in evidence:
                yield Issue(f"/{index}", "the report holds no evidence with this id", "unknown_evidence")
            seen.add(ref)

    return rule


def _entries(evidence: frozenset[str]) -> Rule:
    entry = closed_object({"block": _final_block, "evidence_refs": _evidence_refs(evidence)})

    def rule(value: Any) -> Issues:
        if type(value) not in ARRAY_KINDS:
            yield Issue("", "expected an array", "type")
            return
        if len(value) > MAX_REPORT_BLOCKS:
            yield Issue("", f"at most {MAX_REPORT_BLOCKS} blocks are allowed", "too_many")
            return
        ids: set[str] = set()
        for index, item in enumerate(value):
            problems = list(entry(item))
            if problems:
                yield from descend(problems, index)
                continue
            block_id = item["block"]["block_id"]
            if block_id in ids:
                yield Issue(f"/{index}/block/block_id", "duplicate block id", "duplicate")
            ids.add(block_id)

    return rule


def parse_report_ui_blocks(value: Any, evidence_ids: Iterable[str]) -> FrozenList:
    """A report's `ui_blocks` array: final blocks citing existing evidence, within budget."""
    # Exact types only: iterating one of these calls nothing of its items, and an id that is
    # not an exact `str` is never hashed (it names no evidence, as any other non-string).
    if type(evidence_ids) not in _COLLECTION_KINDS:
        raise UISchemaError([Issue("", "the report's evidence ids must be a collection of strings", "type")])
    refs: Iterable[Any] = evidence_ids  # items unchecked until `type(ref) is str` (mypyc would cast each to str)
    evidence = frozenset(ref for ref in refs if type(ref) is str)
    _, problems = checked(value, _entries(evidence), max_bytes=MAX_REPORT_BYTES)
    if problems:
        raise UISchemaError(problems)
    frozen: FrozenList = freeze(value)
    return frozen
