"""The seal of a stored generation and the text of its restore facts (workers/redisio/seal.py)."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from workers.redisio.seal import SEAL_VERSION, Seal, facts_digest, facts_text, parse_facts, retired_digest, retired_of

CHECKPOINT = b'{"protocol":"dsh.intelligent-ui.stream","snapshot":{}}'


def test_a_seal_is_the_hmac_of_the_counters_the_facts_and_the_checkpoint_under_the_versioned_key() -> None:
    key = hashlib.sha256(SEAL_VERSION + b"\0" + b"k" * 32).digest()
    expected = hmac.new(key, b"3 1200 900 7 12\n" + CHECKPOINT, hashlib.sha256).hexdigest()
    assert Seal(b"k" * 32).of(CHECKPOINT, 3, 1200, "900 7 12") == expected
    assert Seal(b"k" * 32).verifies(expected, CHECKPOINT, 3, 1200, "900 7 12")


@pytest.mark.parametrize("change", ["checkpoint", "frames", "bytes", "facts", "key", "keyless"])
def test_a_seal_verifies_nothing_else(change: str) -> None:
    seal = Seal(b"k" * 32)
    good = seal.of(CHECKPOINT, 3, 1200, "900 7 12")
    values = {"checkpoint": (CHECKPOINT + b" ", 3, 1200, "900 7 12"), "frames": (CHECKPOINT, 4, 1200, "900 7 12"),
              "bytes": (CHECKPOINT, 3, 1201, "900 7 12"), "facts": (CHECKPOINT, 3, 1200, "900 7 13")}
    if change in values:
        assert not seal.verifies(good, *values[change])
    else:
        other = Seal(b"o" * 32) if change == "key" else Seal()
        assert not other.verifies(good, CHECKPOINT, 3, 1200, "900 7 12")


@pytest.mark.parametrize("stored", ["", "00", "x" * 64, "é" * 64, "\ud800", "0" * 64])
def test_a_stored_seal_that_is_not_the_seal_never_verifies_and_never_raises(stored: str) -> None:
    assert Seal().verifies(stored, CHECKPOINT, 1, 10, "1 3 0") is False


def test_the_keyless_seal_is_keyed_by_its_version_and_is_stable() -> None:
    assert Seal().of(CHECKPOINT, 1, 10, "1 3 0") == Seal(None).of(CHECKPOINT, 1, 10, "1 3 0")
    assert Seal().of(CHECKPOINT, 1, 10, "1 3 0") != Seal(b"k" * 32).of(CHECKPOINT, 1, 10, "1 3 0")


@pytest.mark.parametrize(("text", "facts"), [
    ("14942 7 3", (14942, 7, 3)),
    ("0 0 0", (0, 0, 0)),
    ("", None), ("1 2", None), ("1 2 3 4", None), ("1 2 3 ", None), ("1 2 3 []", None),
    ("1  2 3", None), (" 1 2 3", None), ("1 2 3\n", None),
    ("-1 2 3", None), ("1.0 2 3", None), ("1e3 2 3", None), ("١ 2 3", None), ("² 2 3", None),
    ("1234567890 2 3", None),
])
def test_stored_facts_are_three_decimal_numbers_or_none(text: str, facts: tuple[int, int, int] | None) -> None:
    assert parse_facts(text) == facts
    if facts is not None:
        assert facts_text(facts) == text


DIGEST = "0123456789abcdef" * 4


@pytest.mark.parametrize(("text", "facts"), [
    (f"14942 7 3 {DIGEST}", (14942, 7, 3)), (f"14942 7 3 {DIGEST[:-1]}", None), (f"14942 7 3 {DIGEST.upper()}", None),
    (f"14942 7 3 {DIGEST} ", None), ("14942 7 3 {}", None),
])
def test_stored_facts_may_name_the_digest_of_the_retired_types(text: str, facts: tuple[int, int, int] | None) -> None:
    assert parse_facts(text) == facts
    if facts is not None:
        assert facts_text(facts, DIGEST) == text and facts_digest(text) == DIGEST


def test_the_retired_types_are_taken_only_as_the_digest_in_the_facts_names_them() -> None:
    stored = '{"loading":"Loading","a b":"Text"}'
    facts = facts_text((14942, 7, 3), retired_digest(stored))
    assert retired_of(facts, stored) == {"loading": "Loading", "a b": "Text"}
    assert retired_of("14942 7 3", "") == {} and retired_of("14942 7 3", stored) == {}  # the facts name none
    for altered in ("", stored.replace("Text", "Card"), stored + " "):
        assert retired_of(facts, altered) is None  # the record is then validated in full, without them
    for shape in ("[]", '{"a": 1}', "{"):
        assert retired_of(facts_text((1, 2, 3), retired_digest(shape)), shape) is None
