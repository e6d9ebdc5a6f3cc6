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

The shelf is looked up by a probe of the text, not the text itself: hashing 15 KB of JSON on
every lookup (Python's string hash) was a sixth of a shared restore.  The probe is the restore
facts, the text's length and three 32-character samples (its start, middle and end); a hit is
then proved by comparing the record's text with the shelved one (`str.startswith` at the split:
a memory compare, no copy).  Two texts with one probe (the same length and samples, a different
middle elsewhere) are both correct, only slower: the second is restored whole and shelved in
place of the first.

The shelf also spares a cold read's seal check its largest cost: the seal takes the snapshot's
text by its SHA-256 (workers/redisio/seal.py), and `digest` gives the one computed when the text
was shelved to any record whose text is, by the same probe and compare, the shelved one.

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

from ..redisio.seal import SNAPSHOT_KEY, snapshot_digest
from ..wire.entry import loads
from .cache import MISSING, GenerationCache, estimate

SHELF_SHARE = 8  # the shelf keeps restored snapshots of at most 1/8 of IUI_CACHE_BYTES (as the cache estimates)
SAMPLE = 32  # characters of each of a probe's three samples of a snapshot's text

Facts = tuple[int, int, int]
Probe = tuple[Facts, int, str, str, str]  # (facts, the text's length, its start, middle and end)


class SnapshotShelf:
    """The restored snapshots of sealed records, by (restore facts, the snapshot's stored text)."""

    def __init__(self, *, max_bytes: int, on_shared: Callable[[], None] | None = None) -> None:
        # probe -> (the snapshot's text, the seal's digest of it, its restore)
        self._shelf: GenerationCache[tuple[str, str, RestoredSnapshot]] = GenerationCache(max_bytes=max_bytes)
        self._on_shared = on_shared  # told of each restore around a shelved snapshot (a metric)

    def __len__(self) -> int:
        return len(self._shelf)

    def digest(self, checkpoint: str, facts: Facts) -> str:
        """The seal's `snapshot_digest` of `checkpoint` when its snapshot's text is a shelved one
        (proved by a memory compare, no hash), else "" (a hit counts as a use of it)."""
        start = checkpoint.find(SNAPSHOT_KEY) + len(SNAPSHOT_KEY)
        if start < len(SNAPSHOT_KEY) or not checkpoint.endswith("}"):
            return ""
        shelved = self._shelf.get(_probe(facts, checkpoint, start))
        return shelved[1] if shelved is not MISSING and checkpoint.startswith(shelved[0], start) else ""

    def restore(self, checkpoint: str, *, facts: Facts, frame_count: int, byte_count: int,
                retired_types: dict[str, str] | None = None) -> UIStreamState:
        """`core.restore_ui_stream` of a sealed record's checkpoint text, its snapshot restored
        once per distinct text.  Raises `UIStreamError` as `restore_ui_stream` does."""
        at = checkpoint.find(SNAPSHOT_KEY)
        if at < 0 or not checkpoint.endswith("}"):
            return restore_ui_stream(loads(checkpoint), frame_count=frame_count, byte_count=byte_count, facts=facts,
                                     retired_types=retired_types)
        envelope_text = checkpoint[:at] + "}"
        start = at + len(SNAPSHOT_KEY)
        probe = _probe(facts, checkpoint, start)
        shelved = self._shelf.get(probe)
        if shelved is not MISSING and checkpoint.startswith(shelved[0], start):  # the same length: the same text
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
        text = checkpoint[start:-1]
        self._shelf.put(probe, (text, snapshot_digest(checkpoint), snapshot), estimate(text))
        return state


def _probe(facts: Facts, checkpoint: str, start: int) -> Probe:
    """The shelf's key of the snapshot text `checkpoint[start:-1]`: its facts, its length and
    its start, middle and end (`SAMPLE` characters each)."""
    end = len(checkpoint) - 1
    middle = (start + end - SAMPLE) // 2
    return (facts, end - start, checkpoint[start:start + SAMPLE], checkpoint[middle:middle + SAMPLE],
            checkpoint[max(end - SAMPLE, start):end])


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
