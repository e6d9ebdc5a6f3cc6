"""AG-UI events (validated with the `ag-ui-protocol` models) and real JavaScript clients:
`@ag-ui/client` rebuilds the state from the AG-UI stream, the `eventsource` package follows the
native stream across gateway restarts."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui.core import Event, EventType
from pydantic import TypeAdapter

from gateway.json_patch import apply, diff
from tests.external_tools import require
from tests.gateway.conftest import GatewayProcess, auth, sample, token
from tests.gateway.sse import messages
from tests.gateway.test_events import Agent
from tests.integration.conftest import Runtime, cursor_args

pytestmark = pytest.mark.integration
NODE_PACKAGES = Path(__file__).resolve().parents[2] / ".ci" / "node"
EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


def need_node() -> None:
    """Skip (or fail in CI) unless Node.js and `.ci/node`'s packages are there: called before a test
    starts its producer thread, which would otherwise outlive a skipped test into the next one."""
    require(shutil.which("node") is not None and (NODE_PACKAGES / "node_modules" / "@ag-ui").is_dir()
            and (NODE_PACKAGES / "node_modules" / "eventsource").is_dir(),
            "needs Node.js and npm install --prefix .ci/node eventsource@5.1.5 @ag-ui/client@1.0.0")


def run_node(script: str, *args: str, timeout: float = 90) -> Any:
    """Run one of `tests/gateway/node/*.mjs` where `.ci/node`'s packages resolve; its JSON output."""
    with node_process(script, *args) as node:
        out, err = node.communicate(timeout=timeout)
    assert node.returncode == 0, err[-3000:]
    return json.loads(out)


