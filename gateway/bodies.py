"""Request bodies: capped before they are read in full, JSON through core's safe-JSON checks.

A body larger than the limit is refused (413) from its `Content-Length`, or as soon as the
bytes read pass the limit, so a hostile client cannot make the gateway buffer more.  The JSON
must be an object of safe JSON (core's depth, size and value-count bounds, no lone
surrogates); the refusal names no part of the body.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request

from core import UIError, assert_safe_json

from .problems import Problem

JSON_TYPES = ("application/json", "application/problem+json")


async def read_json(request: Request, max_bytes: int) -> dict[str, Any]:
    """The request's JSON object, or a `Problem` (413 too large, 415 not JSON, 400 invalid).  An empty
    body is `{}`, with or without a `Content-Type`; a body without one is refused as one of another
    type (it is not declared JSON)."""
    declared = request.headers.get("content-type")
    media = None if declared is None else declared.split(";", 1)[0].strip().lower()
    if media is not None and media not in JSON_TYPES:
        raise Problem("unsupported_media_type", "the body must be application/json")
    raw = await read_capped(request, max_bytes)
    if media is None and raw:
        raise Problem("unsupported_media_type", "the body must be application/json")
    try:
        value = orjson.loads(raw or b"{}")
    except orjson.JSONDecodeError:
        raise Problem("invalid_json", "the body is not valid JSON") from None
    if type(value) is not dict:
        raise Problem("invalid_json", "the body must be a JSON object")
    try:
        assert_safe_json(value, max_bytes=max_bytes)
    except UIError:
        raise Problem("invalid_json", "the body is not safe JSON (too deep, too large or not UTF-8 text)") from None
    return value


async def read_capped(request: Request, max_bytes: int) -> bytes:
    """The body's bytes, refused 413 as soon as they exceed `max_bytes`."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > max_bytes):
        raise Problem("payload_too_large", f"the body exceeds {max_bytes} bytes")
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_bytes:
                raise Problem("payload_too_large", f"the body exceeds {max_bytes} bytes")
            chunks.append(chunk)
    except ClientDisconnect:  # gone, or a body the server's parser refused: an answer, not a traceback
        raise Problem("bad_request", "the body ended before it was complete") from None
    return b"".join(chunks)
