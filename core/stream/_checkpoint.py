"""The checkpoint envelope of the component stream (seed 000 section 12).

A checkpoint (frame) is a closed object: the fixed envelope fields plus a full document
`snapshot`.  `parse_checkpoint` validates one exactly, in the seed's order: safe JSON and
the 266,240-byte frame budget, the closed envelope and its revision arithmetic, then the
snapshot again through `parse_document` (its issues located under `/snapshot`).
`build_checkpoint` and `frame_bytes` are the producer's side of the same shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import islice
from typing import Any

import orjson

from core._rules import (
    Issues,
    ascii_token,
    closed_object,
    identifier,
    integer,
    is_integral,
    json_object,
    one_of,
    text,
)
from core.document._revalidation import DocumentCache
from core.errors import MAX_ISSUES, Issue, UISchemaError, UIStreamError
from core.json._frozen import CONTAINER_KINDS, FrozenDict
from core.json.safe import MAX_JSON_DEPTH, MAX_JSON_VALUES, SafeJson, count_safe_json, json_byte_size
from core.limits import (
    MAX_GENERATION,
    MAX_REVISION,
    MESSAGE_LENGTH,
    SOURCE_CALL_ID_LENGTH,
    UI_LIMITS,
    UI_PROTOCOL_LIMITS,
)

PROTOCOL = "dsh.intelligent-ui.stream"
VERSION = "1.0"
MUTATION_TYPES = ("add", "update", "remove")
TERMINAL_TYPES = ("complete", "cancel", "error")
FRAME_TYPES = ("snapshot", *MUTATION_TYPES, *TERMINAL_TYPES)
MAX_SEQ = UI_PROTOCOL_LIMITS["maxStreamFrames"]
FRAME_BYTES = UI_PROTOCOL_LIMITS["maxStreamFrameBytes"]

# The seed gives the fixed shell 4 levels of depth and 64 values on top of the general
# JSON limits; the snapshot is then held to the document's own limits by parse_document.
_FRAME_LIMITS = {
    "max_bytes": FRAME_BYTES,
    "max_depth": UI_LIMITS["maxJsonDepth"] + 4,
    "max_values": UI_LIMITS["maxJsonValues"] + 64,
}
_INTEGER_FIELDS = ("generation", "seq", "baseRevision", "revision")
ENVELOPE_ORDER = (
    "protocol", "version", "sourceCallId", "uiId", "generation", "seq",
    "baseRevision", "revision", "type", "snapshot", "message",
)  # fmt: skip


def _nullable_revision(value: Any) -> Issues:
    if value is not None:
        yield from integer(0, MAX_REVISION)(value)


_ENVELOPE = closed_object(
    {
        "protocol": one_of(PROTOCOL),
        "version": one_of(VERSION),
        "sourceCallId": ascii_token(SOURCE_CALL_ID_LENGTH),
        "uiId": identifier,
        "generation": integer(1, MAX_GENERATION),
        "seq": integer(1, MAX_SEQ),
        "baseRevision": _nullable_revision,
        "revision": integer(0, MAX_REVISION),
        "type": one_of(*FRAME_TYPES),
        "snapshot": json_object,
    },
    {"message": text(0, MESSAGE_LENGTH)},
)


def _arithmetic(frame: dict[str, Any]) -> Issues:
    """`seq > revision`; `baseRevision` null only for a snapshot; revision steps by type."""
    seq, base, revision, kind = (frame.get(key) for key in ("seq", "baseRevision", "revision", "type"))
    if not (is_integral(seq) and is_integral(revision) and kind in FRAME_TYPES):
        return  # the field rules already reported the cause
    if seq <= revision:
        yield Issue("/seq", "seq must be greater than revision", "sequence")
    if kind == "snapshot":
        if base is not None:
            yield Issue("/baseRevision", "a snapshot frame has baseRevision null", "sequence")
    elif base is None:
        yield Issue("/baseRevision", f"a {kind} frame needs a baseRevision", "sequence")
    elif is_integral(base):
        step = 1 if kind in MUTATION_TYPES else 0
        if revision != base + step:
            rule = "baseRevision + 1" if step else "baseRevision"
            yield Issue("/revision", f"a {kind} frame must have revision = {rule}", "sequence")


def envelope_issues(value: Any) -> list[Issue]:
    """The problems of a frame's envelope (its snapshot is checked separately)."""
    issues = list(islice(_ENVELOPE(value), MAX_ISSUES))
    if not issues:
        issues = list(_arithmetic(value))
    return issues


