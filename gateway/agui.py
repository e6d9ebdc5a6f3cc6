"""AG-UI events: a second rendering of a session's event stream for the ecosystem's front ends.

AG-UI allows one active run at a time and requires RUN_STARTED first, while a session may
stream several UIs at once, so one connection is one run (`threadId` = the session) and each
generation of a UI is a step (`<uiId>:<generation>`) inside it:

- RUN_STARTED; STATE_SNAPSHOT of the AG-UI state `{"uis": {<uiId>: {document, status, revision,
  generation, seq, sourceCallId}}}` built from every UI's latest frame; STEP_STARTED for each UI
  still streaming;
- a frame: STEP_STARTED when a new generation begins, STATE_DELTA (RFC 6902 between consecutive
  states), STEP_FINISHED when it completes, is cancelled or fails;
- a receipt change: CUSTOM `iui.receipt`; an answer event: CUSTOM `iui.answer`; a `resync`:
  STATE_SNAPSHOT of the new state and CUSTOM `iui.resync` (its receipts and answers);
- at the end of the connection (its lifetime, or a slow reader): STEP_FINISHED of the open steps,
  RUN_FINISHED.

It resumes like the native stream: a reconnection is a new run whose snapshot holds every frame,
then the receipt changes and answer events after the client's cursor, exactly once.  A cursor the
logs cannot resume (an earlier life of the session, a receipt or answer log trimmed past it, a
position past a log's end) opens the run with the resync itself: its STATE_SNAPSHOT is the
opening's, read once and sent once, then its CUSTOM `iui.resync`.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Iterator
from typing import Any

import orjson
from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
)
from pydantic import BaseModel
from sse_starlette import ServerSentEvent

from .cursor import Cursor
from .events import LINE_END, SLOW_READER, Event, EventStream, Resync, sse_event
from .heap import release
from .json_patch import Patch, diff, pointer

TERMINAL = ("complete", "cancel", "error")
RESYNC_EVENT = "iui.resync"  # the CUSTOM event of a resync: its reason, receipts and answers


def _shorter(delta: Patch, ui_id: str, ui: dict[str, Any], frame_size: int) -> Patch:
    """`delta`, or one `replace` of the UI's whole state where the delta's JSON is longer than the
    frame's (a frame changing every cell of a 500 x 32 Table: 16,002 operations, 11x the frame)."""
    if len(delta) > 1 and len(orjson.dumps(delta)) > frame_size:
        return [{"op": "replace", "path": pointer(("uis", ui_id)), "value": ui}]
    return delta


def ui_state(frame: dict[str, Any]) -> dict[str, Any]:
    """What the AG-UI state holds of one UI, from its latest frame."""
    status = frame["type"] if frame.get("type") in TERMINAL else "streaming"
    return {"document": frame.get("snapshot"), "status": status, "revision": frame.get("revision"),
            "generation": frame.get("generation"), "seq": frame.get("seq"), "sourceCallId": frame.get("sourceCallId")}


