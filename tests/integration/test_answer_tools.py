"""present_answer and final_answer through the real runtime: turns, phases, closing, rejections."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from core import view_state_schema_digest
from tests.integration.conftest import Runtime, example
from workers.client import AnswerClient

pytestmark = pytest.mark.integration
SESSION = "session-answers"


def published() -> list[dict[str, Any]]:
    return example("answer-ui/final-answer.json")["published_blocks"]


def answers(rt: Runtime) -> AnswerClient:
    return AnswerClient(client=rt.client, principal="user-1", project="project-1")


def stored(rt: Runtime) -> dict[str, str]:
    key = rt.client.keys.answers(rt.client.partition(SESSION), SESSION)
    return {k.decode(): v.decode() for k, v in rt.redis.hgetall(key).items()}


def assert_rejected(rt: Runtime, reply: dict[str, Any], code: str, before: dict[str, str], events: int) -> None:
    assert reply["ok"] is False and reply["error"]["code"] == code, reply
    assert stored(rt) == before
    assert len(answers(rt).events(SESSION)) == events
    assert rt.rejections(code) >= 1


def test_present_answer_stores_publishes_and_logs_the_block_with_a_receipt(runtime: Runtime) -> None:
    runtime.start()
    client = answers(runtime)
    channel = runtime.client.keys.answer_channel(runtime.client.partition(SESSION), SESSION)
    pubsub = runtime.redis.pubsub()
    pubsub.subscribe(channel)
    pubsub.get_message(timeout=1)
    block = published()[1]
    reply = client.present_answer(SESSION, "msg-1", block, call="call-1")
    result = reply["result"]
    assert (result["block_id"], result["phase"], result["version"]) == ("pressure-summary", "final", 1)
    assert result["schema_digest"] == view_state_schema_digest(block)
    assert "message_id=msg-1 block_id=pressure-summary phase=final version=1" in result["receipt"]
    [event] = client.events(SESSION)
    assert event == {"type": "block", "message_id": "msg-1", "version": 1, "block": block}
    message = pubsub.get_message(timeout=2)
    assert message is not None and message["type"] == "message"
    pubsub.close()


def test_an_identical_resend_replies_the_stored_result_and_publishes_nothing(runtime: Runtime) -> None:
    runtime.start()
    client = answers(runtime)
    first = client.present_answer(SESSION, "msg-1", published()[1], call="call-1")
    again = client.present_answer(SESSION, "msg-1", published()[1], call="call-1")
    assert again["result"] == first["result"]
    assert len(client.events(SESSION)) == 1


def test_the_same_block_id_in_the_same_turn_replaces_the_block(runtime: Runtime) -> None:
    runtime.start()
    client = answers(runtime)
    block = published()[2]
    client.present_answer(SESSION, "msg-1", block)
    changed = copy.deepcopy(block)
    changed["fallback_text"] = "Pressure recovered by 05:00."
    reply = client.present_answer(SESSION, "msg-1", changed)
    assert reply["result"]["version"] == 2
    assert json.loads(stored(runtime)["b:msg-1:pressure-trend"]) == changed
    assert stored(runtime)["d:msg-1:pressure-trend"] == view_state_schema_digest(changed)
    assert stored(runtime)["t:msg-1"] == "pressure-trend" and stored(runtime)["blocks"] == "1"


def test_a_block_keeps_its_phase_within_a_turn(runtime: Runtime) -> None:
    runtime.start()
    client = answers(runtime)
    process = published()[0]
    client.present_answer(SESSION, "msg-1", process)
    before = stored(runtime)
    final = {**copy.deepcopy(process), "phase": "final"}
    assert_rejected(runtime, client.present_answer(SESSION, "msg-1", final), "phase_changed", before, 1)
    absent = copy.deepcopy(process)
    del absent["phase"]  # omitted means process: the same phase, so it replaces
    assert client.present_answer(SESSION, "msg-1", absent)["result"]["phase"] == "process"


def test_a_new_turn_makes_every_earlier_turn_immutable(runtime: Runtime) -> None:
    runtime.start()
    client = answers(runtime)
    client.present_answer(SESSION, "msg-1", published()[1])
    client.present_answer(SESSION, "msg-2", published()[1])
    before = stored(runtime)
    assert_rejected(runtime, client.present_answer(SESSION, "msg-1", published()[2]), "turn_closed", before, 2)
    assert_rejected(runtime, client.final_answer(SESSION, "msg-1", "done", []), "turn_closed", before, 2)


def test_final_answer_is_stored_published_and_closes_the_turn(runtime: Runtime) -> None:
    runtime.start()
    client = answers(runtime)
    case = example("answer-ui/final-answer.json")
    for block in case["published_blocks"]:
        client.present_answer(SESSION, "msg-1", block)
    final = case["final_answer"]
    reply = client.final_answer(SESSION, "msg-1", final["answer"], final["ui_block_ids"])
    assert reply["ok"], reply
    assert "The turn is closed" in reply["result"]["receipt"]
    event = client.events(SESSION)[-1]
    assert event == {"type": "final_answer", "message_id": "msg-1", **final}
    before = stored(runtime)
    assert_rejected(runtime, client.present_answer(SESSION, "msg-1", published()[1]), "turn_closed", before, 4)
    assert_rejected(runtime, client.final_answer(SESSION, "msg-1", final["answer"], final["ui_block_ids"]),
                    "turn_closed", before, 4)


@pytest.mark.parametrize(("answer", "ids", "issue"), [
    ("[[ui:pressure-trend]]\n\n[[ui:pressure-summary]]", ["pressure-summary", "pressure-trend"], "/ui_block_ids"),
    ("[[ui:lookup-progress]]", ["lookup-progress"], "/ui_block_ids/0"),
    ("[[ui:never-published]]", ["never-published"], "/ui_block_ids/0"),
])
def test_a_final_answer_naming_wrong_blocks_is_rejected_and_the_turn_stays_open(
        runtime: Runtime, answer: str, ids: list[str], issue: str) -> None:
    runtime.start()
    client = answers(runtime)
    for block in published():
        client.present_answer(SESSION, "msg-1", block)
    before = stored(runtime)
    reply = client.final_answer(SESSION, "msg-1", answer, ids)
    assert_rejected(runtime, reply, "invalid_final_answer", before, 3)
    assert reply["error"]["issues"][0]["path"] == issue
    assert client.present_answer(SESSION, "msg-1", published()[1])["ok"]


@pytest.mark.parametrize("answer", ["结果见下方组件。", "```\n[[ui:pressure-summary]]\n```"])
def test_a_final_answer_listing_blocks_without_their_markers_is_rejected_and_the_turn_stays_open(
        runtime: Runtime, answer: str) -> None:
    runtime.start()
    client = answers(runtime)
    for block in published():
        client.present_answer(SESSION, "msg-1", block)
    before = stored(runtime)
    reply = client.final_answer(SESSION, "msg-1", answer, ["pressure-summary"])
    assert_rejected(runtime, reply, "invalid_final_answer", before, 3)
    [issue] = reply["error"]["issues"]
    assert issue["path"] == "/ui_block_ids" and "no marker" in issue["message"]
    assert client.final_answer(SESSION, "msg-1", answer, [])["ok"]  # no markers, no blocks: accepted


def test_an_invalid_block_is_rejected_with_located_issues_and_nothing_stored(runtime: Runtime) -> None:
    runtime.start()
    client = answers(runtime)
    block = copy.deepcopy(published()[2])
    block["spec"]["elements"]["trend"]["props"]["series"][0]["values"].append(0.3)  # misaligned
    reply = client.present_answer(SESSION, "msg-1", block)
    assert reply["error"]["code"] == "invalid_block"
    assert reply["error"]["issues"][0]["path"].startswith("/spec/elements/trend")
    assert stored(runtime) == {} and client.events(SESSION) == []


@pytest.mark.parametrize("arguments", [
    {"message_id": "msg-1"},
    {"message_id": "msg-1", "block": {}, "extra": 1},
    {"message_id": "msg:1", "block": {}},
    {"message_id": 7, "block": {}},
])
def test_malformed_arguments_are_invalid_arguments(runtime: Runtime, arguments: dict[str, Any]) -> None:
    runtime.start()
    reply = answers(runtime).tool(SESSION, "present_answer", arguments)
    assert reply["error"]["code"] == "invalid_arguments"
    assert stored(runtime) == {}


def test_the_session_block_capacity_rejects_new_blocks_but_allows_replacements(runtime: Runtime) -> None:
    runtime.configure(max_answer_blocks_per_session=2).start()
    client = answers(runtime)
    client.present_answer(SESSION, "msg-1", published()[0])
    client.present_answer(SESSION, "msg-1", published()[1])
    before = stored(runtime)
    assert_rejected(runtime, client.present_answer(SESSION, "msg-1", published()[2]), "answer_capacity", before, 2)
    assert client.present_answer(SESSION, "msg-1", published()[1])["ok"]


def test_the_session_turn_capacity_rejects_new_turns_but_not_the_current_one(runtime: Runtime) -> None:
    # An audit: a final answer naming no blocks started a turn the block capacity never counted, and
    # each turn keeps its final answer for the session's life: ~14 MB after 100 maximal answers.
    runtime.configure(max_answer_turns_per_session=2).start()
    client = answers(runtime)
    assert client.final_answer(SESSION, "msg-1", "first", [])["ok"]
    assert client.present_answer(SESSION, "msg-2", published()[0])["ok"]
    before = stored(runtime)
    assert_rejected(runtime, client.final_answer(SESSION, "msg-3", "third", []), "answer_capacity", before, 2)
    assert_rejected(runtime, client.present_answer(SESSION, "msg-3", published()[1]), "answer_capacity", before, 2)
    assert client.present_answer(SESSION, "msg-2", published()[1])["ok"]  # the current turn goes on
    assert client.final_answer(SESSION, "msg-2", "second", [])["ok"]


def test_answer_keys_slide_with_the_session_expiry(runtime: Runtime) -> None:
    runtime.configure(session_ttl_s=600).start()
    answers(runtime).present_answer(SESSION, "msg-1", published()[1])
    keys = runtime.client.keys.answer_keys(runtime.client.partition(SESSION), SESSION)
    assert 0 < runtime.redis.pttl(keys[0]) <= 600_000 and 0 < runtime.redis.pttl(keys[1]) <= 600_000
