"""The Lua scripts of `workers/redisio/lua/` and their one typed wrapper each.

Scripts are read with `importlib.resources` and registered once per client with
`redis.Script` (EVALSHA with a NOSCRIPT fallback).  Nothing else calls them.

Pipelined calls are plain EVALSHA commands: redis-py's cluster pipeline sends each to the node
of its keys' slot (it refuses pipelined `Script` objects), and on one server they save the
SCRIPT EXISTS round trip a pipelined `Script` costs.  On a Redis Cluster (a `RedisCluster`
client) the scripts that publish are registered with SPUBLISH (sharded pub/sub: the channel
carries the partition's hash tag, so it lives on the script's shard).
"""

from __future__ import annotations

import enum
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Final

from redis.commands.core import Script
from redis.typing import EncodableT

from ..wire.errors import Fenced, OutOfOrder, StaleCache
from .client import ClusterClient, RedisClient, Reply
from .connection import (
    Command,
    RoundTrip,
    ScriptUnavailable,
    Share,
    SharedRoundTrip,
    array,
    detached,
    field_map,
    integer,
    is_cluster,
    is_no_script,
    node_of,
    text,
    wait_replicated,
)
from .dead_letter import DeadLetterPolicy, bounded_copy
from .keys import ENVELOPE_NAME, LEDGER_NAME

log = logging.getLogger(__name__)

_NAMES = ("lease_acquire", "lease_renew", "lease_release", "read", "commit", "reply", "plain", "dead", "owner",
          "heartbeat", "meta")
NEW = ">"  # read mode: entries never delivered to the group
PENDING = "0"  # read mode: the consumer's delivered but unacknowledged entries
PUBLISH, SPUBLISH = "redis.call('PUBLISH', ", "redis.call('SPUBLISH', "
INCLUDE: Final = re.compile(r"^-- include: ([a-z_]+)$", re.MULTILINE)  # a shared piece of Lua (`with_includes`)
ACQUIRE_WAIT_MS = 200  # how long a new lease's epoch may take to reach the slot's replicas


def script_source(name: str, *, sharded: bool = False) -> str:
    """The text of `workers/redisio/lua/<name>.lua` with its includes in place (`with_includes`);
    `sharded` publishes with SPUBLISH (Redis Cluster)."""
    source = with_includes(_lua_file(name))
    return source.replace(PUBLISH, SPUBLISH) if sharded else source


def with_includes(source: str) -> str:
    """`source` with each line `-- include: <name>` replaced by `workers/redisio/lua/<name>.lua`
    (Redis runs one script text: a piece two scripts share, such as `capped_log`, has one file and
    is put in each; an include names a file of this folder, nothing else)."""
    return INCLUDE.sub(lambda line: _lua_file(line.group(1)).rstrip("\n"), source)


def _lua_file(name: str) -> str:
    try:
        folder: Traversable = resources.files("workers.redisio").joinpath("lua")
    except NotADirectoryError:  # an editable install seen as a namespace package
        folder = Path(__file__).with_name("lua")
    return folder.joinpath(f"{name}.lua").read_text("utf-8")


def register_scripts(redis: RedisClient, names: Sequence[str]) -> dict[str, Script]:
    """`redis.Script` objects of `names` on a client (SPUBLISH variants on a cluster client)."""
    sharded = is_cluster(redis)
    return {name: redis.register_script(script_source(name, sharded=sharded)) for name in names}


def run_script(script: Script, keys: list[str], args: list[EncodableT]) -> Reply:
    """EVALSHA of a registered script now (loaded again after a NOSCRIPT); its raw reply."""
    reply: Reply = script(keys=keys, args=args)
    return reply


def run_many(redis: RedisClient, script: Script, name: str,
             calls: Sequence[tuple[list[str], list[EncodableT]]]) -> list[Reply]:
    """Independent calls of one script pipelined (one round trip; on a cluster one per node).

    A NOSCRIPT reply (a restarted server, a promoted replica) changed nothing: the script is
    loaded (on a cluster, on every master) and only those calls are sent again.
    """
    return SentCalls(redis, script, name, calls).replies()


