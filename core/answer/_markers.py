"""Block markers in a final answer: `[[ui:block_id]]` alone on a line, outside code and quotes.

The scan is line based, after CommonMark's block structure as far as markers need it: a
marker line has at most three leading spaces (four columns or a tab make indented code)
and only blanks after the marker; a line starting with `>` is a block quote; inside a
fenced code block (three or more backticks or tildes, closed by a like fence at least as
long) every line is literal.  A marker whose id is not a valid identifier is plain text.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from core._identifier import IDENTIFIER_PATTERN, is_identifier


class Marker(NamedTuple):
    """A marker line naming one block."""

    block_id: str


_MARKER = re.compile(r" {0,3}\[\[ui:(" + IDENTIFIER_PATTERN + r")\]\][ \t]*\r?")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)\r?")


def _closes(line: str, fence: str) -> bool:
    match = _FENCE.fullmatch(line)
    return bool(match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
                and not match.group(2).strip())


def _opens(line: str) -> str | None:
    match = _FENCE.fullmatch(line)
    # A backtick fence's info string may not hold a backtick (it would be inline code).
    if match is None or (match.group(1)[0] == "`" and "`" in match.group(2)):
        return None
    return match.group(1)


def scan(answer: str) -> list[str | Marker]:
    """The answer as text runs (lines joined by `\\n`) and the markers between them."""
    pieces: list[str | Marker] = []
    run: list[str] = []
    fence: str | None = None
    for line in answer.split("\n"):
        marker = _MARKER.fullmatch(line) if fence is None else None
        if marker is not None and is_identifier(marker.group(1)):
            if run:
                pieces.append("\n".join(run))
                run = []
            pieces.append(Marker(marker.group(1)))
            continue
        run.append(line)
        if fence is None:
            fence = _opens(line)
        elif _closes(line, fence):
            fence = None
    if run:
        pieces.append("\n".join(run))
    return pieces


def marker_order(answer: str) -> list[str]:
    """The ids of the answer's markers in first-seen order, each once."""
    return list(dict.fromkeys(piece.block_id for piece in scan(answer) if isinstance(piece, Marker)))