class AguiRenderer:
    """Turns one connection's events into AG-UI events, keeping the AG-UI state between them."""

    def __init__(self, session: str) -> None:
        self.session = session
        self.run_id = f"run-{uuid.uuid4().hex}"
        self.state: dict[str, Any] = {"uis": {}}
        self._steps: set[str] = set()

    def start(self, frames: Iterable[str]) -> list[BaseEvent]:
        """RUN_STARTED, the state of `frames` (each UI's latest, as logged), a step per UI still
        streaming."""
        return self.begin([orjson.loads(text) for text in frames])

    def begin(self, frames: Iterable[dict[str, Any]]) -> list[BaseEvent]:
        """`start` of frames already decoded."""
        return [self.run_started(), *self._snapshot(frames)]

    def run_started(self) -> RunStartedEvent:
        """RUN_STARTED of this connection's run."""
        return RunStartedEvent(thread_id=self.session, run_id=self.run_id)

    def _snapshot(self, frames: Iterable[dict[str, Any]]) -> list[BaseEvent]:
        uis: dict[str, Any] = {}
        for frame in frames:
            uis[str(frame["uiId"])] = ui_state(frame)
        release(self.state["uis"])  # a resync's: the state it replaces
        self.state = {"uis": uis}
        events: list[BaseEvent] = [StateSnapshotEvent(snapshot=self.state)]
        for ui_id, ui in uis.items():
            events.extend(self._step(ui_id, ui))
        return events

    def render(self, event: Event) -> list[BaseEvent]:
        """The AG-UI events of one native event."""
        if event.type == "frame":
            return self._frame(orjson.loads(event.data), len(event.data))
        if event.type == "receipt":
            return [CustomEvent(name="iui.receipt", value=orjson.loads(event.data))]
        if event.type == "answer":
            return [CustomEvent(name="iui.answer", value=orjson.loads(event.data))]
        if event.resync is None:
            raise ValueError("a resync event carries its resync")
        state = event.resync.state
        return self.resynced(event.resync.reason, *([orjson.loads(text) for text in texts]
                                                   for texts in (state.frames, state.receipts, state.answers)))

    def resynced(self, reason: str, frames: list[dict[str, Any]], receipts: list[Any],
                 answers: list[Any]) -> list[BaseEvent]:
        """`render` of a resync decoded already: STATE_SNAPSHOT of its frames (none for a slow
        reader's), CUSTOM `iui.resync` with its reason, receipts and answers."""
        events = self._snapshot(frames) if frames or reason != SLOW_READER else []
        return [*events, CustomEvent(name=RESYNC_EVENT, value={"reason": reason, "receipts": receipts,
                                                              "answers": answers})]

    def release(self) -> None:
        """The connection ended: its state is freed a UI at a time between the loop's other work
        (`gateway.heap.release`), not in one piece when the renderer goes."""
        release(self.state["uis"])
        self.state = {"uis": {}}

    def finish(self, cursor: Cursor) -> list[BaseEvent]:
        """STEP_FINISHED of the open steps, RUN_FINISHED with the connection's last cursor as its
        `result.lastEventId`: a client that reads only `data:` lines (`@ag-ui/client`'s HttpAgent)
        resumes by sending it back as `Last-Event-ID`."""
        events: list[BaseEvent] = [StepFinishedEvent(step_name=name) for name in sorted(self._steps)]
        self._steps.clear()
        return [*events, RunFinishedEvent(thread_id=self.session, run_id=self.run_id,
                                          result={"lastEventId": cursor.text()})]

    def _frame(self, frame: dict[str, Any], size: int) -> list[BaseEvent]:
        ui_id = str(frame["uiId"])
        old = self.state["uis"].get(ui_id)
        if old is not None and (old["generation"], old["seq"]) >= (frame.get("generation"), frame.get("seq")):
            return []  # already in the state (the snapshot was read after the stream's start)
        # The other UIs are the same objects in both states: `diff` passes them without a walk.
        new = {"uis": {**self.state["uis"], ui_id: ui_state(frame)}}
        delta = _shorter(diff(self.state, new), ui_id, new["uis"][ui_id], size)
        self.state = new
        events: list[BaseEvent] = []
        if old is not None and old["generation"] != frame.get("generation"):
            events.extend(self._close(f"{ui_id}:{old['generation']}"))
        events.extend(self._step(ui_id, new["uis"][ui_id], opening_only=True))
        if delta:
            # Built, not validated: `diff` writes plain RFC 6902 operations, and the model's validation
            # made one model an operation (~6 µs each: 95 ms for a frame changing a 500 x 32 Table).
            events.append(StateDeltaEvent.model_construct(delta=delta))
        events.extend(self._step(ui_id, new["uis"][ui_id]))
        return events

    def _step(self, ui_id: str, ui: dict[str, Any], *, opening_only: bool = False) -> list[BaseEvent]:
        name = f"{ui_id}:{ui['generation']}"
        if ui["status"] == "streaming" and name not in self._steps:
            self._steps.add(name)
            return [StepStartedEvent(step_name=name)]
        if ui["status"] != "streaming" and not opening_only:
            return self._close(name)
        return []

    def _close(self, name: str) -> list[BaseEvent]:
        if name in self._steps:
            self._steps.discard(name)
            return [StepFinishedEvent(step_name=name)]
        return []


