"""Tool-call round trips through the Redis runtime, next to the floor of Redis work alone.

Starts a private `redis-server` on a free loopback port, then for each scenario starts
worker processes (`python -m workers.cli worker`), submits a stream of
`intelligent_ui_patch` calls on many sessions and waits for every reply.

- throughput: all patches submitted at once (cursors precomputed), their frames counted by a
  pattern subscriber, then every reply checked; timed from the submission's start to the last
  reply, or with `--presubmitted` from the workers' SIGCONT to the last frame, the patches
  submitted while they were stopped (`drain`, as issue 24's black-box run pre-submits them);
- latency: patches paced at half (then 75 %) of the measured throughput, or at `--rate`
  (then 1.5x that) to compare two builds at the same load, p50/p99/p99.9 submit -> frame
  received by a pub/sub subscriber (nothing polls), medians of 3 runs, with the machine's
  slowdowns during them (`bench.stalls`);
- latency floor: the same paced runs against a consumer that only reads, publishes and acks
  each entry, at the small/1 worker's rates (the tail this machine gives a consumer with no work);
- floor: the same Redis command sequence per entry (XADD, XREADGROUP, one EVALSHA of the
  commit script doing the same writes, the reply read) with no validation, in one process.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import hiredis
import redis

from bench.stalls import NONE, Slowdowns, StallProbe
from workers.redisio.connection import exchange
from workers.redisio.keys import Keys, partition_of
from workers.redisio.local_server import start_redis_server, start_redis_socket

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PARTITIONS = 64
GENERATION_PATCHES = 250  # patches the bench sends per generation (the frame budget is 256 frames)
PATCH = "intelligent_ui_patch"
REVISION = re.compile(rb'"revision":(\d+)')
PAUSE_LIMIT_S = 1.0  # the longest a pre-submitted drain stops its consumers (a worker's lease is 2 s here)


# -- documents ------------------------------------------------------------------------------


SCENARIOS = ("small-1", "small-2", "large-1", "large-2")


def small_document() -> dict[str, Any]:
    """The stream example grown to 10 components."""
    document = json.loads((EXAMPLES / "stream-initial.json").read_text("utf-8"))
    for i in range(5):
        document["root"]["children"].append({"id": f"note-{i}", "type": "Text", "props": {"text": f"Note {i}"}})
    return document


def large_document() -> dict[str, Any]:
    """The stream example grown to 200 components."""
    document = small_document()
    body = [{"id": f"line-{i}", "type": "Text", "props": {"text": f"Line {i} of the report"}} for i in range(190)]
    document["root"]["children"].append({"id": "lines", "type": "Card", "props": {"title": "Lines", "gap": "sm"},
                                         "children": body[:-1]})
    return document


def mutation(i: int) -> dict[str, Any]:
    """An update of one Text node (different text each time)."""
    return {"type": "update", "nodeId": f"note-{i % 5}", "props": {"text": f"Note value {i}"}}


# -- processes ------------------------------------------------------------------------------


def start_redis(directory: str, *, unix: bool = False) -> tuple[subprocess.Popen, str]:
    """A private redis-server on a free loopback port; its URL, or with `unix` that of its Unix socket."""
    if unix:
        return start_redis_socket(directory)
    process, port = start_redis_server(directory)
    return process, f"redis://127.0.0.1:{port}/0"


def start_workers(url: str, count: int, *, python: tuple[str, ...] = (sys.executable,),
                  env: dict[str, str] | None = None, cwd: str | None = None) -> list[subprocess.Popen]:
    """`count` worker processes (`python -m workers.cli worker`: another interpreter, its
    environment and folder for a compiled core); returns once every partition is leased."""
    env = {**(os.environ if env is None else env), "IUI_REDIS_URL": url, "IUI_PARTITIONS": str(PARTITIONS),
           "IUI_LEASE_TTL_MS": "2000", "IUI_LEASE_RENEW_MS": "500", "IUI_HEARTBEAT_MS": "100"}
    processes = [subprocess.Popen([*python, "-m", "workers.cli", "worker", "--worker-id", f"bench-{i}"],
                                  env=env, cwd=cwd, stderr=subprocess.DEVNULL) for i in range(count)]
    client, keys = redis.Redis.from_url(url), Keys("iui")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        owners = {client.hget(keys.lease(p), "owner") for p in range(PARTITIONS)}
        if None not in owners and len(owners) == count:
            return processes
        time.sleep(0.1)
    raise RuntimeError("workers did not take every partition")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_stats(pid: int) -> dict[int, list[str]]:
    """The `/proc` stat fields after the command name of each thread of a process, by thread id
    ([0] its state, [11] and [12] its user and system clock ticks); a thread that ended meanwhile
    is left out."""
    stats = {}
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            stats[int(task.name)] = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
    return stats


def thread_cpu_seconds(pid: int) -> dict[int, float]:
    """User + system CPU seconds of each thread of a process so far, by thread id (Linux /proc)."""
    return {thread: (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            for thread, fields in thread_stats(pid).items()}


def stop(processes: list[subprocess.Popen]) -> None:
    """SIGTERM, then wait."""
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        process.wait(timeout=30)


# -- load -----------------------------------------------------------------------------------


class Load:
    """Sessions with an open generation and their next cursors."""

    def __init__(self, url: str, document: dict[str, Any], sessions: int, tag: str) -> None:
        self.redis = redis.Redis.from_url(url)
        self.keys = Keys("iui")
        self.sessions = [f"{tag}-{n}" for n in range(sessions)]
        self.body = json.dumps({"document": document})
        self.cursor: dict[str, list[Any]] = {}
        self._sequence = 0
        for session in self.sessions:
            self._open(session)

    def _open(self, session: str) -> None:
        self._sequence += 1
        call = f"open-{session}-{self._sequence}"
        request = self.submit_raw(session, "intelligent_ui_open", self.body, call)
        reply = self.wait(session, request)
        frame = reply["result"]["frame"]
        self.cursor[session] = [call, frame["generation"], 0]

    def submit_raw(self, session: str, tool: str, body: str, call: str, pipe: Any = None) -> str:
        request = f"r{self._sequence}-{call}"
        self._sequence += 1
        (pipe or self.redis).xadd(self.keys.input(partition_of(session, PARTITIONS)),
                                  {"session": session, "request": request, "kind": "tool", "name": tool,
                                   "call": call, "body": body})
        return request

    def _next_patch(self, session: str) -> tuple[str, str]:
        """The (call id, body) of a session's next patch (precomputed cursor); advances the cursor."""
        source, generation, revision = self.cursor[session]
        body = json.dumps({"sourceCallId": source, "generation": generation, "baseRevision": revision,
                           "mutation": mutation(revision)})
        self.cursor[session][2] += 1
        return f"{session}-{generation}-{revision}", body

    def patch_command(self, session: str) -> bytes:
        """The packed XADD of a session's next patch (for a bare `exchange`)."""
        call, body = self._next_patch(session)
        request = f"r{self._sequence}-{call}"
        self._sequence += 1
        stream = self.keys.input(partition_of(session, PARTITIONS))
        return hiredis.pack_command(("XADD", stream, "*", "session", session, "request", request, "kind", "tool",
                                     "name", PATCH, "call", call, "body", body))

    def patch(self, session: str, pipe: Any = None) -> str:
        """Submit the next patch of a session."""
        call, body = self._next_patch(session)
        return self.submit_raw(session, PATCH, body, call, pipe)

    def reopen_if_needed(self, budget: int) -> None:
        if budget > GENERATION_PATCHES:
            raise ValueError(f"{budget} patches per session do not fit in one generation ({GENERATION_PATCHES}); "
                             "use more sessions")
        for session in self.sessions:
            if self.cursor[session][2] + budget >= GENERATION_PATCHES:
                self._open(session)

    def wait(self, session: str, request: str) -> dict[str, Any]:
        key = self.keys.reply(partition_of(session, PARTITIONS), session, request)
        popped = self.redis.blpop([key], timeout=60)
        if popped is None:
            raise RuntimeError(f"no reply for {request}")
        reply = json.loads(popped[1])
        if not reply["ok"]:
            raise RuntimeError(f"rejected: {reply['error']}")
        return reply


