"""The pool's shelf of restored snapshots (workers/sessions/snapshots.py): a sealed record whose
snapshot another record holds (the same facts and seal digest) restores only its envelope, and
every other text is restored whole, as `core.restore_ui_stream` restores it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.errors import UIStreamError
from core.stream.lifecycle import UIStreamState, advance_ui_stream, restore_ui_stream, start_ui_stream
from workers.redisio.seal import snapshot_digest
from workers.sessions.snapshots import KNOWN_DIGESTS, SnapshotShelf

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
    arguments: dict[str, Any] = {"digest": snapshot_digest(text), "facts": state.restore_facts,
                                 "frame_count": state.frame_count, "byte_count": state.byte_count, **overrides}
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


def test_two_texts_alike_but_for_a_middle_character_are_each_restored_as_their_own() -> None:
    """The shelf is keyed by the facts and the seal's digest: two snapshots of one length, alike
    at both ends, with the same facts, are two entries."""
    document = json.loads((EXAMPLES / "stream-initial.json").read_text())
    other = json.loads(json.dumps(document))
    other["title"] = "Quarterly sales rePort"
    first, second = start_ui_stream(document, "call-1", 1), start_ui_stream(other, "call-2", 1)
    assert first.restore_facts == second.restore_facts
    texts = [stored(first), stored(second)]
    assert len(texts[0]) == len(texts[1]) and texts[0][-40:] == texts[1][-40:]
    counted = Counted()
    shelf = SnapshotShelf(max_bytes=1 << 30, on_shared=counted)
    for text, state in [(texts[0], first), (texts[1], second), (texts[0], first), (texts[1], second)]:
        again = restore(shelf, text, state)
        assert again.without_history() == state.without_history() and again.document["title"] == state.document["title"]
    assert (counted.shared, len(shelf)) == (2, 2)


def test_the_shelf_names_the_digests_it_holds_and_lends_a_text_only_to_its_own_copy() -> None:
    """`known` names the most recently used shelved snapshots for a read to cut; `text_of` gives a
    shelved text by its key; `holds` is true only of a checkpoint whose text is the shelved one."""
    document = json.loads((EXAMPLES / "stream-initial.json").read_text())
    other = json.loads(json.dumps(document))
    other["title"] = "Quarterly sales rePort"
    first, second = start_ui_stream(document, "call-1", 1), start_ui_stream(other, "call-2", 1)
    facts, digest = first.restore_facts, snapshot_digest(stored(first))
    shelf = SnapshotShelf(max_bytes=1 << 30)
    assert shelf.known() == "" and shelf.text_of(facts, digest) is None
    assert not shelf.holds(stored(first), facts, digest)
    restore(shelf, stored(first), first)
    assert shelf.known() == digest + " "
    again = stored(producer("call-9"))  # another session's record of the same document
    text = shelf.text_of(facts, digest)
    assert text is not None and again == again[:again.index(',"snapshot":')] + ',"snapshot":' + text + "}"
    assert shelf.holds(again, facts, digest)
    assert not shelf.holds(stored(second), facts, digest)  # a stored digest naming another text
    assert shelf.text_of((*facts[:2], facts[2] + 1), digest) is None  # other facts
    for bad in (again[:-1], again + " ", again.replace(',"snapshot":', ',"snapshots":'), "", "}"):
        assert not shelf.holds(bad, facts, digest)
    restore(shelf, stored(second), second)
    assert shelf.known() == snapshot_digest(stored(second)) + " " + digest + " "  # the most recent first


def test_the_shelf_names_at_most_its_known_digests() -> None:
    shelf = SnapshotShelf(max_bytes=1 << 30)
    document = json.loads((EXAMPLES / "stream-initial.json").read_text())
    for n in range(KNOWN_DIGESTS + 2):
        state = start_ui_stream({**document, "title": f"report {n:02}"}, "call-1", 1)
        restore(shelf, stored(state), state)
    known = shelf.known().split(" ")
    assert len(shelf) == KNOWN_DIGESTS + 2 and len(known) == KNOWN_DIGESTS + 1 and known[-1] == ""
