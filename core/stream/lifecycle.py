"""The component stream protocol (seed 000 section 12) as pure functions over frames.

`start_ui_stream` opens a generation with its snapshot frame, `advance_ui_stream` applies
one add / update / remove or a terminal event (the producer), and `accept_checkpoint`
takes in frames however they were delivered (the receiver).  Each returns an immutable
`UIStreamState`; a rejected event or frame raises `UIStreamError` and leaves the state
it was given untouched.

Budgets.  A generation holds at most 256 frames and 16 MiB of frames, and a stream in
progress always keeps room for one terminal frame: a non-terminal frame may take seq
255 at most, and only while `bytes so far + its bytes + 266,240` (one maximal frame,
the same figure for producer and receiver) stays within 16 MiB.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import FrozenInstanceError
from typing import Any, Final

from core._identifier import is_identifier
from core._rules import ascii_token, integer
from core.document._components import COMPONENTS
from core.document._revalidation import DocumentCache, RestoredDocument, restore_document
from core.document.model import DocumentModel, ParsedDocument
from core.errors import Issue, UISchemaError, UIStreamError
from core.json._frozen import EMPTY_DICT, FrozenDict
from core.json.canonical import hash_canonical_json
from core.json.safe import NON_STRING_KEY, count_safe_json
from core.limits import MAX_GENERATION, SOURCE_CALL_ID_LENGTH, UI_PROTOCOL_LIMITS
from core.stream._checkpoint import (
    FRAME_BYTES,
    MAX_SEQ,
    TERMINAL_TYPES,
    build_checkpoint,
    checkpoint_of,
    envelope_issues,
    frame_bytes,
    parse_checkpoint,
)
from core.stream._continuity import DigestLog, frozen_rule_issues, retired_between, share_unchanged
from core.stream._mutation import (
    NodeIndex,
    build_index,
    domain_change,
    next_index,
    plan,
    read_event,
    retired_after,
    seen_types,
)
from core.stream._receiver import HeldBytes, successor_document, successor_envelope

MAX_FRAMES = UI_PROTOCOL_LIMITS["maxStreamFrames"]
MAX_STREAM_BYTES = UI_PROTOCOL_LIMITS["maxStreamBytes"]
TERMINAL_RESERVE_BYTES = FRAME_BYTES
STATUSES = ("streaming", *TERMINAL_TYPES)


class _Lineage:
    """The memo of one document: its validation cache, facts and (built on need) node index.

    `types` is every node id seen in the generation with its component type (an id keeps
    its type for the whole generation, so a receiver that skips frames agrees).  A state
    taken in by `accept_checkpoint` starts it from its own snapshot on the first advance,
    or carries its predecessor's cache forward when the frame was checked incrementally.
    The memo takes no part in equality; states of one generation share the cache object.
    """

    __slots__ = ("_index", "_root", "cache", "held_bytes", "info", "retired", "types")

    def __init__(self, cache: DocumentCache, info: DocumentModel, index: NodeIndex | None,
                 types: Mapping[str, str], root: Mapping[str, Any] | None = None,
                 held_bytes: HeldBytes | None = None, retired: FrozenDict = EMPTY_DICT) -> None:
        self.cache, self.info, self.types = cache, info, types
        self._index, self._root = index, root
        self.held_bytes = HeldBytes() if held_bytes is None else held_bytes
        self.retired = retired  # the removed ids of `types` (a producer's: `UIStreamState.retired_types`)

    @classmethod
    def of(cls, document: ParsedDocument) -> _Lineage:
        cache = DocumentCache(document)
        return cls(cache, cache.info, None, cache.info.node_types, document["root"])

    @property
    def index(self) -> NodeIndex:
        """The parent and position of every node (one walk, on the first patch that needs it)."""
        if self._index is None:
            assert self._root is not None, "a lineage without an index knows its root"
            self._index = build_index(self._root)
        return self._index


# Frames a receiver's incremental path keeps unhashed (the full path hashes each at once): their
# digests are asked for only by a repeated seq or a reader of `digests`, and each unhashed frame
# keeps what it changed alive.
RECEIVER_PENDING = 16

_STATE_FIELDS = ("checkpoint", "status", "frame_count", "byte_count", "_log", "_memo", "_built")


class UIStreamState:
    """One generation's current frame, its status and the bounded bookkeeping.

    `checkpoint` is the current frame (exactly the envelope fields, the snapshot
    included), `status` is "streaming", "complete", "cancel" or "error", `frame_count`
    and `byte_count` are the frames and JSON bytes taken into this state so far, and
    `digests` maps each of those frames' seq to its SHA-256 canonical-JSON digest.

    Immutable as a frozen dataclass is (an assignment or a deletion raises
    `dataclasses.FrozenInstanceError`), but a plain class: every call builds one or two, and a
    frozen dataclass's generated `__init__` stays interpreted in the compiled core, setting each
    field through `object.__setattr__` (~1.2 µs against ~0.1 µs, docs/decisions.md).  The compiled
    `__init__` sets its slots natively; the pure one passes `__setattr__` until `_built`.
    """

    __slots__ = _STATE_FIELDS

    def __init__(self, checkpoint: FrozenDict, status: str, frame_count: int, byte_count: int, _log: DigestLog,
                 _memo: _Lineage | None) -> None:
        object.__setattr__(self, "_built", False)  # read by the pure build's `__setattr__` below
        self.checkpoint: Final = checkpoint
        self.status: Final = status
        self.frame_count: Final = frame_count
        self.byte_count: Final = byte_count
        self._log: Final = _log
        self._memo = _memo  # the producer's cache; built on the first advance when missing (`_lineage`)
        self._built = True

    def __setattr__(self, name: str, value: object) -> None:
        if self._built or name not in _STATE_FIELDS:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __copy__(self) -> UIStreamState:
        return self  # immutable, as FrozenDict's copies

    def __deepcopy__(self, memo: dict[int, Any]) -> UIStreamState:
        return self

    def __reduce_ex__(self, protocol: object) -> Any:
        # Its memo is caches of live objects, and its checkpoint only means something validated:
        # a state travels as its checkpoint and counters (it failed with "no attribute '_built'").
        raise TypeError("a UIStreamState cannot be pickled: store its checkpoint, frame_count, byte_count and "
                        "retired_types, and rebuild it with resume_ui_stream")

    @property
    def document(self) -> ParsedDocument:
        """The current snapshot (a validated, deep-immutable document)."""
        snapshot: ParsedDocument = self.checkpoint["snapshot"]
        return snapshot

    @property
    def generation(self) -> int:
        return self._number("generation")

    @property
    def seq(self) -> int:
        return self._number("seq")

    @property
    def revision(self) -> int:
        return self._number("revision")

    @property
    def source_call_id(self) -> str:
        return self._text("sourceCallId")

    @property
    def ui_id(self) -> str:
        return self._text("uiId")

    @property
    def digests(self) -> Mapping[int, str]:
        """seq -> SHA-256 hex of the canonical JSON of each frame taken in (at most 256)."""
        return self._log.table()

    def without_history(self) -> UIStreamState:
        """This state as `resume_ui_stream` of its checkpoint would give it, without a parse:
        the same checkpoint, status, counters and document cache, but `digests` hold only the
        current frame's.  A producer hashes its frames only when `digests` is read, so until
        then its state keeps every earlier frame alive (~2 KiB per patch of a small document,
        ~8 KiB of a 200-component one); a host that stores each checkpoint and never reads the
        digests of earlier frames keeps this instead."""
        if self._log.previous is None:
            return self
        log = DigestLog(None, self.seq, self.checkpoint)
        return UIStreamState(self.checkpoint, self.status, self.frame_count, self.byte_count, log, self._memo)

    @property
    def restore_facts(self) -> tuple[int, int, int]:
        """(JSON bytes, JSON depth bound, expression nodes) of the current snapshot: what
        `restore_ui_stream` needs, beside the checkpoint and the counters, to rebuild this state
        without validating the snapshot's tree again (a host stores them with the checkpoint)."""
        lineage = self._lineage()
        facts = lineage.cache.restore_facts(self.document)
        if facts is None:  # the cache of an earlier document (a receiver's memo): walk this one
            facts = DocumentCache(self.document).restore_facts(self.document)
            assert facts is not None, "a walked document's cache holds its root's facts"
        return facts

    @property
    def retired_types(self) -> Mapping[str, str]:
        """id -> component type of each node this producer's generation saw that its current
        snapshot no longer holds (removed by a patch): an add may re-use such an id only with
        that type, and no frame says so.  A host that stores the checkpoint stores these beside
        it and gives them back (`resume_ui_stream`, `restore_ui_stream`, `restore_envelope`),
        so a resumed producer refuses what the live one refuses.  Empty until a remove.

        Kept as the events come (O(1) to ask) and immutable: the very object while no add or
        remove changes it, so a host may store it again only when it is another object."""
        return self._retired()

    def _retired(self) -> FrozenDict:
        memo = self._memo
        return EMPTY_DICT if memo is None else memo.retired

    def _number(self, key: str) -> int:
        value: int = self.checkpoint[key]  # a validated envelope field
        return value

    def _text(self, key: str) -> str:
        value: str = self.checkpoint[key]  # a validated envelope field
        return value

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, UIStreamState):
            return NotImplemented
        return (
            self.status == other.status
            and self.frame_count == other.frame_count
            and self.byte_count == other.byte_count
            and self.checkpoint == other.checkpoint
            and self.digests == other.digests
        )

    __hash__ = None  # type: ignore[assignment]  # unhashable, as its mutable-looking peers: typeshed wants a method

    def __repr__(self) -> str:
        return (
            f"UIStreamState(uiId={self.ui_id!r}, generation={self.generation}, seq={self.seq}, "
            f"revision={self.revision}, type={self.checkpoint['type']!r}, status={self.status!r}, "
            f"frame_count={self.frame_count}, byte_count={self.byte_count})"
        )

    def _lineage(self) -> _Lineage:
        memo = self._memo
        if memo is None:
            memo = _Lineage.of(self.document)
            object.__setattr__(self, "_memo", memo)  # a memo on an immutable state, outside equality
        return memo


