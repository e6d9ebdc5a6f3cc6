"""The five UI tools of seed 001: validation in Python (core), decisions for the commit scripts.

`ToolHandler.decide` reads the stored state through `Store`, validates the call with `core`
and returns a `Decision`: commit a new frame, store a plain document, or reply from the
ledger (identical adjacent resend).  Every rejection raises a `HostError` with a stable code;
nothing here writes to Redis, so a rejection can never change the stored checkpoint.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

from config.settings import Settings
from core._identifier import is_identifier
from core.document.model import parse_document
from core.errors import Issue, UIError, UISchemaError, UIStreamError
from core.json.canonical import canonical_json_measured, canonical_json_string
from core.json.safe import SafeJson
from core.limits import MAX_GENERATION, UI_LIMITS, UI_PROTOCOL_LIMITS
from core.stream._checkpoint import MUTATION_TYPES
from core.stream.lifecycle import UIStreamState, advance_ui_stream, start_ui_stream

from ..redisio.connection import SharedRoundTrip
from ..redisio.keys import ENVELOPE_NAME, Keys, generation_field, ledger_name, plain_field, source_field, ui_field
from ..redisio.scripts import CommitPlan, PlainFields
from ..redisio.seal import facts_digest, facts_text, retired_digest, snapshot_digest, snapshot_split
from ..sessions.store import Generation, Store, call_id_of
from ..wire.entry import BODY_MARGIN, InputEntry, dumps, is_call_id, is_session_id, json_integer, loads
from ..wire.errors import BudgetError, ConflictError, ErrorCode, HostError
from ..wire.names import CANCEL, COMPLETE, OPEN, PATCH, PLAIN, STREAM_TOOLS, served_tools

MAX_STREAM_BYTES = UI_PROTOCOL_LIMITS["maxStreamBytes"]
MAX_FRAMES = UI_PROTOCOL_LIMITS["maxStreamFrames"]
ENVELOPE_BYTES = UI_PROTOCOL_LIMITS["maxStreamFrameBytes"] - UI_LIMITS["maxDocumentBytes"]
_ADVANCES = (PATCH, COMPLETE, CANCEL)  # the calls that read a stored generation by sourceCallId
_CURSOR_ARGS = ("sourceCallId", "generation", "baseRevision")
_DOCUMENT_ARGS_BYTES = len('{"document":}')  # the canonical text of {"document": D} around D


class Decision:
    """What the consumer must write for one accepted (or resent) tool call.

    A plain class with `Final` attributes, as `Generation` (one per call)."""

    __slots__ = ("action", "frame_type", "opened", "plain", "plan", "record", "reply_result")

    def __init__(self, action: str, reply_result: str, plan: CommitPlan | None = None, record: Generation | None = None,
                 opened: bool = False, plain: PlainFields | None = None, frame_type: str = "") -> None:
        self.action: Final = action  # "commit", "plain" or "resend"
        self.reply_result: Final = reply_result  # JSON text of the reply's `result`
        self.plan: Final = plan
        self.record: Final = record
        self.opened: Final = opened
        self.plain: Final = plain
        self.frame_type: Final = frame_type


def receipt(tool: str, frame: Mapping[str, Any]) -> str:
    """The model-visible receipt text: the cursor the next call must present."""
    text = (f"{tool} accepted: sourceCallId={frame['sourceCallId']} uiId={frame['uiId']} "
            f"generation={frame['generation']} revision={frame['revision']} seq={frame['seq']} "
            f"type={frame['type']}.")
    if frame["type"] in ("complete", "cancel", "error"):
        return text + " The stream is closed; open a new generation to change it."
    return text + " Use these values for the next call."


def _plain_result(ui_id: str, document: str) -> str:
    """The reply `result` of a plain call: the stored document and its receipt."""
    text = (f"{PLAIN} accepted: uiId={ui_id} generation=0 revision=0. "
            "The document is shown as a complete UI.")
    return '{"document":' + document + ',"receipt":' + dumps(text) + "}"


def call_content(tool: str, args_text: str) -> str:
    """`hash_canonical_json({"tool": tool, "arguments": args})`, given the arguments' canonical text.

    RFC 8785 sorts "arguments" before "tool"; the caller keeps the text to size the document.
    """
    text = '{"arguments":' + args_text + ',"tool":' + canonical_json_string(tool) + "}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def unknown_tool(streaming: bool) -> HostError:
    """The refusal of a tool this worker does not serve, listing those it serves (the stream tools only
    while `streaming`), never the name it was sent."""
    return HostError("unknown tool; use one of " + ", ".join(served_tools(streaming)), code=ErrorCode.UNKNOWN_TOOL)


def _invalid(message: str) -> HostError:
    return HostError(message, code=ErrorCode.INVALID_ARGUMENTS)


def _check_keys(args: Mapping[str, Any], required: tuple[str, ...]) -> None:
    missing = [k for k in required if k not in args]
    if missing:
        raise _invalid(f"missing argument {missing[0]!r}")
    if len(args) != len(required):
        raise _invalid("unknown argument is not allowed")


def _patch_event(mutation: Any) -> Any:
    """A patch's mutation, refused unless it is an add, update or remove: core also applies the
    terminal events, which only the complete and cancel tools may make (seed 001: "允许的
    mutation 只有 add、update、remove"; no tool writes an `error` frame)."""
    if isinstance(mutation, dict) and not any(mutation.get("type") == kind for kind in MUTATION_TYPES):
        raise HostError("mutation rejected: not an add, update or remove", code=ErrorCode.INVALID_MUTATION,
                        issues=[Issue("/mutation/type", "a patch's mutation is an add, update or remove (end a "
                                      "stream with intelligent_ui_complete or intelligent_ui_cancel)")])
    return mutation  # any other shape is core's to refuse, with its own issues


def _parsable(document: dict[str, Any], measured: SafeJson | None) -> Any:
    """The checked `document` argument as the parse takes it: with the measure that the
    arguments' canonical walk proved, if it did (the arguments are exactly `{"document": D}`,
    so D is one level shallower and _DOCUMENT_ARGS_BYTES shorter), so it is not walked again."""
    if measured is None:
        return document
    return SafeJson(document, measured.size - _DOCUMENT_ARGS_BYTES, measured.depth - 1)


def _integer(args: Mapping[str, Any], name: str, low: int) -> int:
    value = json_integer(args[name], low)
    if value is None:
        raise _invalid(f"argument {name!r} must be an integer >= {low}")
    return value


def _spent(error: UIStreamError, seq: int, used: int) -> BudgetError | None:
    """Core's refusal for the generation's budget (issue code "budget") as the budget's own code.

    Core checks the frames and bytes a frame leaves (one maximal terminal frame kept) as it
    builds the frame, so it refuses before `_commit` measures; the frame cap is checked before
    core runs, so it is the bytes unless the protocol's 256 frames are what is spent."""
    if not any(issue.code == "budget" for issue in error.issues):
        return None
    if seq + 1 >= MAX_FRAMES:
        return BudgetError(f"frame budget exhausted ({seq} frames); only a terminal frame remains",
                           code=ErrorCode.FRAME_BUDGET)
    return BudgetError(f"byte budget exhausted ({used} bytes used); only a terminal frame remains",
                       code=ErrorCode.BYTE_BUDGET)


def _translate(error: UIError) -> HostError:
    if isinstance(error, UISchemaError):
        return HostError(f"document rejected: {error.message}", code=ErrorCode.INVALID_DOCUMENT, issues=error.issues)
    if isinstance(error, UIStreamError):
        return HostError(f"mutation rejected: {error.message}", code=ErrorCode.INVALID_MUTATION, issues=error.issues)
    return HostError(f"rejected: {error.message}", code=ErrorCode.INVALID_ARGUMENTS)


class ToolHandler:
    """Validates tool calls of one partition against its stored state."""

    def __init__(self, *, settings: Settings, keys: Keys, partition: int, store: Store) -> None:
        self._settings = settings
        self._keys = keys
        self._partition = partition
        self._store = store

    def decide(self, entry: InputEntry, args: dict[str, Any]) -> Decision:
        """Validate one tool call; raise `HostError` for any rejection."""
        if entry.name in STREAM_TOOLS and not self._settings.streaming_enabled:
            raise HostError(f"the stream tools are disabled on this host (IUI_STREAMING_ENABLED=false); use {PLAIN}",
                            code=ErrorCode.STREAMING_DISABLED)
        try:
            text, measured = canonical_json_measured(args)
        except UIError:
            raise _invalid("arguments are not canonical JSON") from None
        content = call_content(entry.name, text)
        digest = hashlib.sha256(entry.call.encode("utf-8")).hexdigest()[:32] + ":" + content
        try:
            if entry.name == PLAIN:
                return self._plain(entry, args, text, content, measured)
            if entry.name == OPEN:
                return self._open(entry, args, text, digest, measured)
            if entry.name in _ADVANCES:
                return self._advance(entry, args, digest)
        except UIError as error:
            raise _translate(error) from None
        raise unknown_tool(self._settings.streaming_enabled)

    def read_ahead(self, entries: Sequence[Mapping[str, str]]) -> None:
        """Read, in one round trip, the stored generations that the patch, complete and cancel
        calls among a batch's `entries` (decoded fields) will need, for the sessions the store
        holds nothing of: a cold batch would otherwise wait for one read per call.

        A hint: the entries are not validated here (their decisions check everything again), a
        malformed one is passed over, and the body of a session the store holds is never parsed.
        """
        calls = self._cold_calls(entries)
        if calls:
            self._store.read_ahead(calls)

    def prefetch(self, entries: Sequence[Mapping[str, str]], shared: SharedRoundTrip | None = None) -> None:
        """Send the reads `read_ahead` of the same entries will make (on `shared`, when given),
        without waiting for their replies (`Store.prefetch`)."""
        self._store.prefetch(self._cold_calls(entries), shared)

    def abandon_prefetch(self) -> None:
        """Give up the reads `prefetch` sent, if `read_ahead` did not read them."""
        self._store.abandon_prefetch()

    def _cold_calls(self, entries: Sequence[Mapping[str, str]]) -> list[tuple[str, str]]:
        return [call for call in map(self._advanced_source, entries) if call is not None]

    def _advanced_source(self, fields: Mapping[str, str]) -> tuple[str, str] | None:
        """(session, sourceCallId) of an advance of a session the store does not hold, or None."""
        session = fields.get("session", "")
        if fields.get("kind") != "tool" or fields.get("name") not in _ADVANCES or self._store.holds(session):
            return None
        body = fields.get("body", "")
        if not is_session_id(session) or len(body) > self._settings.max_document_bytes + BODY_MARGIN:
            return None
        try:
            args = loads(body)
        except ValueError:  # orjson.JSONDecodeError: the decision rejects it
            return None
        source = args.get("sourceCallId") if isinstance(args, dict) else None
        return (session, source) if isinstance(source, str) and is_call_id(source) else None

    # -- documents ------------------------------------------------------------------------

    def _document(self, args: Mapping[str, Any], text: str) -> dict[str, Any]:
        """The raw `document` argument, size-checked against the deployment's budget.

        `text` is the arguments' canonical JSON, which is exactly as long as `JSON.stringify`'s
        (RFC 8785 prints strings and numbers as it does), so no walk measures the document
        here; the parse checks everything else about it, a size beyond the protocol's included.
        """
        _check_keys(args, ("document",))
        document = args["document"]
        if not isinstance(document, dict):
            raise _invalid("argument 'document' must be a JSON object, not a JSON string or other value")
        size = len(text.encode("utf-8")) - _DOCUMENT_ARGS_BYTES
        if self._settings.max_document_bytes < size <= UI_LIMITS["maxDocumentBytes"]:
            raise BudgetError(f"document is {size} bytes; the limit is {self._settings.max_document_bytes}",
                              code=ErrorCode.DOCUMENT_TOO_LARGE)
        return document

    def _plain(self, entry: InputEntry, args: Mapping[str, Any], text: str, content: str,
               measured: SafeJson | None) -> Decision:
        """A plain UI is stored under its native call id (its `sourceCallId`), never overwritten."""
        stored = self._store.plain_entry(entry.session, entry.call)
        if stored is not None:
            if stored[0] != content:
                raise HostError("the call id already stored a plain document with other content",
                                code=ErrorCode.CALL_ID_REUSED)
            return Decision("resend", _plain_result(stored[1], stored[2]))
        if self._store.ui_of_source(entry.session, entry.call) is not None:
            raise HostError("the call id already opened a stream", code=ErrorCode.CALL_ID_REUSED)
        document = parse_document(_parsable(self._document(args, text), measured))
        if self._store.plain_count(entry.session) >= self._settings.max_plain_per_session:
            raise BudgetError(f"the session already holds {self._settings.max_plain_per_session} plain "
                              "documents; no new one can be stored", code=ErrorCode.PLAIN_CAPACITY)
        ui_id, body = str(document["id"]), dumps(document)
        fields = PlainFields(document_field=plain_field("doc", entry.call), document=body,
                             ui_field=plain_field("ui", entry.call), ui_id=ui_id,
                             digest_field=plain_field("sum", entry.call), digest=content)
        return Decision("plain", _plain_result(ui_id, body), plain=fields)

    # -- open -----------------------------------------------------------------------------

    def _open(self, entry: InputEntry, args: Mapping[str, Any], text: str, digest: str,
              measured: SafeJson | None) -> Decision:
        document = self._document(args, text)
        ui_id = document.get("id")
        # The ledger is consulted before validation so an identical resend costs no parse;
        # an id that is not an identifier cannot name a stored UI and fails validation below.
        facts = self._store.open_facts(entry.session, str(ui_id) if is_identifier(ui_id) else None, entry.call)
        current = facts.current
        resend = self._ledger(current, entry.call, digest)
        if resend is not None:
            return resend
        if facts.source_opened:
            raise HostError("the call id already opened a stream", code=ErrorCode.CALL_ID_REUSED)
        if facts.plain_stored:
            raise HostError("the call id already stored a plain document", code=ErrorCode.CALL_ID_REUSED)
        if facts.generations >= self._settings.max_generations_per_session:
            raise BudgetError(f"the session already holds {self._settings.max_generations_per_session} "
                              "generations; no new stream can be opened", code=ErrorCode.GENERATION_CAPACITY)
        number = (current.generation if current else 0) + 1
        if number > MAX_GENERATION:
            raise BudgetError("generation numbers are exhausted for this uiId", code=ErrorCode.GENERATION_CAPACITY)
        try:
            state = start_ui_stream(_parsable(document, measured), entry.call, number)
        except UIStreamError as error:
            raise HostError(f"document rejected: {error.message}", code=ErrorCode.INVALID_DOCUMENT,
                            issues=error.issues) from None
        return self._commit(entry, OPEN, state, current, digest, fresh=True)

    # -- patch / complete / cancel --------------------------------------------------------

    def _advance(self, entry: InputEntry, args: Mapping[str, Any], digest: str) -> Decision:
        _check_keys(args, _CURSOR_ARGS + (("mutation",) if entry.name == PATCH else ()))
        source = args["sourceCallId"]
        if not isinstance(source, str) or not is_call_id(source):
            raise HostError("argument 'sourceCallId' must be 1-256 printable ASCII characters: the sourceCallId "
                            "of the open receipt", code=ErrorCode.INVALID_SOURCE_CALL_ID)
        generation = _integer(args, "generation", 1)
        base = _integer(args, "baseRevision", 0)
        _, current = self._store.of_source(entry.session, source)
        if current is None:
            raise ConflictError("no stream was opened by that sourceCallId in this session",
                                code=ErrorCode.UNKNOWN_SOURCE)
        resend = self._ledger(current, entry.call, digest)
        if resend is not None:
            return resend
        if (source, generation, base) != (current.source, current.generation, current.revision):
            raise ConflictError(f"cursor conflict; the current cursor is {current.cursor()}")
        if current.status != "streaming":
            raise ConflictError(f"the stream is closed; the current cursor is {current.cursor()}",
                                code=ErrorCode.STREAM_CLOSED)
        event = _patch_event(args["mutation"]) if entry.name == PATCH else {"type": "complete" if entry.name == COMPLETE
                                                                                else "cancel"}
        terminal = entry.name != PATCH
        if current.seq + 1 > self._settings.max_frames_per_generation - (0 if terminal else 1):
            raise BudgetError(f"frame budget exhausted ({current.seq} frames); only a terminal frame remains",
                              code=ErrorCode.FRAME_BUDGET)
        try:
            state = advance_ui_stream(current.stream_state(), event)
        except UIStreamError as error:
            raise _spent(error, current.seq, current.bytes) or error from None
        return self._commit(entry, entry.name, state, current, digest, fresh=False)

    # -- shared ---------------------------------------------------------------------------

    def _ledger(self, current: Generation | None, call: str, digest: str) -> Decision | None:
        """The stored result of an identical adjacent resend, a rejection, or None (new call)."""
        if current is None:
            return None
        if current.last_call == call and current.last_digest == digest:
            return Decision("resend", current.last_result, record=current)
        if call_id_of(digest) in current.call_ids:
            raise HostError(f"the call id was already used in generation {current.generation} of this UI (its "
                            "latest) with other content or before a later call", code=ErrorCode.CALL_ID_REUSED)
        return None

    def _commit(self, entry: InputEntry, tool: str, state: UIStreamState, current: Generation | None,
                digest: str, *, fresh: bool) -> Decision:
        frame = state.checkpoint
        extended = None if fresh else current  # the generation this frame extends (an advance's current)
        # Sizes are core's, JSON.stringify's bytes, as a receiver counts them: orjson's text, which is
        # what is stored and sent, writes some numbers shorter (1e-6 for 0.000001).
        restore_facts = state.restore_facts  # (the snapshot's bytes, ...)
        if not fresh and restore_facts[0] > self._settings.max_document_bytes:
            raise BudgetError(f"the patched document would be {restore_facts[0]} bytes; the limit is "
                              f"{self._settings.max_document_bytes}", code=ErrorCode.DOCUMENT_TOO_LARGE)
        text = dumps(frame)
        used = extended.bytes if extended else 0
        reserve = 0 if state.status != "streaming" else self._settings.max_document_bytes + ENVELOPE_BYTES
        if state.byte_count + reserve > MAX_STREAM_BYTES:  # this generation's frames, this one included
            raise BudgetError(f"byte budget exhausted ({used} bytes used); only a terminal frame remains",
                              code=ErrorCode.BYTE_BUDGET)
        retired, retired_sum = _retired_record(state, extended)
        frames, facts = extended.frames + 1 if extended else 1, facts_text(restore_facts, retired_sum)
        sealed_snapshot = snapshot_digest(text)
        record = Generation(
            ui_id=str(frame["uiId"]), generation=int(frame["generation"]), source=str(frame["sourceCallId"]),
            seq=int(frame["seq"]), revision=int(frame["revision"]), status=str(state.status),
            frames=frames, bytes=state.byte_count, checkpoint=text,
            last_call=entry.call, last_digest=digest, last_receipt=receipt(tool, frame),
            call_ids=(extended.call_ids if extended else frozenset()) | {call_id_of(digest)},
            facts=facts,
            seal=self._store.seal.of(text, frames, state.byte_count, facts, snapshot_digest=sealed_snapshot),
            snapshot_digest=sealed_snapshot,
            state=state.without_history(),  # the host stores each frame; digests of earlier ones are never read
            retired=retired,
        )
        result = record.last_result
        return Decision("commit", result, plan=self._plan(entry, record, current, fresh, result), record=record,
                        opened=fresh, frame_type=str(frame["type"]))

    def _plan(self, entry: InputEntry, record: Generation, current: Generation | None, fresh: bool,
              result: str) -> CommitPlan:
        k, p, s = self._keys, self._partition, entry.session
        previous = current.generation if current else 0
        return CommitPlan(
            session_keys=k.session_keys(p, s), other_keys=k.other_sliding_keys(p, s),
            reply_key=k.reply(p, s, entry.request),
            expected_seq=0 if fresh else record.seq - 1,
            expected_generation=previous, new_generation=record.generation,
            frame=record.checkpoint,
            reply='{"ok":true,"request":' + dumps(entry.request) + ',"result":' + result + "}",
            channel=k.channel(p, s), ui_field=ui_field(record.ui_id),
            field_prefix=generation_field(record.ui_id, record.generation, ""),
            session_field=source_field(record.source) if fresh else "", session_value=record.ui_id if fresh else "",
            generations_increment=1 if fresh else 0,
            fields=[("seq", record.seq), ("revision", record.revision),
                    ("status", record.status), ("frames", record.frames), ("bytes", record.bytes),
                    ("source", record.source), ("uiId", record.ui_id), ("generation", record.generation),
                    ("last_call", record.last_call), ("last_digest", record.last_digest),
                    ("last_receipt", record.last_receipt), ("facts", record.facts), ("seal", record.seal),
                    ("snapshot_digest", record.snapshot_digest),
                    (ENVELOPE_NAME, record.checkpoint[:snapshot_split(record.checkpoint)]),
                    (ledger_name(record.seq), record.last_digest),
                    # written by the commits that change it only (a remove, an add of a removed id)
                    *([("retired", record.retired)] if current and not fresh and record.retired != current.retired
                      else [])],
        )


def _retired_record(state: UIStreamState, extended: Generation | None) -> tuple[str, str]:
    """The stored JSON of `state`'s retired types and its digest: the extended record's when they
    are the very object it stored (no add or remove since: nothing to serialize, hash or write),
    else made anew; ("", "") while the generation removed nothing."""
    retired = state.retired_types
    if not retired:
        return "", ""
    kept = extended.state if extended is not None else None  # the state the extended record stored
    if extended is not None and extended.retired and kept is not None and kept.retired_types is retired:
        return extended.retired, facts_digest(extended.facts)
    text = dumps(retired)
    return text, retired_digest(text)
