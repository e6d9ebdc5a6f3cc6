"""The pool's shelf of restored snapshots (workers/sessions/snapshots.py): a sealed record whose
snapshot text another record holds restores only its envelope, and every other text is restored
whole, as `core.restore_ui_stream` restores it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.errors import UIStreamError
from core.stream.lifecycle import UIStreamState, advance_ui_stream, restore_ui_stream, start_ui_stream
from workers.redisio.seal import snapshot_digest
from workers.sessions.snapshots import SnapshotShelf

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def producer(source: str = "call-1") -> UIStreamState:
    return start_ui_stream(json.loads((EXAMPLES / "stream-initial.json").read_text()), source, 1)


def stored(state: UIStreamState) -> str:
    """The checkpoint text as the worker stores it."""
    return orjson.dumps(state.checkpoint).decode()


class Counted:
    def __init__(self) -> None:
        self.shared = 0

    def __call__(self) -> None:
        self.shared += 1


def restore(shelf: SnapshotShelf, text: str, state: UIStreamState, **overrides: Any) -> UIStreamState:
    arguments: dict[str, Any] = {"facts": state.restore_facts, "frame_count": state.frame_count,
                                 "byte_count": state.byte_count, **overrides}
    return shelf.restore(text, **arguments)


def test_records_holding_the_same_snapshot_restore_it_once_and_each_is_the_whole_restore() -> None:
    counted = Counted()
    shelf = SnapshotShelf(max_bytes=1 << 30, on_shared=counted)
    states = [producer(f"call-{n}") for n in range(3)]
    restored = [restore(shelf, stored(state), state) for state in states]
    assert (counted.shared, len(shelf)) == (2, 1)
    for state, again in zip(states, restored, strict=True):
        whole = restore_ui_stream(orjson.loads(stored(state)), frame_count=state.frame_count,
                                  byte_count=state.byte_count, facts=state.restore_facts)
        assert again == whole and again.source_call_id == state.source_call_id
    assert restored[1].document is restored[0].document is restored[2].document


def test_a_text_whose_snapshot_is_not_its_last_field_is_restored_whole_and_never_shelved() -> None:
    counted = Counted()
    shelf = SnapshotShelf(max_bytes=1 << 30, on_shared=counted)
    state = advance_ui_stream(producer(), {"type": "error", "message": "the agent stopped"})
    text = stored(state)
    assert text.endswith('"message":"the agent stopped"}')  # the interface's order puts message last
    for _ in range(2):
        again = restore(shelf, text, state)
        assert again.without_history() == state.without_history() and again.status == "error"
    assert (counted.shared, len(shelf)) == (0, 0)


def test_a_text_laid_out_otherwise_is_restored_whole() -> None:
    shelf = SnapshotShelf(max_bytes=1 << 30)
    state = producer()
    frame = orjson.loads(stored(state))
    reordered = json.dumps({"snapshot": frame["snapshot"], **{k: v for k, v in frame.items() if k != "snapshot"}})
    spaced = json.dumps(frame, indent=1)  # "snapshot" after a newline: the split finds no key
    for text in (reordered, spaced):
        assert restore(shelf, text, state).without_history() == state.without_history()
    assert len(shelf) == 0


@pytest.mark.parametrize("change", ["facts", "envelope", "counters"])
def test_a_shelved_snapshot_never_lets_a_bad_record_through(change: str) -> None:
    """The envelope, the counters and the facts of each record are checked on a hit as on a miss."""
    shelf = SnapshotShelf(max_bytes=1 << 30)
    state = producer()
    restore(shelf, stored(state), state)  # shelved
    text, overrides = stored(state), dict[str, Any]()
    if change == "facts":
        overrides = {"facts": (*state.restore_facts[:2], 10**6)}  # no document has them (another key: a miss)
    elif change == "envelope":
        text = text.replace('"seq":1', '"seq":0', 1)
    else:
        overrides = {"frame_count": 0}
    with pytest.raises(UIStreamError):
        restore(shelf, text, state, **overrides)


def test_the_shelf_keeps_within_its_bytes_the_most_recently_used_first() -> None:
    shelf = SnapshotShelf(max_bytes=1)  # one entry at most
    first, second = producer(), advance_ui_stream(producer(), {"type": "remove", "nodeId": "loading"})
    restore(shelf, stored(first), first)
    restore(shelf, stored(second), second, retired_types=second.retired_types)
    assert len(shelf) == 1


def test_two_texts_with_one_probe_are_each_restored_as_their_own() -> None:
    """The shelf is looked up by a probe of the text (facts, length, three samples); a text that
    matches the probe of a shelved one but differs elsewhere is never taken for it."""
    document = json.loads((EXAMPLES / "stream-initial.json").read_text())
    other = json.loads(json.dumps(document))
    other["title"] = "Quarterly sales rePort"  # the same length, outside the probe's samples
    first, second = start_ui_stream(document, "call-1", 1), start_ui_stream(other, "call-2", 1)
    assert first.restore_facts == second.restore_facts
    texts = [stored(first), stored(second)]
    assert len(texts[0]) == len(texts[1]) and texts[0][-40:] == texts[1][-40:]
    counted = Counted()
    shelf = SnapshotShelf(max_bytes=1 << 30, on_shared=counted)
    for text, state in [(texts[0], first), (texts[1], second), (texts[0], first)]:
        again = restore(shelf, text, state)
        assert again.without_history() == state.without_history() and again.document["title"] == state.document["title"]
    assert (counted.shared, len(shelf)) == (0, 1)  # each miss restored whole and shelved in place of the other
    restore(shelf, texts[0], first)
    assert counted.shared == 1


def test_a_shelved_snapshot_lends_the_seals_digest_only_to_its_own_text() -> None:
    """`digest` spares a cold read's seal check the hash of a snapshot the shelf holds: it is the
    seal's digest of that text, and "" for any other text, even one with the same probe."""
    document = json.loads((EXAMPLES / "stream-initial.json").read_text())
    other = json.loads(json.dumps(document))
    other["title"] = "Quarterly sales rePort"  # the same length, outside the probe's samples
    first, second = start_ui_stream(document, "call-1", 1), start_ui_stream(other, "call-2", 1)
    shelf = SnapshotShelf(max_bytes=1 << 30)
    assert shelf.digest(stored(first), first.restore_facts) == ""  # nothing shelved yet
    restore(shelf, stored(first), first)
    again = stored(producer("call-9"))  # another session's record of the same document
    assert shelf.digest(again, first.restore_facts) == snapshot_digest(again) == snapshot_digest(stored(first))
    assert shelf.digest(stored(second), second.restore_facts) == ""  # one probe, another text
    assert shelf.digest(again, (*first.restore_facts[:2], first.restore_facts[2] + 1)) == ""  # other facts
    for text in (again[:-1], again.replace(',"snapshot":', ',"snapshots":'), "", "}"):
        assert shelf.digest(text, first.restore_facts) == ""
