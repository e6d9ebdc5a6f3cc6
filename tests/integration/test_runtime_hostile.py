"""Hostile entries: bounded dead letters, exact reply addresses, no identifier echoed back."""

from __future__ import annotations

import json
import time

import pytest

from tests.integration.conftest import Runtime, example
from workers.redisio.keys import GROUP

pytestmark = pytest.mark.integration
SESSION = "session-hostile"
SECRET = "QXJZsecret"
MEGABYTE = 1_000_000


def submit(rt: Runtime, fields: dict, session: str = SESSION) -> None:
    rt.redis.xadd(rt.client.keys.input(rt.client.partition(session)), fields)


def reply_of(rt: Runtime, request: str, session: str = SESSION) -> dict:
    popped = rt.redis.blpop([rt.client.keys.reply(rt.client.partition(session), session, request)], timeout=10)
    assert popped is not None, f"no reply to {request}"
    return json.loads(popped[1])


def tool_call(request: str, **changes: str) -> dict:
    base = {"session": SESSION, "request": request, "kind": "tool", "name": "intelligent_ui_open",
            "call": f"call-{request}", "body": json.dumps({"document": example("stream-initial.json")})}
    return {**base, **changes}


def dead_letters(rt: Runtime, session: str = SESSION) -> list[dict[bytes, bytes]]:
    return [fields for _, fields in rt.redis.xrange(rt.client.keys.dead(rt.client.partition(session)))]


def stored_bytes(letters: list[dict[bytes, bytes]]) -> int:
    return sum(len(k) + len(v) for fields in letters for k, v in fields.items())


def counted_bytes(rt: Runtime, session: str = SESSION) -> int:
    return int(rt.redis.get(rt.client.keys.dead_bytes(rt.client.partition(session))) or 0)


def wait_dead(rt: Runtime, count: int, session: str = SESSION) -> list[dict[bytes, bytes]]:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        letters = dead_letters(rt, session)
        if len(letters) >= count and pending(rt, session) == 0:
            return letters
        time.sleep(0.02)
    raise AssertionError(f"expected {count} dead letters, found {len(dead_letters(rt, session))}")


def pending(rt: Runtime, session: str = SESSION) -> int:
    return rt.redis.xpending(rt.client.keys.input(rt.client.partition(session)), GROUP)["pending"]


def test_an_entry_of_5000_fields_without_an_address_is_dead_lettered_and_the_next_entry_answered(
        runtime: Runtime) -> None:
    runtime.start()
    submit(runtime, {f"f{i}": "x" * 10 for i in range(5_000)})
    submit(runtime, tool_call("after"))
    assert reply_of(runtime, "after")["ok"] is True
    letters = wait_dead(runtime, 1)
    assert len(letters) == 1 and letters[0][b"reason"] == b"no_reply_address"
    assert letters[0][b"truncated"] == b"1" and len(letters[0]) <= 3 + 64
    assert pending(runtime) == 0


def test_sixteen_entries_with_megabyte_bodies_add_bounded_bytes_to_the_dead_stream(runtime: Runtime) -> None:
    runtime.start()
    for i in range(16):
        submit(runtime, tool_call(f"r{i}", session="no:reply", body="x" * MEGABYTE))
    letters = wait_dead(runtime, 16)
    assert len(letters) == 16
    assert all(fields[b"truncated"] == b"1" and fields[b"session"] == b"no:reply" for fields in letters)
    entry_budget = runtime.settings.dead_letter_entry_bytes + 100  # plus origin, reason, truncated
    assert stored_bytes(letters) <= 16 * entry_budget
    assert counted_bytes(runtime) == stored_bytes(letters)


def test_the_dead_stream_of_a_partition_is_held_under_its_byte_and_count_budgets(runtime: Runtime) -> None:
    runtime.configure(dead_letter_entry_bytes=4_096, dead_letter_max_bytes=20_000, dead_letter_max_entries=1_000)
    runtime.start()
    for i in range(12):
        submit(runtime, tool_call(f"r{i}", session="no:reply", body=f"{i:02d}" + "x" * MEGABYTE))
    submit(runtime, tool_call("after"))
    assert reply_of(runtime, "after")["ok"] is True
    letters = dead_letters(runtime)
    assert stored_bytes(letters) <= 20_000 and len(letters) == 20_000 // 4_200
    assert letters[-1][b"body"].startswith(b"11")  # the oldest went first
    assert counted_bytes(runtime) == stored_bytes(letters)
    runtime.stop()
    runtime.configure(dead_letter_max_entries=2).start()
    submit(runtime, {"session": "no:reply"})
    submit(runtime, tool_call("again"))
    assert reply_of(runtime, "again")["ok"] is True
    letters = dead_letters(runtime)
    assert len(letters) == 2 and b"body" not in letters[-1]
    assert counted_bytes(runtime) == stored_bytes(letters)


@pytest.mark.parametrize("address", [{"session": "s\n"}, {"request": "r\n"}, {"session": "s\r\n"}])
def test_an_address_with_a_final_newline_gets_no_reply_and_is_dead_lettered(runtime: Runtime,
                                                                             address: dict) -> None:
    runtime.start()
    entry = {**tool_call("r"), "session": "s", **address}
    submit(runtime, entry, session=entry["session"])
    letters = wait_dead(runtime, 1, session=entry["session"])
    assert letters[0][b"reason"] == b"no_reply_address"
    assert not [key for key in runtime.redis.scan_iter(match="*") if b"\n" in key or b"\r" in key]