class SentCalls:
    """`run_many` in two halves: the calls are sent when this is made, and `replies` reads their
    replies, so Redis runs them while the caller does other work (a dispatcher's round sends the
    read-ahead of every partition it took entries for before it decides the first one).  On a
    cluster the calls are made at once (redis-py's pipeline, one per node).

    `replies` or `abandon` must end it: until then a pooled connection is kept for the replies."""

    def __init__(self, redis: RedisClient, script: Script, name: str,
                 calls: Sequence[tuple[list[str], list[EncodableT]]], shared: SharedRoundTrip | None = None) -> None:
        """Send the calls on a connection of their own, or on `shared` (whose owner closes it)."""
        self._redis, self._script, self._name, self._calls = redis, script, name, calls
        self._trip: RoundTrip | None = None
        self._share: Share | None = None
        self._first: list[Reply] = []
        if is_cluster(redis) or not calls:
            self._first = _evalsha_all(redis, script, calls)
        elif shared is not None:
            self._share = shared.send(_evalsha_commands(script, calls))
        else:
            self._trip = RoundTrip(redis)
            self._trip.send(_evalsha_commands(script, calls))

    def replies(self) -> list[Reply]:
        """The reply of each call, in order (a NOSCRIPT reply's call sent again once the script is
        loaded); raises the first other error reply, or the error of the connection."""
        if self._trip is not None:
            trip, self._trip = self._trip, None
            self._first = trip.finish()
        elif self._share is not None:
            share, self._share = self._share, None
            self._first = share.replies()
        results: list[Reply] = [None] * len(self._calls)
        todo, replies = list(range(len(self._calls))), self._first
        for attempt in range(2):
            missing = []
            for i, result in zip(todo, replies, strict=True):
                if not isinstance(result, BaseException):
                    results[i] = result
                elif is_no_script(detached(result)):
                    missing.append(i)
                else:
                    raise result
            if not missing:
                return results
            self._redis.script_load(self._script.script)
            todo = missing
            if attempt == 0:
                replies = _evalsha_all(self._redis, self._script, [self._calls[i] for i in todo])
        raise ScriptUnavailable(f"script {self._name} could not be loaded on the cluster")

    def abandon(self) -> None:
        """Give the replies up unread (a connection of their own is closed, not returned with them
        pending; on a shared one they are left to its owner)."""
        trip, self._trip, self._share = self._trip, None, None
        if trip is not None:
            trip.abandon()


def _evalsha_commands(script: Script, calls: Sequence[tuple[list[str], list[EncodableT]]]) -> list[Command]:
    return [("EVALSHA", script.sha, len(keys), *keys, *args) for keys, args in calls]


def _evalsha_all(redis: RedisClient, script: Script,
                 calls: Sequence[tuple[list[str], list[EncodableT]]]) -> list[Reply]:
    """The replies (error replies as their exceptions) of one EVALSHA per call, in one round trip:
    a `RoundTrip` on a single server (redis-py's pipeline bookkeeping was a tenth of a cold
    session's first call, read ahead in bulk), redis-py's pipeline on a cluster (one per node)."""
    commands = _evalsha_commands(script, calls)
    if is_cluster(redis):
        pipe = redis.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(*command)
        replies: list[Reply] = pipe.execute(raise_on_error=False)
        return replies
    trip = RoundTrip(redis)
    trip.send(commands)
    return trip.finish()


class Acquired(enum.StrEnum):
    """Outcome of a lease acquisition (the code `lease_acquire.lua` returns)."""

    ACQUIRED = "acquired"
    HELD = "held"


