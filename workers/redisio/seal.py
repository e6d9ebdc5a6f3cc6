"""The seal of a stored generation: proof that its checkpoint is one this host wrote.

A worker that finds a generation it does not hold (after a restart, a fail-over, a scale-out,
an eviction from its cache) rebuilds the producer state from the stored checkpoint.  Parsing
the checkpoint in full again walks and checks every component (~1 ms compiled for 200
components, most of a cold call).  So every commit stores beside the checkpoint the three
facts core needs to restore it without that walk (`UIStreamState.restore_facts`: JSON bytes,
JSON depth bound, expression nodes, as the text "<bytes> <depth> <expressions>", followed once the
generation removed a node by its `retired_types`, the ids it may re-use only with their types,
as a JSON object) and a seal:
HMAC-SHA256 over the checkpoint, the generation's budget counters and those facts.  A record
whose seal verifies is restored (`core.stream.lifecycle.restore_ui_stream`: envelope, budgets
and header checked, the component tree walked for its shape only); any other one (written
before seals existed, under another key or another seal version, or altered) is validated
in full, as every record was before.

The key is `IUI_STATE_KEY` (every worker of a deployment must have the same one, or each
reads the others' records as unsealed: correct, only slower; `iui_state_reads_total{seal=
"invalid"}` shows it).  Without a key the seal is keyed by its version alone: it then proves
that the record is intact and was written by a host of this seal version, not who wrote it,
so anyone who can write the Redis keys can forge one (as they can forge replies and frames).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

import orjson

SEAL_VERSION = b"iui-generation-seal-1"  # a change of what is sealed, or of core's facts, changes this
SEAL_OUTCOMES = ("valid", "missing", "invalid")  # what a read of a stored generation found of its seal


class Seal:
    """Seals and verifies stored generations under one key."""

    __slots__ = ("_key",)

    def __init__(self, key: bytes | None = None) -> None:
        # The version is part of the key, so a record sealed under another version never verifies.
        self._key = hashlib.sha256(SEAL_VERSION + b"\0" + (key or b"")).digest()

    def of(self, checkpoint: bytes, frames: int, byte_count: int, facts: str) -> str:
        """The seal (hex) of a generation's checkpoint (its UTF-8 JSON), budget counters and facts."""
        mac = hmac.new(self._key, f"{frames} {byte_count} {facts}\n".encode("ascii"), hashlib.sha256)
        mac.update(checkpoint)
        return mac.hexdigest()

    def verifies(self, seal: str, checkpoint: bytes, frames: int, byte_count: int, facts: str) -> bool:
        """True when `seal` is the seal of these values (compared in constant time; a stored
        value that is not even ASCII text, which `compare_digest` refuses, is simply not it)."""
        return seal.isascii() and hmac.compare_digest(seal, self.of(checkpoint, frames, byte_count, facts))


def facts_text(facts: tuple[int, int, int], retired: Mapping[str, str] | None = None) -> str:
    """The stored text of `restore_facts` and, once the generation removed a node, its
    `retired_types`: "<bytes> <depth> <expressions>[ <retired types as a JSON object>]"."""
    text = f"{facts[0]} {facts[1]} {facts[2]}"
    return text + " " + orjson.dumps(retired).decode() if retired else text


def parse_facts(text: str) -> tuple[int, int, int] | None:
    """The `restore_facts` of their stored text, or None when it does not start with three
    decimal numbers (and, when more follows, a JSON object)."""
    parts = text.split(" ", 3)
    if len(parts) < 3 or not all(part.isdigit() and part.isascii() and len(part) <= 9 for part in parts[:3]):
        return None
    if len(parts) == 4 and not parts[3].startswith("{"):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def retired_of(text: str) -> dict[str, str]:
    """The retired types stored after the facts (`facts_text`), or {} when none are (a record
    written before they were stored, or whose generation removed nothing); what is not an object
    of strings is none (core checks the ids and types when it takes them)."""
    parts = text.split(" ", 3)
    if len(parts) != 4:
        return {}
    try:
        value = orjson.loads(parts[3])
    except orjson.JSONDecodeError:
        return {}
    if type(value) is not dict or not all(type(kind) is str for kind in value.values()):
        return {}
    return value
