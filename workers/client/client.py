"""Client library: submit tool calls, await replies, follow a session's frames.

Example::

    from workers.client.client import Client
    client = Client(redis=redis.Redis.from_url("redis://localhost:6379/0"))
    reply = client.call("session-1", "intelligent_ui_open", {"document": document})
    if reply["ok"]:
        cursor = reply["result"]["frame"]          # the checkpoint frame
        print(reply["result"]["receipt"])          # the model-visible receipt text

    with client.follow("session-1") as feed:       # pub/sub + catch-up from the frame log
        for state in feed.states(timeout=5.0):     # core UIStreamState, one per accepted change
            print(state.checkpoint["seq"], state.status)

A follower feeds every frame, from pub/sub or from the frame log, through
`core.stream.lifecycle.accept_checkpoint`, so one that misses pub/sub messages still converges: it
reads the log after subscribing, and again whenever pub/sub is quiet.

On a Redis Cluster (a `RedisCluster` client, e.g. `workers.redisio.connect("redis+cluster://...")`)
the workers publish with SPUBLISH, so the followers subscribe with SSUBSCRIBE to the node that
holds the session's partition slot.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

from core.errors import UIStreamError
from core.stream.lifecycle import UIStreamState, accept_checkpoint

from ..redisio.client import PubSub, RedisClient, Reply
from ..redisio.connection import TRANSIENT_ERRORS, add_entry, bulk, is_cluster, logged, stream_range, text
from ..redisio.durability import Durability
from ..redisio.keys import PROTOCOL, Keys, partition_of
from ..redisio.replies import ReplyTimeout, await_reply, deliver
from ..wire.entry import dumps, is_call_id, is_request_id, is_session_id, loads

# The ids of an entry the runtime can answer (workers/wire/entry.py's rules, in words).
ID_RULES = (("session", is_session_id, "1-128 printable ASCII characters without space, ':', '{' or '}'"),
            ("request", is_request_id, "1-128 printable ASCII characters"),
            ("call", is_call_id, "1-256 printable ASCII characters"))


class ClientError(Exception):
    """The deployment cannot be used (missing or mismatched `{prefix}:meta`, reply timeout)."""


class InvalidEntry(ClientError):
    """An entry no reply could come for (an id against the wire's rules): refused before it is added."""


class Client:
    """Submits tool calls to the partitioned input streams and reads their replies."""

    def __init__(self, *, redis: RedisClient, prefix: str = "iui", partitions: int | None = None) -> None:
        self._redis = redis
        self.keys = Keys(prefix)
        meta = {text(k): text(v) for k, v in self._redis.hgetall(self.keys.meta).items()}
        self.partitions = self._partitions(meta, partitions)
        self._durability = self._parse_durability(meta["durability"]) if "durability" in meta else None

    @property
    def durability(self) -> Durability:
        """The deployment's durability, which says how a reply is confirmed (read again from
        `{prefix}:meta` until a worker wrote it; `fast` meanwhile)."""
        if self._durability is None:
            stored = self._redis.hget(self.keys.meta, "durability")
            if stored is None:
                return Durability()
            self._durability = self._parse_durability(text(stored))
        return self._durability

    def _parse_durability(self, value: str) -> Durability:
        try:
            return Durability.parse(value)
        except ValueError:
            raise ClientError(f"{self.keys.meta} names an unknown durability") from None

    def _partitions(self, meta: dict[str, str], expected: int | None) -> int:
        if not meta:
            if expected is None:
                raise ClientError(f"{self.keys.meta} is missing: start a worker first or pass partitions=")
            return expected
        if meta.get("protocol") != str(PROTOCOL):
            raise ClientError(f"{self.keys.meta} has protocol={meta.get('protocol')}, this client speaks {PROTOCOL}")
        stored = int(meta.get("partitions", "0"))
        if expected is not None and stored != expected:
            raise ClientError(f"{self.keys.meta} has partitions={stored}, expected {expected}")
        return stored

    def partition(self, session: str) -> int:
        """The partition of a session."""
        return partition_of(session, self.partitions)

    def entry(self, session: str, name: str, arguments: Any, *, call: str | None = None,
              request: str | None = None, kind: str = "tool", **trusted: str) -> dict[str, str]:
        """The input entry of one call (ids generated where not given; `trusted`: principal, project).

        Raises `InvalidEntry` (a `ClientError`) for an id the runtime could never answer (an empty session, a request
        id no reply key can hold): such an entry used to be written, and its caller waited out its
        whole timeout for a reply that could not come."""
        fields = {"session": session, "request": uuid.uuid4().hex if request is None else request, "kind": kind,
                  "name": name, "call": f"call_{uuid.uuid4().hex[:16]}" if call is None else call,
                  "body": arguments if isinstance(arguments, str) else dumps(arguments), **trusted}
        for field, valid, rule in ID_RULES:
            value = fields[field]
            if type(value) is not str or not valid(value):  # the value is never echoed: it may be anything
                raise InvalidEntry(f"the {field} id must be {rule}")
        return fields

    def submit(self, session: str, tool: str, arguments: Any, *, call: str | None = None,
               request: str | None = None, kind: str = "tool") -> str:
        """XADD one tool call; returns its request id (generated if not given)."""
        return self.add(self.entry(session, tool, arguments, call=call, request=request, kind=kind))

    def add(self, fields: dict[str, str]) -> str:
        """XADD one entry made by `entry`; returns its request id."""
        add_entry(self._redis, self.keys.input(self.partition(fields["session"])), fields)
        return fields["request"]

    def reply(self, session: str, request: str, *, timeout: float = 30.0) -> dict[str, Any]:
        """Wait for the reply of a request and take it (see `workers.replies`: a broken
        connection never loses it; the read is tried again until the deadline).

        It never adds the entry again: under `fast` durability a Redis crash may lose an entry
        `add` or `submit` wrote, and its reply then never comes.  After a connection error, add
        the same entry again (same `request` and `call`: answered from the ledger, never applied
        twice), or use `send` / `call`, which do."""
        key = self.keys.reply(self.partition(session), session, request)
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = await_reply(self._redis, key, max(0.01, round(deadline - time.monotonic(), 3)),
                                    self.durability)
            except ReplyTimeout:
                raise ClientError(f"no confirmed reply to request {request} within {timeout} s") from None
            except TRANSIENT_ERRORS:
                if time.monotonic() >= deadline:
                    raise ClientError(f"no reply to request {request} within {timeout} s") from None
                time.sleep(0.05)
                continue
            if value is None:
                raise ClientError(f"no reply to request {request} within {timeout} s")
            reply: dict[str, Any] = loads(value)
            return reply

    def send(self, fields: dict[str, str], *, timeout: float = 30.0) -> dict[str, Any]:
        """Add an entry made by `entry` and await its reply, adding the same entry again after a
        connection error (the runtime answers a resend from its ledger: never applied twice)."""
        session, request = fields["session"], fields["request"]
        key = self.keys.reply(self.partition(session), session, request)
        try:
            value = deliver(lambda: self.add(fields), key, self._redis, timeout, self.durability)
        except ReplyTimeout:
            raise ClientError(f"no reply to request {request} within {timeout} s") from None
        reply: dict[str, Any] = loads(value)
        return reply

    def peek_reply(self, session: str, request: str) -> dict[str, Any] | None:
        """Read the first reply without taking it (LINDEX 0), or None if there is none."""
        value = self._redis.lindex(self.keys.reply(self.partition(session), session, request), 0)
        return None if value is None else loads(value)

    def call(self, session: str, tool: str, arguments: Any, *, call: str | None = None,
             request: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
        """Submit a tool call and wait for its reply (resent after a connection error: `send`)."""
        return self.send(self.entry(session, tool, arguments, call=call, request=request), timeout=timeout)

    def frame_log(self, session: str, after: str = "-") -> list[tuple[str, dict[str, Any]]]:
        """The session's logged frames after a log id ("-" for all), oldest first."""
        start = "-" if after == "-" else f"({after}"
        rows = self._redis.xrange(self.keys.frame_log(self.partition(session), session), min=start)
        return [(text(i), loads(logged(f, "frame"))) for i, f in stream_range(rows)]

    def follow(self, session: str) -> FrameFeed:
        """A frame follower for a session (use as a context manager)."""
        return FrameFeed(client=self, redis=self._redis, session=session)

    # -- actions (seed 000 section 11) ------------------------------------------------------

    def action(self, session: str, name: str, body: Any, *, request: str | None = None,
               timeout: float = 30.0) -> dict[str, Any]:
        """Submit one `kind=action` request (reserve, get, cancel, list, catalog, confirm) and await its reply."""
        request = uuid.uuid4().hex if request is None else request
        return self.send(self.entry(session, name, body, call=request, request=request, kind="action"),
                         timeout=timeout)

    def reserve(self, session: str, document_ref: dict[str, Any], action_id: str, values: dict[str, Any], *,
                request_id: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
        """Reserve an action of a persisted document; reuse `request_id` only to retry the same click."""
        body = {"documentRef": document_ref, "requestId": request_id or f"req-{uuid.uuid4().hex}",
                "actionId": action_id, "values": values}
        return self.action(session, "reserve", body, timeout=timeout)

    def get(self, session: str, operation_id: str, *, timeout: float = 30.0) -> dict[str, Any]:
        """The current receipt of an operation."""
        return self.action(session, "get", {"operationId": operation_id}, timeout=timeout)

    def cancel(self, session: str, operation_id: str, *, timeout: float = 30.0) -> dict[str, Any]:
        """Cancel a queued or unconfirmed operation (a running one answers `not_cancellable`)."""
        return self.action(session, "cancel", {"operationId": operation_id}, timeout=timeout)

    def confirm(self, session: str, operation_id: str, approve: bool, *, timeout: float = 30.0) -> dict[str, Any]:
        """Approve (-> queued) or deny (-> cancelled) an operation awaiting confirmation."""
        body = {"operationId": operation_id, "decision": "approve" if approve else "deny"}
        return self.action(session, "confirm", body, timeout=timeout)

    def receipts_of(self, session: str, document_ref: dict[str, Any], *, timeout: float = 30.0) -> dict[str, Any]:
        """The receipts of one document ref, oldest first (the `list` request)."""
        return self.action(session, "list", document_ref, timeout=timeout)

    def catalog(self, session: str, *, timeout: float = 30.0) -> dict[str, Any]:
        """The host's public capability catalog."""
        return self.action(session, "catalog", {}, timeout=timeout)

    def receipt_log(self, session: str, after: str = "-") -> list[tuple[str, dict[str, Any]]]:
        """The session's logged receipt changes after a log id ("-" for all), oldest first."""
        start = "-" if after == "-" else f"({after}"
        rows = self._redis.xrange(self.keys.receipt_log(self.partition(session), session), min=start)
        return [(text(i), loads(logged(f, "receipt"))) for i, f in stream_range(rows)]

    def inbox(self, session: str, after: str = "-") -> list[tuple[str, dict[str, str]]]:
        """The session's agent inbox entries (operationId, actionId, documentRef JSON, prompt)."""
        start = "-" if after == "-" else f"({after}"
        rows = self._redis.xrange(self.keys.agent_inbox(self.partition(session), session), min=start)
        return [(text(i), {text(k): text(v) for k, v in f.items()}) for i, f in stream_range(rows)]

    def follow_receipts(self, session: str) -> ReceiptFeed:
        """A receipt follower for a session (use as a context manager)."""
        return ReceiptFeed(client=self, redis=self._redis, session=session)


def subscribe(pubsub: PubSub, channel: str, sharded: bool) -> None:
    """SUBSCRIBE, or SSUBSCRIBE on a Redis Cluster (the workers publish with SPUBLISH there)."""
    if sharded:
        pubsub.ssubscribe(channel)
    else:
        pubsub.subscribe(channel)


def next_message(pubsub: PubSub, timeout: float, sharded: bool) -> dict[str, Reply] | None:
    """The next message within `timeout` seconds, or None.

    On a cluster, a fail-over of the channel's node is a quiet channel: redis-py subscribes
    again on the new master, and the caller's catch-up reads the log meanwhile.
    """
    if not sharded:
        return pubsub.get_message(timeout=timeout)
    try:
        return pubsub.get_sharded_message(timeout=timeout)
    except TRANSIENT_ERRORS:
        time.sleep(timeout)
        return None


class FrameFeed:
    """Follows one session's frames: pub/sub for speed, the frame log for completeness."""

    def __init__(self, *, client: Client, redis: RedisClient, session: str) -> None:
        self._client = client
        self._session = session
        self._pubsub = redis.pubsub(ignore_subscribe_messages=True)
        self._channel = client.keys.channel(client.partition(session), session)
        self._sharded = is_cluster(redis)
        self._log_id = "-"
        self.views: dict[str, UIStreamState] = {}  # uiId -> latest state
        self.rejected = 0

    def __enter__(self) -> FrameFeed:
        subscribe(self._pubsub, self._channel, self._sharded)  # first: nothing falls between log and channel
        return self

    def __exit__(self, *exc: Any) -> None:
        self._pubsub.close()

    def accept(self, frame: Any) -> UIStreamState | None:
        """Feed one frame; returns the new state if the view changed, else None."""
        ui_id: Any = frame.get("uiId") if isinstance(frame, dict) else None
        current = self.views.get(ui_id)
        try:
            if current is not None and frame.get("generation", 0) > current.generation:
                current = None  # a newer generation replaces the view
            state = accept_checkpoint(current, frame)
        except UIStreamError:
            self.rejected += 1
            return None
        if state is current:
            return None
        self.views[ui_id] = state
        return state

    def catch_up(self) -> list[UIStreamState]:
        """Read the frame log past the last logged frame seen; returns the changed states."""
        changed = []
        for log_id, frame in self._client.frame_log(self._session, self._log_id):
            self._log_id = log_id
            state = self.accept(frame)
            if state is not None:
                changed.append(state)
        return changed

    def states(self, *, timeout: float = 5.0, idle: float = 0.5) -> Iterator[UIStreamState]:
        """Yield each changed state until no frame arrived for `timeout` seconds."""
        yield from self.catch_up()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = next_message(self._pubsub, min(idle, max(0.0, deadline - time.monotonic())), self._sharded)
            if message is None:
                changed = self.catch_up()  # quiet channel: make sure nothing was missed
            else:
                state = self.accept(loads(bulk(message["data"])))
                changed = [] if state is None else [state]
            for state in changed:
                deadline = time.monotonic() + timeout
                yield state


class ReceiptFeed:
    """Follows one session's receipt changes: pub/sub for speed, the receipt log for catch-up.

    Each (operationId, status) is yielded once: the status machine never revisits a status, so
    a change seen on both the channel and the log is recognised.
    """

    def __init__(self, *, client: Client, redis: RedisClient, session: str) -> None:
        self._client = client
        self._session = session
        self._pubsub = redis.pubsub(ignore_subscribe_messages=True)
        self._channel = client.keys.receipt_channel(client.partition(session), session)
        self._sharded = is_cluster(redis)
        self._log_id = "-"
        self._seen: set[tuple[str, str]] = set()
        self.latest: dict[str, dict[str, Any]] = {}  # operationId -> newest receipt

    def __enter__(self) -> ReceiptFeed:
        subscribe(self._pubsub, self._channel, self._sharded)  # first: nothing falls between log and channel
        return self

    def __exit__(self, *exc: Any) -> None:
        self._pubsub.close()

    def accept(self, receipt: Any) -> dict[str, Any] | None:
        """Take one receipt; returns it if it is a change not seen before."""
        if not isinstance(receipt, dict):
            return None
        key = (str(receipt.get("operationId")), str(receipt.get("status")))
        if key in self._seen:
            return None
        self._seen.add(key)
        self.latest[key[0]] = receipt
        return receipt

    def catch_up(self) -> list[dict[str, Any]]:
        """Read the receipt log past the last entry seen; returns the new changes."""
        changed = []
        for log_id, receipt in self._client.receipt_log(self._session, self._log_id):
            self._log_id = log_id
            accepted = self.accept(receipt)
            if accepted is not None:
                changed.append(accepted)
        return changed

    def receipts(self, *, timeout: float = 5.0, idle: float = 0.5) -> Iterator[dict[str, Any]]:
        """Yield each new receipt change until none arrived for `timeout` seconds."""
        yield from self.catch_up()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = next_message(self._pubsub, min(idle, max(0.0, deadline - time.monotonic())), self._sharded)
            changed = self.catch_up() if message is None else [self.accept(loads(bulk(message["data"])))]
            for receipt in changed:
                if receipt is not None:
                    deadline = time.monotonic() + timeout
                    yield receipt

    def wait_for(self, operation_id: str, statuses: set[str], *, timeout: float = 10.0) -> dict[str, Any]:
        """The first receipt of `operation_id` whose status is in `statuses` (raises `ClientError` on timeout)."""
        current = self.latest.get(operation_id)
        if current is not None and current.get("status") in statuses:
            return current
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for receipt in self.receipts(timeout=max(0.01, deadline - time.monotonic()), idle=0.1):
                if receipt.get("operationId") == operation_id and receipt.get("status") in statuses:
                    return receipt
        raise ClientError(f"operation {operation_id} reached none of {sorted(statuses)} within {timeout} s")
