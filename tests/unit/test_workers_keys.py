"""Key names and the partition function are the public wire contract."""

from __future__ import annotations

import random
import re
import zlib

import pytest

from workers.redisio.keys import Keys, partition_of
from workers.wire.entry import address_of, is_call_id, is_request_id, is_session_id, parse_body, parse_entry
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


ENTRY_FIELDS = {"session": "s1", "request": "r1", "kind": "tool", "name": "n", "call": "c", "body": "{}"}


@pytest.mark.parametrize(("fields", "message"), [
    # the first bad field in the wire contract's order is named, a missing one before any extra field
    ({**ENTRY_FIELDS, "kind": "sql", "session": ""}, "entry field 'session' is invalid"),
    ({k: v for k, v in ENTRY_FIELDS.items() if k != "call"} | {"zz": "1"}, "entry field 'call' is missing"),
    ({**ENTRY_FIELDS, "kind": "sql"}, "entry field 'kind' is invalid"),
    ({**ENTRY_FIELDS, "name": "a b"}, "entry field 'name' is invalid"),
    ({**ENTRY_FIELDS, "body": None}, "entry field 'body' is invalid"),
    ({**ENTRY_FIELDS, "session": b"s1"}, "entry field 'session' is invalid"),  # text only, never coerced
    ({**ENTRY_FIELDS, "principal": "a b"}, "entry field 'principal' is invalid"),
    ({**ENTRY_FIELDS, "project": "p:1"}, "entry field 'project' is invalid"),
    ({**ENTRY_FIELDS, "secretname": "x"}, "the entry has a field that is not part of the wire contract"),
    ({**ENTRY_FIELDS, 7: "x"}, "the entry has a field that is not part of the wire contract"),
    (None, "the entry is not a set of fields"),
])
def test_a_malformed_entry_names_its_first_bad_field_and_no_value(fields: object, message: str) -> None:
    with pytest.raises(MalformedEntry) as caught:
        parse_entry(fields)  # type: ignore[arg-type]
    assert caught.value.message == message and caught.value.code == "malformed_entry"


def test_an_entry_keeps_its_fields_and_its_optional_identity() -> None:
    entry = parse_entry({**ENTRY_FIELDS, "principal": "user-1", "project": "project-1"})
    assert (entry.session, entry.request, entry.kind, entry.name, entry.call, entry.body) == \
        ("s1", "r1", "tool", "n", "c", "{}")
    assert (entry.principal, entry.project) == ("user-1", "project-1")
    bare = parse_entry({**ENTRY_FIELDS, "principal": None})  # an absent identity, as the model took it
    assert bare.principal is None and bare.project is None


@pytest.mark.parametrize("fields", [{"session": b"s", "request": "r"}, {"session": "s", "request": 1},
                                    {"session": None, "request": "r"}, {}])
def test_an_address_that_is_not_text_is_no_reply_address(fields: dict) -> None:
    assert address_of(fields) is None


# The wire contract's id patterns (README), applied with `fullmatch`; entry.py checks them with
# str predicates, which must accept exactly what these accept.
_ID_PATTERNS = {
    is_session_id: lambda value: re.fullmatch(r"[!-~]{1,128}", value) is not None and not set(value) & set(":{}"),
    is_request_id: lambda value: re.fullmatch(r"[ -~]{1,128}", value) is not None,
    is_call_id: lambda value: re.fullmatch(r"[ -~]{1,256}", value) is not None,
}


def test_the_id_checks_accept_exactly_their_patterns() -> None:
    alphabet = [chr(code) for code in range(0, 0x82)] + ["\u00a0", "\u00e9", "\u2028", "\ud800", "\U0001f600"]
    rng = random.Random(2412)
    values = ["", "\n", "a\n", " ", "~", "\x7f", *("a" * n for n in (127, 128, 129, 255, 256, 257))]
    values += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 5))) for _ in range(20_000)]
    for check, pattern in _ID_PATTERNS.items():
        for value in values:
            assert check(value) is pattern(value), (check.__name__, value)