def _check_budget(kind: str, seq: int, frame_count: int, byte_count: int) -> None:
    """Frames and bytes after this frame, keeping room for one maximal terminal frame."""
    if kind in TERMINAL_TYPES:
        over = frame_count > MAX_FRAMES or byte_count > MAX_STREAM_BYTES
    else:
        over = (
            seq >= MAX_SEQ
            or frame_count >= MAX_FRAMES
            or byte_count + TERMINAL_RESERVE_BYTES > MAX_STREAM_BYTES
        )
    if over:
        raise UIStreamError(
            [Issue("", "the generation's frame or byte budget is spent; only a terminal event fits", "budget")]
        )


def _state(checkpoint: FrozenDict, previous: UIStreamState | None, size: int, log: DigestLog,
           lineage: _Lineage | None) -> UIStreamState:
    frame_count = 1 + (previous.frame_count if previous else 0)
    byte_count = size + (previous.byte_count if previous else 0)
    _check_budget(checkpoint["type"], checkpoint["seq"], frame_count, byte_count)
    kind = checkpoint["type"]
    status = kind if kind in TERMINAL_TYPES else "streaming"
    return UIStreamState(checkpoint, status, frame_count, byte_count, log, lineage)


def start_ui_stream(doc: Any, source_call_id: Any, generation: Any) -> UIStreamState:
    """The initial snapshot frame of a generation: seq 1, revision 0, baseRevision null."""
    issues = [issue.prefixed("/sourceCallId") for issue in ascii_token(SOURCE_CALL_ID_LENGTH)(source_call_id)]
    issues += [issue.prefixed("/generation") for issue in integer(1, MAX_GENERATION)(generation)]
    if issues:
        raise UIStreamError(issues)
    try:
        cache = DocumentCache.parsed(doc)  # one walk: the parse keeps its facts for the patches
    except UISchemaError as error:
        raise UIStreamError(error.issues) from None
    document = cache.document
    lineage = _Lineage(cache, cache.info, None, cache.info.node_types, document["root"])
    checkpoint = build_checkpoint(
        source_call_id=source_call_id, generation=int(generation), seq=1,
        base_revision=None, revision=0, kind="snapshot", snapshot=document,
    )  # fmt: skip
    size = frame_bytes(checkpoint, lineage.info.byte_size)
    if size > FRAME_BYTES:
        raise UIStreamError([Issue("", f"the frame would be {size} bytes; the limit is {FRAME_BYTES}", "too_large")])
    return _state(checkpoint, None, size, DigestLog(None, 1, checkpoint), lineage)


