"""Action round trips: reserve -> succeeded through the pool, RQ and back, with a no-op capability.

Starts a private `redis-server`, pool processes (`iui worker`, one then two) and RQ workers
(`rq worker`, SimpleWorker class so a job is not a fork), stores one plain document with a
no-op tool action per session, then:

- throughput: all reserves submitted at once, until every operation is `succeeded`;
- latency: reserves paced at half that rate; p50/p99 from the XADD of the reserve to the
  `succeeded` receipt on the session's receipt channel.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import redis

from workers.redisio.keys import Keys, partition_of
from workers.redisio.local_server import start_redis_server

ROOT = Path(__file__).resolve().parent.parent
PARTITIONS = 16
CATALOG = '''
[[capability]]
id = "noop"
title = "Do nothing"
risk = "read"
requiresConfirmation = false
callable = "bench.actions:noop"
resultFields = ["value"]
timeout = 30
'''


def noop(value: int = 0) -> dict[str, Any]:
    """The benchmark's capability: no side effect at all."""
    return {"value": value}


DOCUMENT = {
    "version": "1.1", "id": "bench", "mode": "interactive_ui", "title": "Bench",
    "state": {"value": {"type": "number", "initial": 1, "min": 0, "max": 1000, "step": 1}},
    "derived": {},
    "actions": {"go": {"kind": "tool", "capabilityId": "noop", "arguments": {"value": {"expr": {"state": "value"}}},
                       "resultMap": {"value": "value"}}},
    "root": {"id": "root", "type": "Button", "props": {"label": "Go", "action": {"type": "invoke", "actionId": "go"}}},
}


class Bench:
    """One deployment: redis URL, environment, processes."""

    def __init__(self, url: str, directory: str) -> None:
        self.url = url
        catalog = Path(directory) / "capabilities.toml"
        catalog.write_text(CATALOG, "utf-8")
        self.env = {**os.environ, "IUI_REDIS_URL": url, "IUI_PARTITIONS": str(PARTITIONS),
                    "IUI_CAPABILITIES": str(catalog), "IUI_FILES_ROOT": directory,
                    "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.redis = redis.Redis.from_url(url)
        self.keys = Keys("iui")
        self.processes: list[subprocess.Popen] = []

    def start(self, pools: int, rq_workers: int) -> None:
        for i in range(pools):
            self.processes.append(subprocess.Popen([sys.executable, "-m", "workers.cli", "worker", "--worker-id",
                                                    f"bench-{i}"], env=self.env, cwd=ROOT,
                                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for _ in range(rq_workers):
            self.processes.append(subprocess.Popen(
                [sys.executable, "-m", "rq.cli", "worker", "--url", self.url, "--quiet", "-w",
                 "rq.worker.SimpleWorker", "iui"], env=self.env, cwd=ROOT,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            owners = [self.redis.hget(self.keys.lease(p), "owner") for p in range(PARTITIONS)]
            if all(owners) and len(set(owners)) == pools:  # leased and rebalanced
                time.sleep(1.0)
                return
            time.sleep(0.05)
        raise RuntimeError("partitions were not leased in time")

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        self.processes.clear()

    def call(self, session: str, name: str, kind: str, body: Any, request: str) -> dict[str, Any]:
        partition = partition_of(session, PARTITIONS)
        self.redis.xadd(self.keys.input(partition), {"session": session, "request": request, "kind": kind,
                                                     "name": name, "call": request, "body": orjson.dumps(body)})
        popped = self.redis.blpop([self.keys.reply(partition, session, request)], timeout=30)
        assert popped is not None, "no reply"
        reply: dict[str, Any] = orjson.loads(popped[1])
        return reply

    def prepare(self, sessions: list[str]) -> None:
        for session in sessions:
            assert self.call(session, "intelligent_ui", "tool", {"document": DOCUMENT}, f"doc-{session}")["ok"]


class Watcher:
    """Times every operation from its submit to its `succeeded` receipt (pattern subscription)."""

    def __init__(self, url: str) -> None:
        self._pubsub = redis.Redis.from_url(url).pubsub(ignore_subscribe_messages=True)
        self._pubsub.psubscribe("iui:{p*}:receipts:*")
        self.submitted: dict[str, float] = {}  # requestId -> submit time
        self.done: dict[str, float] = {}
        self.failed = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            message = self._pubsub.get_message(timeout=0.1)
            if message is None:
                continue
            receipt = orjson.loads(message["data"])
            if receipt["status"] == "succeeded":
                self.done[receipt["requestId"]] = time.perf_counter()
            elif receipt["status"] in ("failed", "unknown", "cancelled"):
                self.failed += 1

    def wait(self, count: int, timeout: float = 300.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.done) + self.failed < count and time.monotonic() < deadline:
            time.sleep(0.01)
        if len(self.done) < count:
            raise RuntimeError(f"{len(self.done)} of {count} operations succeeded ({self.failed} did not)")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._pubsub.close()


def submit(bench: Bench, watcher: Watcher, sessions: list[str], count: int, pace: float, run: str) -> None:
    for i in range(count):
        session = sessions[i % len(sessions)]
        request = f"{run}-{i}"
        body = {"documentRef": {"sourceCallId": f"doc-{session}", "uiId": "bench", "generation": 0, "revision": 0},
                "requestId": request, "actionId": "go", "values": {"value": 1}}
        watcher.submitted[request] = time.perf_counter()
        bench.redis.xadd(bench.keys.input(partition_of(session, PARTITIONS)),
                         {"session": session, "request": request, "kind": "action", "name": "reserve",
                          "call": request, "body": orjson.dumps(body)})
        if pace:
            time.sleep(pace)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def scenario(url: str, directory: str, pools: int, args: argparse.Namespace) -> dict[str, float]:
    bench = Bench(url, directory)
    bench.redis.flushall()
    bench.start(pools, args.rq_workers)
    try:
        sessions = [f"bench-{pools}-{n}" for n in range(args.sessions)]
        bench.prepare(sessions)
        watcher = Watcher(url)
        started = time.perf_counter()
        submit(bench, watcher, sessions, args.operations, 0.0, f"t{pools}")
        watcher.wait(args.operations)
        rate = args.operations / (time.perf_counter() - started)
        watcher.close()
        watcher = Watcher(url)
        count = max(50, args.operations // 2)
        submit(bench, watcher, sessions, count, 2.0 / rate, f"l{pools}")
        watcher.wait(count)
        watcher.close()
        latencies = [watcher.done[r] - watcher.submitted[r] for r in watcher.done]
        return {"rate": rate, "p50": percentile(latencies, 0.5) * 1000, "p99": percentile(latencies, 0.99) * 1000}
    finally:
        bench.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench actions", description=__doc__.split("\n")[0])
    parser.add_argument("--operations", type=int, default=400, help="reserves in the throughput run")
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--rq-workers", type=int, default=2)
    args = parser.parse_args(argv or [])
    with tempfile.TemporaryDirectory() as directory:
        process, port = start_redis_server(directory)
        try:
            url = f"redis://127.0.0.1:{port}/0"
            results = {pools: scenario(url, directory, pools, args) for pools in (1, 2)}
        finally:
            process.kill()
            process.wait()
    for pools, result in results.items():
        print(f"actions: {pools} pool process(es), {args.rq_workers} rq workers (SimpleWorker): "
              f"{result['rate']:.0f} reserve->succeeded round trips/s; at half that rate p50 {result['p50']:.1f} ms, "
              f"p99 {result['p99']:.1f} ms")
    print(f"actions: 2 / 1 pool processes = {results[2]['rate'] / results[1]['rate']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
