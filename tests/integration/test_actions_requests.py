"""Action requests (reserve, get, cancel, list, catalog, confirm) against the persisted documents.

No RQ worker runs here: `queued` operations stay queued, so every request rule and every
rejection can be checked with the stored state before and after.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from core import parse_ui_action_receipt, parse_ui_action_receipt_list, parse_ui_capability_catalog
from tests.integration.actions_support import VALUES, actions_document, configure, plain_ref, wait_status
from tests.integration.conftest import Runtime, cursor_args, example
from workers.actions.reaper import APPROVAL_EXPIRED

pytestmark = pytest.mark.integration
SESSION = "act-s1"


@pytest.fixture()
def rt(runtime: Runtime, tmp_path: Path) -> Runtime:
    configure(runtime, tmp_path).start()
    reply = runtime.call(SESSION, "intelligent_ui", {"document": actions_document()}, call="plain-1")
    assert reply["ok"], reply
    return runtime


def operations(rt: Runtime, session: str = SESSION) -> dict[bytes, bytes]:
    """Every stored field of the session's operations (the state a rejection must not change)."""
    return rt.redis.hgetall(rt.client.keys.operations(rt.client.partition(session), session))


def reserve(rt: Runtime, action: str = "noop", *, request_id: str = "r-1", values: Any = None,
            ref: Any = None, session: str = SESSION) -> dict[str, Any]:
    return rt.client.reserve(session, ref or plain_ref("plain-1"), action, VALUES if values is None else values,
                             request_id=request_id, timeout=10)


def code(reply: dict[str, Any]) -> str:
    assert reply["ok"] is False, reply
    return str(reply["error"]["code"])


def test_a_reserve_of_a_plain_document_is_queued_with_a_valid_receipt(rt: Runtime) -> None:
    receipt = reserve(rt)["result"]["receipt"]
    parse_ui_action_receipt(receipt)
    assert receipt["status"] == "queued" and receipt["operationId"].startswith("op-")
    assert receipt["documentRef"] == plain_ref("plain-1") and receipt["requestId"] == "r-1"
    assert len(receipt["parameterHash"]) == 64 and receipt["updatedAt"] == receipt["createdAt"]
    assert rt.client.get(SESSION, receipt["operationId"])["result"]["receipt"] == receipt


def test_the_same_request_id_with_the_same_content_returns_the_same_receipt(rt: Runtime) -> None:
    first = reserve(rt)["result"]["receipt"]
    before = operations(rt)
    again = reserve(rt)["result"]["receipt"]
    assert again == first and operations(rt) == before


def test_the_same_request_id_with_other_content_is_rejected_and_changes_nothing(rt: Runtime) -> None:
    reserve(rt)
    before = operations(rt)
    assert code(reserve(rt, values={**VALUES, "value": 2})) == "request_id_reused"
    assert code(reserve(rt, action="confirmed")) == "request_id_reused"
    assert operations(rt) == before


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"values": {**VALUES, "value": 1001}}, "invalid_values"),
        ({"values": {**VALUES, "value": True}}, "invalid_values"),
        ({"values": {"value": 1}}, "invalid_values"),
        ({"action": "nothing"}, "unknown_action"),
        ({"action": "missing"}, "unknown_capability"),
        ({"action": "mismatch"}, "argument_mismatch"),
        ({"ref": plain_ref("plain-2")}, "unknown_document"),
        ({"ref": plain_ref("plain-1", "other")}, "unknown_document"),
        ({"ref": {**plain_ref("plain-1"), "generation": 1}}, "unknown_document"),
    ],
)
def test_a_refused_reserve_changes_nothing(rt: Runtime, change: dict[str, Any], expected: str) -> None:
    before = operations(rt)
    assert code(reserve(rt, **change)) == expected
    assert operations(rt) == before


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"documentRef": plain_ref("plain-1"), "requestId": "r", "actionId": "noop", "values": VALUES, "x": 1},
        {"documentRef": plain_ref("plain-1"), "requestId": "", "actionId": "noop", "values": VALUES},
        {"documentRef": {**plain_ref("plain-1"), "revision": 1}, "requestId": "r", "actionId": "noop",
         "values": VALUES},
        {"documentRef": plain_ref("plain-1"), "requestId": "r", "actionId": "noop", "values": {"a": [1]}},
    ],
)
def test_a_malformed_reserve_body_is_invalid_request(rt: Runtime, body: dict[str, Any]) -> None:
    before = operations(rt)
    assert code(rt.client.action(SESSION, "reserve", body, timeout=10)) == "invalid_request"
    assert operations(rt) == before


