"""Fault run: worker processes under load are SIGKILLed, paused past their lease and SIGTERMed.

`python -m bench faults --seconds 60 --workers 3 --sessions 40 --ttl-ms 1000` starts a private
redis-server and `iui worker` processes, drives every session through generations of
precomputed-cursor patches (a call applied out of order is answered `cursor_conflict`), and
injects one fault every few seconds: SIGKILL (then a replacement starts), SIGSTOP for
2.5 x TTL then SIGCONT, or SIGTERM (then a replacement starts).  It counts:

- lost: a request without a reply within the reply timeout;
- duplicated: a second reply on a request's list, or a frame logged twice;
- reordered: a patch answered with anything but acceptance (cursors were precomputed), or a
  session's frame log whose revisions are not contiguous;
- stuck: entries still pending 2 x TTL after the faults stop;
- takeover: seconds from a SIGKILL or SIGSTOP until every partition has an owner other than the
  victim (bound: 2 x TTL).

It prints the counts and exits 1 if any count is non-zero or a takeover exceeded 2 x TTL.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import redis

from workers.client import Client
from workers.redisio.keys import GROUP, Keys
from workers.redisio.local_server import start_redis_server

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "stream-initial.json"
PATCHES_PER_GENERATION = 200
BURST = 8


class Workers:
    """The worker processes of the run, replaced as faults remove them."""

    def __init__(self, env: dict[str, str], count: int, logs: Path | None = None) -> None:
        self._env = env
        self._logs = logs  # a folder for each worker's stderr (none: discarded)
        self._serial = 0
        self.live: dict[str, subprocess.Popen[bytes]] = {}
        for _ in range(count):
            self.spawn()

    def spawn(self) -> str:
        self._serial += 1
        name = f"fw-{self._serial}"
        stderr = (self._logs / f"{name}.log").open("wb") if self._logs else subprocess.DEVNULL
        self.live[name] = subprocess.Popen([sys.executable, "-m", "workers.cli", "worker"],
                                           env={**self._env, "IUI_WORKER_ID": name},
                                           stdout=subprocess.DEVNULL, stderr=stderr)
        return name

    def close(self) -> None:
        for process in self.live.values():
            process.send_signal(signal.SIGCONT)
            process.kill()
            process.wait()


class Tally:
    """Counts shared by the session drivers."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = self.lost = self.duplicated = self.reordered = 0
        self.examples: list[str] = []

    def add(self, what: str, example: str = "") -> None:
        with self.lock:
            setattr(self, what, getattr(self, what) + 1)
            if example and len(self.examples) < 5:
                self.examples.append(f"{what}: {example}")


def drive(client: Client, session: str, document: dict[str, Any], stop: threading.Event,
          tally: Tally, timeout: float) -> None:
    """Generations of bursts of precomputed-cursor patches; every reply is checked."""
    generation = 0
    while not stop.is_set():
        generation += 1
        frame = call(client, session, "intelligent_ui_open", {"document": document}, f"open-{generation}",
                     tally, timeout)
        if frame is None:
            return
        applied = 0
        while applied < PATCHES_PER_GENERATION and not stop.is_set():
            requests = []
            for i in range(applied, applied + BURST):
                mutation = {"type": "update", "nodeId": "summary-card", "props": {"title": f"T{i}", "gap": "sm"}}
                args = {"sourceCallId": frame["sourceCallId"], "generation": frame["generation"],
                        "baseRevision": frame["revision"] + i, "mutation": mutation}
                requests.append(client.submit(session, "intelligent_ui_patch", args, call=f"g{generation}-p{i}"))
            for request in requests:
                check(client, session, request, tally, timeout)
            applied += BURST
        last = {"sourceCallId": frame["sourceCallId"], "generation": frame["generation"],
                "baseRevision": frame["revision"] + applied}
        if call(client, session, "intelligent_ui_complete", last, f"done-{generation}", tally, timeout) is None:
            return


def call(client: Client, session: str, tool: str, args: Any, call_id: str, tally: Tally,
         timeout: float) -> dict[str, Any] | None:
    request = client.submit(session, tool, args, call=call_id)
    reply = check(client, session, request, tally, timeout)
    return reply["result"]["frame"] if reply and reply.get("ok") else None


def check(client: Client, session: str, request: str, tally: Tally, timeout: float) -> dict[str, Any] | None:
    tally.add("calls")
    try:
        reply = client.reply(session, request, timeout=timeout)
    except Exception:
        tally.add("lost", f"{session} {request}")
        return None
    if client.peek_reply(session, request) is not None:
        tally.add("duplicated", f"{session} {request}")
    if not reply.get("ok"):
        tally.add("reordered", f"{session}: {reply.get('error', {}).get('message', '')[:120]}")
    return reply


def check_logs(client: Client, sessions: list[str], tally: Tally) -> None:
    """Each generation's logged revisions are 0, 1, 2, ... with no gap and no repeat."""
    for session in sessions:
        by_generation: dict[int, list[int]] = {}
        for _, frame in client.frame_log(session):
            by_generation.setdefault(frame["generation"], []).append(frame["seq"])
        for generation, seqs in by_generation.items():
            if seqs != list(range(seqs[0], seqs[0] + len(seqs))):
                tally.add("duplicated" if len(set(seqs)) < len(seqs) else "reordered",
                          f"{session} generation {generation} seqs {seqs[:10]}...")


def owners(r: redis.Redis, partitions: int, prefix: str = "iui") -> list[str]:
    """The lease owner of every partition ("" where none), in one round trip."""
    keys = Keys(prefix)
    pipe = r.pipeline(transaction=False)
    for p in range(partitions):
        pipe.hget(keys.lease(p), "owner")
    return [o.decode() if o else "" for o in pipe.execute()]