class Code(enum.StrEnum):
    """The named codes the other scripts return (each script's header says which and when)."""

    OK = "ok"
    FENCED = "fenced"  # the lease is gone or held under another fence: nothing written
    RENEWED = "renewed"
    RELEASED = "released"
    STALE = "stale"  # a CAS failed: the caller's read is out of date
    GAP = "gap"  # an older entry of the partition is still pending: nothing written
    DELETED = "deleted"
    EXISTS = "exists"
    FULL = "full"
    NOT_FINAL = "not_final"
    DUPLICATE = "duplicate"
    TOO_LARGE = "too_large"
    OVER_BUDGET = "over_budget"
    FORBIDDEN = "forbidden"
    REF_FULL = "ref_full"
    SESSION_FULL = "session_full"
    SECRET = "secret"
    BEFORE_CREATED = "before_created"
    MISMATCH = "mismatch"  # a fixed field of `{prefix}:meta` holds another value: nothing written


def reply_code(reply: Reply) -> Code:
    """The named code of a script's reply: the reply itself, or the first element of a table."""
    return Code(text(reply[0] if isinstance(reply, list) else reply))


def check_owner(code: Code, lease_key: str) -> None:
    """Raise what an entry-ending script's ownership codes mean: `Fenced` or `OutOfOrder`."""
    if code is Code.FENCED:
        raise Fenced(lease_key)
    if code is Code.GAP:
        raise OutOfOrder(lease_key)


@dataclass(frozen=True, slots=True)
class Renewal:
    """A renewed lease and the entries pending in its partition's consumer group."""

    pending: int


@dataclass(frozen=True, slots=True)
class LostLease:
    """A renewal that found the lease expired (`holder` "") or held under another fence."""

    holder: str
    epoch: str


@dataclass(frozen=True, slots=True)
class LeaseAttempt:
    """The result of `lease_acquire`: the new epoch and fence ("<epoch>:<owner>"), or the current holder."""

    outcome: Acquired
    epoch: int = 0
    fence: str = ""
    holder: str = ""


def _attempt(result: Reply) -> LeaseAttempt:
    """The `LeaseAttempt` of one `lease_acquire` reply."""
    values = array(result)
    if text(values[0]) == Acquired.ACQUIRED:
        return LeaseAttempt(Acquired.ACQUIRED, epoch=integer(values[1]), fence=text(values[2]))
    return LeaseAttempt(Acquired.HELD, holder=text(values[1]))


class CommitPlan:
    """Everything the commit script needs for one accepted stream call.

    A plain class with `Final` attributes, not a frozen dataclass: one per accepted call, and a
    frozen dataclass sets each field through `object.__setattr__` (decisions.md)."""

    __slots__ = (
        "channel",
        "expected_generation",
        "expected_seq",
        "field_prefix",
        "fields",
        "frame",
        "generations_increment",
        "new_generation",
        "other_keys",
        "reply",
        "reply_key",
        "session_field",
        "session_keys",
        "session_value",
        "ui_field",
    )

    def __init__(self, *, session_keys: tuple[str, str, str, str], reply_key: str, expected_seq: int,
                 expected_generation: int, new_generation: int, frame: str, reply: str, channel: str,
                 ui_field: str, field_prefix: str, session_field: str = "", session_value: str = "",
                 generations_increment: int = 0, fields: Sequence[tuple[str, str | int]] = (),
                 other_keys: tuple[str, ...] = ()) -> None:
        self.session_keys: Final = session_keys  # Keys.session_keys: session, generations, frame log, plain
        self.other_keys: Final = other_keys  # Keys.other_sliding_keys: their expiry slides with the commit
        self.reply_key: Final = reply_key
        self.expected_seq: Final = expected_seq
        self.expected_generation: Final = expected_generation
        self.new_generation: Final = new_generation
        self.frame: Final = frame
        self.reply: Final = reply
        self.channel: Final = channel
        self.ui_field: Final = ui_field  # session hash field of the uiId's latest generation
        self.field_prefix: Final = field_prefix  # "<uiId>:<generation>:", its fields in the generations hash
        self.session_field: Final = session_field
        self.session_value: Final = session_value
        self.generations_increment: Final = generations_increment
        self.fields: Final = fields