def test_a_stream_accepts_actions_only_when_complete_at_its_final_revision(rt: Runtime) -> None:
    document = actions_document("streamed")
    frame = rt.call(SESSION, "intelligent_ui_open", {"document": document}, call="open-1")["result"]["frame"]
    ref = {"sourceCallId": "open-1", "uiId": "streamed", "generation": 1, "revision": 0}
    before = operations(rt)
    assert code(reserve(rt, ref=ref)) == "document_not_complete"
    done = rt.call(SESSION, "intelligent_ui_complete", cursor_args(frame), call="complete-1")["result"]["frame"]
    assert code(reserve(rt, ref={**ref, "revision": done["revision"] + 1})) == "stale_document"
    assert code(reserve(rt, ref={**ref, "sourceCallId": "complete-1"})) == "unknown_document"
    assert operations(rt) == before
    assert reserve(rt, ref={**ref, "revision": done["revision"]})["result"]["receipt"]["status"] == "queued"
    rt.call(SESSION, "intelligent_ui_open", {"document": document}, call="open-2")
    assert code(reserve(rt, ref=ref, request_id="r-2")) == "stale_document"


def test_a_cancelled_stream_refuses_actions(rt: Runtime) -> None:
    opened = rt.call(SESSION, "intelligent_ui_open", {"document": actions_document("c")}, call="open-c")
    frame = opened["result"]["frame"]
    rt.call(SESSION, "intelligent_ui_cancel", cursor_args(frame), call="cancel-c")
    ref = {"sourceCallId": "open-c", "uiId": "c", "generation": 1, "revision": 0}
    assert code(reserve(rt, ref=ref)) == "document_not_complete"


def test_confirmation_approve_queues_and_deny_cancels(rt: Runtime) -> None:
    first = reserve(rt, "confirmed", request_id="c-1")["result"]["receipt"]
    second = reserve(rt, "confirmed", request_id="c-2")["result"]["receipt"]
    assert first["status"] == second["status"] == "awaiting_confirmation"
    approved = rt.client.confirm(SESSION, first["operationId"], True)["result"]["receipt"]
    denied = rt.client.confirm(SESSION, second["operationId"], False)["result"]["receipt"]
    assert approved["status"] == "queued" and denied["status"] == "cancelled"
    before = operations(rt)
    assert code(rt.client.confirm(SESSION, first["operationId"], True)) == "not_awaiting_confirmation"
    assert code(rt.client.confirm(SESSION, "op-nothing", True)) == "unknown_operation"
    bad = rt.client.action(SESSION, "confirm", {"operationId": first["operationId"], "decision": "yes"})
    assert code(bad) == "invalid_request"
    assert operations(rt) == before


def approvals(rt: Runtime, session: str = SESSION) -> dict[str, float]:
    """The partition's approvals index: operation id -> when its approval expires (Unix ms)."""
    key = rt.client.keys.approvals(rt.client.partition(session))
    return {member.decode().split(" ")[1]: score for member, score in rt.redis.zrange(key, 0, -1, withscores=True)}