# The field of each event that carries JSON of any size as the model keeps it (decoded from the
# logs: plain dicts, lists, text and numbers orjson takes), always the model's last field.
# pydantic's serializer walks such a value ~30x slower than orjson: a snapshot of 100 UIs at the
# document limit (26 MB) took 0.5 s of the event loop all streams share, per connection, against
# ~16 ms.  A STATE_DELTA's operations are `diff`'s plain dicts (`AguiRenderer._frame` builds it).
_JSON_FIELDS: dict[type[BaseEvent], str] = {StateSnapshotEvent: "snapshot", StateDeltaEvent: "delta",
                                            CustomEvent: "value"}


def event_json(event: BaseEvent) -> str:
    """An AG-UI event's JSON, camelCase names, as pydantic writes it.  No `exclude_none`: ag_ui's
    models leave out the optional fields without a value themselves, and a null that is a value
    (a patch op's `value`, a state's null) must stay on the wire."""
    field = _JSON_FIELDS.get(type(event))
    if field is None:
        return event.model_dump_json(by_alias=True)
    head = event.model_dump(mode="json", by_alias=True, exclude={field})
    head[field] = getattr(event, field)  # the last field: the keys keep pydantic's order
    return orjson.dumps(head, default=_model_json).decode()


def _model_json(value: Any) -> Any:
    """A model inside an event's JSON field (a validated STATE_DELTA's operations), as pydantic writes it."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    raise TypeError(f"{type(value).__name__} is not JSON")


def encoded(event: BaseEvent, cursor: Cursor) -> ServerSentEvent:
    """One AG-UI event as a server-sent event (its JSON; the cursor as id)."""
    return sse_event(data=event_json(event), id=cursor.text())


def _pieces(event: BaseEvent) -> Iterator[bytes] | None:
    """`event_json` of a large event a piece at a time (a STATE_SNAPSHOT, a resync's CUSTOM: as large
    as a session's receipt and answer logs); None for any other event, written whole."""
    if isinstance(event, StateSnapshotEvent):
        return _snapshot_parts(event)
    if isinstance(event, CustomEvent) and event.name == RESYNC_EVENT:
        return _resync_parts(event)
    return None


def _opened(event: BaseEvent) -> bytes:
    """`event_json` up to its JSON field's value (`_JSON_FIELDS`, the last field): the head of an
    event written in pieces.  The head holds `type`, so it is never an empty object."""
    field = _JSON_FIELDS[type(event)]
    head = orjson.dumps(event.model_dump(mode="json", by_alias=True, exclude={field}))
    return head[:-1] + b',"' + field.encode() + b'":'


def _resync_parts(event: CustomEvent) -> Iterator[bytes]:
    """`event_json` of CUSTOM `iui.resync` (`{"reason", "receipts", "answers"}`), a receipt or an
    answer at a time."""
    value = event.value
    yield _opened(event) + b'{"reason":' + orjson.dumps(value["reason"])
    for name in ("receipts", "answers"):
        yield b',"' + name.encode() + b'":['
        for index, item in enumerate(value[name]):
            yield (b"," if index else b"") + orjson.dumps(item)
        yield b"]"
    yield b"}}"


def _snapshot_parts(event: StateSnapshotEvent) -> Iterator[bytes]:
    """`event_json` of a snapshot of the renderer's state (`{"uis": {...}}`), a UI at a time."""
    yield _opened(event) + b'{"uis":{'
    for index, (ui_id, ui) in enumerate(event.snapshot["uis"].items()):
        yield (b"," if index else b"") + orjson.dumps(ui_id) + b":" + orjson.dumps(ui)
    yield b"}}}"


async def _opening(renderer: AguiRenderer, frames: list[str], cursor: Cursor, relieve: Callable[[], None] | None,
                   resync: Resync | None = None) -> AsyncGenerator[ServerSentEvent | bytes, None]:
    """The run and its snapshot, decoded and written a frame at a time with the event loop's other
    work between them: a session of 100 UIs at the document limit (26 MB) stopped every stream of
    the process for ~0.2 s while its snapshot was decoded, written and encoded (`python -m bench
    gateway --only agui-opening`).  The snapshot is yielded as the SSE bytes themselves, a UI at a
    time (orjson's JSON is one line; each piece is one body chunk of the response, which nothing
    else writes meanwhile): never joined, nor decoded to text for sse-starlette to encode again.
    `relieve` keeps the decoded frames from young collections (`gateway.heap.relieve`; None: the
    collector is left as CPython configures it).  With `resync` (of the same read as `frames`: a
    cursor the logs cannot resume), the run opens with that resync's events instead."""
    if resync is None:
        events = renderer.begin(await _decoded(frames, relieve))
    else:
        events = [renderer.run_started(), *await _resync_events(renderer, resync, relieve)]
    async for written in _written(events, cursor):
        yield written


async def _resynced(renderer: AguiRenderer, resync: Resync, cursor: Cursor,
                    relieve: Callable[[], None] | None) -> AsyncGenerator[ServerSentEvent | bytes, None]:
    """A resync's events (`AguiRenderer.resynced`), decoded and written as the opening is: its
    state may be as large (a reconnection with a cursor the logs no longer hold)."""
    async for written in _written(await _resync_events(renderer, resync, relieve), cursor):
        yield written


async def _resync_events(renderer: AguiRenderer, resync: Resync,
                         relieve: Callable[[], None] | None) -> list[BaseEvent]:
    """`AguiRenderer.resynced` of a resync, its frames, receipts and answers decoded one by one."""
    state = resync.state
    frames = await _decoded(state.frames, relieve)
    receipts, answers = await _decoded(state.receipts, relieve), await _decoded(state.answers, relieve)
    return renderer.resynced(resync.reason, frames, receipts, answers)


async def _decoded(texts: list[str], relieve: Callable[[], None] | None) -> list[Any]:
    """JSON texts decoded one at a time, a turn of the loop after each."""
    decoded = []
    for text in texts:
        decoded.append(orjson.loads(text))
        if relieve is not None:
            relieve()
        await asyncio.sleep(0)
    return decoded


async def _written(events: list[BaseEvent], cursor: Cursor) -> AsyncGenerator[ServerSentEvent | bytes, None]:
    """Events as server-sent events; a large one (`_pieces`) as its SSE bytes, a piece at a time."""
    for event in events:
        pieces = _pieces(event)
        if pieces is None:
            yield encoded(event, cursor)
            continue
        opening = f"id: {cursor.text()}{LINE_END}data: ".encode()
        for part in pieces:
            yield opening + part
            opening = b""
            await asyncio.sleep(0)  # a chunk's send need not wait: the loop's turn is taken here
        yield (LINE_END + LINE_END).encode()


async def agui_events(renderer: AguiRenderer, frames: list[str], start: Cursor, stream: EventStream,
                      relieve: Callable[[], None] | None = None, *,
                      resync: Resync | None = None) -> AsyncIterator[ServerSentEvent | bytes]:
    """The AG-UI stream of one connection: the run, its snapshot (or `resync`, of the same read, for
    a cursor the logs cannot resume: `start` is then the resync's), then every event rendered."""
    cursor = start
    try:
        async with contextlib.aclosing(_opening(renderer, frames, cursor, relieve, resync)) as opening:
            async for written in opening:
                yield written
        async with contextlib.aclosing(stream.events()) as events:  # closed with this one (routes/events.py)
            async for item in events:
                if item is None:
                    yield sse_event(comment="heartbeat")
                    continue
                cursor = item.cursor
                if item.resync is not None:
                    async with contextlib.aclosing(_resynced(renderer, item.resync, cursor, relieve)) as resynced:
                        async for written in resynced:
                            yield written
                    continue
                for rendered in renderer.render(item):
                    yield encoded(rendered, cursor)
        for event in renderer.finish(cursor):
            yield encoded(event, cursor)
    finally:  # however it ends (its client gone, the session expired, the process stopping)
        renderer.release()
