"""JavaScript string measures: lengths in UTF-16 code units (an emoji counts 2)."""

from __future__ import annotations


def utf16_length(text: str) -> int:
    """`text.length` as JavaScript reports it."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_sort_key(text: str) -> bytes:
    """A key that orders strings by UTF-16 code units, as JavaScript's sort does."""
    return text.encode("utf-16-be", "surrogatepass")