def test_an_approval_nobody_gives_expires_cancelled_and_a_late_confirm_is_refused(rt: Runtime) -> None:
    hurried = reserve(rt, "hurried", request_id="h-1")["result"]["receipt"]
    patient = reserve(rt, "confirmed", request_id="p-1")["result"]["receipt"]
    op = hurried["operationId"]
    assert approvals(rt) == {op: hurried["createdAt"] + 1_000,  # the capability's confirmationTimeout = 1
                             patient["operationId"]: patient["createdAt"] + 3_600_000}  # the default, an hour
    expired = wait_status(rt, SESSION, op, {"cancelled"}, timeout=10)
    parse_ui_action_receipt(expired)
    assert expired["message"] == APPROVAL_EXPIRED and "result" not in expired
    assert expired["updatedAt"] >= hurried["createdAt"] + 1_000
    log = rt.redis.xrange(rt.client.keys.receipt_log(rt.client.partition(SESSION), SESSION))
    assert json.loads(log[-1][1][b"receipt"]) == expired  # logged (and published) as every change is
    assert approvals(rt) == {patient["operationId"]: patient["createdAt"] + 3_600_000}
    assert rt.client.get(SESSION, patient["operationId"])["result"]["receipt"]["status"] == "awaiting_confirmation"
    before = operations(rt)
    assert code(rt.client.confirm(SESSION, op, True)) == "not_awaiting_confirmation"
    assert operations(rt) == before
    assert not rt.redis.exists(f"rq:job:{op}")  # nothing was ever enqueued


def test_an_approval_decided_in_time_leaves_the_index_and_is_kept_past_its_deadline(rt: Runtime) -> None:
    approved, denied, cancelled = (reserve(rt, "hurried", request_id=f"d-{n}")["result"]["receipt"]["operationId"]
                                   for n in range(3))
    assert rt.client.confirm(SESSION, approved, True)["result"]["receipt"]["status"] == "queued"
    assert rt.client.confirm(SESSION, denied, False)["result"]["receipt"]["message"] == "denied by the user"
    assert rt.client.cancel(SESSION, cancelled)["result"]["receipt"]["status"] == "cancelled"
    assert approvals(rt) == {}
    time.sleep(1.5)  # past the deadline, and several reaper sweeps (every 0.1 s here)
    statuses = {op: rt.client.get(SESSION, op)["result"]["receipt"]["status"] for op in (approved, denied, cancelled)}
    assert statuses == {approved: "queued", denied: "cancelled", cancelled: "cancelled"}


def test_an_approve_already_in_the_stream_at_the_deadline_wins_over_the_expiry(rt: Runtime) -> None:
    op = reserve(rt, "hurried", request_id="race-1")["result"]["receipt"]["operationId"]
    rt.stop()  # no owner: the approve waits in the partition's stream while the deadline passes
    replies: list[dict[str, Any]] = []
    approving = threading.Thread(target=lambda: replies.append(rt.client.confirm(SESSION, op, True, timeout=30)))
    approving.start()
    time.sleep(1.5)
    rt.start()  # the next owner reads the approve before its reaper may commit the expiry
    approving.join(30)
    assert replies and replies[0]["result"]["receipt"]["status"] == "queued", replies
    time.sleep(0.5)  # several sweeps (every 0.1 s here)
    assert rt.client.get(SESSION, op)["result"]["receipt"]["status"] == "queued"
    assert approvals(rt) == {}


def test_an_approval_expires_under_the_next_owner_of_its_partition(rt: Runtime) -> None:
    op = reserve(rt, "hurried", request_id="f-1")["result"]["receipt"]["operationId"]
    rt.stop()  # the owner that reserved it is gone: the deadline is in Redis, not in its memory
    rt.start()
    assert wait_status(rt, SESSION, op, {"cancelled"}, timeout=10)["message"] == APPROVAL_EXPIRED
    assert approvals(rt) == {}