def subscribed(client: redis.Redis, keys: Keys) -> Any:
    """A pub/sub connection on every frame channel, returned once Redis confirmed the subscription."""
    subscriber = client.pubsub()
    subscriber.psubscribe(keys.channel_pattern())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        message = subscriber.get_message(timeout=1.0)
        if message is not None and message["type"] == "psubscribe":
            subscriber.ignore_subscribe_messages = True
            return subscriber
    raise RuntimeError("the frame subscription was not confirmed")


class FrameCounter:
    """Counts accepted frames on every session channel (PSUBSCRIBE), so a run waits for its
    replies without polling: a commit publishes its frame and pushes its reply in one step.

    Polling every outstanding reply key each millisecond made Redis run thousands of empty
    LPOPs while the workers were busy; this only receives what Redis pushes anyway.
    """

    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self._subscriber = subscribed(client, keys)
        self.seen = 0

    def wait(self, count: int, quiet_s: float = 5.0) -> bool:
        """True once `count` frames arrived; False after `quiet_s` without one (a call was
        rejected: it publishes no frame)."""
        last = time.monotonic()
        while self.seen < count and time.monotonic() - last < quiet_s:
            if self._subscriber.get_message(timeout=0.5) is not None:
                self.seen += 1
                last = time.monotonic()
        return self.seen >= count

    def close(self) -> None:
        self._subscriber.close()


