"""The stream tools are a switch (IUI_STREAMING_ENABLED, seed 001): off refuses the four, keeps the plain tool."""

from __future__ import annotations

import json

import pytest

from tests.integration.conftest import Runtime, cursor_args, example
from workers.cli import main

pytestmark = pytest.mark.integration
SESSION = "session-switch"
STREAM_TOOLS = ("intelligent_ui_open", "intelligent_ui_patch", "intelligent_ui_complete", "intelligent_ui_cancel")
ALL_TOOLS = ["intelligent_ui", *STREAM_TOOLS, "present_answer", "final_answer"]
PLAIN_TOOLS = ["intelligent_ui", "present_answer", "final_answer"]
CURSOR = {"sourceCallId": "open-1", "generation": 1, "baseRevision": 0}
MUTATION = example("stream-mutations.json")[0]


def arguments(tool: str, frame: dict | None = None) -> dict:
    cursor = cursor_args(frame) if frame else CURSOR
    return {"intelligent_ui_open": {"document": example("stream-initial.json")},
            "intelligent_ui_patch": {**cursor, "mutation": MUTATION}}.get(tool, cursor)


def status(runtime: Runtime, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    assert main(["status", *options, "--redis-url", runtime.redis_url, "--partitions", "4", "--timeout", "2"]) == 0
    return capsys.readouterr().out


def meta_streaming(runtime: Runtime) -> bytes | None:
    value: bytes | None = runtime.redis.hget(runtime.client.keys.meta, "streaming")
    return value


def test_with_streaming_off_the_four_stream_tools_are_refused_and_the_plain_tool_works(
        runtime: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    runtime.configure(streaming_enabled=False).start()
    for tool in STREAM_TOOLS:
        reply = runtime.call(SESSION, tool, arguments(tool), call=f"{tool}-1")
        assert reply["ok"] is False and reply["error"]["code"] == "streaming_disabled", reply
        assert reply["error"]["message"] == ("the stream tools are disabled on this host (IUI_STREAMING_ENABLED="
                                             "false); use intelligent_ui")
    assert runtime.rejections("streaming_disabled") == 4
    assert runtime.redis.exists(runtime.client.keys.session(runtime.client.partition(SESSION), SESSION)) == 0
    plain = runtime.call(SESSION, "intelligent_ui", {"document": example("stream-initial.json")}, call="plain-1")
    assert plain["ok"] and plain["result"]["document"]["id"] == "sales-report"
    assert meta_streaming(runtime) == b"0"
    assert runtime.client.catalog(SESSION)["result"]["tools"] == PLAIN_TOOLS
    assert "streaming: disabled; tools: intelligent_ui, present_answer, final_answer" in status(runtime, capsys)
    report = json.loads(status(runtime, capsys, "--json"))
    assert report["streaming"] is False and report["tools"] == PLAIN_TOOLS


def test_with_streaming_on_the_five_tools_are_served_and_advertised(
        runtime: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    runtime.start()  # the default: on
    for opening, closing in (("open-1", "intelligent_ui_complete"), ("open-2", "intelligent_ui_cancel")):
        reply = runtime.call(SESSION, "intelligent_ui_open", arguments("intelligent_ui_open"), call=opening)
        for tool in ("intelligent_ui_patch", closing):
            assert reply["ok"], reply
            reply = runtime.call(SESSION, tool, arguments(tool, reply["result"]["frame"]), call=f"{tool}-{opening}")
        assert reply["ok"] and reply["result"]["frame"]["type"] == closing.rsplit("_", 1)[1], reply
    assert runtime.rejections("streaming_disabled") == 0
    assert meta_streaming(runtime) == b"1"
    assert runtime.client.catalog(SESSION)["result"]["tools"] == ALL_TOOLS
    assert f"streaming: enabled; tools: {', '.join(ALL_TOOLS)}" in status(runtime, capsys)
    report = json.loads(status(runtime, capsys, "--json"))
    assert report["streaming"] is True and report["tools"] == ALL_TOOLS


def test_a_stream_opened_before_streaming_was_turned_off_keeps_its_state(runtime: Runtime) -> None:
    runtime.start()
    opened = runtime.call(SESSION, "intelligent_ui_open", arguments("intelligent_ui_open"), call="open-1")
    before = runtime.generation(SESSION, "sales-report", 1)
    runtime.stop()
    runtime.configure(streaming_enabled=False).start()
    for tool in STREAM_TOOLS[1:]:
        reply = runtime.call(SESSION, tool, arguments(tool, opened["result"]["frame"]), call=f"{tool}-late")
        assert reply["error"]["code"] == "streaming_disabled"
    assert runtime.generation(SESSION, "sales-report", 1) == before
    assert runtime.log_length(SESSION) == 1


def test_status_shows_no_tools_before_a_worker_advertised_them(
        runtime: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    runtime.redis.hset(runtime.client.keys.meta, mapping={"partitions": 4, "protocol": 1})
    assert "streaming: - (no worker has advertised its tools)" in status(runtime, capsys)
    report = json.loads(status(runtime, capsys, "--json"))
    assert report["streaming"] is None and report["tools"] is None