def test_cancel_of_queued_and_unconfirmed_operations_and_of_final_ones(rt: Runtime) -> None:
    queued = reserve(rt, request_id="q")["result"]["receipt"]
    waiting = reserve(rt, "confirmed", request_id="w")["result"]["receipt"]
    assert rt.client.cancel(SESSION, queued["operationId"])["result"]["receipt"]["status"] == "cancelled"
    assert rt.client.cancel(SESSION, waiting["operationId"])["result"]["receipt"]["status"] == "cancelled"
    before = operations(rt)
    assert code(rt.client.cancel(SESSION, queued["operationId"])) == "not_cancellable"
    assert code(rt.client.cancel(SESSION, "op-unknown")) == "unknown_operation"
    assert operations(rt) == before
    job = rt.redis.hgetall(f"rq:job:{queued['operationId']}")
    assert not job or job.get(b"status") == b"canceled"


def test_list_returns_the_receipts_of_a_document_ref_oldest_first(rt: Runtime) -> None:
    ops = [reserve(rt, request_id=f"l-{i}")["result"]["receipt"]["operationId"] for i in range(3)]
    receipts = rt.client.receipts_of(SESSION, plain_ref("plain-1"))["result"]["receipts"]
    parse_ui_action_receipt_list(receipts)
    assert [r["operationId"] for r in receipts] == ops
    assert rt.client.receipts_of(SESSION, plain_ref("plain-9"))["result"]["receipts"] == []
    assert code(rt.client.action(SESSION, "list", {"uiId": "ops"})) == "invalid_request"


def test_catalog_returns_the_public_descriptors(rt: Runtime) -> None:
    capabilities = rt.client.catalog(SESSION)["result"]["capabilities"]
    parse_ui_capability_catalog(capabilities)
    by_id = {c["id"]: c for c in capabilities}
    assert by_id["read_file"]["parameters"]["required"] == ["file_path"]
    assert set(by_id["read_file"]["parameters"]["properties"]) == {"file_path", "limit"}
    assert by_id["write_file"]["requiresConfirmation"] is True and by_id["write_file"]["resultFields"] == ["operation"]
    assert "callable" not in json.dumps(capabilities)
    assert code(rt.client.action(SESSION, "catalog", {"x": 1})) == "invalid_request"


def test_an_agent_action_is_accepted_and_its_prompt_lands_in_the_inbox(rt: Runtime) -> None:
    receipt = reserve(rt, "ask", request_id="a-1")["result"]["receipt"]
    assert receipt["status"] == "accepted"
    [(_, entry)] = rt.client.inbox(SESSION)
    assert entry["prompt"] == "Explain k" and entry["operationId"] == receipt["operationId"]
    assert json.loads(entry["documentRef"]) == plain_ref("plain-1") and entry["actionId"] == "ask"
    assert code(rt.client.cancel(SESSION, receipt["operationId"])) == "not_cancellable"


def test_ledgers_are_bounded_per_session_and_never_overwrite(runtime: Runtime, tmp_path: Path) -> None:
    configure(runtime, tmp_path, max_operations_per_session=2).start()
    runtime.call(SESSION, "intelligent_ui", {"document": actions_document()}, call="plain-1")
    reserve(runtime, request_id="b-1")
    reserve(runtime, request_id="b-2")
    before = operations(runtime)
    assert code(reserve(runtime, request_id="b-3")) == "operation_capacity"
    assert operations(runtime) == before


def test_a_document_ref_holds_at_most_256_operations(rt: Runtime) -> None:
    key = rt.client.keys.operations(rt.client.partition(SESSION), SESSION)
    from workers.actions.receipts import ledger_field, ref_digest

    rt.redis.hset(key, ledger_field(ref_digest(plain_ref("plain-1"))), " ".join(f"op-{i}" for i in range(256)))
    before = operations(rt)
    assert code(reserve(rt, request_id="full")) == "ledger_full"
    assert operations(rt) == before


