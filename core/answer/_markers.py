"""Block markers in a final answer: `[[ui:block_id]]` alone on a line, outside code and quotes.

The scan is line based and reads CommonMark's block structure as far as markers need it
(docs/decisions.md, "answer-ui@1 markers"), as CommonMark's reference parser does: the
containers a line continues (block quotes by their `>`, list items by their content column),
the ones it closes, the ones it opens; fenced code (three or more backticks or tildes, closed
by a like fence at least as long followed only by blanks, or by the end of its container);
indented code (four columns past the container's); headings and thematic breaks; and the
lines a paragraph takes lazily.  Tabs count to stops of 4.  A marker line is the marker
alone, at most three columns past its container's, blanks after it, not in code and in no
block quote; a marker whose id is not a valid identifier is plain text.  Lines end at `\\n`
only (a `\\r` before it is a blank).

Linear in the answer's length however deep its containers nest (a hostile answer of 100,000
units took up to 190 s before; issue 24, its twenty-first pass): a line is read by positions, never
by copies of its rest, and each run of its spaces is counted once; a blank line settles every list
item it stays in at once; whether a quote is open is a list of where the quotes are; and a line's
thematic break is looked for only where the rest of the line can be one.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import NamedTuple

from core._identifier import IDENTIFIER_PATTERN, is_identifier


class Marker(NamedTuple):
    """A marker line naming one block."""

    block_id: str


# Matched in a line whose tabs are expanded and `\r`s stripped, at its content's first column.
_MARKER = re.compile(r"\[\[ui:(" + IDENTIFIER_PATTERN + r")\]\] *")
_FENCE = re.compile(r"(`{3,}|~{3,})(.*)")  # an opening fence and its info string
_CLOSING = re.compile(r"(`{3,}|~{3,}) *")
_ITEM = re.compile(r"[-+*]|([0-9]{1,9})[.)]")  # a list item's marker (group 1: its number)
_HEADING_OR_BREAK = re.compile(r"#{1,6}(?: |$)|(?:\* *){3,}$|(?:- *){3,}$|(?:_ *){3,}$")
_SETEXT = re.compile(r"(?:=+|-+) *")  # under paragraph text: the paragraph was a heading

QUOTE = 0  # a container's width: a block quote; a list item's is its content column's offset (> 0)


_SPACES = re.compile(" *")


def _spaces(columns: str, at: int) -> int:
    """The spaces at `at`, read in place."""
    match = _SPACES.match(columns, at)
    return match.end() - at if match is not None else 0


def _fence(text: str) -> str | None:
    """The fence `text` opens, if any (a backtick fence's info string holds no backtick)."""
    match = _FENCE.fullmatch(text)
    if match is None or (match.group(1)[0] == "`" and "`" in match.group(2)):
        return None
    return match.group(1)


class _Item(NamedTuple):
    """A list item's marker at a line's content: its width with the spaces after it (the offset
    of its content), and whether text follows it on the line."""

    width: int
    ordered_from: str | None
    has_text: bool


class _Line:
    """One line (tabs expanded, `\\r`s stripped) and where each thematic-break character's trailing
    run starts in it, found once a line: a break of `*`, `-` or `_` runs to the line's end."""

    __slots__ = ("_runs", "columns")

    def __init__(self, columns: str) -> None:
        self.columns = columns
        self._runs: dict[str, int] = {}

    def breaks(self, at: int) -> bool:
        """Whether the line from `at` is a heading's start or a thematic break (`_HEADING_OR_BREAK`);
        the regex runs only where the rest of the line can be a break."""
        columns = self.columns
        char = columns[at] if at < len(columns) else ""
        if char in ("*", "-", "_"):
            run = self._runs.get(char)
            if run is None:
                run = self._runs[char] = len(columns.rstrip(char + " "))
            if run > at:
                return False
        return _HEADING_OR_BREAK.match(columns, at) is not None

    def item(self, at: int) -> _Item | None:
        """The list item the line starts at `at` (a thematic break is none); its width counts from `at`."""
        columns = self.columns
        match = _ITEM.match(columns, at)
        if match is None or self.breaks(at):
            return None
        end = match.end()
        spaces = _spaces(columns, end)
        if end + spaces == len(columns):  # an empty item
            return _Item(end - at + 1, match.group(1), False)
        if spaces == 0:
            return None
        return _Item(end - at + (1 if spaces >= 5 else spaces), match.group(1), True)  # 5+: indented code after it

    def starts_block(self, at: int) -> bool:
        """Whether the line's text from `at` (after the containers it continues) starts a block of its
        own where no paragraph is its container: a block quote, a list item, a fence, a heading or a
        thematic break (indented code never does after paragraph text)."""
        spaces = _spaces(self.columns, at)
        if spaces > 3:
            return False
        at += spaces
        return self.columns.startswith(">", at) or self.item(at) is not None \
            or _fence(self.columns[at:]) is not None or self.breaks(at)


class _Scan:
    """The block structure read so far: open containers, an open fence, an open paragraph."""

    def __init__(self) -> None:
        self.containers: list[int] = []  # QUOTE, or a list item's content offset; outermost first
        self.quotes: list[int] = []  # the positions of the block quotes in `containers`, in order
        self.fence: str | None = None  # the fence of an open fenced code block (in every open container)
        self.paragraph = False  # the last line was paragraph text: the next may continue it
        self.empty_item: int | None = None  # the depth of a list item opened empty, nothing in it yet

    def marker(self, columns: str) -> str | None:
        """The id of the marker line `columns` is (tabs expanded, `\\r`s stripped), or None; reads
        the line into the structure either way."""
        at, matched = self._continue(columns)
        if self.fence is not None:
            if matched == len(self.containers):
                closing = _CLOSING.fullmatch(columns, at + min(_spaces(columns, at), 3))
                if closing is not None and closing.group(1)[0] == self.fence[0] \
                        and len(closing.group(1)) >= len(self.fence):
                    self.fence = None
                return None
            self.fence = None  # its container ended: the line is read afresh
        if at + _spaces(columns, at) == len(columns):  # blank
            self._close(matched)
            self.paragraph = False
            return None
        self.empty_item = None
        line = _Line(columns)
        if self.paragraph and matched < len(self.containers) and not line.starts_block(at):
            return self._lazy(columns, at)  # a lazy continuation line: the containers stay
        continuing = self.paragraph and matched == len(self.containers)
        self._close(matched)
        return self._blocks(line, at, continuing)

    def _open(self, width: int) -> None:
        if width == QUOTE:
            self.quotes.append(len(self.containers))
        self.containers.append(width)

    def _close(self, matched: int) -> None:
        """Close the containers from depth `matched` on."""
        del self.containers[matched:]
        del self.quotes[bisect_left(self.quotes, matched):]

    def _continue(self, columns: str) -> tuple[int, int]:
        """The column after the open containers the line continues, and how many it continues."""
        at = 0
        end = _spaces(columns, 0)  # where the spaces at `at` end: each run is counted once
        for matched, width in enumerate(self.containers):
            if width == QUOTE:
                if end - at > 3 or not columns.startswith(">", end):
                    return at, matched
                at = end + 1
                at += columns.startswith(" ", at)
                end = at + _spaces(columns, at)
            elif end == len(columns):  # a blank rest stays in the items, unless nothing is in one yet
                return self._blank_rest(columns, at, matched)
            elif end - at >= width:
                at += width
            else:
                return at, matched
        return at, len(self.containers)

    def _blank_rest(self, columns: str, at: int, matched: int) -> tuple[int, int]:
        """`_continue` of a line blank from `at` on, at the list item of depth `matched`: it continues
        every list item up to the next block quote or the item opened empty, in one step."""
        after = bisect_left(self.quotes, matched)
        stop = self.quotes[after] if after < len(self.quotes) else len(self.containers)
        if self.empty_item is not None and matched <= self.empty_item < stop:
            stop = self.empty_item
        return (at, matched) if stop == matched else (len(columns), stop)

    def _lazy(self, columns: str, at: int) -> str | None:
        """A line the open paragraph takes although its containers do not: literal in a quote."""
        spaces = _spaces(columns, at)
        return None if self.quotes or spaces > 3 else _marker_at(columns, at + spaces)

    def _blocks(self, line: _Line, at: int, continuing: bool) -> str | None:
        """Open the containers the line starts at `at`, then read its leaf block.  `continuing`:
        the paragraph is open in the line's containers, so only what may interrupt it does."""
        columns = line.columns
        while True:
            spaces = _spaces(columns, at)
            if spaces >= 4:  # indented code, or (indented text) the paragraph going on
                self.paragraph = continuing
                return None
            if columns.startswith(">", at + spaces):
                self._open(QUOTE)
                at += spaces + 1
                at += columns.startswith(" ", at)
                continuing = False
                continue
            item = line.item(at + spaces)
            if item is None or (continuing and not (item.has_text and item.ordered_from in (None, "1"))):
                break
            self._open(spaces + item.width)
            at += spaces + item.width
            continuing = False
            if not item.has_text:
                self.empty_item = len(self.containers) - 1
        return self._leaf(line, at + spaces, continuing)

    def _leaf(self, line: _Line, at: int, continuing: bool) -> str | None:
        """The leaf block of a line from `at` (after its containers and up to three spaces)."""
        text = line.columns[at:]
        if not text:
            self.paragraph = False
            return None
        fence = _fence(text)
        if fence is not None:
            self.fence, self.paragraph = fence, False
            return None
        if line.breaks(at) or (continuing and _SETEXT.fullmatch(text) is not None):
            self.paragraph = False
            return None
        self.paragraph = True
        return None if self.quotes else _marker_at(text, 0)


def _marker_at(columns: str, at: int) -> str | None:
    match = _MARKER.fullmatch(columns, at)
    return match.group(1) if match is not None and is_identifier(match.group(1)) else None


def scan(answer: str) -> list[str | Marker]:
    """The answer as text runs (lines joined by `\\n`) and the markers between them."""
    pieces: list[str | Marker] = []
    run: list[str] = []
    structure = _Scan()
    for line in answer.split("\n"):
        found = structure.marker(line.expandtabs(4).rstrip("\r"))
        if found is None:
            run.append(line)
            continue
        if run:
            pieces.append("\n".join(run))
            run = []
        pieces.append(Marker(found))
    if run:
        pieces.append("\n".join(run))
    return pieces


def marker_order(answer: str) -> list[str]:
    """The ids of the answer's markers in first-seen order, each once."""
    return list(dict.fromkeys(piece.block_id for piece in scan(answer) if isinstance(piece, Marker)))