def test_an_unknown_tool_is_refused_without_repeating_its_name(runtime: Runtime) -> None:
    runtime.start()
    submit(runtime, tool_call("odd", name=f"{SECRET}_tool"))
    error = reply_of(runtime, "odd")["error"]
    assert error["code"] == "unknown_tool" and SECRET not in json.dumps(error)


def test_an_unknown_tool_is_refused_naming_the_tools_this_worker_serves(runtime: Runtime) -> None:
    runtime.start()
    submit(runtime, tool_call("odd", name="intelligent_ui_x"))
    assert reply_of(runtime, "odd")["error"]["message"] == (
        "unknown tool; use one of intelligent_ui, intelligent_ui_open, intelligent_ui_patch, "
        "intelligent_ui_complete, intelligent_ui_cancel, present_answer, final_answer")
    runtime.stop()
    runtime.configure(streaming_enabled=False).start()
    submit(runtime, tool_call("odd-again", name="intelligent_ui_x"))
    error = reply_of(runtime, "odd-again")["error"]
    assert error == {"code": "unknown_tool",
                     "message": "unknown tool; use one of intelligent_ui, present_answer, final_answer"}


def _not_utf8(tool: str) -> bytes:
    """A call of `tool` whose document title holds two bytes that are not UTF-8."""
    text = json.dumps({"document": example("stream-initial.json")}).encode("utf-8")
    assert b"Quarterly" in text
    return text.replace(b"Quarterly", b"Q\xff\xfeuarterly")


@pytest.mark.parametrize("tool", ["intelligent_ui", "intelligent_ui_open", "present_answer"])
def test_a_body_that_is_not_utf8_is_refused_invalid_json_and_nothing_is_stored(runtime: Runtime, tool: str) -> None:
    """The body is a JSON text, so UTF-8 (RFC 8259): decoded with replacement it would store a
    document other than the one sent."""
    runtime.start()
    submit(runtime, tool_call("bad-bytes", name=tool, body=_not_utf8(tool)))
    assert reply_of(runtime, "bad-bytes")["error"]["code"] == "invalid_json"
    assert runtime.redis.keys(f"*:s:{SESSION}*") == []
    title = "Q\ufffd\ufffduarterly"  # the same characters as UTF-8 text: a valid body
    body = json.dumps({"document": example("stream-initial.json")}, ensure_ascii=False).replace("Quarterly", title)
    submit(runtime, tool_call("replacement-characters", name="intelligent_ui", body=body))
    reply = reply_of(runtime, "replacement-characters")
    assert reply["ok"] and title in reply["result"]["document"]["title"], reply


def test_the_dead_letter_copy_of_a_body_that_is_not_utf8_holds_it_repaired(runtime: Runtime) -> None:
    runtime.start()
    submit(runtime, tool_call("r1", session="no:reply", body=_not_utf8("intelligent_ui")))
    submit(runtime, tool_call("r2", session="no:reply", body=b"\xff" * MEGABYTE))  # cut to the copy's budget
    first, cut = wait_dead(runtime, 2)
    assert first[b"body"] == _not_utf8("intelligent_ui").replace(b"\xff\xfe", "\ufffd\ufffd".encode())
    assert cut[b"truncated"] == b"1" and set(cut[b"body"].decode("utf-8")) == {"\ufffd"}
    assert counted_bytes(runtime) == stored_bytes([first, cut])


def test_an_unknown_source_is_refused_without_repeating_the_source_call_id(runtime: Runtime) -> None:
    runtime.start()
    body = {"sourceCallId": f"{SECRET}-source", "generation": 1, "baseRevision": 0}
    submit(runtime, tool_call("lost", name="intelligent_ui_complete", body=json.dumps(body)))
    error = reply_of(runtime, "lost")["error"]
    assert error["code"] == "unknown_source" and SECRET not in json.dumps(error)


@pytest.mark.parametrize("source", ["", "x" * 257, f"{SECRET}é", f"{SECRET}\n", f"{SECRET}\t", 7, None])
def test_a_source_call_id_outside_printable_ascii_is_refused_with_its_own_code(runtime: Runtime,
                                                                               source: object) -> None:
    runtime.start()
    body = {"sourceCallId": source, "generation": 1, "baseRevision": 0}
    submit(runtime, tool_call("bad", name="intelligent_ui_cancel", body=json.dumps(body)))
    error = reply_of(runtime, "bad")["error"]
    assert error["code"] == "invalid_source_call_id" and SECRET not in json.dumps(error)


def test_a_reused_call_id_is_refused_without_repeating_it(runtime: Runtime) -> None:
    runtime.start()
    call = f"{SECRET}-call"
    assert runtime.call(SESSION, "intelligent_ui_open", {"document": example("stream-initial.json")},
                        call=call)["ok"] is True
    other = example("stream-initial.json") | {"id": "other-report"}
    error = runtime.call(SESSION, "intelligent_ui_open", {"document": other}, call=call)["error"]
    assert error["code"] == "call_id_reused" and SECRET not in json.dumps(error)