def test_forged_and_invalid_job_reports_are_refused_and_change_nothing(rt: Runtime) -> None:
    receipt = reserve(rt)["result"]["receipt"]
    op = receipt["operationId"]
    before = operations(rt)
    for name, body, expected in [
        ("running", {"operationId": op, "secret": "guess"}, "forged_result"),
        ("succeeded", {"operationId": op, "secret": "", "result": {"value": 1}}, "forged_result"),
        ("running", {"operationId": "op-none", "secret": "x"}, "unknown_operation"),
        ("exploded", {"operationId": op, "secret": "x"}, "unknown_request"),
        ("running", {"operationId": op, "secret": "x", "extra": 1}, "invalid_request"),
    ]:
        rt.client.submit(SESSION, name, body, call="forged", request=f"forged-{name}-{expected}", kind="result")
        assert code(rt.client.reply(SESSION, f"forged-{name}-{expected}", timeout=10)) == expected
    assert operations(rt) == before
    assert rt.client.get(SESSION, op)["result"]["receipt"] == receipt


@pytest.mark.parametrize("body", [
    {"operationId": "OP"},  # no secret field at all
    {"operationId": "OP", "secret": ""},
    {"operationId": "OP", "secret": None},
    {"operationId": "OP", "secret": 12},
    {"operationId": "OP", "secret": ["s"]},
    {"operationId": "OP", "secret": "s" * 257},
    {"operationId": "OP", "message": "done"},
    {"operationId": "op-none"},  # not even an operation of the session: still no secret
])
def test_a_report_without_its_secret_is_forged_result_over_the_wire(rt: Runtime, body: dict[str, Any]) -> None:
    receipt = reserve(rt)["result"]["receipt"]
    body = {**body, "operationId": receipt["operationId"]} if body["operationId"] == "OP" else body
    before = operations(rt)
    for name in ("running", "failed"):
        rt.client.submit(SESSION, name, body, call="forged", request=f"no-secret-{name}", kind="result")
        reply = rt.client.reply(SESSION, f"no-secret-{name}", timeout=10)
        assert code(reply) == "forged_result"
        assert reply["error"]["message"] == "the report does not carry the operation's secret"
    assert operations(rt) == before
    assert rt.client.get(SESSION, receipt["operationId"])["result"]["receipt"] == receipt
    assert rt.rejections("forged_result") == 2


def test_a_report_with_the_secret_but_a_forbidden_transition_is_refused(rt: Runtime) -> None:
    op = reserve(rt)["result"]["receipt"]["operationId"]
    key = rt.client.keys.operations(rt.client.partition(SESSION), SESSION)
    secret = rt.redis.hget(key, f"sec:{op}").decode()
    rt.client.submit(SESSION, "succeeded", {"operationId": op, "secret": secret, "result": {"value": 1}},
                     call="c", request="skip-running", kind="result")
    assert code(rt.client.reply(SESSION, "skip-running", timeout=10)) == "invalid_transition"
    assert rt.client.get(SESSION, op)["result"]["receipt"]["status"] == "queued"


def test_no_reply_ever_carries_the_secret(rt: Runtime) -> None:
    op = reserve(rt)["result"]["receipt"]["operationId"]
    key = rt.client.keys.operations(rt.client.partition(SESSION), SESSION)
    secret = rt.redis.hget(key, f"sec:{op}").decode()
    texts = [json.dumps(rt.client.get(SESSION, op)), json.dumps(rt.client.receipts_of(SESSION, plain_ref("plain-1")))]
    texts += [json.dumps(r) for _, r in rt.client.receipt_log(SESSION)]
    assert all(secret not in text for text in texts)


def test_the_examples_reserve_against_their_plain_documents(rt: Runtime) -> None:
    for name, action, status in [("actions-file-reader.json", "count_lines", "queued"),
                                 ("actions-file-writer.json", "save_note", "awaiting_confirmation"),
                                 ("agent-callback.json", "explain", "accepted")]:
        document = example(name)
        rt.call(SESSION, "intelligent_ui", {"document": document}, call=f"ex-{name}")
        values = {key: copy.deepcopy(field["initial"]) for key, field in document["state"].items()}
        reply = rt.client.reserve(SESSION, plain_ref(f"ex-{name}", document["id"]), action, values, timeout=10)
        assert reply["ok"] and reply["result"]["receipt"]["status"] == status, reply
