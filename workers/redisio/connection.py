"""Redis connections and the translation of Redis errors (the one module that knows them).

A URL with the scheme `redis+cluster://` (or `rediss+cluster://`) names any one node of a
Redis Cluster: `connect` returns a redis-py `RedisCluster`, which discovers the other nodes
and routes every command to the node of its key's slot.  Every other scheme is one server.
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, cast
from urllib.parse import urlsplit

import redis
from mypy_extensions import mypyc_attr
from redis import exceptions as redis_errors
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.connection import Connection
from redis.retry import Retry
from redis.typing import EncodableT

from .client import ClusterClient, RedisClient, Reply, ServerClient, Wire

if TYPE_CHECKING:
    from typing_extensions import TypeIs  # typing.TypeIs is Python 3.13

pack_command: Callable[[tuple[EncodableT, ...]], bytes] | None
try:  # the C packer of redis[hiredis]; `pack` and `exchange` work without it, only slower
    import hiredis

    pack_command = cast(Callable[[tuple[EncodableT, ...]], bytes],  # its stub types the tuple as one item
                        hiredis.pack_command)
except ImportError:  # pragma: no cover - hiredis is a dependency
    pack_command = None

Command: TypeAlias = Sequence[EncodableT] | bytes  # the arguments of one command, or them `pack`ed
Entry: TypeAlias = tuple[Reply, dict[Reply, Reply]]  # a stream entry: its id and raw fields

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
MAX_BLOCK_SLICE_S = 2.0  # one blocking read of a reply (`block_slice`)

# Errors that mean "the server is not reachable right now": retry with backoff, never exit.
# The cluster ones (a failed-over master, slots moving, no node reachable) occur only on a
# Redis Cluster, while it elects a new master or the client's slot map is out of date.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError, ConnectionError, OSError,
    redis_errors.ClusterError, redis_errors.AskError, redis_errors.TryAgainError,
    redis_errors.RedisClusterException,
)


class Backoff:
    """Exponential back-off with jitter, reset after a success."""

    def __init__(self, *, first: float = 0.05, limit: float = 2.0) -> None:
        self._first = first
        self._limit = limit
        self._delay = first

    def next(self) -> float:
        """The next delay in seconds."""
        delay = self._delay
        self._delay = min(self._limit, self._delay * 2)
        return delay * (0.5 + random.random() / 2)

    def reset(self) -> None:
        """Back to the first delay."""
        self._delay = self._first


class UnexpectedReply(Exception):
    """A Redis reply of a shape the runtime never asks for (another server, a bug); the message
    names the expected shape and the type received, never the value."""


def text(value: Reply) -> str:
    """A value of a Redis reply as text: bytes decoded as UTF-8 (bad bytes replaced), None as ""."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def integer(value: Reply) -> int:
    """An integer reply, or a counter Redis sent as text (a hash field, a Lua string)."""
    if isinstance(value, int):
        return int(value)  # a bool (HEXISTS) counts as 0 or 1
    if isinstance(value, (bytes, str)):
        try:
            return int(value)
        except ValueError:  # int()'s message would echo the value
            raise UnexpectedReply("expected an integer reply, got text that is not one") from None
    raise UnexpectedReply(f"expected an integer reply, got {type(value).__name__}")


def array(value: Reply) -> list[Reply]:
    """An array reply (a Lua table, a command's list of values; redis-py makes some rows tuples)."""
    if isinstance(value, list):
        return value
    if isinstance(value, tuple):
        return list(value)
    raise UnexpectedReply(f"expected an array reply, got {type(value).__name__}")


def mapping(value: Reply) -> dict[Reply, Reply]:
    """A reply redis-py turned into a dict (HGETALL, XPENDING's summary, an XINFO GROUPS group)."""
    if isinstance(value, dict):
        return value
    raise UnexpectedReply(f"expected a map reply, got {type(value).__name__}")


def field_map(flat: Reply) -> dict[Reply, Reply]:
    """A raw field/value array (a stream entry's fields, a Lua table) as a mapping; a map (RESP3)
    as it is; nil (an entry deleted while pending) as empty.  A repeated field keeps its last
    value, as redis-py does."""
    if isinstance(flat, dict):
        return flat
    if not flat:
        return {}
    values = array(flat)
    return dict(zip(values[0::2], values[1::2], strict=False))  # an odd tail never occurs