@dataclass(frozen=True, slots=True)
class PlainFields:
    """The plain hash fields of one call and their values (the plain script stores all three)."""

    document_field: str
    document: str
    ui_field: str
    ui_id: str
    digest_field: str
    digest: str


@dataclass(frozen=True, slots=True)
class ReadBatch:
    """Entries moved to (or re-read from) the partition's pending list by a fenced read."""

    entries: list[tuple[str, dict[Reply, Reply]]]  # (entry id, raw fields)
    deliveries: dict[str, int]
    cursor: str


class ScriptCall:
    """One script invocation and the check that maps its reply to success or an exception
    (a plain class with `Final` attributes, as `CommitPlan`: one per entry)."""

    __slots__ = ("args", "check", "keys", "name")

    def __init__(self, name: str, keys: list[str], args: list[EncodableT], check: Callable[[Reply], None]) -> None:
        self.name: Final = name
        self.keys: Final = keys
        self.args: Final = args
        self.check: Final = check


def _fenced_check(lease_key: str) -> Callable[[Reply], None]:
    def check(result: Reply) -> None:
        check_owner(reply_code(result), lease_key)
    return check


class ScriptBatch:
    """Script calls sent in one pipelined round trip; each reply is checked as its wrapper would.

    Each call stays one atomic script (fence, CAS, effects, reply and XACK together), so a crash
    still leaves every entry pending or fully committed; the batch only saves round trips.
    The calls can also ride in a round trip of the caller's (`commands`, then `outcomes`), so
    that a dispatcher sends the writes of one round together with its next read.
    """

    def __init__(self, scripts: Mapping[str, Script], redis: RedisClient) -> None:
        self._scripts = scripts
        self._redis = redis
        self._calls: list[ScriptCall] = []

    def __len__(self) -> int:
        return len(self._calls)

    def add(self, call: ScriptCall) -> None:
        """Queue a call (nothing is sent before `execute`)."""
        self._calls.append(call)

    def commands(self) -> list[tuple[EncodableT, ...]]:
        """The queued calls as EVALSHA commands, in order (one reply each).

        Plain EVALSHA: redis-py's pipelined `Script` calls send SCRIPT EXISTS first, one more
        round trip per batch.  A script Redis lost (a restart, SCRIPT FLUSH) fails with NOSCRIPT
        and changes nothing; that call comes back as `StaleCache`, so it is decided again and
        run on its own, which loads the script.
        """
        return [("EVALSHA", self._scripts[call.name].sha, len(call.keys), *call.keys, *call.args)
                for call in self._calls]

    def execute(self) -> list[BaseException | None]:
        """Send every queued call; per call None (done) or the exception its wrapper would raise."""
        if not self._calls:
            return []
        pipe = self._redis.pipeline(transaction=False)
        for command in self.commands():
            pipe.execute_command(*command)  # a cluster pipeline refuses .evalsha; on one server the same
        return self.outcomes(pipe.execute(raise_on_error=False))

    def outcomes(self, results: Sequence[Reply]) -> list[BaseException | None]:
        """Check the replies of the queued calls (in order) and empty the queue."""
        calls, self._calls = self._calls, []
        outcomes: list[BaseException | None] = []
        for call, result in zip(calls, results, strict=True):
            if isinstance(result, BaseException):
                detached(result)
            try:
                if is_no_script(result):
                    raise StaleCache(f"script {call.name} is not loaded on the server")
                if isinstance(result, BaseException):
                    raise result
                call.check(result)
                outcomes.append(None)
            except (Fenced, OutOfOrder, StaleCache) as error:
                outcomes.append(detached(error))  # kept in a list: no frame may hold it
        return outcomes