def await_replies(client: redis.Redis, keys: Keys, pipe: Any, reply_keys: list[str],
                  timeout: float = 60.0) -> list[bytes]:
    """Send the submissions queued on `pipe`, wait for their frames (pushed, nothing polls),
    then pop every reply; a rejected call publishes no frame, so its reply is then polled for."""
    frames = FrameCounter(client, keys)
    try:
        pipe.execute()
        frames.wait(len(reply_keys))
    finally:
        frames.close()
    return collect_replies(client, reply_keys, timeout)


def collect_replies(client: redis.Redis, keys: list[str], timeout: float = 60.0) -> list[bytes]:
    """Pop one reply from each key, in bulk (pipelined LPOPs), so the load generator stays cheap."""
    replies: dict[str, bytes] = {}
    deadline = time.monotonic() + timeout
    while len(replies) < len(keys):
        waiting = [key for key in keys if key not in replies][:1_000]
        pipe = client.pipeline(transaction=False)
        for key in waiting:
            pipe.lpop(key)
        got = {key: value for key, value in zip(waiting, pipe.execute(), strict=False) if value is not None}
        replies.update(got)
        if not got:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(keys) - len(replies)} replies missing")
            time.sleep(0.001)
    return [replies[key] for key in keys]


def throughput(load: Load, per_session: int, *, pause: Sequence[subprocess.Popen] = ()) -> float:
    """Calls per second with every patch submitted at once: timed from the submission's start to
    the last reply popped; with `pause` (the consumers: `presubmitted`), from the consumers'
    SIGCONT to the last frame."""
    load.reopen_if_needed(per_session)

    def submit(pipe: Any) -> list[str]:
        requests = [(s, load.patch(s, pipe)) for _ in range(per_session) for s in load.sessions]
        return [load.keys.reply(partition_of(session, PARTITIONS), session, request) for session, request in requests]

    rate, replies = drain(load.redis, load.keys, submit, pause)
    for reply in replies:
        if not reply.startswith(b'{"ok":true'):  # no JSON parse: the load generator shares the 2 cores
            raise RuntimeError(f"rejected: {reply[:300]!r}")
    return rate


