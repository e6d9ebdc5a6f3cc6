"""An AG-UI connection's opening (RUN_STARTED, STATE_SNAPSHOT, the open steps) is decoded and
written a frame at a time, with the event loop's other work between frames: a session of 100 UIs
at the document limit (26 MB) stopped every stream of the gateway for ~0.2 s while its snapshot
was decoded, written and encoded (`python -m bench gateway --only agui-opening`); freeing it when
the connection ended stopped them ~43 ms, now it is freed a UI at a time.  And an event
whose fields hold no line break is written by `OneLineEvent` as sse-starlette writes it."""

from __future__ import annotations

import asyncio
import gc
import json
from typing import Any

import pytest
from sse_starlette import ServerSentEvent

from gateway.agui import AguiRenderer, _opening, agui_events, encoded
from gateway.backend import Snapshot
from gateway.cursor import Cursor
from gateway.events import Resync
from gateway.heap import release, relieve
from tests.unit.loop_turns import turns_while
from workers.runtime.heap import RELIEVE_AT, THRESHOLDS

CURSOR = Cursor(3, (5, 0), (0, 0), (0, 0))


def frames(count: int) -> list[str]:
    """The latest frame of `count` UIs, some still streaming, with text a snapshot must keep as is."""
    return [json.dumps({"uiId": f"u{n}", "type": "complete" if n % 3 else "update", "generation": 1 + n % 2,
                        "seq": n + 1, "revision": n, "sourceCallId": f"call-{n}",
                        "snapshot": {"title": f"UI \u00e9 \U0001F600 {n}", "value": None, "list": [n, 1.5, True]}})
            for n in range(count)]


async def opening(renderer: AguiRenderer, texts: list[str], relieve_: Any = lambda: None) -> list[Any]:
    return [event async for event in _opening(renderer, texts, CURSOR, relieve_)]


def wire(items: list[Any]) -> bytes:
    """What sse-starlette sends of a stream's items (`ensure_bytes`: bytes as they are)."""
    return b"".join(item if isinstance(item, bytes) else item.encode() for item in items)


def test_the_opening_is_on_the_wire_what_start_gives_written_by_sse_starlette() -> None:
    for count in (0, 1, 7):
        texts = frames(count)
        expected = AguiRenderer("s")
        events = [ServerSentEvent.encode(encoded(event, CURSOR)) for event in expected.start(texts)]
        renderer = AguiRenderer("s")
        renderer.run_id = expected.run_id
        written = asyncio.run(opening(renderer, texts))
        assert wire(written) == b"".join(events)
        assert renderer.state == expected.state  # the frames rendered after it diff against the same state
    snapshot = [line for line in wire(written).decode().split("\n\n")[1].split("\n") if line.startswith("data: ")]
    assert len(snapshot) == 1 and json.loads(snapshot[0][6:])["type"] == "STATE_SNAPSHOT"  # one line of data
    assert sum(isinstance(item, bytes) for item in written) == 1 + 7 + 2  # its head, a chunk a UI, its end


def test_an_opening_with_a_resync_is_its_run_then_the_resync_s_events_with_one_snapshot() -> None:
    # A cursor the logs cannot resume: the opening's read is the resync's, sent once.
    texts = frames(4)
    receipts = [json.dumps({"operationId": f"op-{n}", "status": "succeeded", "note": "\u00e9"}) for n in range(3)]
    answers = [json.dumps({"message_id": "m1", "block": 0})]
    expected = AguiRenderer("s")
    events = [expected.run_started(), *expected.resynced("epoch", [json.loads(t) for t in texts],
                                                         [json.loads(r) for r in receipts],
                                                         [json.loads(a) for a in answers])]
    renderer = AguiRenderer("s")
    renderer.run_id = expected.run_id
    resync = Resync("epoch", Snapshot(texts, receipts, answers))
    written = wire(asyncio.run(collect(_opening(renderer, texts, CURSOR, lambda: None, resync))))
    assert written == b"".join(ServerSentEvent.encode(encoded(event, CURSOR)) for event in events)
    assert written.count(b'"type":"STATE_SNAPSHOT"') == 1 and written.count(b'"name":"iui.resync"') == 1
    assert written.index(b'"type":"STATE_SNAPSHOT"') < written.index(b'"name":"iui.resync"')
    assert renderer.state == expected.state


async def collect(items: Any) -> list[Any]:
    return [item async for item in items]