class Scripts:
    """The scripts registered on one Redis client, with typed wrappers."""

    def __init__(self, *, redis: RedisClient, group: str, reply_ttl_ms: int, frame_log_max: int,
                 frame_log_max_bytes: int = 16 * 1024 * 1024, session_ttl_ms: int = 0,
                 max_plain_per_session: int = 256, max_generations_per_session: int = 0) -> None:
        self._redis = redis
        self._group = group
        self._reply_ttl_ms = reply_ttl_ms
        self._frame_log_max = frame_log_max
        self._frame_log_max_bytes = frame_log_max_bytes
        self._session_ttl_ms = session_ttl_ms
        self._max_plain = max_plain_per_session
        self._max_generations = max_generations_per_session  # 0: commit.lua checks no capacity
        self._scripts = register_scripts(redis, _NAMES)

    def load(self) -> None:
        """SCRIPT LOAD every script and `generation.lua` (one round trip), so that the first batched EVALSHAs find
        them: a batch whose script is missing comes back NOSCRIPT, and every entry of it is
        decided again on its own.  A cluster loads on demand per node (`_many`)."""
        if is_cluster(self._redis):
            return
        pipe = self._redis.pipeline(transaction=False)
        for script in self._scripts.values():
            pipe.script_load(script.script)
        pipe.script_load(script_source("generation"))  # the session store's, which its read-ahead pipelines
        pipe.execute()

    def acquire(self, lease_key: str, epoch_key: str, owner: str, ttl_ms: int) -> LeaseAttempt:
        """Take the lease if free; returns the new epoch or the current holder."""
        return self.acquire_many([(lease_key, epoch_key)], owner, ttl_ms)[0]

    def acquire_many(self, leases: Sequence[tuple[str, str]], owner: str, ttl_ms: int) -> list[LeaseAttempt]:
        """`acquire` for several (lease key, epoch key) pairs in one round trip."""
        results = self._many("lease_acquire", [([lease, epoch], [owner, ttl_ms]) for lease, epoch in leases])
        attempts = [_attempt(result) for result in results]
        if is_cluster(self._redis):
            _wait_for_replicas(self._redis, [lease for (lease, _), attempt in zip(leases, attempts, strict=True)
                                             if attempt.outcome is Acquired.ACQUIRED])
        return attempts

    def _many(self, name: str, calls: Sequence[tuple[list[str], list[EncodableT]]]) -> list[Reply]:
        return run_many(self._redis, self._scripts[name], name, calls)

    def renew(self, leases: Sequence[tuple[str, str, str]], ttl_ms: int) -> list[Renewal | LostLease]:
        """Extend (lease key, fence, input stream) triples in one round trip, counting each
        partition's pending entries ("" for no stream); a `LostLease` names who holds it now."""
        calls: list[tuple[list[str], list[EncodableT]]] = [
            ([lease, stream] if stream else [lease], [fence, ttl_ms, self._group]) for lease, fence, stream in leases]
        return [_renewal(result) for result in self._many("lease_renew", calls)]

    def heartbeat(self, workers_key: str, worker_id: str, ttl_ms: int) -> list[str]:
        """Announce `worker_id` alive for `ttl_ms` from Redis's now, drop the lapsed workers and
        return the live ones' ids (`heartbeat.lua`, one round trip)."""
        return [text(member) for member in array(self._call("heartbeat", [workers_key], [worker_id, ttl_ms]))]

    def meta(self, meta_key: str, fixed: Sequence[tuple[str, str]], streaming: bool) -> tuple[str, str] | None:
        """Record the deployment's `fixed` (field, value) pairs where absent and `streaming`, unless a
        stored one differs (`meta.lua`, atomic): then that (field, stored value), and nothing is written."""
        args: list[EncodableT] = [int(streaming)]
        for field, value in fixed:
            args += [field, value]
        result = self._call("meta", [meta_key], args)
        if reply_code(result) is Code.MISMATCH:
            _, name, stored = array(result)
            return text(name), text(stored)
        return None

    def release(self, lease_key: str, fence: str) -> bool:
        """Give the lease back; False if it was no longer held under that fence."""
        return self.release_many([(lease_key, fence)])[0]

    def release_many(self, leases: Sequence[tuple[str, str]]) -> list[bool]:
        """`release` for several (lease key, fence) pairs in one round trip."""
        if not leases:
            return []
        released = self._many("lease_release", [([lease_key], [fence]) for lease_key, fence in leases])
        return [reply_code(result) is Code.RELEASED for result in released]

    def read(self, lease_key: str, input_key: str, fence: str, consumer: str, count: int,
             mode: str) -> ReadBatch:
        """XREADGROUP only while `fence` owns the lease (`mode` NEW or PENDING); raises `Fenced`."""
        result = self._call("read", [lease_key, input_key], [fence, self._group, consumer, count, mode])
        if reply_code(result) is Code.FENCED:
            raise Fenced(lease_key)
        _, cursor, rows, flat = array(result)
        entries = [(text(entry_id), field_map(fields)) for entry_id, fields in map(array, array(rows))]
        deliveries = {text(entry_id): integer(count) for entry_id, count in field_map(flat).items()}
        return ReadBatch(entries, deliveries, text(cursor))

    def owner(self, lease_key: str, session_keys: tuple[str, ...], fence: str, identity: str,
              claim_ttl_ms: int) -> tuple[str, int]:
        """The session's owner ("<principal> <project>"), recording `identity` if it has none, and
        the session hash's time to live in ms (-1: none); a session holding nothing but its owner's
        record expires `claim_ttl_ms` after this (`session_keys`: `Keys.sliding_keys`, the session
        hash first); raises `Fenced`."""
        result = self._call("owner", [lease_key, *session_keys],
                            [fence, identity, self._session_ttl_ms, claim_ttl_ms])
        check_owner(reply_code(result), lease_key)
        _, owner, pttl = array(result)
        return text(owner), integer(pttl)

    def commit(self, lease_key: str, input_key: str, fence: str, entry_id: str, plan: CommitPlan) -> None:
        """Apply one accepted call atomically; raises `Fenced` or `StaleCache`."""
        self.run(self.commit_call(lease_key, input_key, fence, entry_id, plan))

    def commit_call(self, lease_key: str, input_key: str, fence: str, entry_id: str, plan: CommitPlan) -> ScriptCall:
        """`commit` as a call to run now or in a `ScriptBatch`."""
        session, generations, frame_log, plain = plan.session_keys
        keys = [lease_key, input_key, generations, session, frame_log, plain, plan.reply_key, *plan.other_keys]
        args: list[EncodableT] = [fence, self._group, entry_id, plan.expected_seq, plan.expected_generation,
                           plan.new_generation, plan.frame, self._frame_log_max,
                           self._frame_log_max_bytes, plan.reply, self._reply_ttl_ms, plan.channel,
                           plan.session_field, plan.session_value, plan.generations_increment,
                           self._session_ttl_ms, plan.ui_field, plan.field_prefix, self._max_generations]
        for field, value in plan.fields:
            args += [field, value]

        def check(result: Reply) -> None:
            code = reply_code(result)
            check_owner(code, lease_key)
            if code is Code.STALE:
                _, seq, generation = array(result)
                raise StaleCache(f"stored seq {text(seq)}, generation {text(generation)}")
            if code is Code.FULL:  # decided on an out-of-date count: decided again, it is refused
                raise StaleCache("the session holds its maximum of generations")
        return ScriptCall("commit", keys, args, check)

    def reply(self, lease_key: str, input_key: str, fence: str, entry_id: str,
              reply_key: str, reply: str, session_keys: Sequence[str] = ()) -> None:
        """Reply and ack without changing state, sliding the session's expiry; raises `Fenced`."""
        self.run(self.reply_call(lease_key, input_key, fence, entry_id, reply_key, reply, session_keys))

    def reply_call(self, lease_key: str, input_key: str, fence: str, entry_id: str,
                   reply_key: str, reply: str, session_keys: Sequence[str] = ()) -> ScriptCall:
        """`reply` as a call to run now or in a `ScriptBatch`."""
        return ScriptCall("reply", [lease_key, input_key, reply_key, *session_keys],
                          [fence, self._group, entry_id, reply, self._reply_ttl_ms, self._session_ttl_ms],
                          _fenced_check(lease_key))

    def plain(self, lease_key: str, input_key: str, fence: str, entry_id: str,
              session_keys: tuple[str, str, str, str], fields: PlainFields, reply_key: str, reply: str,
              other_keys: Sequence[str] = ()) -> None:
        """Store a plain document under its call id, reply and ack; raises `Fenced` or `StaleCache`."""
        self.run(self.plain_call(lease_key, input_key, fence, entry_id, session_keys, fields, reply_key, reply,
                                 other_keys))

    def plain_call(self, lease_key: str, input_key: str, fence: str, entry_id: str,
                   session_keys: tuple[str, str, str, str], fields: PlainFields, reply_key: str,
                   reply: str, other_keys: Sequence[str] = ()) -> ScriptCall:
        """`plain` as a call to run now or in a `ScriptBatch`; `other_keys` (`Keys.other_sliding_keys`)
        slide with it."""
        session, generations, frame_log, plain = session_keys

        def check(result: Reply) -> None:
            code = reply_code(result)
            check_owner(code, lease_key)
            if code is Code.EXISTS:
                raise StaleCache("the call id already holds a plain document")
            if code is Code.FULL:
                raise StaleCache("the session's plain documents are at capacity")
        return ScriptCall("plain", [lease_key, input_key, plain, session, generations, frame_log, reply_key,
                                    *other_keys],
                          [fence, self._group, entry_id, fields.document_field, fields.document, fields.ui_field,
                           fields.ui_id, fields.digest_field, fields.digest, self._max_plain, reply,
                           self._reply_ttl_ms, self._session_ttl_ms], check)

    def dead(self, lease_key: str, input_key: str, dead_key: str, dead_bytes_key: str, fence: str,
             entry_id: str, reason: str, fields: Mapping[str, str], policy: DeadLetterPolicy,
             reply_key: str = "", reply: str = "") -> None:
        """Dead-letter a bounded copy of an entry (with an optional error reply) and ack it; raises `Fenced`."""
        copy = bounded_copy(fields, policy.entry_bytes)
        keys = [lease_key, input_key, dead_key, dead_bytes_key] + ([reply_key] if reply else [])
        args: list[EncodableT] = [fence, self._group, entry_id, reason, reply, self._reply_ttl_ms,
                           policy.max_entries, policy.max_bytes, "1" if copy.truncated else "0"]
        for field, value in copy.fields:
            args += [field, value]
        self.run(ScriptCall("dead", keys, args, _fenced_check(lease_key)))

    def batch(self) -> ScriptBatch:
        """An empty batch whose calls go to Redis in one pipelined round trip."""
        return ScriptBatch(self._scripts, self._redis)

    def run(self, call: ScriptCall) -> None:
        """Run one call now; raises what its wrapper raises."""
        call.check(self._call(call.name, call.keys, call.args))

    def _call(self, name: str, keys: list[str], args: list[EncodableT]) -> Reply:
        return run_script(self._scripts[name], keys, args)