def inject(kind: str, workers: Workers, r: redis.Redis, args: argparse.Namespace,
           takeovers: dict[str, list[float]]) -> None:
    """One fault on a random live worker."""
    victim = random.choice(sorted(workers.live))
    process = workers.live[victim]
    ttl = args.ttl_ms / 1000
    if kind == "SIGSTOP":
        process.send_signal(signal.SIGSTOP)
        started = time.monotonic()
        takeovers["SIGSTOP"].append(taken_over(r, args.partitions, victim, 10 * ttl))
        time.sleep(max(0.0, 2.5 * ttl - (time.monotonic() - started)))
        process.send_signal(signal.SIGCONT)
        return
    del workers.live[victim]
    process.send_signal(signal.SIGKILL if kind == "SIGKILL" else signal.SIGTERM)
    if kind == "SIGKILL":
        takeovers["SIGKILL"].append(taken_over(r, args.partitions, victim, 10 * ttl))
    process.wait()
    workers.spawn()


def taken_over(r: redis.Redis, partitions: int, victim: str, limit: float) -> float:
    """Seconds until no partition is unowned or the victim's (infinity past `limit`)."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if all(o and o != victim for o in owners(r, partitions)):
            return time.monotonic() - started
        time.sleep(0.02)
    return float("inf")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench faults", description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--partitions", type=int, default=64)
    parser.add_argument("--ttl-ms", type=int, default=1000)
    parser.add_argument("--every", type=float, default=4.0, help="seconds between faults")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", default="SIGKILL,SIGSTOP,SIGTERM",
                        help="the faults to choose from, comma-separated (e.g. SIGKILL for a run of kills)")
    args = parser.parse_args(argv)
    random.seed(args.seed)
    import orjson
    document = orjson.loads(EXAMPLE.read_bytes())
    ttl = args.ttl_ms / 1000
    with tempfile.TemporaryDirectory() as directory:
        server, port = start_redis_server(directory)
        url = f"redis://127.0.0.1:{port}/0"
        env = {**os.environ, "IUI_REDIS_URL": url, "IUI_PARTITIONS": str(args.partitions),
               "IUI_LEASE_TTL_MS": str(args.ttl_ms), "IUI_LEASE_RENEW_MS": str(args.ttl_ms // 2),
               "IUI_HEARTBEAT_MS": str(args.ttl_ms // 2)}
        r = redis.Redis.from_url(url)
        workers = Workers(env, args.workers)
        try:
            return run(args, r, workers, document, ttl)
        finally:
            workers.close()
            server.kill()
            server.wait()


def run(args: argparse.Namespace, r: redis.Redis, workers: Workers, document: Any, ttl: float) -> int:
    while not all(owners(r, args.partitions)):
        time.sleep(0.05)
    client = Client(redis=r, partitions=args.partitions)
    tally, stop = Tally(), threading.Event()
    takeovers: dict[str, list[float]] = {"SIGKILL": [], "SIGSTOP": []}
    sessions = [f"fault-{n}" for n in range(args.sessions)]
    reply_timeout = 4 * ttl + 10
    drivers = [threading.Thread(target=drive, args=(client, s, document, stop, tally, reply_timeout), daemon=True)
               for s in sessions]
    faults: dict[str, int] = {kind: 0 for kind in args.kinds.split(",")}
    if not faults or set(faults) - {"SIGKILL", "SIGSTOP", "SIGTERM"}:
        raise SystemExit("--kinds takes SIGKILL, SIGSTOP and SIGTERM")
    started = time.monotonic()
    for thread in drivers:
        thread.start()
    while time.monotonic() - started < args.seconds:
        time.sleep(args.every)
        kind = random.choice(sorted(faults))
        faults[kind] += 1
        inject(kind, workers, r, args, takeovers)
    stop.set()
    for thread in drivers:
        thread.join()
    elapsed = time.monotonic() - started
    stuck = wait_unpending(r, args.partitions, 2 * ttl)
    check_logs(client, sessions, tally)
    print(f"faults: {faults}; {tally.calls} calls in {elapsed:.1f} s ({tally.calls / elapsed:.0f}/s)")
    print(f"lost {tally.lost}, duplicated {tally.duplicated}, reordered {tally.reordered}, stuck pending {stuck}")
    for kind, times in takeovers.items():
        if times:
            print(f"takeover after {kind}: median {statistics.median(times):.2f} s, p99 "
                  f"{sorted(times)[int(0.99 * (len(times) - 1))]:.2f} s, max {max(times):.2f} s "
                  f"(bound 2 x TTL = {2 * ttl:.2f} s; {len(times)} faults)")
    for line in tally.examples:
        print("  " + line)
    bad = tally.lost + tally.duplicated + tally.reordered + stuck
    return 1 if bad or any(t > 2 * ttl for times in takeovers.values() for t in times) else 0


def wait_unpending(r: redis.Redis, partitions: int, within: float) -> int:
    """Entries still pending after `within` seconds (0 when every partition drained)."""
    deadline = time.monotonic() + within
    while True:
        pipe = r.pipeline(transaction=False)
        for p in range(partitions):
            pipe.xpending(Keys("iui").input(p), GROUP)
        pending = sum(int(row["pending"]) for row in pipe.execute(raise_on_error=False) if isinstance(row, dict))
        if pending == 0 or time.monotonic() > deadline:
            return pending
        time.sleep(0.05)
