"""Stream frames made by core, as the gateway would deliver them (plain JSON)."""

from __future__ import annotations

from typing import Any

import orjson

from core import advance_ui_stream, start_ui_stream


def plain(value: Any) -> Any:
    """A core object (frozen mappings) as decoded JSON."""
    return orjson.loads(orjson.dumps(value))


def stream_frames(document: dict[str, Any], events: list[dict[str, Any]], *, call: str = "call-1",
                  generation: int = 1) -> list[dict[str, Any]]:
    """The snapshot frame of `document` and one frame per event (mutations and terminals)."""
    state = start_ui_stream(document, call, generation)
    frames = [plain(state.checkpoint)]
    for event in events:
        state = advance_ui_stream(state, event)
        frames.append(plain(state.checkpoint))
    return frames