def advance_ui_stream(current: Any, event: Any) -> UIStreamState:
    """Apply one add / update / remove or a terminal event; on any error keep `current`."""
    if type(current) is not UIStreamState:  # exact: `isinstance` may call a foreign `__class__`
        raise UIStreamError([Issue("", "current must be a UIStreamState", "type")])
    if current.status != "streaming":
        raise UIStreamError([Issue("", f"the generation has ended ({current.status}); nothing more applies", "ended")])
    kind = read_event(event)
    seq = current.seq + 1
    if kind in TERMINAL_TYPES:
        return _finish(current, kind, event.get("message"))
    _check_budget(kind, seq, current.frame_count + 1, current.byte_count)
    lineage = current._lineage()
    candidate = plan(current.document, lineage.index, lineage.info.node_types, event)
    try:
        document, info = lineage.cache.revalidate(candidate.root, current.document)
    except UISchemaError as error:
        raise UIStreamError(error.issues) from None
    if info.select_domains != lineage.info.select_domains:
        raise UIStreamError([domain_change(candidate, lineage.info.select_domains, info.select_domains)])
    types = seen_types(candidate, lineage.types)
    checkpoint = build_checkpoint(
        source_call_id=current.source_call_id, generation=current.generation, seq=seq,
        base_revision=current.revision, revision=current.revision + 1, kind=kind, snapshot=document,
    )  # fmt: skip
    size = frame_bytes(checkpoint, info.byte_size)
    successor = _Lineage(lineage.cache, info, next_index(lineage.index, candidate, document["root"]), types,
                         retired=retired_after(candidate, lineage.retired))
    return _state(checkpoint, current, size, DigestLog(current._log, seq, checkpoint), successor)


