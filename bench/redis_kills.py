"""Fault run: redis-server itself is SIGKILLed under load and started again on its AOF.

`python -m bench redis-kills --durability local --seconds 60` starts a private redis-server
with `appendonly yes` (`appendfsync always` for `local`, `everysec` for `fast`), `iui worker`
processes in that durability mode, and session drivers that send one call at a time:
generations of patches with precomputed cursors.  A driver that loses its connection sends
the same entry again (same request and call id), as the wire contract tells clients to.
Every few seconds Redis is SIGKILLed, in about half the kills at a moment when a background
fsync of its AOF is pending (`aof_pending_bio_fsync:1`, when Redis 7.0 postpones AOF writes
and still answers), and started again on the same folder and port.  It counts:

- lost: an acknowledged patch whose frame is not in the session's log afterwards (or a
  request with no reply at all within the reply timeout);
- duplicated: a frame logged twice, or a second reply to an entry that was sent once;
- reordered: a generation whose logged revisions are not 0, 1, 2, ... (a conflict reply after
  a rollback is expected in `fast` mode: the driver then opens a new generation);
- stuck: entries still pending after the run;
- taken: lease renewals that found another owner (the workers' log; each ended that worker's
  service of the partition at once).

In `local` mode every count must be 0; in `fast` mode every count but lost (reported: that is
the mode's documented loss).  Exit status 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import redis

from bench.faults import EXAMPLE, Workers, owners, wait_unpending
from workers.client import Client
from workers.redisio.connection import TRANSIENT_ERRORS
from workers.redisio.local_server import start_redis_server

PATCHES = 60  # per generation
REPLY_TIMEOUT_S = 40.0
FSYNC = {"fast": "everysec", "local": "always"}


class Tally:
    """Counts shared by the drivers."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = self.acknowledged = self.resent = self.no_reply = self.rollbacks = 0
        self.once: list[tuple[str, str]] = []  # (session, request) of entries sent exactly once

    def add(self, what: str, count: int = 1) -> None:
        with self.lock:
            setattr(self, what, getattr(self, what) + count)


class Driver:
    """One session: generations of precomputed-cursor patches, one call at a time."""

    def __init__(self, client: Client, redis: redis.Redis, session: str, document: Any, tally: Tally,
                 stop: threading.Event) -> None:
        self.client, self.redis, self.session, self.document = client, redis, session, document
        self.tally, self.stop = tally, stop
        self.acked: dict[str, int] = {}  # sourceCallId -> highest acknowledged revision
        self._serial = 0

    def run(self) -> None:
        generation = 0
        while not self.stop.is_set():
            generation += 1
            reply = self.send("intelligent_ui_open", {"document": self.document}, f"open-{generation}")
            if reply is None or not reply.get("ok"):
                continue
            frame = reply["result"]["frame"]
            source = frame["sourceCallId"]
            self.acked[source] = 0
            for i in range(PATCHES):
                if self.stop.is_set():
                    return
                mutation = {"type": "update", "nodeId": "summary-card", "props": {"title": f"T{i}", "gap": "sm"}}
                args = {"sourceCallId": source, "generation": frame["generation"], "baseRevision": i,
                        "mutation": mutation}
                reply = self.send("intelligent_ui_patch", args, f"g{generation}-p{i}")
                if reply is None or not reply.get("ok"):
                    self.tally.add("rollbacks")  # Redis lost an acknowledged commit (fast mode): start over
                    break
                self.acked[source] = reply["result"]["frame"]["revision"]

    def send(self, tool: str, args: Any, call: str) -> dict[str, Any] | None:
        """Add the entry, await its reply, and add the same entry again after a connection error."""
        self._serial += 1
        fields = self.client.entry(self.session, tool, args, call=call, request=f"{call}.{self._serial}")
        key = self.client.keys.reply(self.client.partition(self.session), self.session, fields["request"])
        self.tally.add("calls")
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        send, broken = True, False
        while time.monotonic() < deadline:
            try:
                if send:
                    send = False
                    self.client.add(fields)
                # The reply is read and left in place (BLMOVE rotates the list): the check counts
                # every reply an entry got, which a removal after a kill could not tell apart.
                value = self.redis.blmove(key, key, max(0.01, round(deadline - time.monotonic(), 3)), "LEFT", "RIGHT")
            except TRANSIENT_ERRORS:
                send = broken = True  # the entry may or may not be in Redis: add it again
                time.sleep(0.05)
                continue
            if value is None:
                break
            if broken:
                self.tally.add("resent")
            else:
                with self.tally.lock:
                    self.tally.once.append((self.session, fields["request"]))
            self.tally.add("acknowledged")
            reply: dict[str, Any] = orjson.loads(value)
            return reply
        self.tally.add("no_reply")
        return None


