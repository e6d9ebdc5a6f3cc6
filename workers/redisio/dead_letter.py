"""The bounded copy of an input entry that the dead-letter stream keeps.

Dead letters exist for an operator to look at, not to replay, and an entry that ends there is
often hostile (thousands of fields, megabyte bodies).  So each copy is cut to a field-count
and byte budget, and the stream of a partition is held under a count and a byte budget
(`workers/redisio/lua/dead.lua` trims its oldest entries).  Bounded copies also keep the script's
argument list short: Lua's `unpack` fails on a few thousand values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from config.settings import Settings

MAX_FIELDS = 64  # original fields kept per dead letter (the wire contract has six)
RESERVED = frozenset({"origin", "reason", "truncated"})  # the dead letter's own fields
# The `reason` field of a dead letter (and label of `iui_dead_lettered_total`): delivered more than
# IUI_DEAD_LETTER_AFTER times, no session/request to reply to, processing kept failing.
DEAD_LETTER_REASONS: tuple[str, ...] = ("redelivered", "no_reply_address", "failed")


@dataclass(frozen=True, slots=True)
class DeadLetterPolicy:
    """Budgets of one partition's dead-letter stream."""

    entry_bytes: int  # UTF-8 bytes of the original field names and values kept per dead letter
    max_entries: int  # dead letters kept per partition
    max_bytes: int  # bytes of all dead letters of a partition (every field name and value)

    @classmethod
    def of(cls, settings: Settings) -> DeadLetterPolicy:
        """The policy configured by `IUI_DEAD_LETTER_*`."""
        return cls(entry_bytes=settings.dead_letter_entry_bytes, max_entries=settings.dead_letter_max_entries,
                   max_bytes=settings.dead_letter_max_bytes)


@dataclass(frozen=True, slots=True)
class BoundedCopy:
    """The original fields kept for a dead letter, and whether anything was left out or cut."""

    fields: tuple[tuple[str, str], ...]
    truncated: bool


def _repaired(text: str) -> str:
    """`text` with the bytes that were not UTF-8 replaced by U+FFFD: a body's, which
    `workers.wire.entry.decode_fields` keeps as surrogate escapes (every other field is decoded so)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _cut(text: str, limit: int) -> str:
    """The longest prefix of `text` (repaired) within `limit` UTF-8 bytes (never half a character).

    A character is at least one byte, so the first `limit` characters hold every byte that fits."""
    limit = max(limit, 0)
    return _repaired(text[:limit]).encode("utf-8")[:limit].decode("utf-8", "ignore")


def bounded_copy(fields: Mapping[str, str] | Iterable[tuple[str, str]], budget: int,
                 max_fields: int = MAX_FIELDS) -> BoundedCopy:
    """Fields in entry order while they fit `budget` bytes and `max_fields`; the first misfit is cut."""
    pairs = fields.items() if isinstance(fields, Mapping) else fields
    kept: list[tuple[str, str]] = []
    truncated = False
    left = budget
    for name, value in pairs:
        if name in RESERVED or len(kept) == max_fields:
            truncated = True  # a colliding name would hide `origin`/`reason` from a dict reader
            if len(kept) == max_fields:
                break
            continue
        name_bytes = len(name.encode("utf-8"))
        if len(value) > left:  # more characters than bytes left cannot fit: skip encoding a megabyte value
            cost = left + 1
        else:
            value = _repaired(value)
            cost = name_bytes + len(value.encode("utf-8"))
        if cost <= left:
            kept.append((name, value))
            left -= cost
            continue
        truncated = True
        if 0 < name_bytes < left:
            kept.append((name, _cut(value, left - name_bytes)))
        break
    return BoundedCopy(tuple(kept), truncated)