def _finish(current: UIStreamState, kind: str, message: str | None) -> UIStreamState:
    """A terminal frame: seq + 1, the revision and the last valid snapshot kept."""
    checkpoint = build_checkpoint(
        source_call_id=current.source_call_id, generation=current.generation, seq=current.seq + 1,
        base_revision=current.revision, revision=current.revision, kind=kind,
        snapshot=current.document, message=message,
    )  # fmt: skip
    lineage = current._lineage()
    size = frame_bytes(checkpoint, lineage.info.byte_size)
    return _state(checkpoint, current, size, DigestLog(current._log, checkpoint["seq"], checkpoint), lineage)


def accept_checkpoint(current: Any, frame: Any) -> UIStreamState:
    """Take in one delivered frame (repeated, stale, out of order or after a gap)."""
    if current is not None and type(current) is not UIStreamState:
        raise UIStreamError([Issue("", "current must be a UIStreamState or None", "type")])
    if current is not None and current.status == "streaming":
        successor = _accept_incrementally(current, frame)
        if successor is not None:
            return successor
    return _accept_fully(current, frame)


def _accept_incrementally(current: UIStreamState, frame: Any) -> UIStreamState | None:
    """The next frame of a stream, checked in proportion to its change; None when undecided.

    Decides only frames the full check accepts, with the same resulting state; everything
    else (rejections included) is left to `_accept_fully`.
    """
    envelope = successor_envelope(frame, current.checkpoint)
    if envelope is None:
        return None
    lineage = current._lineage()
    same_revision = envelope["revision"] == current.revision
    checked = successor_document(frame["snapshot"], current.document, lineage.cache, lineage.held_bytes,
                                 same_revision=same_revision, retired=lineage.retired)
    if checked is None:
        return None
    document, info = checked
    retired = retired_between(lineage.retired, current.document.model.node_types, info.node_types)
    checkpoint = FrozenDict({key: document if key == "snapshot" else value for key, value in envelope.items()})
    size = frame_bytes(checkpoint, info.byte_size)
    if size > FRAME_BYTES:
        return None
    types = {**info.node_types, **retired} if retired else info.node_types
    successor = _Lineage(lineage.cache, info, None, types, document["root"], lineage.held_bytes, retired)
    try:
        log = DigestLog(current._log, envelope["seq"], checkpoint, pending=RECEIVER_PENDING)
        return _state(checkpoint, current, size, log, successor)
    except UIStreamError:
        return None  # over the generation's budget: the full check reports it