@dataclass(frozen=True, slots=True)
class StoredGeneration:
    """What `generation.lua` found for a sourceCallId: its uiId, and the latest generation of
    that UI with the requested fields (None where a field is missing) and the digests of its
    call ledger's fields, if any.  `cut`: the first field is the record's envelope (`ENVELOPE_NAME`),
    not its checkpoint: its snapshot is one of those the read named as held (`known`)."""

    ui_id: str | None
    generation: int | None = None
    fields: tuple[str | None, ...] = ()
    ledger: tuple[str, ...] = ()
    cut: bool = False


UI_NAMED = "="  # generation.lua's ARGV[1] prefix naming the uiId itself (a session field never starts so)


class GenerationRead:
    """The typed wrapper of `generation.lua`: a session store's one-round-trip read."""

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis
        self._script = register_scripts(redis, ("generation",))["generation"]

    def __call__(self, session_key: str, generations_key: str, source_field: str, ui_prefix: str,
                 names: Sequence[str], known: str = "") -> StoredGeneration:
        """The uiId `source_field` names and that UI's latest generation's fields `names` (the
        checkpoint's first, its snapshot digest's second); its envelope field in the checkpoint's
        place (`cut`) when that digest is in `known` (digests each followed by a space)."""
        return _stored(run_script(self._script, [session_key, generations_key],
                                  [source_field, ui_prefix, LEDGER_NAME, known, ENVELOPE_NAME, *names]), len(names))

    def of_ui(self, session_key: str, generations_key: str, ui_id: str, ui_prefix: str,
              names: Sequence[str], known: str = "") -> StoredGeneration:
        """The latest generation of a uiId the caller knows, with its fields `names` and its ledger."""
        return self(session_key, generations_key, UI_NAMED + ui_id, ui_prefix, names, known)

    def many(self, reads: Sequence[tuple[str, str, str, str]], names: Sequence[str],
             known: str = "") -> list[StoredGeneration]:
        """`self(*read, names, known)` of each (session key, generations key, source field, uiId
        prefix) read, in one round trip."""
        return self.send(reads, names, known=known).stored()

    def send(self, reads: Sequence[tuple[str, str, str, str]], names: Sequence[str],
             shared: SharedRoundTrip | None = None, *, known: str = "") -> SentReads:
        """`many` in two halves: the reads are sent now (on `shared`, when given), `SentReads.stored`
        reads their replies."""
        calls: list[tuple[list[str], list[EncodableT]]] = [
            ([session_key, generations_key], [source_field, ui_prefix, LEDGER_NAME, known, ENVELOPE_NAME, *names])
            for session_key, generations_key, source_field, ui_prefix in reads]
        return SentReads(SentCalls(self._redis, self._script, "generation", calls, shared), len(names))