def entry(row: Reply) -> Entry:
    """(entry id, fields) of one raw `[id, fields]` row of a stream reply."""
    entry_id, fields = array(row)
    return entry_id, field_map(fields)


def stream_entries(reply: Reply) -> list[tuple[str, list[Entry]]]:
    """(stream key, [(entry id, fields)]) pairs of a raw XREAD/XREADGROUP reply (RESP2 list or
    RESP3 map; nil when nothing arrived)."""
    streams = reply.items() if isinstance(reply, dict) else [array(pair) for pair in array(reply or [])]
    return [(text(stream), [entry(row) for row in array(rows)]) for stream, rows in streams]


def stream_id(value: Reply) -> tuple[int, int]:
    """A stream entry id ("<ms>-<seq>", text or bytes) as a pair that sorts as Redis orders ids."""
    ms, _, seq = text(value).partition("-")
    return int(ms), int(seq or 0)


@mypyc_attr(native_class=False)  # mypyc makes no native subclass of `ConnectionError`
class ScriptUnavailable(ConnectionError):
    """A script the server lost could not be loaded again (a fail-over in progress): retry later."""


class RedisUnavailable(Exception):
    """Redis could not be reached or did not answer in time; the message is one line."""


def is_cluster_url(url: str) -> bool:
    """True for a `redis+cluster://` or `rediss+cluster://` URL."""
    return urlsplit(url).scheme in CLUSTER_SCHEMES


def is_cluster(redis_client: RedisClient) -> TypeIs[ClusterClient]:
    """True when the client talks to a Redis Cluster (a `RedisCluster`); else it is a `ServerClient`."""
    return isinstance(redis_client, RedisCluster)


def connect(url: str, **options: object) -> RedisClient:
    """A redis-py client for `url` (a connection pool, safe to share between threads).

    A cluster URL gives a `RedisCluster` (the same command methods, routed by key slot).
    redis-py's own retries are off (on a cluster too; MOVED/ASK redirects still follow): it would
    send a command (a whole pipeline of commits, an XADD) again after a timeout although the
    first one may have run, which applies an entry twice or adds it twice.  A failed call
    surfaces as a transient error instead; workers then
    replay what is still pending, which only Redis knows.
    """
    scheme = urlsplit(url).scheme
    if scheme in CLUSTER_SCHEMES:
        plain = CLUSTER_SCHEMES[scheme] + url[len(scheme):]
        options.setdefault("retry", Retry(NoBackoff(), 0))
        return RedisCluster.from_url(plain, health_check_interval=30, **socket_options(plain), **options)
    return connect_server(url, **options)


def connect_server(url: str, **options: object) -> redis.Redis:
    """`connect` for a URL of one server (RQ's queues: RQ does not support Redis Cluster)."""
    options.setdefault("retry", Retry(NoBackoff(), 0))
    options.setdefault("retry_on_timeout", False)
    return redis.Redis.from_url(url, health_check_interval=30, **socket_options(url), **options)


def socket_options(url: str) -> dict[str, bool]:
    """The socket options of a connection to `url`: TCP keepalive (a peer that vanished without a
    FIN, a dropped NAT entry, is found by the kernel), except on a Unix socket (`unix://`: a
    Redis on the same host), whose connections take no such option (redis-py refuses it)."""
    return {} if urlsplit(url).scheme == "unix" else {"socket_keepalive": True}


def connect_within(url: str, timeout: float, *, blocking: float = 0.0) -> RedisClient:
    """A client whose connect and every reply are bounded by `timeout` seconds, never retried.

    `blocking` is the longest a command of the caller blocks on the server (BLPOP), added to the
    read bound, so a command-line tool fails at its own deadline rather than redis-py's default.
    """
    return connect(url, socket_connect_timeout=timeout, socket_timeout=blocking + timeout,
                   retry=Retry(NoBackoff(), 0), retry_on_timeout=False)


