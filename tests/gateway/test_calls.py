"""Agents' tool calls through the gateway: each HTTP request reads only its own reply (another
tenant who sends the same session and `Idempotency-Key` gets nothing of it), and a partition
that is far behind is refused `backpressure` (429) before anything is added."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx
import pytest
import redis

from tests.gateway.conftest import GatewayProcess, auth, sample
from tests.gateway.test_api import NOT_FOUND, open_ui, patch
from tests.integration.conftest import Runtime
from workers.redisio.keys import GROUP, Keys, partition_of

pytestmark = pytest.mark.integration
PARTITIONS = 4  # the suite's gateways run with IUI_PARTITIONS=4


def test_a_reply_left_under_an_idempotency_key_is_never_read_by_another_tenant(
        http: httpx.Client, stack: tuple[Runtime, Any]) -> None:
    frame = open_ui(http)
    victim = patch(http, frame, 0, **{"idempotency-key": "call-7"})
    assert victim.status_code == 200
    # A reply still waiting under the key's old address (a victim's call answered after its 504).
    keys = stack[0].client.keys
    stack[0].redis.rpush(keys.reply(partition_of("s1", PARTITIONS), "s1", "call-7"),
                         json.dumps({"ok": True, "request": "call-7", "result": victim.json()}))
    stolen_key = {**auth("agent", "mallory", "evil"), "idempotency-key": "call-7"}
    mallory = http.post("/v1/sessions/s1/calls", headers=stolen_key,
                        json={"tool": "intelligent_ui_patch", "arguments": {"sourceCallId": frame["sourceCallId"],
                              "generation": 1, "baseRevision": 1,
                              "mutation": {"type": "remove", "nodeId": "summary-card"}}})
    assert mallory.status_code == 404 and mallory.json() == NOT_FOUND
    assert "summary-card" not in mallory.text
    again = patch(http, frame, 0, **{"idempotency-key": "call-7"})  # the victim's retry: its own result
    assert again.status_code == 200 and again.json() == victim.json()


def test_two_tenants_racing_on_one_key_each_get_their_own_answer(http: httpx.Client,
                                                                 stack: tuple[Runtime, Any]) -> None:
    frame = open_ui(http)
    outcomes: dict[str, list[int]] = {"alice": [], "mallory": []}

    def send(who: str, project: str, revision: int) -> None:
        headers = {**auth("agent", who, project), "idempotency-key": f"k{revision}"}
        reply = http.post("/v1/sessions/s1/calls", headers=headers,
                          json={"tool": "intelligent_ui_patch", "arguments": {
                              "sourceCallId": frame["sourceCallId"], "generation": 1, "baseRevision": revision,
                              "mutation": {"type": "update", "nodeId": "summary-card",
                                           "props": {"title": f"T{revision}", "gap": "sm"}}}})
        outcomes[who].append(reply.status_code)

    for revision in range(20):
        threads = [threading.Thread(target=send, args=("alice", "demo", revision)),
                   threading.Thread(target=send, args=("mallory", "evil", revision))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert outcomes == {"alice": [200] * 20, "mallory": [404] * 20}
    assert stack[0].log_length("s1") == 21


def test_a_partition_far_behind_is_refused_backpressure_before_anything_is_added(redis_url: str) -> None:
    gateway = GatewayProcess(redis_url, gateway_max_lag=2).start()  # no worker: nothing is read
    try:
        client = redis.Redis.from_url(redis_url)
        stream = Keys("iui").input(partition_of("s9", PARTITIONS))
        client.xgroup_create(stream, GROUP, id="0", mkstream=True)
        for i in range(3):
            client.xadd(stream, {"waiting": str(i)})
        reply = httpx.post(gateway.url + "/v1/sessions/s9/calls", headers=auth("agent"), timeout=15,
                           json={"tool": "intelligent_ui_open", "arguments": {"document": {}}})
        assert reply.status_code == 429 and reply.headers["retry-after"] == "1"
        assert reply.json()["code"] == "backpressure"
        assert client.xlen(stream) == 3  # the refused call added nothing
    finally:
        gateway.stop()


def test_a_call_the_runtime_never_answers_is_504_and_counted_as_timeout(redis_url: str) -> None:
    gateway = GatewayProcess(redis_url, gateway_reply_timeout_s=1).start()  # no worker: no reply comes
    try:
        before = sample(gateway.url, "iui_gateway_refused_total", code="timeout")
        reply = httpx.post(gateway.url + "/v1/sessions/s9/calls", headers=auth("agent"), timeout=15,
                           json={"tool": "intelligent_ui_open", "arguments": {"document": {}}})
        assert reply.status_code == 504 and reply.json()["code"] == "timeout"
        assert sample(gateway.url, "iui_gateway_refused_total", code="timeout") == before + 1
    finally:
        gateway.stop()


def test_a_call_waiting_when_the_gateway_stops_is_answered_504_before_the_process_exits(redis_url: str) -> None:
    # An audit: SIGTERM with calls waiting (their worker paused) answered them with uvicorn's own
    # `500 Internal Server Error` in text/plain after its 5 s grace, and the calls were then
    # applied: a client read "failed" for a call that took effect.  A 504 `timeout` says what is
    # true (it may yet apply; send it again with its Idempotency-Key).
    gateway = GatewayProcess(redis_url).start()  # no worker: no reply comes; the reply timeout is 30 s
    answers: list[httpx.Response] = []

    def call(key: str) -> None:
        answers.append(httpx.post(gateway.url + "/v1/sessions/s9/calls", timeout=30,
                                  headers={**auth("agent"), "idempotency-key": key},
                                  json={"tool": "intelligent_ui_open", "arguments": {"document": {}}}))

    try:
        callers = [threading.Thread(target=call, args=(f"k-{n}",)) for n in range(3)]
        for caller in callers:
            caller.start()
        time.sleep(0.5)
        assert gateway.process is not None
        stopped = time.monotonic()
        gateway.process.terminate()
        for caller in callers:
            caller.join(timeout=20)
        assert gateway.process.wait(timeout=10) == -15
        assert time.monotonic() - stopped < 4.5  # within uvicorn's 5 s grace
        assert [(a.status_code, a.headers["content-type"], a.json()["code"]) for a in answers] == \
            [(504, "application/problem+json", "timeout")] * 3
    finally:
        gateway.stop()
