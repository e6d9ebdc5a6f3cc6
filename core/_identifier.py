"""Protocol identifiers (seed 000 section 5): the one home of the rule.

An identifier matches `^[A-Za-z][A-Za-z0-9_-]{0,63}$` and is never a prototype name
(`__proto__`, `prototype`, `constructor`).  Node ids, state and derived keys, action ids,
argument names, answer-ui element and block ids all use it; the document checker, the rule
kit, the safe-JSON path cutter and the answer-ui parsers call `is_identifier`, and both JSON
Schemas are built from `IDENTIFIER_PATTERN` and `RESERVED_IDENTIFIERS`.
"""

from __future__ import annotations

from typing import Any

from core.limits import UI_LIMITS

IDENTIFIER_LENGTH = UI_LIMITS["maxIdentifierLength"]
IDENTIFIER_PATTERN = f"[A-Za-z][A-Za-z0-9_-]{{0,{IDENTIFIER_LENGTH - 1}}}"  # unanchored: schemas add ^ and $
RESERVED_IDENTIFIERS = ("__proto__", "prototype", "constructor")

_RESERVED = frozenset(RESERVED_IDENTIFIERS)
_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_REST = _START | frozenset("0123456789_-")


def is_identifier(value: Any) -> bool:
    """`^[A-Za-z][A-Za-z0-9_-]{0,63}$` and not a reserved prototype name."""
    return (
        type(value) is str
        and 0 < len(value) <= IDENTIFIER_LENGTH
        and value[0] in _START
        and _REST.issuperset(value)
        and value not in _RESERVED
    )
