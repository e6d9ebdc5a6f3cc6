"""Host actions (seed 000 section 11): reserve, read, list, approve or deny, cancel; the catalog."""

from __future__ import annotations

import uuid

import orjson
from starlette.requests import Request

from core import UIError, assert_safe_json
from workers.wire.entry import is_request_id

from ..bodies import read_json
from ..context import Caller, Gateway, Permission, idempotency_key, path_id
from ..problems import Problem
from ..responses import JSONResponse

MAX_ACTION_REQUEST_BYTES = 32_768  # seed 000 section 13: the runtime refuses a larger request too
CATALOG_SESSION = "iui-gateway-catalog"  # the catalog belongs to no session: any partition answers it


async def _caller(request: Request, permission: Permission) -> Caller:
    gateway: Gateway = request.app.state.gateway
    return await gateway.caller(request, permission)


async def reserve(request: Request) -> JSONResponse:
    """POST /v1/sessions/{session}/operations: reserve an action; `Idempotency-Key` is its requestId (user)."""
    caller = await _caller(request, Permission.ACT)
    body = await read_json(request, MAX_ACTION_REQUEST_BYTES)
    key = idempotency_key(request)
    # Only an absent requestId is made up: a blank or wrong-typed one would become a fresh id at
    # every retry, and the retry another operation.
    request_id = key if key is not None else body.get("requestId", f"req-{uuid.uuid4().hex}")
    if type(request_id) is not str or not is_request_id(request_id):
        raise Problem("bad_request", "requestId must be 1-128 printable ASCII characters")
    return JSONResponse(await caller.ask("action", "reserve", {**body, "requestId": request_id}))


async def read(request: Request) -> JSONResponse:
    """GET /v1/sessions/{session}/operations/{operation}: an operation's current receipt (viewer)."""
    caller = await _caller(request, Permission.READ)
    return JSONResponse(await caller.ask("action", "get", {"operationId": path_id(request, "operation")}))


async def listing(request: Request) -> JSONResponse:
    """GET /v1/sessions/{session}/operations?documentRef=<JSON>: the receipts of one document (viewer)."""
    caller = await _caller(request, Permission.READ)
    text = request.query_params.get("documentRef")
    if text is None or len(text) > MAX_ACTION_REQUEST_BYTES:
        raise Problem("bad_request", "documentRef (a JSON object, at most 32 KiB) is required")
    try:
        ref = orjson.loads(text)
        assert_safe_json(ref)
    except (orjson.JSONDecodeError, UIError):
        raise Problem("invalid_json", "documentRef is not safe JSON") from None
    if type(ref) is not dict:  # else the runtime would name the fields an empty object lacks
        raise Problem("bad_request", "documentRef (a JSON object, at most 32 KiB) is required")
    return JSONResponse(await caller.ask("action", "list", ref))


async def confirm(request: Request) -> JSONResponse:
    """POST /v1/sessions/{session}/operations/{operation}/confirm `{approve}` (user)."""
    caller = await _caller(request, Permission.ACT)
    body = await read_json(request, MAX_ACTION_REQUEST_BYTES)
    if set(body) != {"approve"} or type(body["approve"]) is not bool:
        raise Problem("bad_request", "the body is {approve: true|false}")
    decision = "approve" if body["approve"] else "deny"
    return JSONResponse(await caller.ask("action", "confirm",
                                         {"operationId": path_id(request, "operation"), "decision": decision}))


async def cancel(request: Request) -> JSONResponse:
    """POST /v1/sessions/{session}/operations/{operation}/cancel (user)."""
    caller = await _caller(request, Permission.ACT)
    return JSONResponse(await caller.ask("action", "cancel", {"operationId": path_id(request, "operation")}))


async def catalog(request: Request) -> JSONResponse:
    """GET /v1/catalog: the capability catalog's public view and the tools served (viewer)."""
    gateway: Gateway = request.app.state.gateway
    gateway.identity(request, Permission.READ)
    return JSONResponse(await gateway.anonymous(CATALOG_SESSION, "action", "catalog", {}))