def kill_redis(server: subprocess.Popen[bytes], r: redis.Redis, timed: bool) -> bool:
    """SIGKILL the server, at a pending background fsync when `timed` (True if one was caught)."""
    caught = False
    if timed:
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline:
            try:
                if r.info("persistence").get("aof_pending_bio_fsync"):
                    caught = True
                    break
            except TRANSIENT_ERRORS:
                break
    server.send_signal(signal.SIGKILL)
    server.wait()
    return caught


def check(client: Client, redis_client: redis.Redis, drivers: list[Driver], tally: Tally) -> dict[str, int]:
    """Compare what was acknowledged with what the logs hold; count second replies."""
    counts = {"lost": 0, "duplicated": 0, "reordered": 0}
    for driver in drivers:
        revisions: dict[str, list[int]] = {}
        for _, frame in client.frame_log(driver.session):
            if frame["type"] != "complete":
                revisions.setdefault(frame["sourceCallId"], []).append(frame["revision"])
        for source, acked in driver.acked.items():
            logged = revisions.get(source, [])
            if len(set(logged)) < len(logged):
                counts["duplicated"] += 1
            elif logged != list(range(len(logged))):
                counts["reordered"] += 1
            counts["lost"] += max(0, acked - (max(logged) if logged else -1))
    pipe = redis_client.pipeline(transaction=False)
    for session, request in tally.once:
        pipe.llen(client.keys.reply(client.partition(session), session, request))
    counts["duplicated"] += sum(1 for length in pipe.execute() if length > 1)  # an entry sent once, two replies
    counts["lost"] += tally.no_reply
    return counts


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench redis-kills", description=__doc__.split("\n")[0])
    parser.add_argument("--durability", choices=sorted(FSYNC), default="local")
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--every", type=float, default=5.0, help="seconds between Redis kills")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=24)
    parser.add_argument("--partitions", type=int, default=16)
    parser.add_argument("--ttl-ms", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    random.seed(args.seed)
    with tempfile.TemporaryDirectory() as directory:
        return run(args, directory)


def run(args: argparse.Namespace, directory: str) -> int:
    options = ("--appendonly", "yes", "--appendfsync", FSYNC[args.durability])
    server, port = start_redis_server(directory, *options)
    url = f"redis://127.0.0.1:{port}/0"
    env = {**os.environ, "IUI_REDIS_URL": url, "IUI_PARTITIONS": str(args.partitions),
           "IUI_LEASE_TTL_MS": str(args.ttl_ms), "IUI_LEASE_RENEW_MS": str(args.ttl_ms // 2),
           "IUI_HEARTBEAT_MS": str(args.ttl_ms // 2), "IUI_DURABILITY": args.durability,
           "IUI_FRAME_LOG_MAX": "1000000", "IUI_LOG_LEVEL": "WARNING"}
    logs = Path(directory, "logs")
    logs.mkdir()
    workers = Workers(env, args.workers, logs=logs)
    r = redis.Redis.from_url(url, socket_timeout=5)
    try:
        while not all(owners(r, args.partitions)):
            time.sleep(0.05)
        reader = redis.Redis.from_url(url, socket_timeout=REPLY_TIMEOUT_S + 5)
        client = Client(redis=reader, partitions=args.partitions)
        tally, stop = Tally(), threading.Event()
        drivers = [Driver(client, reader, f"kill-{n}", orjson.loads(EXAMPLE.read_bytes()), tally, stop)
                   for n in range(args.sessions)]
        threads = [threading.Thread(target=d.run, daemon=True) for d in drivers]
        for thread in threads:
            thread.start()
        kills = timed = 0
        started = time.monotonic()
        while time.monotonic() - started < args.seconds:
            time.sleep(args.every * random.uniform(0.6, 1.0))
            timed += kill_redis(server, r, timed=random.random() < 0.5)
            kills += 1
            server, _ = start_redis_server(directory, *options, port=port)
        stop.set()
        for thread in threads:
            thread.join(REPLY_TIMEOUT_S + 5)
        elapsed = time.monotonic() - started
        stuck = wait_unpending(r, args.partitions, 4 * args.ttl_ms / 1000)
        counts = check(client, reader, drivers, tally)
    finally:
        workers.close()
        server.kill()
        server.wait()
    taken = sum(path.read_text("utf-8", "replace").count(" is held by ") for path in logs.iterdir())
    print(f"redis-kills ({args.durability}, appendfsync {FSYNC[args.durability]}): {kills} kills "
          f"({timed} at a pending fsync), {tally.calls} calls in {elapsed:.1f} s, {tally.acknowledged} "
          f"acknowledged, {tally.resent} answered after a resend, {tally.rollbacks} generations rolled back")
    print(f"lost {counts['lost']}, duplicated {counts['duplicated']}, reordered {counts['reordered']}, "
          f"stuck pending {stuck}, leases found taken {taken}")
    bad = counts["duplicated"] + counts["reordered"] + stuck
    if args.durability != "fast":
        bad += counts["lost"] + tally.rollbacks
    return 1 if bad else 0