def _accept_fully(current: UIStreamState | None, frame: Any) -> UIStreamState:
    """Every check on the whole frame: the reference the incremental path agrees with."""
    checkpoint, size, cache = parse_checkpoint(frame)
    if current is None:
        return _first(checkpoint, size, cache)
    if checkpoint["sourceCallId"] != current.source_call_id:
        raise UIStreamError([Issue("/sourceCallId", "the frame belongs to another source call", "binding")])
    if checkpoint["uiId"] != current.ui_id:
        raise UIStreamError([Issue("/uiId", "the frame belongs to another UI", "binding")])
    if checkpoint["generation"] != current.generation:
        # A newer generation replaces the view; an older one never overwrites it.
        return _first(checkpoint, size, cache) if checkpoint["generation"] > current.generation else current
    seq = checkpoint["seq"]
    seen = current.digests.get(seq)
    if seen is not None:
        if seen != hash_canonical_json(checkpoint):
            raise UIStreamError([Issue("/seq", "a different frame with this seq was already accepted", "conflict")])
        return current
    if seq < current.seq:
        return current  # stale: never overwrites the newer view
    _check_successor(current, checkpoint)
    retired = retired_between(current._retired(), current.document.model.node_types,
                               checkpoint["snapshot"].model.node_types)
    checkpoint = FrozenDict({**checkpoint, "snapshot": share_unchanged(current.document, checkpoint["snapshot"])})
    state = _state(checkpoint, current, size, DigestLog(current._log, seq, checkpoint, eager=True), None)
    return _with_retired(state, retired)  # the ids a later frame may bring back only as what they were


def resume_ui_stream(frame: Any, *, frame_count: Any, byte_count: Any, retired_types: Any = None) -> UIStreamState:
    """A producer's state rebuilt from a stored frame and its stored budget counters.

    A host that keeps the current checkpoint (and how many frames and bytes its
    generation has used) resumes with the same budgets a live producer would apply;
    with the state's `retired_types` beside them, it also refuses the same re-used ids.
    """
    checkpoint, size, cache = parse_checkpoint(frame)
    # A producer hashes a frame only when asked (`digests`): the receiver's eager hash of a
    # 200-component checkpoint would be a tenth of a cold session's first call.
    state = _with_counters(_first(checkpoint, size, cache, eager=False), frame_count, byte_count)
    return _with_retired(state, retired_types)


def restore_ui_stream(frame: Any, *, frame_count: Any, byte_count: Any, facts: Any,
                      retired_types: Any = None) -> UIStreamState:
    """A producer's state rebuilt from a checkpoint this library produced, without validating its
    snapshot's component tree again (core/document/_restored.py).

    Only for a frame its caller can prove it stored unchanged, with the `restore_facts` of the
    state it came from (a host's own record under its MAC, say): the envelope, the budgets and
    the snapshot's header are checked, the tree only for its shape, and each node's facts are
    found when a patch first needs them.  Of anything else, `resume_ui_stream` checks everything.
    """
    if type(frame) is not dict and type(frame) is not FrozenDict:
        raise UIStreamError([Issue("", "a checkpoint must be an object", "type")])
    issues = _restorable_envelope(frame)
    if issues:
        raise UIStreamError(issues)
    snapshot = restore_snapshot(frame["snapshot"], facts=facts)
    return _with_retired(_restored_state(frame, snapshot._restored, frame_count, byte_count), retired_types)


