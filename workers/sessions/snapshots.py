"""Restored snapshots shared by the cold sessions that stored the same one.

After a fail-over, a scale-out or a restart every session a worker takes over is cold, and
many of them often hold the same document: one app's form or report opened by each of its
users (the 1,000 sessions of `python -m bench cold`).  Restoring a stored 200-component
snapshot costs ~0.5 ms (its parse, its freeze, the walk of its tree); a restored snapshot is
immutable (`core.stream.lifecycle.RestoredSnapshot`), so the process keeps the ones it restored
by their stored text and a session whose record holds the same text restores only its envelope
around the shared one (`core.restore_envelope`): a few microseconds, and one document in memory
where a thousand sessions held a thousand copies.

Only records whose seal verified come here (`Store`): the seal proves this host wrote the
text, so the same text is the same snapshot.  The worker writes a checkpoint as `dumps` of a
frozen checkpoint, the envelope's scalar fields first and `"snapshot"` last
(`core.stream._checkpoint.checkpoint_of`); no scalar's JSON can hold `,"snapshot":` (a quote
inside a string is escaped), so the first occurrence splits the text into the envelope and the
snapshot's JSON (the seal's split, `SNAPSHOT_KEY`).  A split is shelved only once the full parse
of its text agrees with it (the envelope parsed apart equals the frame's); a text the split does
not fit (a record of another layout) is restored in full, as before.

The shelf is keyed by the restore facts and the seal's digest of the snapshot's text
(workers/redisio/seal.py, `snapshot_digest`), which every commit stores beside the checkpoint
(the `snapshot_digest` field).  That key serves three ends:

- a cold read names the digests of the most recently used shelved snapshots (`known`), and
  `generation.lua` then sends a record holding one of them with its envelope field in place of
  its checkpoint: the 15 KB of a 200-component snapshot neither enter the script nor cross the
  wire again (the record is made whole with the shelved text, `text_of`);
- the seal check of such a record takes the shelved digest: an HMAC over a few hundred bytes
  where hashing the snapshot's text was the largest cost of a cold read's check; a whole record
  whose stored digest names a shelved text lends it only when its text is that text (a memory
  compare, `holds`), else its snapshot is hashed;
- the restore finds the shelved snapshot by the digest the seal check verified.

A stored digest is never trusted by itself: it selects a shelved text, and the seal, computed
with that text's digest over the record's envelope, decides.  A record whose digest field was
altered to name another shelved snapshot (or whose envelope field was altered) fails its seal,
and is read again whole.

Bounded like the generation cache (`estimate` of the snapshot's text, least recently used
first), by a share of `IUI_CACHE_BYTES`; what the sessions' states share is counted by the
generation cache as well, so the bound is conservative.  Only the dispatcher thread uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orjson import JSONDecodeError

from core.stream.lifecycle import (
    RestoredSnapshot,
    UIStreamState,
    restore_envelope,
    restore_snapshot,
    restore_ui_stream,
)

from ..redisio.seal import SNAPSHOT_KEY, snapshot_split
from ..wire.entry import loads
from .cache import MISSING, GenerationCache, estimate

SHELF_SHARE = 8  # the shelf keeps restored snapshots of at most 1/8 of IUI_CACHE_BYTES (as the cache estimates)
KNOWN_DIGESTS = 8  # the most recently used shelved snapshots a cold read names (`known`)

Facts = tuple[int, int, int]


class SnapshotShelf:
    """The restored snapshots of sealed records, by (restore facts, the seal's snapshot digest)."""

    def __init__(self, *, max_bytes: int, on_shared: Callable[[], None] | None = None) -> None:
        # (facts, digest) -> (the snapshot's text, the digest, its restore)
        self._shelf: GenerationCache[tuple[str, str, RestoredSnapshot]] = GenerationCache(max_bytes=max_bytes)
        self._on_shared = on_shared  # told of each restore around a shelved snapshot (a metric)

    def __len__(self) -> int:
        return len(self._shelf)

    def known(self) -> str:
        """The digests of the `KNOWN_DIGESTS` most recently used shelved snapshots, each followed
        by a space (`generation.lua`'s ARGV[5]); "" when none is shelved."""
        return "".join(digest + " " for _, digest, _ in self._shelf.recent(KNOWN_DIGESTS))

    def text_of(self, facts: Facts, digest: str) -> str | None:
        """The text of the shelved snapshot with these facts and digest, if any (a use of it)."""
        shelved = self._shelf.get((facts, digest))
        return None if shelved is MISSING else shelved[0]

    def holds(self, checkpoint: str, facts: Facts, digest: str) -> bool:
        """True when the shelved snapshot of (facts, `digest`) is the snapshot of `checkpoint`'s text
        (compared in place: `digest` is then the seal's digest of it, without hashing it)."""
        text = self.text_of(facts, digest)
        if text is None:
            return False
        start = snapshot_split(checkpoint) + len(SNAPSHOT_KEY)  # past the end when it holds no snapshot
        return (len(checkpoint) - start == len(text) + 1 and checkpoint.endswith("}")
                and checkpoint.startswith(text, start))

    def restore(self, checkpoint: str, *, digest: str, facts: Facts, frame_count: int, byte_count: int,
                retired_types: dict[str, str] | None = None) -> UIStreamState:
        """`core.restore_ui_stream` of a sealed record's checkpoint text whose snapshot's digest
        (`snapshot_digest`, as its seal check verified it) is `digest`, its snapshot restored once
        per (facts, digest).  Raises `UIStreamError` as `restore_ui_stream` does."""
        at = checkpoint.find(SNAPSHOT_KEY)
        if at < 0 or not checkpoint.endswith("}"):
            return restore_ui_stream(loads(checkpoint), frame_count=frame_count, byte_count=byte_count, facts=facts,
                                     retired_types=retired_types)
        envelope_text = checkpoint[:at] + "}"
        shelved = self._shelf.get((facts, digest))
        if shelved is not MISSING:
            if self._on_shared is not None:
                self._on_shared()
            return restore_envelope(loads(envelope_text), shelved[2], frame_count=frame_count, byte_count=byte_count,
                                    retired_types=retired_types)
        frame = loads(checkpoint)
        envelope = _split_envelope(frame, envelope_text)
        if envelope is None:
            return restore_ui_stream(frame, frame_count=frame_count, byte_count=byte_count, facts=facts,
                                     retired_types=retired_types)
        snapshot = restore_snapshot(frame["snapshot"], facts=facts)
        state = restore_envelope(envelope, snapshot, frame_count=frame_count, byte_count=byte_count,
                                 retired_types=retired_types)
        text = checkpoint[at + len(SNAPSHOT_KEY):-1]
        self._shelf.put((facts, digest), (text, digest, snapshot), estimate(text))
        return state


def _split_envelope(frame: Any, envelope_text: str) -> dict[str, Any] | None:
    """The envelope parsed from the text before the split when it is the whole frame's but its
    snapshot (the split is then exactly the snapshot's JSON), else None."""
    if type(frame) is not dict or "snapshot" not in frame:
        return None
    try:
        envelope = loads(envelope_text)
    except JSONDecodeError:
        return None
    if type(envelope) is not dict or envelope != {key: value for key, value in frame.items() if key != "snapshot"}:
        return None
    return envelope
