"""The Client's page: `/app/` and `/app/s/{session}` serve the page, `/app/static/...` its files.

Both are served whole: `Range` and `If-Range` are ignored, as RFC 9110 allows (the files are
small), so a malformed or unsatisfiable range never gets Starlette's plain-text 400 or 416.
"""

from __future__ import annotations

import mimetypes
from importlib import resources
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from ..context import session_of
from ..problems import Problem

WEB = Path(str(resources.files("gateway").joinpath("web")))
RANGE_HEADERS = (b"range", b"if-range")


async def page(request: Request) -> Response:
    """The Client's HTML page (the session, when one is named, is read by the page from its URL)."""
    if "session" in request.path_params:
        session_of(request)  # a path that cannot name a session is a 404
    index = WEB / "index.html"
    if not index.is_file():
        raise Problem("not_found", "the Client's files are not installed")
    return WholeFileResponse(index, media_type="text/html; charset=utf-8", headers={"cache-control": "no-cache"})


def static_files() -> StaticFiles:
    """The Client's files (modules, styles, vendored libraries); no directory listings, no path escapes."""
    mimetypes.add_type("text/javascript", ".mjs")  # module scripts need a JavaScript type (nosniff)
    mimetypes.add_type("text/javascript", ".js")
    return WholeFiles(directory=WEB, check_dir=False, follow_symlink=False)


def _whole(scope: Scope) -> Scope:
    """The scope without the headers that ask for part of a file."""
    return {**scope, "headers": [(name, value) for name, value in scope["headers"] if name not in RANGE_HEADERS]}


class WholeFileResponse(FileResponse):
    """A file response that ignores `Range`."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await super().__call__(_whole(scope), receive, send)


class WholeFiles(StaticFiles):
    """Static files that ignore `Range`."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await super().__call__(_whole(scope), receive, send)
