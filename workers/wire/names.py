"""Every name an input entry's `kind` and `name` fields may carry (the README's wire contract).

The handlers, the metrics' label values, `iui status` and the `catalog` reply all read them
here, so adding a tool or a request name is one edit.
"""

from __future__ import annotations

KINDS = ("tool", "action", "result", "view")

# Stream tools (seed 001) and the plain full-UI tool.
PLAIN, OPEN, PATCH = "intelligent_ui", "intelligent_ui_open", "intelligent_ui_patch"
COMPLETE, CANCEL = "intelligent_ui_complete", "intelligent_ui_cancel"
TOOLS = (PLAIN, OPEN, PATCH, COMPLETE, CANCEL)
STREAM_TOOLS = (OPEN, PATCH, COMPLETE, CANCEL)  # seed 001's switch: served only with streaming enabled

# answer-ui@1 tools (seed 004).
PRESENT, FINAL = "present_answer", "final_answer"
ANSWER_TOOLS = (PRESENT, FINAL)

# The action runtime (seed 000 §11): `kind=action` requests and `kind=result` job reports.
ACTION_NAMES = ("reserve", "get", "cancel", "list", "catalog", "confirm")
RESULT_NAMES = ("running", "succeeded", "failed", "unknown")

# answer-view-state@1 requests (`kind=view`).
GET, PUT, DELETE = "get", "put", "delete_session"
VIEW_NAMES = (GET, PUT, DELETE)


def served_tools(streaming: bool) -> list[str]:
    """The tool names the workers serve (and advertise), in the README's order."""
    return [PLAIN, *(STREAM_TOOLS if streaming else ()), *ANSWER_TOOLS]