def parse_checkpoint(value: Any) -> tuple[FrozenDict, int, DocumentCache]:
    """A validated, frozen checkpoint, its JSON byte size and the document cache its snapshot's
    parse left (for the frames that follow); else `UIStreamError`."""
    try:
        size, depth, values = count_safe_json(value, **_FRAME_LIMITS)
    except UISchemaError as error:
        raise UIStreamError(error.issues) from None
    issues = envelope_issues(value)
    if issues:
        raise UIStreamError(issues)
    try:
        cache = DocumentCache.parsed(_measured_snapshot(value, size, depth, values))
    except UISchemaError as error:
        raise UIStreamError([issue.prefixed("/snapshot") for issue in error.issues]) from None
    return checkpoint_of(value, cache.document), size, cache


def checkpoint_of(frame: Mapping[str, Any], snapshot: FrozenDict) -> FrozenDict:
    """The frozen checkpoint of a frame whose envelope passed `envelope_issues`, with its
    validated (or restored) `snapshot`: the envelope fields in the interface's order."""
    if frame["uiId"] != snapshot["id"]:
        raise UIStreamError([Issue("/uiId", "uiId must equal the snapshot's document id", "binding")])
    # Integral fields come back as `int` (a JSON `3.0` is the JS number 3).
    fields = {key: frame[key] for key in ENVELOPE_ORDER if key in frame}
    for key in _INTEGER_FIELDS:
        if fields[key] is not None:
            fields[key] = int(fields[key])
    fields["snapshot"] = snapshot
    return FrozenDict(fields)


def _measured_snapshot(frame: Mapping[str, Any], size: int, depth: int, values: int) -> Any:
    """The frame's snapshot as its parse takes it: with the size and depth the frame's walk
    proved, when they prove the document's own walk would pass, so the snapshot is not walked
    a second time (a tenth of a resumed 200-component checkpoint); else the snapshot alone,
    which its parse walks and reports on as before.

    The frame's walk checked every scalar and key of the snapshot as the document's walk does,
    counted its values among the frame's and reached its deepest container one level down;
    the envelope's other values are scalars (checked above).  So within the document's depth
    and value limits the document's walk cannot fail but on its byte budget, which the parse
    checks on the size given; and the snapshot's size is the frame's but for the text of the
    envelope around it (a snapshot of `null` measured, less the 4 bytes of `null`).
    """
    snapshot = frame["snapshot"]
    if depth - 1 > MAX_JSON_DEPTH or values > MAX_JSON_VALUES or type(snapshot) not in CONTAINER_KINDS:
        return snapshot
    envelope = {key: None if key == "snapshot" else item for key, item in frame.items()}
    if any(type(item) in CONTAINER_KINDS for item in envelope.values()):
        return snapshot
    return SafeJson(snapshot, size - json_byte_size(envelope) + len("null"), depth - 1)


def build_checkpoint(
    *,
    source_call_id: str,
    generation: int,
    seq: int,
    base_revision: int | None,
    revision: int,
    kind: str,
    snapshot: FrozenDict,
    message: str | None = None,
) -> FrozenDict:
    """A producer's frame, fields in the order of the seed's interface."""
    fields = {
        "protocol": PROTOCOL,
        "version": VERSION,
        "sourceCallId": source_call_id,
        "uiId": snapshot["id"],
        "generation": generation,
        "seq": seq,
        "baseRevision": base_revision,
        "revision": revision,
        "type": kind,
        "snapshot": snapshot,
    }
    if message is not None:
        fields["message"] = message
    return FrozenDict(fields)


def frame_bytes(frame: FrozenDict, snapshot_bytes: int) -> int:
    """JSON bytes of a producer's frame, from its snapshot's known size (no re-walk)."""
    shell = orjson.dumps({**frame, "snapshot": 0})  # envelope values are ints and strings
    return len(shell) - 1 + snapshot_bytes
