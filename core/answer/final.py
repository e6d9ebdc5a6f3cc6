"""Final answers: `parse_final_answer` checks one before it is stored, `answer_parts` reads one.

A final answer places final blocks of its turn with marker lines (`core.answer._markers`).
Writing is strict: `ui_block_ids` must be the markers' de-duplicated order (so an answer
without markers lists no blocks) and every id a block published in the same turn with
`phase: "final"`.  Reading is forgiving, because a
stored answer outlives what it pointed at: a marker whose block is missing, not listed,
or a process block becomes an `unavailable` part that carries nothing of that block.  A
legacy block without `phase` still mounts, and an old stored answer without markers gets its
listed blocks appended after the text (a form `parse_final_answer` no longer accepts).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from core._rules import closed_object, text, unique_identifiers
from core.answer._markers import Marker, marker_order, scan
from core.answer._rules import checked
from core.errors import Issue, UISchemaError
from core.json._frozen import ARRAY_KINDS, OBJECT_KINDS, FrozenDict, FrozenList, freeze
from core.json.safe import json_type_problem

MAX_ANSWER_LENGTH = 100_000  # UTF-16 units, as much as one block may hold
MAX_UI_BLOCK_IDS = 16
_MAX_ANSWER_BYTES = 3 * MAX_ANSWER_LENGTH + 2_048

_FINAL_ANSWER = closed_object(
    {
        "answer": text(0, MAX_ANSWER_LENGTH),
        "ui_block_ids": unique_identifiers(MAX_UI_BLOCK_IDS, "block id"),
    }
)

Blocks = Iterable[Mapping[str, Any]]
_SEQUENCE_KINDS = ARRAY_KINDS | {tuple}


def _shape(value: Any) -> FrozenDict:
    _, problems = checked(value, _FINAL_ANSWER, max_bytes=_MAX_ANSWER_BYTES)
    if problems:
        raise UISchemaError(problems)
    frozen: FrozenDict = freeze(value)
    return frozen


def _by_id(blocks: Blocks | Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The turn's blocks by id; a later block with the same id replaced the earlier one.

    The blocks are stored data, read by exact type: a collection or a block of another type
    than plain JSON (a subclass, whose methods could answer anything) is refused whole.
    """
    kind = type(blocks)
    if kind not in OBJECT_KINDS and kind not in _SEQUENCE_KINDS:
        raise UISchemaError([Issue("", "the published blocks must be a list of blocks", "type")])
    problem = json_type_problem(list(blocks) if kind is tuple else blocks)
    if problem:
        raise UISchemaError([Issue("", f"the published blocks are not plain JSON: {problem}", "unsafe_json")])
    index: dict[str, Mapping[str, Any]] = {}
    items: Iterable[Any] = blocks.values() if isinstance(blocks, Mapping) else blocks  # an exact kind by now
    for block in items:
        block_id = block.get("block_id") if type(block) in OBJECT_KINDS else None
        if type(block_id) is str:
            index[block_id] = block
    return index


def _publication_issues(ids: list[str], published: dict[str, Mapping[str, Any]]) -> list[Issue]:
    problems: list[Issue] = []
    for index, block_id in enumerate(ids):
        block = published.get(block_id)
        if block is None:
            problems.append(Issue(f"/ui_block_ids/{index}", "no block with this id was published in this turn",
                                  "unpublished_block"))
        elif block.get("phase") != "final":
            problems.append(Issue(f"/ui_block_ids/{index}", 'the block was not published with phase "final"',
                                  "not_final"))
    return problems


def _marker_issues(answer: str, ids: list[str]) -> list[Issue]:
    markers = marker_order(answer)
    if markers == ids:
        return []
    if not markers:
        # Seed 004: only old stored answers place their blocks after the text; `answer_parts`
        # still reads those, but a new answer places every block it lists.
        return [Issue("/ui_block_ids", "the answer has no marker lines, so it may list no blocks: "
                                       "place each listed block with its own [[ui:block_id]] line", "missing_markers")]
    return [Issue("/ui_block_ids", "must list the answer's markers in order, each once", "marker_mismatch")]


def parse_final_answer(value: Any, published_blocks: Blocks | Mapping[str, Mapping[str, Any]]) -> FrozenDict:
    """A new `{answer, ui_block_ids}`: ids are its markers in order, each a final block of this turn."""
    final = _shape(value)
    problems = _marker_issues(final["answer"], list(final["ui_block_ids"]))
    if problems:
        raise UISchemaError(problems)
    problems = _publication_issues(final["ui_block_ids"], _by_id(published_blocks))
    if problems:
        raise UISchemaError(problems)
    return final


def _mountable(block: Mapping[str, Any] | None) -> bool:
    # A block stored before phases existed has none and is read as before.
    return block is not None and block.get("phase", "final") == "final"


def _block_part(block_id: str, allowed: frozenset[str], blocks: dict[str, Mapping[str, Any]]) -> FrozenDict:
    block = blocks.get(block_id) if block_id in allowed else None
    if _mountable(block):
        return FrozenDict({"type": "block", "block_id": block_id, "block": freeze(block)})
    return FrozenDict({"type": "unavailable", "block_id": block_id})


def _text_part(run: str) -> FrozenDict | None:
    body = run.strip("\r\n")
    return FrozenDict({"type": "text", "text": body}) if body.strip() else None


def answer_parts(final_answer: Any, blocks: Blocks | Mapping[str, Mapping[str, Any]]) -> FrozenList:
    """The answer as ordered `text`, `block` and `unavailable` parts, each block at most once."""
    final = _shape(final_answer)
    allowed = frozenset(final["ui_block_ids"])
    index = _by_id(blocks)
    pieces = scan(final["answer"])
    if not any(isinstance(piece, Marker) for piece in pieces):
        pieces = [*pieces, *(Marker(block_id) for block_id in final["ui_block_ids"])]
    parts: list[FrozenDict] = []
    mounted: set[str] = set()
    for piece in pieces:
        if isinstance(piece, str):
            part = _text_part(piece)
        elif piece.block_id in mounted:
            part = None
        else:
            mounted.add(piece.block_id)
            part = _block_part(piece.block_id, allowed, index)
        if part is not None:
            parts.append(part)
    return FrozenList(parts)
