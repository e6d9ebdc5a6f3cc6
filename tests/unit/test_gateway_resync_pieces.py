"""A `resync` is written a piece at a time: its state (100 UIs at the document limit: 27 MB of
text) was joined into one string, then split and encoded by sse-starlette, ~100 ms of the event
loop every stream of the gateway shares; the AG-UI rendering decoded it in one piece too.  The
bytes on the wire stay those of before."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import orjson
from sse_starlette import ServerSentEvent

from gateway.agui import AguiRenderer, _resynced, encoded
from gateway.backend import Snapshot
from gateway.cursor import Cursor
from gateway.events import LINE_END, PIECE_CHARS, SLOW_READER, Event, Resync, sse_parts
from tests.unit.loop_turns import turns_while

CURSOR = Cursor(3, (5, 0), (2, 0), (1, 0))


def frame(n: int, filler: int = 0) -> str:
    return json.dumps({"uiId": f"u{n}", "type": "complete" if n % 2 else "update", "generation": 1, "seq": n + 1,
                       "revision": n, "sourceCallId": f"c{n}",
                       "snapshot": {"title": f"\u00e9 \U0001F600 {n}", "text": "x" * filler, "v": None}},
                      ensure_ascii=False)


STATES = [
    Snapshot(),
    Snapshot(frames=[frame(0)]),
    Snapshot(frames=[frame(n, PIECE_CHARS // 3) for n in range(7)], receipts=['{"operationId":"o1"}', '{"a":2}'],
             answers=['{"type":"answer","text":"\u4f60\u597d"}']),
    Snapshot(receipts=['{"r":1}'] * 3),
]


def old_data(reason: str, state: Snapshot) -> str:
    """A resync's data as `EventStream._resync` wrote it before, in one string."""
    return ('{"reason":"' + reason + '","frames":[' + ",".join(state.frames) + '],"receipts":['
            + ",".join(state.receipts) + '],"answers":[' + ",".join(state.answers) + "]}")


async def collected(items: Any) -> list[Any]:
    return [item async for item in items]


def wire(items: list[Any]) -> bytes:
    return b"".join(item if isinstance(item, bytes) else item.encode() for item in items)


def test_a_resync_s_pieces_are_its_json_as_before() -> None:
    for reason in ("expired", "epoch", SLOW_READER):
        for state in STATES:
            joined = "".join(Resync(reason, state).parts())
            assert joined == old_data(reason, state)
            assert json.loads(joined)["reason"] == reason


def test_a_resync_is_on_the_wire_what_sse_starlette_wrote_of_it_joined() -> None:
    ident = CURSOR.text()
    for state in STATES:
        parts = Resync("expired", state).parts()
        written = asyncio.run(collected(sse_parts(parts, event="resync", ident=ident)))
        expected = ServerSentEvent(data=old_data("expired", state), event="resync", id=ident, sep=LINE_END).encode()
        assert wire(written) == expected
        assert all(isinstance(item, bytes) for item in written)
    big = sum(len(text) for text in STATES[2].frames)
    assert len(asyncio.run(collected(sse_parts(Resync("x", STATES[2]).parts(), event="resync", ident=ident)))) \
        >= big // PIECE_CHARS  # in chunks, not one


def test_a_piece_with_a_line_break_is_written_split_as_sse_requires() -> None:
    # Not the gateway's JSON (orjson writes one line), but a log entry is Redis's, not ours to trust.
    for parts in (['{"a":"', 'two\nlines', '"}'], ["x\r", "\ny"], ["carriage\rreturn"]):
        written = asyncio.run(collected(sse_parts(parts, event="resync", ident="1")))
        expected = ServerSentEvent(data="".join(parts), event="resync", id="1", sep=LINE_END).encode()
        assert wire(written) == expected
        assert b"\ndata: " in wire(written)  # a line of data per line, nothing injected as a field


def test_other_tasks_run_between_the_pieces_of_a_native_and_an_ag_ui_resync() -> None:
    state = Snapshot(frames=[frame(n, PIECE_CHARS) for n in range(30)])

    ticks, chunks = asyncio.run(turns_while(collected(sse_parts(Resync("expired", state).parts(), event="resync",
                                                               ident="1"))))
    assert len(chunks) >= 30 and ticks >= 29  # a turn after each chunk (before: one step)
    ticks, _ = asyncio.run(turns_while(collected(_resynced(AguiRenderer("s"), Resync("expired", state), CURSOR, None))))
    assert ticks >= 60  # a turn after each frame decoded and each UI written


def test_an_ag_ui_resync_is_on_the_wire_what_rendering_it_whole_gives() -> None:
    for reason in ("expired", SLOW_READER):
        for state in STATES:
            whole, pieces = AguiRenderer("s"), AguiRenderer("s")
            for renderer in (whole, pieces):
                renderer.start([frame(9)])  # a state it replaces
            event = Event("resync", CURSOR, "", Resync(reason, state))
            expected = b"".join(ServerSentEvent.encode(encoded(e, CURSOR)) for e in whole.render(event))
            assert wire(asyncio.run(collected(_resynced(pieces, Resync(reason, state), CURSOR, None)))) == expected
            assert pieces.state == whole.state
            value = json.loads(expected.split(b"\n\n")[-2].split(b"data: ", 1)[1])
            assert value["value"] == {"reason": reason, "receipts": [orjson.loads(t) for t in state.receipts],
                                      "answers": [orjson.loads(t) for t in state.answers]}


def test_an_ag_ui_resync_s_receipts_and_answers_are_written_one_at_a_time() -> None:
    # Its CUSTOM event holds the session's receipt and answer logs (up to IUI_RECEIPT_LOG_MAX and
    # IUI_FRAME_LOG_MAX_BYTES): it was encoded in one piece after the snapshot had been written in many.
    receipts = [json.dumps({"operationId": f"o{n}", "text": "\u00e9" * 300}) for n in range(400)]
    answers = [json.dumps({"type": "answer", "n": n, "v": None}) for n in range(300)]
    state = Snapshot(receipts=receipts, answers=answers)
    whole, pieces = AguiRenderer("s"), AguiRenderer("s")
    expected = b"".join(ServerSentEvent.encode(encoded(e, CURSOR))
                        for e in whole.render(Event("resync", CURSOR, "", Resync(SLOW_READER, state))))
    ticks, written = asyncio.run(turns_while(collected(_resynced(pieces, Resync(SLOW_READER, state), CURSOR, None))))
    assert wire(written) == expected
    assert len(written) >= 700 and ticks >= 700  # a chunk and a turn per receipt and answer