def drain(client: redis.Redis, keys: Keys, submit: Callable[[Any], list[str]],
          pause: Sequence[subprocess.Popen] = ()) -> tuple[float, list[bytes]]:
    """(calls/s, the replies) of the calls `submit` queues on a pipeline (it returns their reply keys).

    Without `pause`, timed from the submission's start to the last reply popped, so the load
    generator's own work (building and sending the calls, popping the replies) is in the time,
    while the consumers wait for the first entry or are done: about 12 % of a drain of 7,680
    small patches at 7,500 calls/s, less of a slower one, so this ruler narrows every ratio of
    two speeds.  With `pause` ("pre-submitted", as issue 24's black-box run drains), the
    consumers are stopped (SIGSTOP) while every call is built and queued in Redis, and the time
    runs from their SIGCONT to the last frame received (a commit publishes its frame and pushes
    its reply in one step); the replies are popped after.  The stop must stay within
    `PAUSE_LIMIT_S`, well inside a worker's lease (`start_workers`: 2 s)."""
    if not pause:
        started = time.perf_counter()
        pipe = client.pipeline(transaction=False)
        reply_keys = submit(pipe)
        replies = await_replies(client, keys, pipe, reply_keys)
        return len(reply_keys) / (time.perf_counter() - started), replies
    frames = FrameCounter(client, keys)
    try:
        stopped = time.perf_counter()
        for process in pause:
            os.kill(process.pid, signal.SIGSTOP)
        try:
            for process in pause:
                wait_stopped(process.pid)
            pipe = client.pipeline(transaction=False)
            reply_keys = submit(pipe)
            pipe.execute()
        finally:
            started = time.perf_counter()
            for process in pause:
                os.kill(process.pid, signal.SIGCONT)
        if started - stopped > PAUSE_LIMIT_S:
            raise RuntimeError(f"the consumers were stopped {started - stopped:.2f} s while the calls were submitted "
                               f"(at most {PAUSE_LIMIT_S} s, within a worker's lease): submit fewer at once")
        frames.wait(len(reply_keys))
        elapsed = time.perf_counter() - started
    finally:
        frames.close()
    return len(reply_keys) / elapsed, collect_replies(client, reply_keys)


def wait_stopped(pid: int, timeout_s: float = 1.0) -> None:
    """Return once every thread of `pid` is stopped (/proc state T): SIGSTOP is delivered
    asynchronously, and a thread still running could read an entry meant to be pre-submitted."""
    deadline = time.monotonic() + timeout_s
    while True:
        states = {fields[0] for fields in thread_stats(pid).values()}
        if states <= {"T", "t"}:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"process {pid} did not stop within {timeout_s} s (thread states {sorted(states)})")
        time.sleep(0.0005)


