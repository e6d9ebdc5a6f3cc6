"""A session as a whole: EventSource tickets, agents' tool calls, deleting its answers."""

from __future__ import annotations

from starlette.requests import Request

from workers.wire.entry import is_call_id

from ..bodies import read_json
from ..context import Gateway, Permission, idempotency_key, session_of
from ..problems import Problem
from ..responses import JSONResponse


async def ticket(request: Request) -> JSONResponse:
    """POST /v1/sessions/{session}/tickets: an EventSource ticket (viewer)."""
    gateway: Gateway = request.app.state.gateway
    caller = await gateway.caller(request, Permission.READ)
    secret = await gateway.tickets.issue(caller.identity, caller.session)
    return JSONResponse({"ticket": secret, "expires_in": gateway.tickets.ttl_s})


async def call(request: Request) -> JSONResponse:
    """POST /v1/sessions/{session}/calls: an agent's tool call `{tool, arguments, call?}` (agent)."""
    gateway: Gateway = request.app.state.gateway
    identity = gateway.identity(request, Permission.CALL)
    session = session_of(request)
    body = await read_json(request, gateway.settings.gateway_max_body_bytes)
    tool, arguments, call_id = body.get("tool"), body.get("arguments"), body.get("call")
    if set(body) - {"tool", "arguments", "call"} or type(tool) is not str or type(arguments) is not dict:
        raise Problem("bad_request", "the body is {tool, arguments, call?}: a tool name and an arguments object")
    if call_id is not None and not (type(call_id) is str and is_call_id(call_id)):
        raise Problem("bad_request", "call must be 1-256 printable ASCII characters")
    # The key names the call (the runtime's ledger answers its retry), never the reply's address: each
    # HTTP request reads a reply list of its own, so another tenant who sends the same session and
    # key can neither read this caller's reply nor take it away.
    key = idempotency_key(request)  # checked even when the body names the call
    result = await gateway.request(identity, session, "tool", tool, arguments, call=call_id or key)
    return JSONResponse(result)


async def delete(request: Request) -> JSONResponse:
    """DELETE /v1/sessions/{session}: delete the session's answers and view states (user, owner)."""
    gateway: Gateway = request.app.state.gateway
    caller = await gateway.caller(request, Permission.VIEW_STATE)
    return JSONResponse(await caller.ask("view", "delete_session", {}))