def test_other_tasks_run_between_the_frames_of_a_snapshot() -> None:
    relieved = 0

    def counted() -> None:
        nonlocal relieved
        relieved += 1

    ticks, events = asyncio.run(turns_while(opening(AguiRenderer("s"), frames(40), counted)))
    assert b'"type":"STATE_SNAPSHOT"' in wire(events)
    assert relieved == 40  # the heap relieved after each frame decoded
    assert ticks >= 80  # a turn after each frame decoded and each UI written; before: 0 (one step of the loop)


def test_relieve_freezes_a_young_generation_past_its_bound() -> None:
    thresholds = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    try:
        gc.collect()
        young = [[n] for n in range(RELIEVE_AT // 2)]
        relieve()
        assert gc.get_count()[0] >= RELIEVE_AT // 2  # under the bound: nothing frozen
        more = [[n] for n in range(RELIEVE_AT)]
        frozen = gc.get_freeze_count()
        relieve()
        assert gc.get_count()[0] < 1_000 and gc.get_freeze_count() >= frozen + RELIEVE_AT
        del young, more
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def test_one_line_events_are_written_as_sse_starlette_writes_them() -> None:
    from gateway.events import OneLineEvent

    cases: list[dict[str, Any]] = [
        {"data": '{"a":1}'}, {"data": '{"a":1}', "id": "1-0.0-0.0-0", "event": "frame"},
        {"data": "x\u00e9\U0001F600", "retry": 1500}, {"data": ""}, {"comment": "heartbeat"},
        {"data": "two\nlines", "id": "1"}, {"data": "carriage\rreturn"}, {"data": "crlf\r\nend"},
        {"data": "x", "id": "bad\nid"}, {"data": "x", "event": "bad\revent"}, {"data": {"not": "text"}},
        {"data": "x", "comment": "both"}, {"event": "only"}, {"id": "only"}, {},
    ]
    for fields in cases:
        for sep in ("\n", "\r\n"):
            assert OneLineEvent(sep=sep, **fields).encode() == ServerSentEvent(sep=sep, **fields).encode(), fields
    for bad in ("1", 1.5):
        with pytest.raises(TypeError):
            OneLineEvent(data="x", retry=bad).encode()  # type: ignore[arg-type]


class Part:
    """A value that notes the ticker's count when it is freed."""

    def __init__(self, freed: list[int], ticks: list[int]) -> None:
        self.freed, self.ticks = freed, ticks

    def __del__(self) -> None:
        self.freed.append(self.ticks[0])


def test_a_released_state_is_freed_a_value_at_a_time_between_other_tasks() -> None:
    async def run() -> tuple[list[int], int]:
        ticks, freed = [0], []

        async def ticker() -> None:
            while True:
                ticks[0] += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        parts = {f"u{n}": Part(freed, ticks) for n in range(20)}
        release(parts)
        at_release = len(freed)
        for _ in range(60):
            await asyncio.sleep(0)
        task.cancel()
        return freed, at_release

    freed, at_release = asyncio.run(run())
    assert at_release == 0 and len(freed) == 20  # none in the releasing step, every one after
    assert len(set(freed)) == 20  # the ticker ran between any two: each freed on a turn of its own
    release({"u": "freed at once"})  # no running loop: nothing to schedule, no error


def test_an_ag_ui_connection_s_end_releases_its_state_and_a_resync_the_one_it_replaces() -> None:
    class Waiting:  # a session's stream with nothing new
        async def events(self) -> Any:
            await asyncio.Event().wait()
            yield None

    async def run() -> tuple[AguiRenderer, dict[str, Any], dict[str, Any]]:
        renderer = AguiRenderer("s")
        stream = agui_events(renderer, frames(5), CURSOR, Waiting())  # type: ignore[arg-type]
        async for _ in stream:
            if renderer.state["uis"]:
                break
        held = renderer.state["uis"]
        await stream.aclose()  # the client went
        at_end = dict(held)
        for _ in range(10):
            await asyncio.sleep(0)
        return renderer, held, at_end

    renderer, held, at_end = asyncio.run(run())
    assert renderer.state == {"uis": {}} and len(at_end) == 5  # handed over whole, not freed at the close
    assert held == {}  # then freed, a UI a turn

    async def resync() -> dict[str, Any]:
        renderer = AguiRenderer("s")
        renderer.start(frames(3))
        replaced = renderer.state["uis"]
        renderer._snapshot([json.loads(text) for text in frames(2)])
        assert len(replaced) == 3 and set(renderer.state["uis"]) == {"u0", "u1"}
        for _ in range(5):
            await asyncio.sleep(0)
        return replaced

    assert asyncio.run(resync()) == {}
