"""The bounded copy of a dead-lettered entry and the exact reply-address check."""

from __future__ import annotations

import pytest

from workers.redisio.dead_letter import MAX_FIELDS, bounded_copy
from workers.wire.entry import address_of, parse_entry
from workers.wire.errors import MalformedEntry

ENTRY = {"session": "s", "request": "r", "kind": "tool", "name": "intelligent_ui", "call": "c", "body": "{}"}


def size(fields: tuple[tuple[str, str], ...]) -> int:
    return sum(len(k.encode()) + len(v.encode()) for k, v in fields)


def test_a_small_entry_is_copied_whole() -> None:
    copy = bounded_copy(ENTRY, 16_384)
    assert dict(copy.fields) == ENTRY and not copy.truncated


def test_a_megabyte_body_is_cut_to_the_byte_budget() -> None:
    copy = bounded_copy({**ENTRY, "body": "é" * 1_000_000}, 1_024)
    assert copy.truncated and 1_023 <= size(copy.fields) <= 1_024
    assert dict(copy.fields)["body"].startswith("éé")


def test_thousands_of_fields_are_cut_to_the_field_budget() -> None:
    copy = bounded_copy({f"f{i}": "" for i in range(5_000)}, 1_000_000)
    assert copy.truncated and len(copy.fields) == MAX_FIELDS


def test_a_field_named_like_the_dead_letter_metadata_is_left_out() -> None:
    copy = bounded_copy({"reason": "forged", "origin": "0-1", "session": "s"}, 1_024)
    assert copy.fields == (("session", "s"),) and copy.truncated


@pytest.mark.parametrize("field", ["session", "request"])
@pytest.mark.parametrize("suffix", ["\n", "\r\n", " \n"])
def test_an_address_with_a_final_newline_is_not_a_reply_address(field: str, suffix: str) -> None:
    assert address_of({**ENTRY, field: ENTRY[field] + suffix}) is None


@pytest.mark.parametrize("field", ["session", "request", "name", "call"])
def test_the_entry_model_refuses_a_final_newline_in_every_id(field: str) -> None:
    with pytest.raises(MalformedEntry, match=field):
        parse_entry({**ENTRY, field: ENTRY[field] + "\n"})