class SentReads:
    """`generation.lua` reads sent, their replies not read yet (`GenerationRead.send`)."""

    def __init__(self, calls: SentCalls, count: int) -> None:
        self._calls = calls
        self._count = count  # the named fields each read asked for

    def stored(self) -> list[StoredGeneration]:
        """What each read found, in order (raises as `GenerationRead.many` does)."""
        return [_stored(reply, self._count) for reply in self._calls.replies()]

    def abandon(self) -> None:
        """Give the replies up unread (`SentCalls.abandon`)."""
        self._calls.abandon()


def _stored(reply: Reply, count: int) -> StoredGeneration:
    """The `StoredGeneration` of one `generation.lua` reply that read `count` named fields."""
    values = array(reply)
    if not values:
        return StoredGeneration(None)
    if len(values) == 1:
        return StoredGeneration(text(values[0]))
    end = 3 + count
    return StoredGeneration(text(values[0]), integer(values[1]),
                            tuple(None if value is None else text(value) for value in values[3:end]),
                            tuple(text(value) for value in values[end:]), integer(values[2]) == 1)


def _renewal(result: Reply) -> Renewal | LostLease:
    """The outcome of one `lease_renew` reply."""
    values = array(result)
    if reply_code(values) is Code.RENEWED:
        return Renewal(integer(values[1]))
    return LostLease(text(values[1]), text(values[2]))


def _wait_for_replicas(redis: ClusterClient, leases: list[str]) -> None:
    """On a cluster, WAIT until each newly acquired lease's epoch reached its slot's replicas.

    Replication is asynchronous: a master that fails right after handing out epoch e+1
    could leave a replica at e, which would hand e+1 out again after its promotion, and
    two owners would pass the same fence.  The lease is used only once WAIT returned (a
    replica that does not answer in time is logged; the lease is used anyway).
    """
    one_per_node = {node_of(redis, lease).name: lease for lease in leases}
    for lease in one_per_node.values():
        if wait_replicated(redis, lease, ACQUIRE_WAIT_MS) == 0:
            log.warning("cluster: the epoch of %s reached no replica within %d ms", lease, ACQUIRE_WAIT_MS)
