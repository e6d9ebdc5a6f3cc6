"""JavaScript strings in Python: lengths and order in UTF-16 code units (an emoji counts 2), pairs joined."""

from __future__ import annotations


def utf16_length(text: str) -> int:
    """`text.length` as JavaScript reports it."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_sort_key(text: str) -> bytes:
    """A key that orders strings by UTF-16 code units, as JavaScript's sort does."""
    return text.encode("utf-16-be", "surrogatepass")


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and any(0xD800 <= ord(char) <= 0xDFFF for char in text)


def joined_text(text: str) -> str:
    """`text` as JavaScript holds it: a high surrogate followed by a low one is one character.

    A Python string can keep the two halves of a pair as two code points (joined by `+`);
    JavaScript strings are UTF-16, so there the halves simply are the character.  Lone
    halves stay as they are.
    """
    if not _has_surrogate(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def same_text(a: str, b: str) -> bool:
    """`a === b` in JavaScript: the same UTF-16 code units."""
    return a == b or joined_text(a) == joined_text(b)
