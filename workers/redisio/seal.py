"""The seal of a stored generation: proof that its checkpoint is one this host wrote.

A worker that finds a generation it does not hold (after a restart, a fail-over, a scale-out,
an eviction from its cache) rebuilds the producer state from the stored checkpoint.  Parsing
the checkpoint in full again walks and checks every component (~1 ms compiled for 200
components, most of a cold call).  So every commit stores beside the checkpoint the three
facts core needs to restore it without that walk (`UIStreamState.restore_facts`: JSON bytes,
JSON depth bound, expression nodes, as the text "<bytes> <depth> <expressions>", followed once the
generation removed a node by the SHA-256 of its stored `retired_types`: the ids it may re-use only
with their types, a JSON object in the record's `retired` field, written only by the commits that
change it) and a seal:
HMAC-SHA256 over the generation's budget counters, those facts and the checkpoint, the checkpoint
taken as its envelope's text and the SHA-256 of its snapshot's (`snapshot_split`).  A record
whose seal verifies is restored (`core.stream.lifecycle.restore_ui_stream`: envelope, budgets
and header checked, the component tree walked for its shape only); any other one (written
before seals existed, under another key or another seal version, or altered) is validated
in full, as every record was before.

Why the snapshot by its digest: cold sessions often hold the same stored snapshot (one app's
document, opened by each of its users), and the worker keeps the snapshots it restored
(workers/sessions/snapshots.py) with their digest.  A record whose snapshot's text is the
shelved one (a memory compare) is verified with the shelved digest: an HMAC over a few hundred
bytes, where hashing the 15 KB of a 200-component checkpoint was the largest single cost of
verifying it.  The message decodes one way (the digest is the last 64 characters), so the seal
still proves every byte of the checkpoint.

The key is `IUI_STATE_KEY` (every worker of a deployment must have the same one, or each
reads the others' records as unsealed: correct, only slower; `iui_state_reads_total{seal=
"invalid"}` shows it).  Without a key the seal is keyed by its version alone: it then proves
that the record is intact and was written by a host of this seal version, not who wrote it,
so anyone who can write the Redis keys can forge one (as they can forge replies and frames).
"""

from __future__ import annotations

import hashlib
import hmac

import orjson

SEAL_VERSION = b"iui-generation-seal-2"  # a change of what is sealed, or of core's facts, changes this
SNAPSHOT_KEY = ',"snapshot":'  # how the worker's checkpoint text introduces its (last) field
SEAL_OUTCOMES = ("valid", "missing", "invalid")  # what a read of a stored generation found of its seal
_SHA256_BLOCK = 64  # SHA-256's block size in bytes, which HMAC pads its key to


class Seal:
    """Seals and verifies stored generations under one key."""

    __slots__ = ("_inner", "_outer")

    def __init__(self, key: bytes | None = None) -> None:
        # The version is part of the key, so a record sealed under another version never verifies.
        mac_key = hashlib.sha256(SEAL_VERSION + b"\0" + (key or b"")).digest()
        # HMAC-SHA256 (RFC 2104) from its two keyed SHA-256 states, hashed once here and copied for
        # each seal: `hmac.new` / `hmac.digest` look the algorithm up in OpenSSL on every call
        # (its provider lookup and locks were most of a seal under `perf`, issue 24).
        block = mac_key.ljust(_SHA256_BLOCK, b"\0")  # the key (32 bytes) is shorter than a block
        self._inner = hashlib.sha256(bytes(byte ^ 0x36 for byte in block))
        self._outer = hashlib.sha256(bytes(byte ^ 0x5C for byte in block))

    def of(self, checkpoint: str, frames: int, byte_count: int, facts: str, *, snapshot_digest: str = "") -> str:
        """The seal (hex) of a generation's checkpoint (its JSON text), budget counters and facts;
        `snapshot_digest`, when given, is `snapshot_digest(checkpoint)` known already."""
        at = snapshot_split(checkpoint)
        digest = snapshot_digest or _digest(checkpoint[at:])
        inner = self._inner.copy()
        inner.update(_utf8(f"{frames} {byte_count} {facts}\n{checkpoint[:at]}\n{digest}"))
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.hexdigest()

    def verifies(self, seal: str, checkpoint: str, frames: int, byte_count: int, facts: str, *,
                 snapshot_digest: str = "") -> bool:
        """True when `seal` is the seal of these values (compared in constant time; a stored
        value that is not even ASCII text, which `compare_digest` refuses, is simply not it)."""
        return seal.isascii() and hmac.compare_digest(
            seal, self.of(checkpoint, frames, byte_count, facts, snapshot_digest=snapshot_digest))


def snapshot_split(checkpoint: str) -> int:
    """Where a checkpoint's text splits into its envelope and its snapshot: the first
    `,"snapshot":` (the worker writes the snapshot last, and no scalar's JSON holds that text:
    a quote inside a string is escaped); the text's length when it holds none."""
    at = checkpoint.find(SNAPSHOT_KEY)
    return at if at >= 0 else len(checkpoint)


def snapshot_digest(checkpoint: str) -> str:
    """The digest a seal takes of a checkpoint's snapshot: the SHA-256 (hex) of its text from
    the split (`snapshot_split`) on."""
    return _digest(checkpoint[snapshot_split(checkpoint):])


def _digest(text: str) -> str:
    return hashlib.sha256(_utf8(text)).hexdigest()


def _utf8(text: str) -> bytes:
    # "surrogatepass": text from Redis has none (decoded with "replace"), yet no str makes a seal
    # raise (a stored facts field that was altered to non-ASCII text reaches it before its parse).
    return text.encode("utf-8", "surrogatepass")


def facts_text(facts: tuple[int, int, int], retired_digest: str = "") -> str:
    """The stored text of `restore_facts` and, once the generation removed a node, the digest of
    its stored retired types (`retired_digest`): "<bytes> <depth> <expressions>[ <digest>]"."""
    text = f"{facts[0]} {facts[1]} {facts[2]}"
    return f"{text} {retired_digest}" if retired_digest else text


def parse_facts(text: str) -> tuple[int, int, int] | None:
    """The `restore_facts` of their stored text, or None when it is not three decimal numbers
    (and, when more follows, a retired types digest)."""
    parts = text.split(" ", 3)
    if len(parts) < 3 or not all(part.isdigit() and part.isascii() and len(part) <= 9 for part in parts[:3]):
        return None
    if len(parts) == 4 and not _is_digest(parts[3]):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def retired_digest(text: str) -> str:
    """The digest of a generation's stored retired types (their JSON), as its facts name it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def facts_digest(facts: str) -> str:
    """The retired types digest stored facts name ("" when they name none)."""
    parts = facts.split(" ", 3)
    return parts[3] if len(parts) == 4 else ""


def retired_of(facts: str, stored: str) -> dict[str, str] | None:
    """The retired types of a record whose `facts` verified under its seal, from its `retired`
    field (`stored`): {} when the facts name none (a record written before they were stored, or
    whose generation removed nothing); None when the field is not what the facts' digest names
    (altered or lost: the record is then validated in full, without them).  Core checks the ids
    and the types when it takes them."""
    digest = facts_digest(facts)
    if not digest:
        return {}
    if not hmac.compare_digest(digest, retired_digest(stored)):
        return None
    try:
        value = orjson.loads(stored)
    except orjson.JSONDecodeError:
        return None
    if type(value) is not dict or not all(type(kind) is str for kind in value.values()):
        return None
    return value


def _is_digest(text: str) -> bool:
    return len(text) == 64 and text.isascii() and all(char in "0123456789abcdef" for char in text)
