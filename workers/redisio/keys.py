"""Every Redis key name of the runtime, built from the configured prefix in one place.

All keys of partition N carry the hash tag `{p<N>}` (the prefix stays outside the braces),
so one Lua script may touch all of them, also on Redis Cluster.  Session ids and request ids
that enter key names are validated by `workers.entry` first (no `:`, `{`, `}` or spaces in a
session id), so two different (session, request) pairs never build the same key.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

PROTOCOL = 1
GROUP = "workers"
CONSUMER = "owner"  # the one consumer name of every partition's group: the consumer is the
# partition's current owner, not a process, and one XREADGROUP names one consumer for all streams


def partition_of(session: str, partitions: int) -> int:
    """The partition of a session: zlib.crc32 of its UTF-8 bytes modulo P."""
    return zlib.crc32(session.encode("utf-8")) % partitions


@dataclass(frozen=True, slots=True)
class Keys:
    """Key names under one prefix."""

    prefix: str

    @property
    def meta(self) -> str:
        """Hash `partitions`, `protocol`: set once with HSETNX, checked by every process."""
        return f"{self.prefix}:meta"

    @property
    def workers(self) -> str:
        """Sorted set of live worker ids scored by heartbeat expiry (ms, Redis clock)."""
        return f"{self.prefix}:workers"

    def tag(self, partition: int) -> str:
        """The key stem of a partition, ending with its hash tag."""
        return f"{self.prefix}:{{p{partition}}}"

    def input(self, partition: int) -> str:
        """Input stream of a partition."""
        return f"{self.tag(partition)}:in"

    def dead(self, partition: int) -> str:
        """Dead-letter stream of a partition."""
        return f"{self.tag(partition)}:dead"

    def dead_bytes(self, partition: int) -> str:
        """Counter of the bytes the dead-letter stream of a partition holds."""
        return f"{self.tag(partition)}:dead:bytes"

    def lease(self, partition: int) -> str:
        """Lease hash (`owner`, `epoch`) with a PX expiry."""
        return f"{self.tag(partition)}:lease"

    def epoch(self, partition: int) -> str:
        """Fencing counter of a partition; INCR on every acquisition, never expires."""
        return f"{self.tag(partition)}:epoch"

    def reply(self, partition: int, session: str, request: str) -> str:
        """List holding the one reply to a request."""
        return f"{self.tag(partition)}:reply:{session}:{request}"

    def channel(self, partition: int, session: str) -> str:
        """Pub/sub channel of the accepted frames of a session."""
        return f"{self.tag(partition)}:frames:{session}"

    def channel_pattern(self) -> str:
        """PSUBSCRIBE pattern matching the frame channels of every session (a bench subscriber)."""
        return f"{self.prefix}:{{p*}}:frames:*"

    def session(self, partition: int, session: str) -> str:
        """Session hash: `generations` count, `src:<sourceCallId>` -> uiId, `ui:<uiId>` -> latest
        generation, `log_bytes` (bytes of the frame log), `owner` ("<principal> <project>")."""
        return f"{self.tag(partition)}:s:{session}"

    def frame_log(self, partition: int, session: str) -> str:
        """Stream of the session's accepted frames (field `frame`), for catch-up."""
        return f"{self.tag(partition)}:s:{session}:log"

    def generations(self, partition: int, session: str) -> str:
        """Hash of every generation of the session: fields `<uiId>:<generation>:<name>`."""
        return f"{self.tag(partition)}:s:{session}:gen"

    def plain(self, partition: int, session: str) -> str:
        """Hash of the session's plain documents by native call id: `doc:`, `ui:`, `sum:<call>`."""
        return f"{self.tag(partition)}:s:{session}:plain"

    def session_keys(self, partition: int, session: str) -> tuple[str, str, str, str]:
        """Every key of a session (they share one sliding expiry): session, generations, frame log, plain."""
        return (self.session(partition, session), self.generations(partition, session),
                self.frame_log(partition, session), self.plain(partition, session))

    # -- the action runtime ---------------------------------------------------------------

    def operations(self, partition: int, session: str) -> str:
        """Hash of the session's operations: receipt fields per operation, the requestId index,
        the ledger of each document ref and the operation count (see `workers.receipts`)."""
        return f"{self.tag(partition)}:s:{session}:ops"

    def receipt_log(self, partition: int, session: str) -> str:
        """Stream of the session's receipt changes (field `receipt`), for catch-up."""
        return f"{self.tag(partition)}:s:{session}:receipts"

    def receipt_channel(self, partition: int, session: str) -> str:
        """Pub/sub channel of the session's receipt changes."""
        return f"{self.tag(partition)}:receipts:{session}"

    def agent_inbox(self, partition: int, session: str) -> str:
        """Stream of the session's agent follow-up inputs (`operationId`, `actionId`, `documentRef`, `prompt`)."""
        return f"{self.tag(partition)}:s:{session}:inbox"

    def active_operations(self, partition: int) -> str:
        """Sorted set of the partition's `queued` and `running` operations (`<session> <op>`), for the reaper."""
        return f"{self.tag(partition)}:ops:active"

    def approvals(self, partition: int) -> str:
        """Sorted set of the partition's `awaiting_confirmation` operations (`<session> <op>`), scored
        by when their approval expires (Unix ms), for the reaper."""
        return f"{self.tag(partition)}:ops:approvals"

    def heartbeat(self, partition: int, session: str, operation: str) -> str:
        """String kept alive (PX) by the job of a running operation."""
        return f"{self.tag(partition)}:hb:{session}:{operation}"

    def action_keys(self, partition: int, session: str) -> tuple[str, str, str]:
        """The session's action keys (operations, receipt log, agent inbox); they slide with the session."""
        return (self.operations(partition, session), self.receipt_log(partition, session),
                self.agent_inbox(partition, session))

    # -- answer-ui@1 and answer-view-state@1 (seed 004) ------------------------------------

    def answers(self, partition: int, session: str) -> str:
        """Hash of the session's answer turns: blocks, final answers and their bookkeeping
        (see `workers.answer_records`)."""
        return f"{self.tag(partition)}:s:{session}:answers"

    def answer_log(self, partition: int, session: str) -> str:
        """Stream of the session's published answer events (field `event`), for catch-up."""
        return f"{self.tag(partition)}:s:{session}:answer_log"

    def answer_channel(self, partition: int, session: str) -> str:
        """Pub/sub channel of the session's published answer events."""
        return f"{self.tag(partition)}:answers:{session}"

    def views(self, partition: int, session: str) -> str:
        """Hash of the session's answer-view-state@1 records and request receipts."""
        return f"{self.tag(partition)}:s:{session}:views"

    def tombstone(self, partition: int, session: str) -> str:
        """String set when the session's answers and view states were deleted: stops late writes."""
        return f"{self.tag(partition)}:s:{session}:deleted"

    def answer_keys(self, partition: int, session: str) -> tuple[str, str, str]:
        """The session's answer keys (answers, answer log, views); they slide with the session."""
        return (self.answers(partition, session), self.answer_log(partition, session),
                self.views(partition, session))

    def sliding_keys(self, partition: int, session: str) -> tuple[str, ...]:
        """Every key of a session whose expiry slides with its calls: the base keys, the action keys
        and the answer keys.  A call of any kind refreshes all of them, so they expire together: a
        session whose stream calls kept its base keys alive while its operations expired took a
        retried reserve (the same requestId) as a new operation, and ran its capability twice."""
        return (self.session_keys(partition, session) + self.action_keys(partition, session)
                + self.answer_keys(partition, session))

    def other_sliding_keys(self, partition: int, session: str) -> tuple[str, ...]:
        """`sliding_keys` but the base keys (which the stream scripts take by name)."""
        return self.action_keys(partition, session) + self.answer_keys(partition, session)


