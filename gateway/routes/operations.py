"""Host actions (seed 000 section 11): reserve, read, list, approve or deny, cancel; the catalog."""

from __future__ import annotations

import uuid

import orjson
from starlette.requests import Request

from core import UIError, assert_safe_json
from workers.wire.entry import is_request_id

from ..bodies import read_json
from ..context import Gateway, Permission, idempotency_key, path_id, session_of
from ..problems import Problem
from ..responses import JSONResponse

MAX_ACTION_REQUEST_BYTES = 32_768  # seed 000 section 13: the runtime refuses a larger request too
CATALOG_SESSION = "iui-gateway-catalog"  # the catalog belongs to no session: any partition answers it


async def reserve(request: Request) -> JSONResponse:
    """POST /v1/sessions/{session}/operations: reserve an action; `Idempotency-Key` is its requestId (user)."""
    gateway: Gateway = request.app.state.gateway
    identity = gateway.identity(request, Permission.ACT)
    session = session_of(request)
    await gateway.owned(session, identity)  # a session that exists and is the caller's: else 404
    body = await read_json(request, MAX_ACTION_REQUEST_BYTES)
    request_id = idempotency_key(request) or body.get("requestId") or f"req-{uuid.uuid4().hex}"
    if type(request_id) is not str or not is_request_id(request_id):
        raise Problem("bad_request", "requestId must be 1-128 printable ASCII characters")
    result = await gateway.request(identity, session, "action", "reserve", {**body, "requestId": request_id})
    return JSONResponse(result)


async def read(request: Request) -> JSONResponse:
    """GET /v1/sessions/{session}/operations/{operation}: an operation's current receipt (viewer)."""
    gateway: Gateway = request.app.state.gateway
    identity = gateway.identity(request, Permission.READ)
    session, operation = session_of(request), path_id(request, "operation")
    await gateway.owned(session, identity)  # a session that exists and is the caller's: else 404
    return JSONResponse(await gateway.request(identity, session, "action", "get", {"operationId": operation}))


async def listing(request: Request) -> JSONResponse:
    """GET /v1/sessions/{session}/operations?documentRef=<JSON>: the receipts of one document (viewer)."""
    gateway: Gateway = request.app.state.gateway
    identity = gateway.identity(request, Permission.READ)
    session = session_of(request)
    await gateway.owned(session, identity)  # a session that exists and is the caller's: else 404
    text = request.query_params.get("documentRef")
    if text is None or len(text) > MAX_ACTION_REQUEST_BYTES:
        raise Problem("bad_request", "documentRef (a JSON object, at most 32 KiB) is required")
    try:
        ref = orjson.loads(text)
        assert_safe_json(ref)
    except (orjson.JSONDecodeError, UIError):
        raise Problem("invalid_json", "documentRef is not safe JSON") from None
    return JSONResponse(await gateway.request(identity, session, "action", "list", ref if type(ref) is dict else {}))


async def confirm(request: Request) -> JSONResponse:
    """POST /v1/sessions/{session}/operations/{operation}/confirm `{approve}` (user)."""
    gateway: Gateway = request.app.state.gateway
    identity = gateway.identity(request, Permission.ACT)
    session, operation = session_of(request), path_id(request, "operation")
    await gateway.owned(session, identity)  # a session that exists and is the caller's: else 404
    body = await read_json(request, MAX_ACTION_REQUEST_BYTES)
    if set(body) != {"approve"} or type(body["approve"]) is not bool:
        raise Problem("bad_request", "the body is {approve: true|false}")
    decision = "approve" if body["approve"] else "deny"
    return JSONResponse(await gateway.request(identity, session, "action", "confirm",
                                              {"operationId": operation, "decision": decision}))


async def cancel(request: Request) -> JSONResponse:
    """POST /v1/sessions/{session}/operations/{operation}/cancel (user)."""
    gateway: Gateway = request.app.state.gateway
    identity = gateway.identity(request, Permission.ACT)
    session, operation = session_of(request), path_id(request, "operation")
    await gateway.owned(session, identity)  # a session that exists and is the caller's: else 404
    return JSONResponse(await gateway.request(identity, session, "action", "cancel", {"operationId": operation}))


async def catalog(request: Request) -> JSONResponse:
    """GET /v1/catalog: the capability catalog's public view and the tools served (viewer)."""
    gateway: Gateway = request.app.state.gateway
    gateway.identity(request, Permission.READ)
    return JSONResponse(await gateway.anonymous(CATALOG_SESSION, "action", "catalog", {}))