@contextlib.contextmanager
def node_process(script: str, *args: str) -> Iterator[subprocess.Popen[str]]:
    """One of `tests/gateway/node/*.mjs`, started where `.ci/node`'s packages resolve (killed on exit)."""
    need_node()
    copy = NODE_PACKAGES / f"run-{script}"
    copy.write_text((Path(__file__).with_name("node") / script).read_text())
    node = subprocess.Popen(["node", str(copy), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield node
    finally:
        if node.poll() is None:
            node.kill()
            node.communicate()
        copy.unlink()


def agui_events(gateway: GatewayProcess, seconds: float, **headers: str) -> list[Any]:
    """Every AG-UI event of one connection until it ends (the gateway's stream lifetime)."""
    found = []
    with httpx.stream("GET", f"{gateway.url}/v1/sessions/s1/ag-ui", headers={**auth("viewer"), **headers},
                      timeout=seconds + 10) as response:
        assert response.status_code == 200
        for message in messages(response.iter_lines()):
            found.append((message.id, EVENTS.validate_json(message.data)))
    return found


def final_state(runtime: Runtime) -> dict[str, Any]:
    """The AG-UI state the stored latest frames describe."""
    from gateway.agui import ui_state

    stored = runtime.generation("s1", "sales-report", 1)
    return {"uis": {"sales-report": ui_state(json.loads(stored["checkpoint"]))}}


def test_a_value_that_becomes_null_is_written_as_null_in_the_state_delta() -> None:
    # A document may hold null (a Result's value, a Table cell): the patch op must carry it, or the
    # op is invalid for @ag-ui/core and ag_ui alike.
    from gateway.agui import AguiRenderer, encoded
    from gateway.cursor import Cursor
    from gateway.events import Event as LogEvent

    first = {"uiId": "u", "type": "snapshot", "generation": 1, "seq": 1, "revision": 0, "sourceCallId": "c",
             "snapshot": {"v": "x", "w": [1, None]}}
    second = {**first, "type": "update", "seq": 2, "revision": 1, "snapshot": {"v": None, "w": [None, None]}}
    renderer = AguiRenderer("s")
    snapshot = json.loads(encoded(renderer.start([json.dumps(first)])[1], Cursor()).data)
    deltas = [json.loads(encoded(event, Cursor()).data) for event in
              renderer.render(LogEvent("frame", Cursor(), json.dumps(second)))]
    delta = next(event for event in deltas if event["type"] == "STATE_DELTA")
    assert all("value" in op for op in delta["delta"] if op["op"] in ("add", "replace")), delta
    EVENTS.validate_python(delta)
    assert apply(snapshot["snapshot"], delta["delta"])["uis"]["u"]["document"] == {"v": None, "w": [None, None]}


def _wire_delta(event: Any) -> list[dict[str, Any]]:
    """A STATE_DELTA's operations as the wire carries them."""
    from gateway.agui import event_json

    return json.loads(event_json(event))["delta"]


def _frame(ui_id: str, seq: int, document: Any, kind: str = "update") -> str:
    return json.dumps({"uiId": ui_id, "type": kind, "generation": 1, "seq": seq, "revision": seq - 1,
                       "sourceCallId": f"call-{ui_id}", "snapshot": document})


def test_each_frame_s_delta_is_the_whole_state_s_diff_and_rebuilds_it() -> None:
    """The delta of a frame is its own UI's diff (an `add` for a new UI): the same operations as a
    diff of the whole state, which no longer walks the session's other UIs; or, where that diff's
    JSON is longer than the frame, one `replace` of the UI."""
    import random

    from gateway.agui import AguiRenderer
    from gateway.cursor import Cursor
    from gateway.events import Event as LogEvent

    rng = random.Random(5)
    renderer = AguiRenderer("s")
    renderer.start([_frame("a", 1, {"v": 1, "rows": [[1, 2]]}, "snapshot")])
    seqs: dict[str, int] = {"a": 1}
    for _ in range(300):
        ui_id = rng.choice("abcd")
        seqs[ui_id] = seqs.get(ui_id, 0) + 1
        document = {"v": rng.randint(0, 3), "rows": [[rng.randint(0, 2)] * rng.randint(0, 3)],
                    "t": rng.choice([None, "x"])}
        before = json.loads(json.dumps(renderer.state))
        frame = _frame(ui_id, seqs[ui_id], document)
        events = renderer.render(LogEvent("frame", Cursor(), frame))
        deltas = [_wire_delta(event) for event in events if event.type == EventType.STATE_DELTA]
        delta = deltas[0] if deltas else []
        whole = diff(before, renderer.state)
        if len(whole) > 1 and len(json.dumps(whole, separators=(",", ":"))) > len(frame):
            assert delta == [{"op": "replace", "path": f"/uis/{ui_id}", "value": renderer.state["uis"][ui_id]}]
        else:
            assert delta == whole
        assert apply(before, delta) == renderer.state


def test_a_frame_of_one_ui_costs_its_own_document_not_the_session_s() -> None:
    """A session of 100 UIs at the document limit: the whole state's diff took ~270 ms a frame and a
    connection; the frame's own UI's diff a few milliseconds (the bound is a generous multiple)."""
    from bench.documents import maximal_document
    from gateway.agui import AguiRenderer
    from gateway.cursor import Cursor
    from gateway.events import Event as LogEvent

    document = maximal_document()
    renderer = AguiRenderer("s")
    renderer.start([_frame(f"ui-{n}", 1, document, "snapshot") for n in range(100)])
    changed = {**document, "title": "changed"}
    started = time.perf_counter()
    events = renderer.render(LogEvent("frame", Cursor(), _frame("ui-7", 2, changed)))
    elapsed = time.perf_counter() - started
    (delta,) = [_wire_delta(event) for event in events if event.type == EventType.STATE_DELTA]
    assert delta == [{"op": "replace", "path": "/uis/ui-7/document/title", "value": "changed"},
                     {"op": "replace", "path": "/uis/ui-7/revision", "value": 1},
                     {"op": "replace", "path": "/uis/ui-7/seq", "value": 2}]
    assert elapsed < 0.1


def test_an_event_s_json_is_pydantic_s_byte_for_byte_and_its_json_field_is_the_model_s_last() -> None:
    # event_json writes the large field with orjson after pydantic's dump of the rest: the same bytes
    # only while that field is the model's last (an ag_ui release that appends a field fails here).
    from ag_ui.core import CustomEvent, RunFinishedEvent, StateDeltaEvent, StateSnapshotEvent, StepStartedEvent

    from gateway.agui import _JSON_FIELDS, event_json

    for model, field in _JSON_FIELDS.items():
        assert list(model.model_fields)[-1] == field
    values: list[Any] = [None, 0, -1.5, 1e15, 2**53 + 1, 1e-7, "", "é\u2028\u2029\"\\</script>", True, [],
                         {"a": None, "b": [1, {"c": "x"}], "": {}}, [[[]]]]
    events = [*(StateSnapshotEvent(snapshot=value) for value in values),
              *(CustomEvent(name="iui.receipt", value=value) for value in values),
              StateDeltaEvent(delta=[{"op": "replace", "path": "/a~1b", "value": None}, {"op": "remove", "path": ""},
                                     {"op": "add", "path": "/x/-", "value": {"k": [1.5, None]}}]),
              StateDeltaEvent(delta=[]), StepStartedEvent(step_name="u:1"),
              RunFinishedEvent(thread_id="s", run_id="r", result={"lastEventId": "1-0"})]
    for event in events:
        assert event_json(event) == event.model_dump_json(by_alias=True)


def test_the_snapshot_of_a_session_of_100_uis_at_the_limit_is_encoded_in_milliseconds() -> None:
    """pydantic's serializer took 0.5-0.7 s of the event loop for this snapshot (26 MB), per connection;
    orjson ~16 ms (the bound is a generous multiple)."""
    from ag_ui.core import StateSnapshotEvent

    from bench.documents import maximal_document
    from gateway.agui import AguiRenderer, encoded
    from gateway.cursor import Cursor

    document = maximal_document()
    renderer = AguiRenderer("s")
    (snapshot,) = [event for event in renderer.start([_frame(f"ui-{n}", 1, document, "snapshot") for n in range(100)])
                   if isinstance(event, StateSnapshotEvent)]
    started = time.perf_counter()
    data = encoded(snapshot, Cursor()).data
    elapsed = time.perf_counter() - started
    assert json.loads(data)["snapshot"]["uis"]["ui-42"]["document"] == document
    assert elapsed < 0.2


def test_a_frame_changing_every_cell_of_a_large_table_is_one_replace_of_its_ui() -> None:
    # An audit: 16,002 operations, 1.38 MB of STATE_DELTA for a 125 KB frame, and ~95 ms of pydantic
    # models per frame and connection.  Where the diff is longer than the frame, the UI is replaced.
    from gateway.agui import AguiRenderer, encoded
    from gateway.cursor import Cursor
    from gateway.events import Event as LogEvent

    def table(base: int) -> dict[str, Any]:
        return {"rows": [[base + row * 32 + column for column in range(32)] for row in range(500)]}

    renderer = AguiRenderer("s")
    renderer.start([_frame("u", 1, table(0), "snapshot")])
    frame = _frame("u", 2, table(100_000))
    (delta,) = [encoded(event, Cursor()).data for event in renderer.render(LogEvent("frame", Cursor(), frame))
                if event.type == EventType.STATE_DELTA]
    assert json.loads(delta)["delta"] == [{"op": "replace", "path": "/uis/u", "value": renderer.state["uis"]["u"]}]
    assert len(delta) < len(frame) * 1.1
    EVENTS.validate_json(delta)


def test_the_json_patch_diff_turns_one_value_into_the_other() -> None:
    cases = [({"a": [1, 2], "b": {"c": True}}, {"a": [1, 2, 3], "b": {"c": 1}}),
             ({"x/y": {"~": 1}}, {"x/y": {"~": 2}}), ([1, {"a": 1}], [{"a": 1}]), ({"a": 1}, {"b": None}),
             (1, "1"), ({"k": [1, [2, 3]]}, {"k": [1, [3, 2]]})]
    for old, new in cases:
        patch = diff(old, new)
        assert apply(old, patch) == new and json.dumps(apply(old, patch)) == json.dumps(new)
    assert diff({"a": True}, {"a": 1}) == [{"op": "replace", "path": "/a", "value": 1}]


def test_every_agui_event_is_valid_and_the_state_rebuilds_to_the_final_snapshot(redis_url: str) -> None:
    runtime = Runtime(redis_url).start()
    gateway = GatewayProcess(redis_url, gateway_max_connection_s=3).start()
    try:
        agent = Agent(runtime)
        agent.patch(3)
        producer = threading.Thread(target=lambda: (time.sleep(0.5), agent.patch(5, pause=0.05)), daemon=True)
        producer.start()
        identified = agui_events(gateway, 3)
        events = [event for _, event in identified]
        producer.join()
        assert events[-1].result == {"lastEventId": identified[-1][0]}  # HttpAgent reads no `id:` lines
        kinds = [event.type for event in events]
        assert kinds[0] == EventType.RUN_STARTED and kinds[1] == EventType.STATE_SNAPSHOT
        assert kinds[-1] == EventType.RUN_FINISHED and kinds.count(EventType.STEP_STARTED) == 1
        assert kinds.count(EventType.STEP_FINISHED) == 1  # the open generation's step is closed at the end
        state = events[1].snapshot
        for event in events[2:]:
            if event.type == EventType.STATE_DELTA:
                state = apply(state, [op.model_dump(by_alias=True) for op in event.delta])
        assert state == final_state(runtime)
    finally:
        gateway.stop()
        runtime.stop()


def opened_with_resync(identified: list[Any], reason: str, cursor: str) -> Any:
    """The snapshot of a run that opened with a resync (`reason`, no receipts or answers): RUN_STARTED,
    its one STATE_SNAPSHOT, CUSTOM `iui.resync`, ..., RUN_FINISHED, every event at `cursor`."""
    events = [event for _, event in identified]
    kinds = [event.type for event in events]
    assert kinds[:2] == [EventType.RUN_STARTED, EventType.STATE_SNAPSHOT] and kinds.count(EventType.STATE_SNAPSHOT) == 1
    (resync,) = [event for event in events if event.type == EventType.CUSTOM]
    assert resync.name == "iui.resync" and resync.value == {"reason": reason, "receipts": [], "answers": []}
    assert kinds.index(EventType.CUSTOM) < kinds.index(EventType.RUN_FINISHED) == len(kinds) - 1
    assert events[-1].result == {"lastEventId": cursor} and {ident for ident, _ in identified} == {cursor}
    return events[1].snapshot


def test_a_cursor_of_an_earlier_life_opens_the_run_with_its_resync_and_one_snapshot(redis_url: str) -> None:
    # The opening's snapshot is the state the resync carries: read once, sent once (it was sent
    # twice, a second STATE_SNAPSHOT of the same state right after the first: 768 KiB here).
    from tests.gateway.test_events import earlier_epoch, large_session

    runtime = Runtime(redis_url).start()
    gateway = GatewayProcess(redis_url, gateway_max_connection_s=5).start()
    try:
        large_session(runtime, "s1", 3)
        first = [event for _, event in agui_events(gateway, 5)]
        cursor = first[-1].result["lastEventId"]
        identified = agui_events(gateway, 5, **{"last-event-id": earlier_epoch(cursor)})
        snapshot = opened_with_resync(identified, "epoch", cursor)  # the session's epoch from the first event on
        assert first[1].type == EventType.STATE_SNAPSHOT and snapshot == first[1].snapshot
        assert sorted(snapshot["uis"]) == ["ui-0", "ui-1", "ui-2"]
    finally:
        gateway.stop()
        runtime.stop()


def test_a_cursor_past_a_log_s_end_opens_the_run_with_its_resync(redis_url: str) -> None:
    # A receipt position the log never held (lost by Redis, or forged): the state instead, once,
    # and the run's cursor is the logs' own again.
    runtime = Runtime(redis_url).start()
    gateway = GatewayProcess(redis_url, gateway_max_connection_s=2).start()
    try:
        Agent(runtime).patch(2)
        cursor = agui_events(gateway, 2)[-1][1].result["lastEventId"]
        version, epoch, frame, _, answer = cursor.split(".")
        ahead = ".".join((version, epoch, frame, "99999999999999-0", answer))
        assert sample(gateway.url, "iui_gateway_resyncs_total", reason="ahead") == 0
        identified = agui_events(gateway, 2, **{"last-event-id": ahead})
        assert sample(gateway.url, "iui_gateway_resyncs_total", reason="ahead") == 1  # counted as the stream's are
        assert opened_with_resync(identified, "ahead", cursor) == final_state(runtime)
    finally:
        gateway.stop()
        runtime.stop()


def test_a_completed_generation_finishes_its_step_and_receipts_are_custom_events(redis_url: str) -> None:
    runtime = Runtime(redis_url).start()
    gateway = GatewayProcess(redis_url, gateway_max_connection_s=2).start()
    try:
        agent = Agent(runtime)
        threading.Thread(target=lambda: (time.sleep(0.4), _complete(runtime, agent)), daemon=True).start()
        events = [event for _, event in agui_events(gateway, 2)]
        kinds = [event.type for event in events]
        assert kinds.index(EventType.STEP_FINISHED) < kinds.index(EventType.RUN_FINISHED)
        assert events[-2].type == EventType.RUN_FINISHED or kinds.count(EventType.STEP_FINISHED) == 1
        assert final_state(runtime)["uis"]["sales-report"]["status"] == "complete"
    finally:
        gateway.stop()
        runtime.stop()


def _complete(runtime: Runtime, agent: Agent) -> None:
    args = {**cursor_args(agent.frame), "baseRevision": agent.revision}
    assert runtime.client.call("s1", "intelligent_ui_complete", args, call="done", timeout=10)["ok"]


def test_the_ag_ui_client_rebuilds_the_final_state(redis_url: str) -> None:
    need_node()
    runtime = Runtime(redis_url).start()
    gateway = GatewayProcess(redis_url, gateway_max_connection_s=3).start()
    try:
        from tests.integration.test_answer_views import view_block

        agent = Agent(runtime)
        agent.patch(2)
        answer = runtime.client.entry("s1", "present_answer", {"message_id": "m1", "block": view_block()},
                                      call="answer-1", principal="alice", project="demo")
        assert runtime.client.send(answer, timeout=10)["ok"]
        threading.Thread(target=lambda: (time.sleep(0.8), agent.patch(4, pause=0.05)), daemon=True).start()
        out = run_node("agui_client.mjs", f"{gateway.url}/v1/sessions/s1/ag-ui", token(role="viewer"))
        assert out["types"][0] == "RUN_STARTED" and out["types"][-1] == "RUN_FINISHED"
        assert out["state"] == final_state(runtime)
        assert out["types"].count("CUSTOM:iui.answer") == 1 and out["cursor"]
        # resumed from RUN_FINISHED's cursor: the answer is not sent again, the state is the same
        assert out["resumed"][0] == "RUN_STARTED" and out["resumed"][-1] == "RUN_FINISHED"
        assert "CUSTOM:iui.answer" not in out["resumed"] and out["resumedState"] == final_state(runtime)
    finally:
        gateway.stop()
        runtime.stop()


def test_a_javascript_eventsource_resumes_across_gateway_restarts(redis_url: str) -> None:
    need_node()
    runtime = Runtime(redis_url).start()
    gateway = GatewayProcess(redis_url).start()
    try:
        agent = Agent(runtime)
        with node_process("eventsource_follow.mjs", f"{gateway.url}/v1/sessions/s1/events",
                          token(role="viewer"), "61") as node:
            # Crashes begin once it follows (it wrote "live" at its first frame): before, a client that
            # started late could find the gateway down at each try and connect once, after them all.
            assert node.stderr is not None and node.stderr.readline() == "live\n"
            for _ in range(3):
                agent.patch(15, pause=0.02)
                gateway.restart()
            agent.patch(15, pause=0.02)
            out_text, err = node.communicate(timeout=90)
        assert node.returncode == 0, err[-3000:]
        out = json.loads(out_text)
        # every frame once, in order; at least one reconnection (crashes during a 3 s retry wait share one)
        assert "timeout" not in out and out["seqs"] == list(range(1, 62)) and out["opens"] >= 2
    finally:
        gateway.stop()
        runtime.stop()


def test_a_post_is_authenticated_before_its_body_is_read(redis_url: str) -> None:
    runtime = Runtime(redis_url).start()
    gateway = GatewayProcess(redis_url, gateway_max_connection_s=1).start()
    try:
        Agent(runtime)
        path = "/v1/sessions/s1/ag-ui"
        # Unauthenticated, a body over the limit: refused for the caller, not for the body.
        big = httpx.post(gateway.url + path, content=b"{" + b" " * (1 << 20) + b"}",
                         headers={"content-type": "application/json"}, timeout=15)
        assert big.status_code == 401
        # Unauthenticated, a body announced and held back: answered at once, not after the body timeout.
        with socket.create_connection(("127.0.0.1", gateway.port), timeout=5) as held:
            held.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         "Content-Length: 100\r\n\r\n".encode())
            assert held.recv(64).startswith(b"HTTP/1.1 401")
        # Authenticated: the body is held to the JSON rules of every other body.
        plain = httpx.post(gateway.url + path, content=b"hello", timeout=15,
                           headers={**auth("viewer"), "content-type": "text/plain"})
        assert plain.status_code == 415 and plain.json()["code"] == "unsupported_media_type"
        with httpx.stream("POST", gateway.url + path, json={"threadId": "t", "runId": "r"}, headers=auth("viewer"),
                          timeout=15) as accepted:
            assert accepted.status_code == 200
    finally:
        gateway.stop()
        runtime.stop()


def test_a_gateway_that_stops_ends_each_run_with_run_finished_and_exits_at_once(redis_url: str) -> None:
    # SIGTERM: the streams end as a lifetime ends (STEP_FINISHED, RUN_FINISHED with the cursor an
    # HttpAgent resumes from), not cut after uvicorn's 5 s grace with no terminal event.
    runtime = Runtime(redis_url).start()
    gateway = GatewayProcess(redis_url).start()  # the default lifetime: minutes
    stopped: list[float] = []

    def stop() -> None:
        assert gateway.process is not None
        stopped.append(time.monotonic())
        gateway.process.terminate()

    try:
        Agent(runtime).patch(2)
        threading.Timer(1.0, stop).start()
        identified = agui_events(gateway, 20)
        assert gateway.process is not None and gateway.process.wait(timeout=10) == -15  # re-raised once served
        exited = time.monotonic() - stopped[0]
        kinds = [event.type for _, event in identified]
        assert kinds[0] == EventType.RUN_STARTED and kinds[-1] == EventType.RUN_FINISHED
        assert kinds.count(EventType.STEP_STARTED) == kinds.count(EventType.STEP_FINISHED) == 1
        assert identified[-1][1].result == {"lastEventId": identified[-1][0]}
        assert exited < 2.0, f"the gateway exited {exited:.1f} s after SIGTERM"
    finally:
        gateway.stop()
        runtime.stop()
