"""JSON responses rendered by orjson (Starlette's default uses the standard library's json)."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import JSONResponse as StarletteJSONResponse


class JSONResponse(StarletteJSONResponse):
    """A JSON response whose body orjson writes (about ten times faster for a frame or a receipt)."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)