def latency(load: Load, rate: float, count: int) -> tuple[float, float, float]:
    """p50, p99 and p99.9 submit -> frame latency (ms) at a paced rate (open loop).

    The submitter never waits for a worker; a second thread is a subscriber like a UI: it
    pattern-subscribes to the sessions' frame channels and stamps each frame as its bytes
    arrive (the commit script publishes the frame and pushes the reply in one atomic step).
    Both sides speak RESP on a bare connection (hiredis packs the XADD and parses the pushed
    frames), so the load generator's own CPU, which shares the 2 cores with Redis and the
    workers, stays small; nothing polls.
    """
    load.reopen_if_needed(count // len(load.sessions) + 1)
    sent: dict[tuple[str, int], float] = {}
    samples: list[float] = []
    frames = FrameStamps(load.redis, load.keys)
    collector = threading.Thread(target=frames.collect, args=(sent, samples, count))
    collector.start()
    interval, next_at = 1.0 / rate, time.perf_counter()
    try:
        for i in range(count):
            session = load.sessions[i % len(load.sessions)]
            delay = next_at - time.perf_counter()
            if delay > 0:
                time.sleep(delay)  # sleep, not spin: the load generator shares the 2 cores
            command = load.patch_command(session)
            sent[(session, load.cursor[session][2])] = time.perf_counter()
            (reply,) = exchange(load.redis, [command])
            if isinstance(reply, BaseException):
                raise reply
            next_at += interval
        collector.join(60)
    finally:
        frames.close()
        collector.join()
    if len(samples) < count:
        raise RuntimeError(f"{count - len(samples)} frames not received")
    samples.sort()
    return tuple(samples[min(len(samples) - 1, int(len(samples) * q))] * 1000 for q in (0.5, 0.99, 0.999))


class FrameStamps:
    """A bare pub/sub connection on every frame channel that stamps frames as they arrive."""

    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        options = client.connection_pool.connection_kwargs
        if "path" in options:  # a unix:// URL: the same server through its Unix socket
            self._socket = socket.socket(socket.AF_UNIX)
            self._socket.connect(options["path"])
        else:
            self._socket = socket.create_connection((options.get("host", "localhost"), options.get("port", 6379)))
        self._socket.settimeout(0.5)
        self._reader = hiredis.Reader()
        self._closed = threading.Event()
        self._stamp = 0.0  # when the chunk holding the message in hand arrived
        self._socket.sendall(hiredis.pack_command(("PSUBSCRIBE", keys.channel_pattern())))
        confirmed = self._next_message(time.monotonic() + 10)
        if confirmed is None or confirmed[0] != b"psubscribe":
            raise RuntimeError("the frame subscription was not confirmed")

    def collect(self, sent: dict[tuple[str, int], float], samples: list[float], count: int) -> None:
        """Stamp frames until `count` samples were taken or the connection is closed."""
        while len(samples) < count and not self._closed.is_set():
            message = self._next_message(time.monotonic() + 1)
            if message is None or message[0] != b"pmessage":
                continue
            session = message[2].decode().rsplit(":frames:", 1)[1]
            at = sent.pop((session, int(REVISION.search(message[3]).group(1))), None)
            if at is not None:
                samples.append(self._stamp - at)

    def _next_message(self, deadline: float) -> Any:
        message = self._reader.gets()
        while message is False and time.monotonic() < deadline and not self._closed.is_set():
            try:
                data = self._socket.recv(1 << 16)
            except (TimeoutError, OSError):
                continue
            if not data:
                return None
            self._stamp = time.perf_counter()  # every message of this chunk arrived by now
            self._reader.feed(data)
            message = self._reader.gets()
        return None if message is False else message

    def close(self) -> None:
        self._closed.set()
        self._socket.close()


# -- floor ----------------------------------------------------------------------------------


FLOOR_WORKER = r"""
import sys, redis
from workers.wire.entry import ok_reply_text
from workers.redisio.keys import GROUP, Keys, generation_field, ledger_name, ui_field
from workers.redisio.connection import is_busy_group
from workers.redisio.scripts import CommitPlan, Scripts
url, partitions, frame_size, batched = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
r, k = redis.Redis.from_url(url), Keys("floor")
scripts = Scripts(redis=r, group=GROUP, reply_ttl_ms=300000, frame_log_max=1024)
scripts.load()  # batched calls are bare EVALSHAs: a script Redis does not hold would fail every one
partition = {k.input(p): p for p in range(partitions)}
streams = {stream: ">" for stream in partition}
for s in streams:
    try: r.xgroup_create(s, GROUP, id="0", mkstream=True)
    except redis.ResponseError as error:
        if not is_busy_group(error): raise
frame = '"' + "x" * max(frame_size - 2, 0) + '"'
seqs = {}
print("ready", flush=True)
while True:
    batch = scripts.batch() if batched else None
    for stream, entries in r.xreadgroup(GROUP, "floor", streams, count=32, block=1000) or []:
        stream = stream.decode()
        p = partition[stream]
        for entry_id, f in entries:
            session, request = f[b"session"].decode(), f[b"request"].decode()
            seq = seqs.get(session, 0)
            seqs[session] = seq + 1
            plan = CommitPlan(
                session_keys=k.session_keys(p, session), reply_key=k.reply(p, session, request),
                expected_seq=seq, expected_generation=1 if seq else 0, new_generation=1,
                frame=frame, reply=ok_reply_text(request, '{"frame":' + frame + '}'),
                channel=k.channel(p, session), ui_field=ui_field("u"), field_prefix=generation_field("u", 1, ""),
                fields=[("seq", seq + 1), ("revision", seq), ("status", "streaming"), ("frames", seq + 1),
                        ("bytes", 1000 * seq), ("source", "call-1"), ("uiId", "u"), ("generation", 1),
                        ("last_call", request), ("last_digest", "d" * 97), ("last_receipt", "r" * 160),
                        (ledger_name(seq + 1), "d" * 97)])
            call = scripts.commit_call(k.lease(p), stream, "1:floor", entry_id.decode(), plan)
            if batch is None:
                scripts.run(call)
            else:
                batch.add(call)
    if batch is not None:
        batch.execute()
"""


def floor(url: str, frame_size: int, sessions: int, per_session: int, run: int, *, batched: bool,
          presubmitted: bool = False) -> float:
    """Calls per second of the Redis work alone (one process, no validation; commits pipelined per
    read when `batched`; `presubmitted`: as `drain` times it with the consumer paused)."""
    client = redis.Redis.from_url(url)
    for p in range(PARTITIONS):
        client.hset(Keys("floor").lease(p), "fence", "1:floor")
    return drain_consumer([sys.executable, "-c", FLOOR_WORKER, url, str(PARTITIONS), str(frame_size),
                           "1" if batched else "0"], url, "floor",
                          [f"floor{'b' if batched else ''}{'p' if presubmitted else ''}{run}-{n}"
                           for n in range(sessions)], per_session,
                          presubmitted=presubmitted)


def drain_consumer(command: list[str], url: str, prefix: str, sessions: list[str], per_session: int, *,
                   presubmitted: bool = False) -> float:
    """Start a floor consumer (`command` prints a line once it reads), submit `per_session` patches
    to each session at once under the key prefix `prefix`, and return calls/s as `drain` times them
    (`presubmitted`: the consumer stopped while they are submitted)."""
    client, keys = redis.Redis.from_url(url), Keys(prefix)
    worker = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert worker.stdout is not None
    worker.stdout.readline()

    def submit(pipe: Any) -> list[str]:
        requests = []
        for i in range(per_session):
            for session in sessions:
                request = f"f{i}"
                pipe.xadd(keys.input(partition_of(session, PARTITIONS)),
                          {"session": session, "request": request, "kind": "tool", "name": PATCH, "call": request,
                           "body": json.dumps({"mutation": mutation(i)})})
                requests.append((session, request))
        return [keys.reply(partition_of(s, PARTITIONS), s, r) for s, r in requests]

    try:
        return drain(client, keys, submit, [worker] if presubmitted else ())[0]
    finally:
        worker.kill()
        worker.wait()


ECHO_WORKER = r"""
import sys, orjson, redis
from workers.redisio.keys import Keys
from workers.redisio.connection import is_busy_group
url, partitions = sys.argv[1], int(sys.argv[2])
r, k = redis.Redis.from_url(url), Keys("iui")
streams = {k.input(p): ">" for p in range(partitions)}
partition = {k.input(p): p for p in range(partitions)}
for s in streams:
    try: r.xgroup_create(s, "echo", id="0", mkstream=True)
    except redis.ResponseError as error:
        if not is_busy_group(error): raise
print("ready", flush=True)
while True:
    pipe = r.pipeline(transaction=False)
    for stream, entries in r.xreadgroup("echo", "echo", streams, count=32, block=1000) or []:
        stream = stream.decode()
        for entry_id, f in entries:
            revision = orjson.loads(f[b"body"])["baseRevision"] + 1
            pipe.publish(k.channel(partition[stream], f[b"session"].decode()), '{"revision":%d}' % revision)
            pipe.xack(stream, "echo", entry_id)
    pipe.execute()
"""


class EchoLoad(Load):
    """Sessions whose patches the echo consumer answers: nothing is opened."""

    def _open(self, session: str) -> None:
        self._sequence += 1
        self.cursor[session] = [f"open-{session}-{self._sequence}", 1, 0]


def latency_floor(url: str, rate: float, args: argparse.Namespace) -> tuple[tuple[float, ...], Slowdowns]:
    """`paced` against a consumer that only reads, publishes and acks each entry: the
    latency this machine gives the same path with no work per entry."""
    echo = subprocess.Popen([sys.executable, "-c", ECHO_WORKER, url, str(PARTITIONS)], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert echo.stdout is not None
        echo.stdout.readline()
        return paced(EchoLoad(url, {}, args.sessions, "echo"), rate, args)
    finally:
        echo.kill()
        echo.wait()
        redis.Redis.from_url(url).flushall()


# -- main -----------------------------------------------------------------------------------


def scenario(url: str, name: str, document: dict[str, Any], workers: int, args: argparse.Namespace) -> dict:
    """Throughput and latency of one document with `workers` processes."""
    processes = start_workers(url, workers)
    try:
        load = Load(url, document, args.sessions, f"{name}-{workers}")
        throughput(load, 20)  # warm-up: caches, script loading
        before = [cpu_seconds(args.redis_pid), sum(cpu_seconds(p.pid) for p in processes), cpu_seconds(os.getpid())]
        pause = processes if args.presubmitted else ()
        rate = max(throughput(load, args.per_session, pause=pause) for _ in range(args.repeat))
        after = [cpu_seconds(args.redis_pid), sum(cpu_seconds(p.pid) for p in processes), cpu_seconds(os.getpid())]
        calls = args.repeat * args.per_session * args.sessions
        cpu = [(b - a) * 1000 / calls for a, b in zip(before, after, strict=False)]
        half = args.rate or rate / 2  # a fixed rate compares two builds at the same load
        (p50, p99, p999), slowed = paced(load, half, args)
        busy_rate = half * 1.5
        busy, busy_slowed = paced(load, busy_rate, args)
        return {"rate": rate, "half": half, "busy_rate": busy_rate, "p50": p50, "p99": p99, "p999": p999,
                "cpu": cpu, "busy": busy, "slowed": slowed, "busy_slowed": busy_slowed}
    finally:
        stop(processes)
        redis.Redis.from_url(url).flushall()


def paced(load: Load, rate: float, args: argparse.Namespace) -> tuple[tuple[float, ...], Slowdowns]:
    """The median of `--latency-runs` open-loop runs, quantile by quantile (the machine is noisy),
    and the machine's slowdowns during all of them (`bench.stalls`)."""
    runs, slowed = [], NONE
    for _ in range(args.latency_runs):
        load.reopen_if_needed(250)  # each run on a fresh generation
        with StallProbe() as probe:
            runs.append(latency(load, rate, args.latency_calls))
        slowed += probe.slowdowns
    return tuple(statistics.median(run[q] for run in runs) for q in range(3)), slowed


def main(argv: list[str] | None = None) -> int:
    """Run every scenario and print the figures and ratios."""
    parser = argparse.ArgumentParser(prog="python -m bench workers", description=__doc__)
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--per-session", type=int, default=100, help="patches per session per throughput run")
    parser.add_argument("--repeat", type=int, default=2, help="throughput runs (best taken)")
    parser.add_argument("--latency-calls", type=int, default=3000)
    parser.add_argument("--latency-runs", type=int, default=3, help="open-loop runs per load (medians reported)")
    parser.add_argument("--rate", type=float, default=0.0,
                        help="pace the latency runs at this many calls/s (and 1.5x), not at 50 %% and 75 %% of "
                             "the measured throughput: two builds compared at the same load")
    parser.add_argument("--only", action="append", choices=SCENARIOS,
                        help="run only this scenario (repeatable); the floor and ratios need them all")
    parser.add_argument("--presubmitted", action="store_true",
                        help="time each drain (the workers' and the floors') from the consumers' SIGCONT to the "
                             "last frame, the patches submitted while they were stopped (`drain`)")
    parser.add_argument("--unix-socket", action="store_true",
                        help="every process reaches Redis through its Unix socket (unix://), not loopback TCP")
    args = parser.parse_args(argv or [])
    if shutil.which("redis-server") is None:
        print("redis-server not found: install it to run this benchmark", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as directory:
        server, url = start_redis(directory, unix=args.unix_socket)
        args.redis_pid = server.pid
        try:
            return _report(url, args)
        finally:
            server.kill()
            server.wait()


def _report(url: str, args: argparse.Namespace) -> int:
    small, large = small_document(), large_document()
    results = {}
    for name, document in (("small", small), ("large", large)):
        for workers in (1, 2):
            if args.only and f"{name}-{workers}" not in args.only:
                continue
            results[(name, workers)] = scenario(url, name, document, workers, args)
            r = results[(name, workers)]
            print(f"{name:5} doc ({_components(document)} components), {workers} worker process(es): "
                  f"{r['rate']:8.0f} calls/s; at {r['half']:6.0f} calls/s p50 {r['p50']:6.2f} ms, "
                  f"p99 {r['p99']:6.2f} ms, p99.9 {r['p999']:6.2f} ms; at {r['busy_rate']:6.0f} calls/s "
                  f"p50 {r['busy'][0]:6.2f} ms, p99 {r['busy'][1]:6.2f} ms; CPU s per 1000 calls: "
                  f"redis {r['cpu'][0]:.2f}, workers {r['cpu'][1]:.2f}, load generator {r['cpu'][2]:.2f}",
                  flush=True)
            print(f"  during the latency runs at {r['half']:.0f} calls/s: {r['slowed'].describe()}; "
                  f"at {r['busy_rate']:.0f} calls/s: {r['busy_slowed'].describe()}", flush=True)
    if ("small", 1) in results:
        _report_floor(url, results[("small", 1)], args)
    if args.only:
        return 0
    frame = len(json.dumps({"protocol": "x" * 26, "snapshot": small}))
    floors = {batched: max(floor(url, frame, args.sessions, args.per_session, run, batched=batched,
                                 presubmitted=args.presubmitted)
                           for run in range(args.repeat)) for batched in (False, True)}
    print(f"floor (XADD, XREADGROUP, one EVALSHA commit per round trip, reply read; no validation; 1 process): "
          f"{floors[False]:8.0f} calls/s")
    print(f"floor batched (the same commits pipelined per XREADGROUP batch): {floors[True]:8.0f} calls/s")
    from bench.minimum import minimum_floor  # bench.minimum imports this module
    minimum = max(minimum_floor(url, frame, args.sessions, args.per_session, run, presubmitted=args.presubmitted)
                  for run in range(args.repeat))
    print(f"contract minimum (one small CAS script per entry, pipelined; bench.minimum): {minimum:8.0f} calls/s")
    one, two = results[("small", 1)], results[("small", 2)]
    print(f"ratio small/1 worker to the batched floor: {one['rate'] / floors[True]:.2f} (target >= 0.60); "
          f"to the contract minimum: {one['rate'] / minimum:.2f}")
    print(f"p99 small/1 worker at half its max rate: {one['p99']:.2f} ms (target < 5 ms), "
          f"p99.9 {one['p999']:.2f} ms (target < 20 ms); at 75 %: p99 {one['busy'][1]:.2f} ms (target < 20 ms)")
    print(f"scaling small 2 processes / 1: {two['rate'] / one['rate']:.2f}")
    print(f"scaling large 2 processes / 1: {results[('large', 2)]['rate'] / results[('large', 1)]['rate']:.2f}"
          " (target >= 1.8)")
    print(f"machine: {os.cpu_count()} cores shared by redis-server, the workers and this load generator")
    return 0


def _report_floor(url: str, one: dict[str, Any], args: argparse.Namespace) -> None:
    """The echo floor at the small/1 worker's paced rates, so its tail is read against the machine's."""
    for rate in (one["half"], one["busy_rate"]):
        (p50, p99, p999), slowed = latency_floor(url, rate, args)
        print(f"latency floor (a consumer that only reads, publishes and acks each entry) at {rate:.0f} calls/s: "
              f"p50 {p50:.2f} ms, p99 {p99:.2f} ms, p99.9 {p999:.2f} ms; {slowed.describe()}", flush=True)


def _components(document: dict[str, Any]) -> int:
    stack, count = [document["root"]], 0
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(node.get("children") or ())
    return count


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