class RestoredSnapshot:
    """A stored snapshot taken back once (`restore_snapshot`), for any number of states.

    Immutable: each state restored around it (`restore_envelope`) starts its own validation
    memo, and its patches replace, never change, what it shares.  A host that restores many
    sessions holding the same stored snapshot (one app's form, opened by each of its users)
    may keep one per stored snapshot and restore each session's envelope around it."""

    __slots__ = ("_restored",)

    def __init__(self, restored: Any) -> None:  # `Any`: a compiled build would raise TypeError first
        if type(restored) is not RestoredDocument:  # only `restore_snapshot` makes one
            raise UIStreamError([Issue("/snapshot", "a RestoredSnapshot comes from restore_snapshot", "type")])
        self._restored: Final[RestoredDocument] = restored

    @property
    def document(self) -> ParsedDocument:
        """The restored snapshot (a deep-immutable document)."""
        return self._restored.document


def restore_snapshot(value: Any, *, facts: Any) -> RestoredSnapshot:
    """The snapshot of a checkpoint this library produced, from its decoded JSON and the
    `restore_facts` of the state it came from, under `restore_ui_stream`'s terms: its header
    checked, its tree walked for its shape only.  Raises `UIStreamError` (paths under
    `/snapshot`; `/facts` for facts that are not three integers)."""
    if not (type(facts) is tuple and len(facts) == 3 and all(type(fact) is int for fact in facts)):
        raise UIStreamError([Issue("/facts", "facts must be the state's restore_facts: three integers", "type")])
    if type(value) is not dict and type(value) is not FrozenDict:  # as the envelope's check says it
        raise UIStreamError([Issue("/snapshot", "expected an object", "type")])
    try:
        restored = restore_document(value, byte_size=facts[0], json_depth=facts[1], expression_nodes=facts[2])
    except UISchemaError as error:
        raise UIStreamError([issue.prefixed("/snapshot") for issue in error.issues]) from None
    return RestoredSnapshot(restored)


def restore_envelope(envelope: Any, snapshot: Any, *, frame_count: Any, byte_count: Any,
                     retired_types: Any = None) -> UIStreamState:
    """`restore_ui_stream` of a stored frame given as its envelope (every field but `snapshot`)
    and its snapshot restored before (`restore_snapshot`, of the same stored snapshot and facts):
    the envelope and the budgets are checked as `restore_ui_stream` checks them."""
    if type(envelope) is not dict and type(envelope) is not FrozenDict:
        raise UIStreamError([Issue("", "an envelope must be an object", "type")])
    if any(type(key) is not str for key in envelope):  # by exact type, before any key is hashed or compared
        raise UIStreamError([Issue("", NON_STRING_KEY, "unsafe_json")])
    if "snapshot" in envelope:
        raise UIStreamError([Issue("/snapshot", "an envelope holds no snapshot: it is restored apart", "restore")])
    if type(snapshot) is not RestoredSnapshot:
        raise UIStreamError([Issue("/snapshot", "snapshot must be a RestoredSnapshot", "type")])
    frame = {**envelope, "snapshot": snapshot.document}
    issues = _restorable_envelope(frame)
    if issues:
        raise UIStreamError(issues)
    return _with_retired(_restored_state(frame, snapshot._restored, frame_count, byte_count), retired_types)


def _restored_state(frame: Mapping[str, Any], restored: RestoredDocument, frame_count: Any,
                    byte_count: Any) -> UIStreamState:
    """The state of a frame whose envelope passed, around its restored snapshot (a new memo)."""
    cache = DocumentCache.of_restored(restored)
    document = cache.document
    checkpoint = checkpoint_of(frame, document)
    size = frame_bytes(checkpoint, cache.info.byte_size)
    if size > FRAME_BYTES:
        raise UIStreamError([Issue("", f"the frame is {size} bytes; the limit is {FRAME_BYTES}", "too_large")])
    lineage = _Lineage(cache, cache.info, restored.tree.index, cache.info.node_types, document["root"])
    state = _state(checkpoint, None, size, DigestLog(None, checkpoint["seq"], checkpoint), lineage)
    return _with_counters(state, frame_count, byte_count)


