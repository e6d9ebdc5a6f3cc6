"""Key names and the partition function are the public wire contract."""

from __future__ import annotations

import zlib

import pytest

from workers.redisio.keys import Keys, partition_of
from workers.wire.entry import address_of, parse_body, parse_entry
from workers.wire.errors import MalformedEntry


def test_the_partition_is_crc32_of_the_utf8_session_modulo_p() -> None:
    assert partition_of("session-1", 64) == zlib.crc32(b"session-1") % 64
    assert partition_of("sé", 7) == zlib.crc32("sé".encode()) % 7


def test_all_keys_of_a_partition_share_its_hash_tag() -> None:
    keys = Keys("iui")
    names = [keys.input(3), keys.lease(3), keys.epoch(3), keys.dead(3), keys.reply(3, "s", "r"),
             keys.channel(3, "s"), keys.session(3, "s"), keys.frame_log(3, "s"), keys.generations(3, "s"),
             keys.plain(3, "s"), *keys.session_keys(3, "s")]
    assert all(name.startswith("iui:{p3}:") for name in names)
    assert keys.input(3) == "iui:{p3}:in"
    assert keys.reply(3, "s", "r") == "iui:{p3}:reply:s:r"
    assert keys.channel(3, "s") == "iui:{p3}:frames:s"


def test_a_complete_entry_parses() -> None:
    entry = parse_entry({"session": "s1", "request": "r1", "kind": "tool", "name": "intelligent_ui_open",
                         "call": "call_1", "body": "{}"})
    assert entry.name == "intelligent_ui_open"


@pytest.mark.parametrize("missing", ["session", "request", "kind", "name", "call", "body"])
def test_an_entry_without_a_field_is_malformed_naming_it(missing: str) -> None:
    fields = {"session": "s1", "request": "r1", "kind": "tool", "name": "n", "call": "c", "body": "{}"}
    del fields[missing]
    with pytest.raises(MalformedEntry, match=missing):
        parse_entry(fields)


def test_a_session_with_a_colon_or_brace_has_no_reply_address() -> None:
    assert address_of({"session": "a:b", "request": "r"}) is None
    assert address_of({"session": "a{b", "request": "r"}) is None
    assert address_of({"session": "ab", "request": "r"}) == ("ab", "r")
    assert address_of({"session": "ab"}) is None


def test_a_body_that_is_not_a_json_object_is_rejected_with_a_stable_code() -> None:
    with pytest.raises(MalformedEntry) as caught:
        parse_body("{not json", 100)
    assert caught.value.code == "invalid_json"
    with pytest.raises(MalformedEntry) as caught:
        parse_body("[]", 100)
    assert caught.value.code == "invalid_arguments"
    with pytest.raises(MalformedEntry) as caught:
        parse_body('{"a": "' + "x" * 200 + '"}', 100)
    assert caught.value.code == "oversize"
