"""The Client's page: `/app/` and `/app/s/{session}` serve the page, `/app/static/...` its files."""

from __future__ import annotations

import mimetypes
from importlib import resources
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles

from ..context import session_of

WEB = Path(str(resources.files("gateway").joinpath("web")))


async def page(request: Request) -> Response:
    """The Client's HTML page (the session, when one is named, is read by the page from its URL)."""
    if "session" in request.path_params:
        session_of(request)  # a path that cannot name a session is a 404
    index = WEB / "index.html"
    if not index.is_file():
        return Response("the Client's files are not installed", status_code=404, media_type="text/plain")
    return FileResponse(index, media_type="text/html; charset=utf-8", headers={"cache-control": "no-cache"})


def static_files() -> StaticFiles:
    """The Client's files (modules, styles, vendored libraries); no directory listings, no path escapes."""
    mimetypes.add_type("text/javascript", ".mjs")  # module scripts need a JavaScript type (nosniff)
    mimetypes.add_type("text/javascript", ".js")
    return StaticFiles(directory=WEB, check_dir=False, follow_symlink=False)