def ui_field(ui_id: str) -> str:
    """Session hash field holding the latest generation of a uiId."""
    return f"ui:{ui_id}"


def source_field(source: str) -> str:
    """Session hash field holding the uiId a sourceCallId opened."""
    return f"src:{source}"


def generation_field(ui_id: str, generation: int, name: str) -> str:
    """Field `name` of one generation in the generations hash (a uiId never holds `:`).

    `lua/generation.lua` assembles the same names (and `ui_field`'s) from the uiId and the
    generation it reads: change them together."""
    return f"{ui_id}:{generation}:{name}"


LEDGER_NAME = "call:"  # a generation's call ledger: one field per accepted call, `call:<seq>` -> its digest
# A generation's checkpoint text before its snapshot (seal.py's split), kept beside the checkpoint: a
# read that needs no snapshot (the reader holds it) takes this, and `generation.lua` never loads the
# checkpoint (moving a 15 KB value into Lua cost Redis ~23 µs a read; a plain HGET of it ~2 µs).
ENVELOPE_NAME = "envelope"


def ledger_name(seq: int) -> str:
    """The name (under `generation_field`) of the ledger field of the call that made frame `seq`.

    The commit writes it among its field pairs (`streams.tools`); `lua/generation.lua` reads
    `call:1` .. `call:<seq>` from `LEDGER_NAME` and the seq it reads: change them together."""
    return f"{LEDGER_NAME}{seq}"


def plain_field(kind: str, call: str) -> str:
    """Field of the plain hash: `doc` (document JSON), `ui` (its uiId) or `sum` (content digest) of a call."""
    return f"{kind}:{call}"
