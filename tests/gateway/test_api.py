"""The gateway's HTTP API against a real `iui gateway` (uvicorn), real workers and redis-server:
tokens, roles, tenancy, every endpoint's answers and refusals, hostile bodies and headers."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.gateway.conftest import auth, token
from tests.integration.conftest import Runtime, example

pytestmark = pytest.mark.integration
OPEN, PATCH = "intelligent_ui_open", "intelligent_ui_patch"
NOT_FOUND = {"type": "about:blank", "title": "Not Found", "status": 404, "code": "not_found",
             "detail": "no such session, or not yours"}


def open_ui(http: httpx.Client, session: str = "s1", sub: str = "alice", project: str = "demo",
            document: Any = None, call: str = "open-1") -> dict[str, Any]:
    reply = http.post(f"/v1/sessions/{session}/calls", headers=auth("agent", sub, project),
                      json={"tool": OPEN, "arguments": {"document": document or example("stream-initial.json")},
                            "call": call})
    assert reply.status_code == 200, reply.text
    frame: dict[str, Any] = reply.json()["frame"]
    return frame


def patch(http: httpx.Client, frame: dict[str, Any], revision: int, session: str = "s1",
          **headers: str) -> httpx.Response:
    mutation = {"type": "update", "nodeId": "summary-card", "props": {"title": f"T{revision}", "gap": "sm"}}
    return http.post(f"/v1/sessions/{session}/calls", headers={**auth("agent"), **headers},
                     json={"tool": PATCH, "arguments": {"sourceCallId": frame["sourceCallId"],
                                                       "generation": frame["generation"],
                                                       "baseRevision": revision, "mutation": mutation}})


# -- tokens and roles ---------------------------------------------------------------------------


@pytest.mark.parametrize("header", [None, "Bearer", "Bearer x.y.z", "Basic YWxpY2U6eA==", "bearer " + "a" * 9000])
def test_a_missing_or_invalid_token_is_401_and_echoes_nothing(http: httpx.Client, header: str | None) -> None:
    reply = http.post("/v1/sessions/s1/tickets", headers={"authorization": header} if header else {})
    assert reply.status_code == 401 and reply.headers["www-authenticate"] == 'Bearer realm="iui"'
    assert reply.headers["content-type"] == "application/problem+json"
    assert reply.json()["code"] == "unauthorized" and "Basic" not in reply.text and "x.y.z" not in reply.text


def test_an_expired_token_is_401(http: httpx.Client) -> None:
    reply = http.post("/v1/sessions/s1/tickets", headers={"authorization": f"Bearer {token(ttl=-60)}"})
    assert reply.status_code == 401


def test_two_authorization_headers_are_401_whichever_comes_first(http: httpx.Client) -> None:
    valid, junk = auth("viewer")["authorization"], "Bearer x.y.z"
    for pair in ((valid, junk), (junk, valid), (valid, valid)):
        reply = http.post("/v1/sessions/s1/tickets", headers=[("authorization", pair[0]), ("authorization", pair[1])])
        assert reply.status_code == 401 and reply.json()["code"] == "unauthorized"


@pytest.mark.parametrize(("role", "method", "path", "body"), [
    ("viewer", "POST", "/v1/sessions/s1/operations", {}),
    ("viewer", "POST", "/v1/sessions/s1/calls", {"tool": OPEN, "arguments": {}}),
    ("user", "POST", "/v1/sessions/s1/calls", {"tool": OPEN, "arguments": {}}),
    ("agent", "PUT", "/v1/sessions/s1/messages/m/blocks/b/state", {}),
    ("agent", "DELETE", "/v1/sessions/s1", None),
    ("viewer", "POST", "/v1/sessions/s1/operations/op-1/confirm", {"approve": True}),
])
def test_a_valid_token_of_the_wrong_role_is_403(http: httpx.Client, role: str, method: str, path: str,
                                                 body: Any) -> None:
    reply = http.request(method, path, headers=auth(role), json=body)
    assert reply.status_code == 403 and reply.json()["code"] == "forbidden"


# -- tenancy ------------------------------------------------------------------------------------


def test_every_endpoint_answers_another_tenants_session_exactly_as_a_missing_one(http: httpx.Client) -> None:
    open_ui(http)  # alice / demo own s1
    for sub, project in (("mallory", "demo"), ("alice", "other")):
        for session in ("s1", "no-such-session"):
            for method, path, role, body in (
                ("POST", f"/v1/sessions/{session}/tickets", "viewer", None),
                ("GET", f"/v1/sessions/{session}/events", "viewer", None),
                ("GET", f"/v1/sessions/{session}/ag-ui", "viewer", None),
                ("DELETE", f"/v1/sessions/{session}", "user", None),
                ("GET", f"/v1/sessions/{session}/messages/m/blocks/b/state", "user", None),
            ):
                reply = http.request(method, path, headers=auth(role, sub, project), json=body)
                assert (reply.status_code, reply.json()) == (404, NOT_FOUND), (method, path, reply.text)
        stranger = auth("agent", sub, project)
        reply = http.post("/v1/sessions/s1/calls", headers=stranger,
                          json={"tool": OPEN, "arguments": {"document": example("stream-initial.json")}})
        assert (reply.status_code, reply.json()) == (404, NOT_FOUND)
        for method, path in (("GET", "/v1/sessions/s1/operations/op-x"),
                             ("POST", "/v1/sessions/s1/operations/op-x/cancel")):
            reply = http.request(method, path, headers=auth("admin", sub, project))
            assert (reply.status_code, reply.json()) == (404, NOT_FOUND)
    assert http.get("/v1/sessions/s1/events", headers=auth("viewer"), timeout=2,
                    params={"last_event_id": "bad"}).status_code == 400  # the owner gets further


def test_a_path_that_cannot_name_a_session_is_404(http: httpx.Client) -> None:
    for session in ("a%3Ab", "%7Bp1%7D", "x" * 200):
        reply = http.post(f"/v1/sessions/{session}/tickets", headers=auth("viewer"))
        assert reply.status_code == 404


# -- tool calls ---------------------------------------------------------------------------------


def test_tool_call_rejections_map_to_their_statuses(http: httpx.Client, stack: tuple[Runtime, Any]) -> None:
    frame = open_ui(http)
    assert patch(http, frame, 0).status_code == 200
    conflict = patch(http, frame, 0)  # the cursor moved on
    assert conflict.status_code == 409 and conflict.json()["code"] == "cursor_conflict"
    assert "revision=1" in conflict.json()["detail"]
    unknown = http.post("/v1/sessions/s1/calls", headers=auth("agent"), json={
        "tool": PATCH, "arguments": {"sourceCallId": "nope", "generation": 1, "baseRevision": 0,
                                     "mutation": {"type": "remove", "nodeId": "x"}}})
    assert unknown.status_code == 404 and unknown.json()["code"] == "unknown_source"
    invalid = http.post("/v1/sessions/s2/calls", headers=auth("agent"),
                        json={"tool": OPEN, "arguments": {"document": {"version": "1.1"}}})
    assert invalid.status_code == 422 and invalid.json()["code"] == "invalid_document"
    assert all(issue["path"].startswith("/") for issue in invalid.json()["issues"])
    tool = http.post("/v1/sessions/s2/calls", headers=auth("agent"), json={"tool": "drop_tables", "arguments": {}})
    assert tool.status_code == 422 and tool.json()["code"] == "unknown_tool" and "drop_tables" not in tool.text
    name = http.post("/v1/sessions/s2/calls", headers=auth("agent"), json={"tool": "rm -rf /", "arguments": {}})
    assert name.status_code == 400 and name.json()["code"] == "malformed_entry" and "rm -rf" not in name.text


def test_an_idempotency_key_makes_a_retried_call_one_call(http: httpx.Client, stack: tuple[Runtime, Any]) -> None:
    frame = open_ui(http)
    first = patch(http, frame, 0, **{"idempotency-key": "retry-1"})
    again = patch(http, frame, 0, **{"idempotency-key": "retry-1"})
    assert first.status_code == again.status_code == 200 and first.json() == again.json()
    assert stack[0].log_length("s1") == 2


def test_an_oversize_body_is_refused_413_before_it_is_read(http: httpx.Client) -> None:
    huge = b'{"tool":"intelligent_ui_open","arguments":{"document":"' + b"x" * (2 * 1024 * 1024) + b'"}}'
    reply = http.post("/v1/sessions/s1/calls", headers={**auth("agent"), "content-type": "application/json"},
                      content=huge)
    assert reply.status_code == 413 and reply.json()["code"] == "payload_too_large"


@pytest.mark.parametrize(("content", "ctype", "status", "code"), [
    (b"{not json", "application/json", 400, "invalid_json"),
    (b"[1, 2]", "application/json", 400, "invalid_json"),
    (b"[" * 5000 + b"]" * 5000, "application/json", 400, "invalid_json"),
    (b'{"tool": "x", "arguments": {"a": "\\ud800"}}', "application/json", 400, "invalid_json"),
    (b'{"tool": "x"}', "text/plain", 415, "unsupported_media_type"),
    (b'{"tool": 1, "arguments": {}}', "application/json", 400, "bad_request"),
    (b'{"tool": "x", "arguments": {}, "secret": "SECRETMARK"}', "application/json", 400, "bad_request"),
])
def test_hostile_bodies_get_their_documented_status(http: httpx.Client, content: bytes, ctype: str, status: int,
                                                    code: str) -> None:
    reply = http.post("/v1/sessions/s1/calls", headers={**auth("agent"), "content-type": ctype}, content=content)
    assert (reply.status_code, reply.json()["code"]) == (status, code)
    assert "SECRETMARK" not in reply.text


# -- actions ------------------------------------------------------------------------------------


def plain(http: httpx.Client, session: str, name: str, call: str) -> None:
    reply = http.post(f"/v1/sessions/{session}/calls", headers=auth("agent"),
                      json={"tool": "intelligent_ui", "arguments": {"document": example(name)}, "call": call})
    assert reply.status_code == 200, reply.text


def test_reserve_read_list_and_the_idempotency_key(http: httpx.Client) -> None:
    plain(http, "s3", "agent-callback.json", "ui-1")
    document = example("agent-callback.json")
    ref = {"sourceCallId": "ui-1", "uiId": document["id"], "generation": 0, "revision": 0}
    action = next(iter(document["actions"]))
    body = {"documentRef": ref, "actionId": action, "values": {k: v["initial"] for k, v in document["state"].items()}}
    first = http.post("/v1/sessions/s3/operations", headers={**auth("user"), "idempotency-key": "click-1"}, json=body)
    assert first.status_code == 200, first.text
    receipt = first.json()["receipt"]
    again = http.post("/v1/sessions/s3/operations", headers={**auth("user"), "idempotency-key": "click-1"}, json=body)
    assert again.json()["receipt"]["operationId"] == receipt["operationId"]
    read = http.get(f"/v1/sessions/s3/operations/{receipt['operationId']}", headers=auth("viewer"))
    assert read.status_code == 200 and read.json()["receipt"]["operationId"] == receipt["operationId"]
    listed = http.get("/v1/sessions/s3/operations", headers=auth("viewer"), params={"documentRef": json.dumps(ref)})
    assert [r["operationId"] for r in listed.json()["receipts"]] == [receipt["operationId"]]
    assert http.get("/v1/sessions/s3/operations/op-missing", headers=auth("viewer")).json()["code"] == \
        "unknown_operation"
    bad = http.get("/v1/sessions/s3/operations", headers=auth("viewer"), params={"documentRef": "{"})
    assert bad.status_code == 400
    for other in ("[1]", "1", "null", '"ref"'):  # an audit: it was listed as {}, "/sourceCallId: required ..."
        wrong = http.get("/v1/sessions/s3/operations", headers=auth("viewer"), params={"documentRef": other})
        assert (wrong.status_code, wrong.json()["code"]) == (400, "bad_request"), other
        assert wrong.json()["detail"] == "documentRef (a JSON object, at most 32 KiB) is required"
    catalog = http.get("/v1/catalog", headers=auth("viewer"))
    assert catalog.status_code == 200 and "capabilities" in catalog.json() and "tools" in catalog.json()


@pytest.mark.parametrize("request_id", ["", 0, False, [], {}, None, 12, "x" * 129])
def test_a_reserve_whose_request_id_is_not_one_is_400_and_reserves_nothing(http: httpx.Client,
                                                                          request_id: Any) -> None:
    # made up for it, a blank id would be a new one at each retry, and each retry a new operation
    plain(http, "s3", "agent-callback.json", "ui-1")
    document = example("agent-callback.json")
    ref = {"sourceCallId": "ui-1", "uiId": document["id"], "generation": 0, "revision": 0}
    body = {"documentRef": ref, "actionId": next(iter(document["actions"])), "requestId": request_id,
            "values": {k: v["initial"] for k, v in document["state"].items()}}
    refused = http.post("/v1/sessions/s3/operations", headers=auth("user"), json=body)
    assert refused.status_code == 400 and refused.json()["code"] == "bad_request"
    listed = http.get("/v1/sessions/s3/operations", headers=auth("viewer"), params={"documentRef": json.dumps(ref)})
    assert listed.json()["receipts"] == []


def test_an_idempotency_key_is_checked_even_where_the_body_names_the_call(http: httpx.Client) -> None:
    bad = {**auth("agent"), "idempotency-key": "k" * 129}
    call = http.post("/v1/sessions/s2/calls", headers=bad,
                     json={"tool": OPEN, "arguments": {"document": example("stream-initial.json")}, "call": "c-1"})
    assert call.status_code == 400 and call.json()["code"] == "bad_request"  # (the view-state PUT: its round trip)


def test_an_action_request_over_32_kib_is_413(http: httpx.Client) -> None:
    plain(http, "s3", "agent-callback.json", "ui-1")
    body = {"documentRef": {}, "actionId": "a", "values": {"x": "y" * 40_000}}
    reply = http.post("/v1/sessions/s3/operations", headers=auth("user"), json=body)
    assert reply.status_code == 413


def test_confirm_takes_a_boolean_only(http: httpx.Client) -> None:
    plain(http, "s3", "agent-callback.json", "ui-1")
    for body in ({"approve": "yes"}, {}, {"approve": True, "x": 1}):
        reply = http.post("/v1/sessions/s3/operations/op-1/confirm", headers=auth("user"), json=body)
        assert reply.status_code == 400 and reply.json()["code"] == "bad_request"


# -- browser-facing headers --------------------------------------------------------------------


def test_every_response_carries_the_security_headers(http: httpx.Client) -> None:
    for reply in (http.get("/healthz"), http.post("/v1/sessions/s1/tickets"), http.get("/nope")):
        assert reply.headers["x-content-type-options"] == "nosniff"
        assert reply.headers["x-frame-options"] == "DENY"
        assert reply.headers["referrer-policy"] == "no-referrer"
        assert "frame-ancestors 'none'" in reply.headers["content-security-policy"]
    assert http.get("/healthz").headers["cache-control"] == "no-store"
    assert http.get("/nope").json()["code"] == "not_found"


def test_cors_is_off_unless_origins_are_configured(http: httpx.Client) -> None:
    reply = http.options("/v1/sessions/s1/tickets", headers={"origin": "https://evil.example",
                                                              "access-control-request-method": "POST"})
    assert "access-control-allow-origin" not in reply.headers
    reply = http.get("/healthz", headers={"origin": "null"})
    assert "access-control-allow-origin" not in reply.headers


def test_health_readiness_and_metrics(http: httpx.Client) -> None:
    assert http.get("/healthz").json() == {"status": "ok"}
    assert http.get("/readyz").json() == {"status": "ready", "redis": True, "subscription": True}
    text = http.get("/metrics").text
    assert "iui_gateway_requests_total" in text and "iui_gateway_streams" in text


def test_a_view_state_put_ignores_the_clients_copy_of_the_block_up_to_the_routes_body_limit(
        http: httpx.Client) -> None:
    from gateway.routes.view_state import MAX_VIEW_BODY_BYTES
    from tests.integration.test_answer_views import view_block

    block = view_block()
    reply = http.post("/v1/sessions/s5/calls", headers=auth("agent"),
                      json={"tool": "present_answer", "arguments": {"message_id": "m1", "block": block}})
    assert reply.status_code == 200, reply.text
    path = f"/v1/sessions/s5/messages/m1/blocks/{block['block_id']}/state"
    digest = http.get(path, headers=auth("user")).json()["schema_digest"]
    body = {"nodes": {}, "expected_revision": 0, "schema_digest": digest, "block": {"copy": ""}}
    room = MAX_VIEW_BODY_BYTES - len(json.dumps(body, separators=(",", ":")))
    body["block"] = {"copy": "x" * room}  # exactly at the limit: more than a runtime entry may carry
    content = json.dumps(body, separators=(",", ":")).encode()
    assert len(content) == MAX_VIEW_BODY_BYTES
    saved = http.put(path, headers={**auth("user"), "content-type": "application/json"}, content=content)
    assert saved.status_code == 200 and saved.json()["revision"] == 1
    over = http.put(path, headers={**auth("user"), "content-type": "application/json"}, content=content + b" ")
    assert over.status_code == 413 and over.json()["code"] == "payload_too_large"


def test_view_state_round_trip_conflict_and_delete(http: httpx.Client) -> None:
    from tests.integration.test_answer_views import view_block

    blocks = [view_block()]
    for block in blocks:
        reply = http.post("/v1/sessions/s4/calls", headers=auth("agent"),
                          json={"tool": "present_answer", "arguments": {"message_id": "m1", "block": block}})
        assert reply.status_code == 200, reply.text
    block_id = blocks[0]["block_id"]
    path = f"/v1/sessions/s4/messages/m1/blocks/{block_id}/state"
    state = http.get(path, headers=auth("user"))
    assert state.status_code == 200 and state.json()["revision"] == 0 and state.headers["etag"] == '"0"'
    digest = state.json()["schema_digest"]
    saved = http.put(path, headers=auth("user"), json={"nodes": {}, "expected_revision": 0, "schema_digest": digest})
    assert saved.status_code == 200 and saved.json()["revision"] == 1
    stale = http.put(path, headers={**auth("user"), "if-match": '"0"'}, json={"nodes": {}, "schema_digest": digest})
    assert stale.status_code == 409 and stale.json()["code"] == "conflict" and stale.json()["revision"] == 1
    missing = http.put(path, headers=auth("user"), json={"nodes": {}, "schema_digest": digest})
    assert missing.status_code == 400
    for unbalanced in ('"1', '1"', 'W/"1', '""1""'):
        refused = http.put(path, headers={**auth("user"), "if-match": unbalanced},
                           json={"nodes": {}, "schema_digest": digest})
        assert refused.status_code == 400, unbalanced
    long_key = {**auth("user"), "idempotency-key": "k" * 129}
    keyed = http.put(path, headers=long_key, json={"nodes": {}, "expected_revision": 1, "schema_digest": digest,
                                                   "request_id": "r-1"})
    assert keyed.status_code == 400 and keyed.json()["code"] == "bad_request"
    unknown = http.get("/v1/sessions/s4/messages/m1/blocks/nope/state", headers=auth("user"))
    assert unknown.status_code == 404 and unknown.json()["code"] == "unknown_block"
    assert http.delete("/v1/sessions/s4", headers=auth("user")).status_code == 200
    gone = http.get(path, headers=auth("user"))
    assert gone.status_code == 410 and gone.json()["code"] == "session_deleted"
