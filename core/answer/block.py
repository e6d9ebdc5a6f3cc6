"""`parse_answer_block`: one answer-ui@1 block, checked against the catalog and frozen.

Order: the closed structure first (its rules follow known keys only, so an unknown key or
its value can never reach a path or a message), then the safe-JSON pre-check (whose
paths are now known to hold only catalog keys and element ids), then the element tree,
then the serialized size of 100,000 UTF-16 units as JavaScript's `JSON.stringify`
counts it.  A block without `phase` comes back without it, never with `phase: null`.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

import orjson

from core._rules import Issues, closed_object, descend, flat_map, identifier, one_of
from core.answer._catalog import (
    FALLBACK_LENGTH,
    MAX_BLOCK_UTF16,
    MAX_ELEMENTS,
    PHASES,
    VERSION,
    Str,
)
from core.answer._rules import checked, compile_spec, element
from core.answer._tree import tree
from core.errors import MAX_ISSUES, Issue, UISchemaError
from core.json._frozen import FrozenDict, freeze
from core.json._text import utf16_length

# A UTF-16 unit takes at most 3 UTF-8 bytes: a cheap early bound before the exact count.
_MAX_BLOCK_BYTES = 3 * MAX_BLOCK_UTF16


def _version(value: Any) -> Issues:
    if type(value) is not str or value != VERSION:
        yield Issue("", f"must be {VERSION}", "unsupported_version")


_SPEC = closed_object({"root": identifier, "elements": flat_map(element, MAX_ELEMENTS)})

_BLOCK = closed_object(
    {
        "version": _version,
        "block_id": identifier,
        "fallback_text": compile_spec(Str(FALLBACK_LENGTH)),
        "spec": _SPEC,
    },
    {"phase": one_of(*PHASES)},
)


def _utf16_size(value: Any, utf8_size: int) -> int:
    """`JSON.stringify(value).length` from its UTF-8 size (number texts are ASCII either way)."""
    data = orjson.dumps(value)
    if data.isascii():
        return utf8_size
    return utf8_size - len(data) + utf16_length(data.decode())


def block_issues(value: Any) -> list[Issue]:
    """Every problem of a candidate block, at most `MAX_ISSUES` of them (empty when valid)."""
    size, problems = checked(value, _BLOCK, max_bytes=_MAX_BLOCK_BYTES)
    if problems:
        return problems
    problems = list(islice(descend(tree(value["spec"]), "spec"), MAX_ISSUES))
    if problems:
        return problems
    units = _utf16_size(value, size)
    if units > MAX_BLOCK_UTF16:
        return [Issue("", f"the serialized block is {units} UTF-16 code units; the limit is {MAX_BLOCK_UTF16}",
                      "too_large")]
    return []


def parse_answer_block(value: Any) -> FrozenDict:
    """A valid answer-ui@1 block as a deep-immutable copy, or `UISchemaError`."""
    problems = block_issues(value)
    if problems:
        raise UISchemaError(problems)
    frozen: FrozenDict = freeze(value)
    return frozen
