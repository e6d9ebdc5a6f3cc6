"""The seal of a stored generation and the text of its restore facts (workers/redisio/seal.py)."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from workers.redisio.seal import (
    SEAL_VERSION,
    Seal,
    facts_digest,
    facts_text,
    parse_facts,
    retired_digest,
    retired_of,
    snapshot_digest,
    snapshot_split,
)

ENVELOPE = '{"protocol":"dsh.intelligent-ui.stream","title":"caf\u00e9 ,\\"snapshot\\":"'
SNAPSHOT = '{"id":"a","root":{"type":"Text","id":"t"}}'
CHECKPOINT = f'{ENVELOPE},"snapshot":{SNAPSHOT}}}'


def test_a_seal_is_the_hmac_of_the_counters_the_facts_the_envelope_and_the_snapshots_digest() -> None:
    key = hashlib.sha256(SEAL_VERSION + b"\0" + b"k" * 32).digest()
    digest = hashlib.sha256(f',"snapshot":{SNAPSHOT}}}'.encode()).hexdigest()
    message = b"3 1200 900 7 12\n" + ENVELOPE.encode() + b"\n" + digest.encode()
    expected = hmac.new(key, message, hashlib.sha256).hexdigest()
    assert SEAL_VERSION == b"iui-generation-seal-2"
    assert snapshot_split(CHECKPOINT) == len(ENVELOPE) and snapshot_digest(CHECKPOINT) == digest
    assert Seal(b"k" * 32).of(CHECKPOINT, 3, 1200, "900 7 12") == expected
    assert Seal(b"k" * 32).verifies(expected, CHECKPOINT, 3, 1200, "900 7 12")
    assert Seal(b"k" * 32).verifies(expected, CHECKPOINT, 3, 1200, "900 7 12", snapshot_digest=digest)


@pytest.mark.parametrize(("envelope", "snapshot"), [
    ('{"title":"plain"', '{"id":"a"}'), (ENVELOPE, '{"id":"a"}'), ('{"title":"plain"', '{"id":"\u00e9\ud83d\ude00"}'),
    (ENVELOPE, '{"id":"\u00e9"}'), ('{"title":"\ud800"', '{"id":"\udfff"}'),
])
def test_the_seal_takes_the_texts_utf8_split_at_the_snapshot_whatever_its_characters(envelope: str,
                                                                                     snapshot: str) -> None:
    key = hashlib.sha256(SEAL_VERSION + b"\0").digest()
    checkpoint = f'{envelope},"snapshot":{snapshot}}}'
    tail = f',"snapshot":{snapshot}}}'.encode("utf-8", "surrogatepass")
    message = b"1 10 1 3 0\n" + envelope.encode("utf-8", "surrogatepass") + b"\n" + \
        hashlib.sha256(tail).hexdigest().encode()
    assert Seal().of(checkpoint, 1, 10, "1 3 0") == hmac.new(key, message, hashlib.sha256).hexdigest()
    assert Seal().verifies(Seal().of(checkpoint, 1, 10, "1 3 0"), checkpoint, 1, 10, "1 3 0")


def test_a_digest_lent_for_the_snapshot_is_what_the_seal_takes_of_it() -> None:
    """The caller (the shelf) vouches for the digest: a wrong one does not verify."""
    seal = Seal(b"k" * 32)
    good = seal.of(CHECKPOINT, 3, 1200, "900 7 12")
    assert not seal.verifies(good, CHECKPOINT, 3, 1200, "900 7 12", snapshot_digest="0" * 64)
    other = CHECKPOINT.replace('"t"', '"u"')
    assert not seal.verifies(good, other, 3, 1200, "900 7 12")
    assert seal.verifies(good, other, 3, 1200, "900 7 12", snapshot_digest=snapshot_digest(CHECKPOINT))


def test_a_checkpoint_without_a_snapshot_is_sealed_whole() -> None:
    key = hashlib.sha256(SEAL_VERSION + b"\0").digest()
    message = b"1 10 1 3 0\n" + ENVELOPE.encode() + b"\n" + hashlib.sha256(b"").hexdigest().encode()
    assert snapshot_split(ENVELOPE) == len(ENVELOPE)
    assert Seal().of(ENVELOPE, 1, 10, "1 3 0") == hmac.new(key, message, hashlib.sha256).hexdigest()


@pytest.mark.parametrize("moved", ["envelope into snapshot", "snapshot into envelope"])
def test_moving_text_across_the_split_changes_the_seal(moved: str) -> None:
    seal = Seal(b"k" * 32)
    good = seal.of(CHECKPOINT, 3, 1200, "900 7 12")
    other = CHECKPOINT.replace(',"snapshot":', ' ,"snapshot":') if moved == "envelope into snapshot" else \
        CHECKPOINT.replace('"title"', '"title" ')
    assert not seal.verifies(good, other, 3, 1200, "900 7 12")


@pytest.mark.parametrize("change", ["checkpoint", "frames", "bytes", "facts", "key", "keyless"])
def test_a_seal_verifies_nothing_else(change: str) -> None:
    seal = Seal(b"k" * 32)
    good = seal.of(CHECKPOINT, 3, 1200, "900 7 12")
    values = {"checkpoint": (CHECKPOINT + " ", 3, 1200, "900 7 12"), "frames": (CHECKPOINT, 4, 1200, "900 7 12"),
              "bytes": (CHECKPOINT, 3, 1201, "900 7 12"), "facts": (CHECKPOINT, 3, 1200, "900 7 13")}
    if change in values:
        assert not seal.verifies(good, *values[change])
    else:
        other = Seal(b"o" * 32) if change == "key" else Seal()
        assert not other.verifies(good, CHECKPOINT, 3, 1200, "900 7 12")


@pytest.mark.parametrize("stored", ["", "00", "x" * 64, "é" * 64, "\ud800", "0" * 64])
def test_a_stored_seal_that_is_not_the_seal_never_verifies_and_never_raises(stored: str) -> None:
    assert Seal().verifies(stored, CHECKPOINT, 1, 10, "1 3 0") is False


@pytest.mark.parametrize("facts", ["é 3 0", "\ud800", "1 3 0\n"])
def test_stored_facts_or_text_that_are_not_ascii_never_make_a_seal_raise(facts: str) -> None:
    assert Seal().verifies("0" * 64, CHECKPOINT, 1, 10, facts) is False
    assert Seal().verifies("0" * 64, CHECKPOINT + "\ud800", 1, 10, "1 3 0") is False
    assert Seal().of(CHECKPOINT, 1, 10, facts) != Seal().of(CHECKPOINT, 1, 10, "1 3 0")


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


@pytest.mark.parametrize("key", [None, b"", b"\xff" * 32, bytes(range(256)) * 2])
def test_the_seal_is_hmac_sha256_under_the_versioned_key_for_any_key(key: bytes | None) -> None:
    """The seal builds HMAC's two keyed SHA-256 states once (RFC 2104): the result is `hmac`'s."""
    mac_key = hashlib.sha256(SEAL_VERSION + b"\0" + (key or b"")).digest()
    seal = Seal(key)
    for frames, facts in ((1, "1 3 0"), (255, "900 7 12 " + "a" * 64)):
        message = f"{frames} 10 {facts}\n".encode() + ENVELOPE.encode() + b"\n" + snapshot_digest(CHECKPOINT).encode()
        assert seal.of(CHECKPOINT, frames, 10, facts) == hmac.new(mac_key, message, hashlib.sha256).hexdigest()