def location(url: str) -> str:
    """Where `url` points, for messages: host:port, or the socket path; never its credentials."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}" if parts.scheme != "unix" else parts.path


def unavailable(error: BaseException, url: str) -> RedisUnavailable | None:
    """The one-line translation of a connection or timeout error (never the URL's credentials)."""
    if not isinstance(error, TRANSIENT_ERRORS):
        return None
    if isinstance(error, (redis.TimeoutError, TimeoutError)):
        return no_answer(url)
    reason = " ".join(str(error).split()) or type(error).__name__
    return RedisUnavailable(f"Redis at {location(url)} is unreachable: {reason}")


def no_answer(url: str) -> RedisUnavailable:
    """The one line of a Redis that did not answer in time (never the URL's credentials)."""
    return RedisUnavailable(f"Redis at {location(url)} did not answer in time")


def is_busy_group(error: BaseException) -> bool:
    """True for the BUSYGROUP reply of XGROUP CREATE on an existing group."""
    return isinstance(error, redis.ResponseError) and "BUSYGROUP" in str(error)


def is_refused(error: BaseException) -> bool:
    """True when the server refused a command: the ACL forbids it, or the server does not know it
    (a managed Redis that renamed or removed CONFIG)."""
    if isinstance(error, redis_errors.NoPermissionError):
        return True
    return isinstance(error, redis.ResponseError) and "unknown command" in str(error).lower()


def bulk(value: Reply) -> bytes | str:
    """A bulk string reply (bytes; text from a client that decodes replies)."""
    if isinstance(value, (bytes, str)):
        return value
    raise UnexpectedReply(f"expected a bulk string reply, got {type(value).__name__}")


def value_bytes(value: Reply) -> bytes | None:
    """A bulk string reply as bytes (the runtime's clients never decode replies), nil as None."""
    if value is None or isinstance(value, bytes):
        return value
    raise UnexpectedReply(f"expected a bulk string reply, got {type(value).__name__}")


def stream_range(reply: Reply) -> list[Entry]:
    """(entry id, fields) of each entry of an XRANGE or XREVRANGE reply."""
    return [entry(row) for row in array(reply or [])]


def logged(fields: Mapping[Reply, Reply], name: str) -> bytes | str:
    """The value of field `name` of a stream entry (its key bytes, or text from a decoding client)."""
    return bulk(fields[name.encode()] if name.encode() in fields else fields[name])


def add_entry(client: RedisClient, key: str, fields: Mapping[str, str]) -> str:
    """XADD `fields` to the stream `key`; returns the new entry's id."""
    # redis-py types the fields as an invariant dict of its own value types: any mapping of text works
    # (each cast to redis-py's types here is to `Any`: the compiled build checks a cast at run time)
    return text(client.xadd(key, cast(Any, fields)))


def block_slice(client: RedisClient) -> float:
    """The longest one blocking command of `client` may block on the server: half its socket
    timeout (its reply must come within it, or redis-py raises `TimeoutError`: redis-py 8 gives a
    client 5 s unless told otherwise), at most `MAX_BLOCK_SLICE_S`; a longer wait is a loop."""
    kwargs = client.get_connection_kwargs() if is_cluster(client) else client.connection_pool.connection_kwargs
    socket_timeout = kwargs.get("socket_timeout")
    if not isinstance(socket_timeout, (int, float)) or socket_timeout <= 0:
        return MAX_BLOCK_SLICE_S
    return max(0.01, min(MAX_BLOCK_SLICE_S, socket_timeout / 2))


def rotate_first(client: RedisClient, key: str, timeout: float) -> bytes | None:
    """`BLMOVE key key LEFT RIGHT timeout`: the list's first element, left in the list.

    A wait longer than the client's socket timeout allows is several BLMOVEs (`block_slice`):
    a job awaits its `running` reply up to `IUI_JOB_START_TIMEOUT_S`.  The embedded demo Redis
    (fakeredis) answers BLMOVE at once instead of blocking, so there the non-blocking LMOVE is
    polled until the timeout.
    """
    if not type(client).__module__.startswith("fakeredis"):
        deadline = time.monotonic() + timeout
        most = block_slice(client)
        while True:
            wait = max(0.01, round(min(most, deadline - time.monotonic()), 3))  # 0 would be "forever"
            # redis-py types the timeout as int; Redis takes seconds with decimals (Redis >= 6.0)
            value = value_bytes(client.blmove(key, key, cast(Any, wait), "LEFT", "RIGHT"))
            if value is not None or time.monotonic() >= deadline:
                return value
    deadline = time.monotonic() + timeout
    while True:
        value = value_bytes(client.lmove(key, key, "LEFT", "RIGHT"))
        if value is not None or time.monotonic() >= deadline:
            return value
        time.sleep(0.002)


def remove_first(client: RedisClient, key: str, value: bytes) -> None:
    """`LREM key 1 value`: drop the first copy of `value` (a reply in hand) from a list."""
    client.lrem(key, 1, cast(Any, value))  # redis-py types the value as str; Redis compares any bytes


def detached(error: BaseException) -> BaseException:
    """`error` without its traceback.  An error reply kept among the replies of a pipeline holds,
    through its traceback's frames, the list that holds it: a reference cycle, which the worker's
    frozen heap would never collect (`workers/runtime/heap.py`)."""
    return error.with_traceback(None)


def is_no_script(result: object) -> bool:
    """True for the NOSCRIPT error of an EVALSHA whose script the server does not hold."""
    return isinstance(result, redis.exceptions.NoScriptError)


def node_of(redis_client: ClusterClient, key: str) -> ClusterNode:
    """The cluster node (master) that serves the slot of `key`, from the client's slot map."""
    return redis_client.get_node_from_key(key)


def replicas_of(redis_client: ClusterClient, key: str) -> int:
    """How many replicas the client's slot map lists for the slot of `key` (0 if unknown)."""
    nodes = redis_client.nodes_manager.slots_cache.get(redis_client.keyslot(key)) or []
    return max(0, len(nodes) - 1)


def wait_replicated(redis_client: ClusterClient, key: str, timeout_ms: int) -> int | None:
    """WAIT on the master of `key`'s slot until its replicas acknowledged every write so far.

    Returns how many replicas acknowledged, or None when the slot has no replica to wait for.
    """
    replicas = replicas_of(redis_client, key)
    if not replicas:
        return None
    return integer(redis_client.execute_command("WAIT", replicas, timeout_ms, target_nodes=node_of(redis_client, key)))


def pack(command: Sequence[EncodableT]) -> bytes | tuple[EncodableT, ...]:
    """`command` in the Redis protocol, packed once by hiredis's C packer, for `exchange` to send
    as often as needed (without hiredis it stays a tuple, which `exchange` packs each time)."""
    return pack_command(tuple(command)) if pack_command is not None else tuple(command)


def exchange(client: ServerClient, commands: Sequence[Command]) -> list[Reply]:
    """Send `commands` (argument tuples, or `pack`ed bytes) in one write on one pooled
    connection and read their replies in order.

    What a non-transactional pipeline with `raise_on_error=False` does (an error reply comes
    back as its exception, a connection error raises), without redis-py's per-command
    bookkeeping, argument conversion and response callbacks: the dispatcher's round trip,
    which runs for every entry that arrives alone.  Replies are raw RESP values (a stream
    entry's fields are a flat field, value list).
    """
    trip = RoundTrip(client)
    trip.send(commands)
    return trip.finish()


class RoundTrip:
    """`exchange` in two halves on one connection: commands are sent as they are ready
    (Redis runs them while the caller prepares the next ones), every reply is read at the
    end, in order (or some of them as they are needed, `read`).  A failed send keeps its error
    for `finish`, which raises it.

    The connection is the caller's own when given (kept open; a broken one is disconnected
    and connects again on its next use), else one borrowed from the client's pool for the
    round trip: redis-py's checkout and release cost more than a small write.
    """

    def __init__(self, client: ServerClient, connection: Connection | None = None) -> None:
        self._pool = client.connection_pool
        self._own = connection is not None
        self._connection = connection
        self._sent = 0
        self._read = 0  # replies read so far (`read`)
        self._error: BaseException | None = None

    @property
    def sent(self) -> int:
        """How many commands were sent (each has one reply for `finish` to read)."""
        return self._sent

    def send(self, commands: Sequence[Command]) -> None:
        """Write `commands` now (one write); their replies are read by `finish`."""
        if self._error is not None or not commands:
            return
        try:
            if self._connection is None:
                self._connection = self._pool.get_connection()
            connection = wire(self._connection)
            packed = b"".join([_packed(connection, command) for command in commands])
            connection.send_packed_command([packed])
            self._sent += len(commands)
        except Exception as error:  # kept for finish to raise, after the cleanup
            self._error = error
            self._close(broken=True)

    def finish(self) -> list[Reply]:
        """The replies of every command sent and not yet `read`, in order (error replies as their
        exceptions); raises the error of a failed send, or of the connection while reading."""
        replies = self.read(self._sent - self._read)
        self._close(broken=False)
        return replies

    def read(self, count: int) -> list[Reply]:
        """The next `count` replies, in order (error replies as their exceptions); the connection
        stays this round trip's (`finish` or `abandon` ends it).  Raises as `finish` does, and
        again at every later read once the connection failed."""
        if self._error is not None:
            raise self._error
        if self._connection is None or count <= 0:
            return []  # nothing sent (or nothing asked)
        connection = wire(self._connection)
        replies: list[Reply] = []
        try:
            for _ in range(count):
                try:
                    replies.append(connection.read_response())
                except redis.ResponseError as error:
                    replies.append(detached(error))
        except BaseException as error:
            self._error = error
            self._close(broken=True)  # a reply may be left unread: never reuse the connection
            raise
        self._read += count
        return replies

    def abandon(self) -> None:
        """End the round trip without reading the replies left: the connection is closed when any
        are (a borrowed one is returned closed), since they would answer its next user; with none
        left it ends as `finish` ends it."""
        self._close(broken=self._sent > self._read)

    def _close(self, *, broken: bool) -> None:
        if self._connection is None:
            return
        connection, self._connection = self._connection, None
        if broken:
            wire(connection).disconnect()
        if not self._own:
            self._pool.release(connection)


class SharedRoundTrip:
    """One `RoundTrip` that several callers send on, each reading its own replies (`Share.replies`)
    in the order they sent: a dispatcher round's read-aheads of every partition go out on one
    connection (a connection of its own each cost ~0.7 ms to open here, ~45 ms for a fresh
    worker's 64 partitions).  Replies a caller never read are read and dropped by the first
    caller after it that reads, and given up by `close` (the connection closed) when nobody did.
    One thread uses it."""

    def __init__(self, client: ServerClient) -> None:
        self._trip = RoundTrip(client)
        self._unread: deque[Share] = deque()  # the shares whose replies were not read, in order

    def send(self, commands: Sequence[Command]) -> Share:
        """Write `commands` now; the returned share reads their replies."""
        self._trip.send(commands)
        share = Share(self, len(commands))
        self._unread.append(share)
        return share

    def replies_of(self, share: Share) -> list[Reply]:
        """The replies of `share`'s commands (`RoundTrip.read`; those of unread shares before it
        are read and dropped first).  Raises `ValueError` for a share read before."""
        if share not in self._unread:
            raise ValueError("the replies of this share were read before")
        while True:
            first = self._unread.popleft()
            replies = self._trip.read(first.count)
            if first is share:
                return replies

    def close(self) -> None:
        """End it: the connection is returned when every reply was read, else closed."""
        if self._unread:
            self._unread.clear()
            self._trip.abandon()
        else:
            self._trip.finish()


class Share:
    """The commands one caller sent on a `SharedRoundTrip`."""

    __slots__ = ("count", "trip")

    def __init__(self, trip: SharedRoundTrip, count: int) -> None:
        self.trip = trip
        self.count = count

    def replies(self) -> list[Reply]:
        """This caller's replies, in order (`SharedRoundTrip.replies_of`)."""
        return self.trip.replies_of(self)


def wire(connection: Connection) -> Wire:
    """A pooled connection seen through the typed methods a round trip calls."""
    return connection


def _packed(connection: Wire, command: Command) -> bytes:
    if isinstance(command, bytes):
        return command
    if pack_command is not None:
        return pack_command(tuple(command))
    return b"".join(connection.pack_command(*command))


def poll_groups(redis_client: ClusterClient, group: str, consumer: str, keys: list[str],
                count: int) -> dict[str, list[Entry] | BaseException]:
    """Redis Cluster: a non-blocking `XREADGROUP ... >` of each stream; key -> entries or error.

    One read cannot name streams of two slots, so each is its own command, sent in one
    `exchange` per node (redis-py's cluster pipeline costs 8x more client time).  A node
    that fails or moved a slot answers an error for its streams: their readers meet it on
    their own commands, which refresh the client's slot map.
    """
    groups: dict[str, tuple[ClusterNode, list[str]]] = {}
    for key in keys:
        node = redis_client.get_node_from_key(key)
        groups.setdefault(node.name, (node, []))[1].append(key)
    replies: dict[str, list[Entry] | BaseException] = {}
    for node, node_keys in groups.values():
        commands = [("XREADGROUP", "GROUP", group, consumer, "COUNT", count, "STREAMS", key, ">") for key in node_keys]
        try:
            results: list[Reply] = exchange(redis_client.get_redis_connection(node), commands)
        except Exception as error:  # reported per stream: the caller decides
            results = [error] * len(node_keys)
        for key, result in zip(node_keys, results, strict=True):
            if isinstance(result, BaseException):
                replies[key] = result
            else:
                replies[key] = [entry for _, entries in stream_entries(result) for entry in entries]
    return replies
