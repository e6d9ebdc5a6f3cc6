"""answer-view-state@1 (seed 004): a block's view state, read and saved with revision compare-and-set."""

from __future__ import annotations

import re
import uuid

from starlette.requests import Request

from ..bodies import read_json
from ..context import Gateway, Permission, idempotency_key, path_id
from ..problems import Problem
from ..responses import JSONResponse

# A PUT's body: nodes <= 32 KiB (the runtime's bound), and room for a client's copy of the block
# (dropped here: the runtime has its own, and an entry carries at most IUI_MAX_DOCUMENT_BYTES + 4 KiB).
MAX_VIEW_BODY_BYTES = 3 * 100_000 + 64 * 1024
_REVISION = re.compile(r'(?:W/)?(?:"(\d{1,15})"|(\d{1,15}))')  # "<revision>", W/"<revision>" or bare


async def read(request: Request) -> JSONResponse:
    """GET .../messages/{message}/blocks/{block}/state (user)."""
    gateway: Gateway = request.app.state.gateway
    caller = await gateway.caller(request, Permission.VIEW_STATE)
    body = {"message_id": path_id(request, "message"), "block_id": path_id(request, "block")}
    result = await caller.ask("view", "get", body)
    return JSONResponse(result, headers=_etag(result))


async def write(request: Request) -> JSONResponse:
    """PUT .../state `{nodes, expected_revision, request_id?, schema_digest}` (or `If-Match`) (user)."""
    gateway: Gateway = request.app.state.gateway
    caller = await gateway.caller(request, Permission.VIEW_STATE)
    body = await read_json(request, MAX_VIEW_BODY_BYTES)
    if "expected_revision" not in body:
        match = _REVISION.fullmatch(request.headers.get("if-match", "").strip())
        if match is None:
            raise Problem("bad_request", "expected_revision (or If-Match with the revision) is required")
        body["expected_revision"] = int(match.group(1) or match.group(2))
    key = idempotency_key(request)  # checked even when the body names the request
    if "request_id" not in body:
        body["request_id"] = key or f"put-{uuid.uuid4().hex}"
    body.pop("block", None)  # a client's copy of the block, which the runtime ignores (it has its own)
    body = {**body, "message_id": path_id(request, "message"), "block_id": path_id(request, "block")}
    result = await caller.ask("view", "put", body)
    return JSONResponse(result, headers=_etag(result))


def _etag(result: object) -> dict[str, str]:
    revision = result.get("revision") if isinstance(result, dict) else None
    return {"etag": f'"{revision}"'} if type(revision) is int else {}