def _restorable_envelope(frame: Any) -> list[Issue]:
    """The envelope's problems, its values first held to safe JSON (the snapshot is the restore's).

    `Any`, not `Mapping[str, Any]`: compiled, a loop over the keys of the latter checks each is a
    `str` first, and a non-text key raised a bare TypeError before this check could say `unsafe_json`."""
    if any(type(key) is not str for key in frame):  # by exact type, before any key is hashed or compared
        return [Issue("", NON_STRING_KEY, "unsafe_json")]
    try:
        count_safe_json({key: None if key == "snapshot" else value for key, value in frame.items()})
    except UISchemaError as error:
        return error.issues
    return envelope_issues(frame)


def _with_counters(state: UIStreamState, frame_count: Any, byte_count: Any) -> UIStreamState:
    """`state` with a stored generation's budget counters (checked as the budgets bound them)."""
    issues = [issue.prefixed("/frame_count") for issue in integer(1, MAX_FRAMES)(frame_count)]
    issues += [issue.prefixed("/byte_count") for issue in integer(0, MAX_STREAM_BYTES)(byte_count)]
    if issues:
        raise UIStreamError(issues)
    return UIStreamState(state.checkpoint, state.status, int(frame_count), int(byte_count), state._log, state._memo)


def _with_retired(state: UIStreamState, retired: Any) -> UIStreamState:
    """`state` with the types of the ids its generation removed (`UIStreamState.retired_types`
    as a host stored them): a later add may re-use such an id only with its type, as the live
    producer rules.  None or empty: the stored frame is all the generation saw."""
    if retired is None:
        return state
    if type(retired) is not dict and type(retired) is not FrozenDict:
        raise UIStreamError([Issue("/retired_types", "retired_types must be an object of node ids and types", "type")])
    if not retired:
        return state
    current = state.document.model.node_types
    for key, kind in retired.items():
        if type(key) is not str or type(kind) is not str or kind not in COMPONENTS:  # by exact type, first
            raise UIStreamError([Issue("/retired_types", "each retired id must name a component type", "type")])
        if not is_identifier(key):  # a node id was one (seed 000 section 5)
            raise UIStreamError([Issue("/retired_types", "a retired id is not an identifier", "format")])
        if key in current:
            raise UIStreamError([Issue("/retired_types", "a retired id is a node of the snapshot", "restore")])
    memo = state._lineage()
    lineage = _Lineage(memo.cache, memo.info, memo._index, {**memo.types, **retired}, memo._root, memo.held_bytes,
                       FrozenDict(retired))
    return UIStreamState(state.checkpoint, state.status, state.frame_count, state.byte_count, state._log, lineage)


def _first(checkpoint: FrozenDict, size: int, cache: DocumentCache, *, eager: bool = True) -> UIStreamState:
    """The first visible frame of a generation: any seq and revision (partial history).

    The snapshot's parse left its document cache, so the frames that follow (and a producer
    resumed from this frame) need no second walk of the tree.
    """
    document = cache.document
    lineage = _Lineage(cache, cache.info, None, cache.info.node_types, document["root"])
    return _state(checkpoint, None, size, DigestLog(None, checkpoint["seq"], checkpoint, eager=eager), lineage)


def _check_successor(current: UIStreamState, checkpoint: FrozenDict) -> None:
    """A newer frame of the same generation: ordering, continuity and the freeze rules."""
    if current.status != "streaming":
        raise UIStreamError([Issue("/seq", f"the generation has ended ({current.status})", "ended")])
    kind = checkpoint["type"]
    if kind == "snapshot":
        raise UIStreamError([Issue("/type", "a snapshot frame only opens a generation", "sequence")])
    if checkpoint["seq"] == current.seq + 1 and checkpoint["baseRevision"] != current.revision:
        raise UIStreamError([Issue("/baseRevision", "baseRevision must be the revision of the previous frame",
                                   "sequence")])
    if checkpoint["revision"] < current.revision:
        raise UIStreamError([Issue("/revision", "the structure revision cannot go backwards", "sequence")])
    issues = frozen_rule_issues(current.document, checkpoint["snapshot"], checkpoint["revision"] == current.revision,
                                current.retired_types)
    if issues:
        raise UIStreamError(issues)
