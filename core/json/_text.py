"""JavaScript strings in Python: lengths and order in UTF-16 code units (an emoji counts 2), pairs joined."""

from __future__ import annotations


def utf16_length(text: str) -> int:
    """`text.length` as JavaScript reports it."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_prefix(text: str, units: int) -> str:
    """The longest start of `text` of at most `units` UTF-16 code units that does not end in the
    first half of a pair (a text cut for a JavaScript length limit stays whole characters)."""
    if len(text) <= units // 2 or utf16_length(text) <= units:
        return text
    cut = text.encode("utf-16-le", "surrogatepass")[: 2 * units].decode("utf-16-le", "surrogatepass")
    return cut[:-1] if cut and 0xD800 <= ord(cut[-1]) <= 0xDBFF else cut


def utf16_sort_key(text: str) -> bytes:
    """A key that orders strings by UTF-16 code units, as JavaScript's sort does."""
    return text.encode("utf-16-be", "surrogatepass")


def is_utf8_text(text: str) -> bool:
    """True unless `text` holds a surrogate code point (lone, or a pair kept as two halves): such
    a string has no UTF-8 form, so no JSON text this library writes can hold it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
