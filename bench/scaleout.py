"""Planned scale-out and scale-in of worker processes under load, measured from outside.

`python -m bench scaleout [--partitions 64] [--ttl-ms 10000] [--runs 3]` starts a private
redis-server, one `iui worker` process (metrics on a free port) and a load of tool calls,
then scales 1 -> 3 workers, waits until the pool has settled (every partition owned, no
worker above its fair share), and scales 3 -> 1 with SIGTERM.  Every 20 ms it scrapes
`iui_leases_held` of every worker.  It prints, per run: leases lost (`iui_leases_lost_total`
summed over the workers), the settle times, and the peak of the summed `iui_leases_held`
(never above P when no partition is believed held twice).
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import redis

from bench.faults import owners
from bench.scrape import samples
from workers.client import Client
from workers.redisio.local_server import free_port, start_redis_server

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "stream-initial.json"


class Worker:
    """One `iui worker` process with its metrics port."""

    def __init__(self, env: dict[str, str], name: str) -> None:
        self.port = free_port()
        self.process = subprocess.Popen([sys.executable, "-m", "workers.cli", "worker"],
                                        env={**env, "IUI_WORKER_ID": name, "IUI_METRICS_PORT": str(self.port),
                                             "IUI_METRICS_ADDR": "127.0.0.1"},
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.lost = 0.0

    def metric(self, name: str) -> float:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=1) as response:
                text = response.read().decode()
        except OSError:
            return 0.0
        family = name.removesuffix("_total")  # a counter's family is named without it
        return samples(text, family).get(name, 0.0)

    def stop(self) -> None:
        self.lost = self.metric("iui_leases_lost_total")
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)


def settled(r: redis.Redis, partitions: int, names: list[str]) -> bool:
    held = owners(r, partitions)
    share = math.ceil(partitions / len(names))
    return all(o in names for o in held) and all(held.count(n) <= share for n in names)


def load(client: Client, stop: threading.Event, document: Any) -> None:
    """Sessions that keep patching (a new generation every 200 patches)."""
    sessions = [f"scale-{n}" for n in range(16)]
    while not stop.is_set():
        frames = {}
        for s in sessions:
            reply = client.call(s, "intelligent_ui_open", {"document": document}, timeout=60)
            frames[s] = reply["result"]["frame"]
        for i in range(200):
            if stop.is_set():
                return
            for s in sessions:
                mutation = {"type": "update", "nodeId": "summary-card", "props": {"title": f"T{i}", "gap": "sm"}}
                args = {"sourceCallId": frames[s]["sourceCallId"], "generation": frames[s]["generation"],
                        "baseRevision": frames[s]["revision"], "mutation": mutation}
                reply = client.call(s, "intelligent_ui_patch", args, timeout=60)
                if not reply["ok"]:
                    raise SystemExit(f"a call was refused: {reply}")
                frames[s] = reply["result"]["frame"]


def one_run(r: redis.Redis, env: dict[str, str], partitions: int) -> tuple[float, float, float, float]:
    first = Worker(env, "first")
    workers = [first]
    peak = 0.0
    sampling = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not sampling.is_set():
            peak = max(peak, sum(w.metric("iui_leases_held") for w in workers if w.process.poll() is None))
            time.sleep(0.02)

    while not settled(r, partitions, ["first"]):
        time.sleep(0.05)
    stop = threading.Event()
    driver = threading.Thread(target=load, args=(Client(redis=r, partitions=partitions), stop,
                                                 orjson.loads(EXAMPLE.read_bytes())), daemon=True)
    driver.start()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    time.sleep(1.0)
    started = time.monotonic()
    workers += [Worker(env, "second"), Worker(env, "third")]
    while not settled(r, partitions, ["first", "second", "third"]):
        time.sleep(0.02)
    out = time.monotonic() - started
    time.sleep(1.0)
    started = time.monotonic()
    for worker in workers[1:]:
        worker.stop()
    while not settled(r, partitions, ["first"]):
        time.sleep(0.02)
    back = time.monotonic() - started
    time.sleep(0.5)
    stop.set()
    driver.join()
    sampling.set()
    sampler.join()
    first.stop()
    return sum(w.lost for w in workers), out, back, peak


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench scaleout", description=__doc__.split("\n")[0])
    parser.add_argument("--partitions", type=int, default=64)
    parser.add_argument("--ttl-ms", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    status = 0
    for run in range(args.runs):
        with tempfile.TemporaryDirectory() as directory:
            server, port = start_redis_server(directory)
            url = f"redis://127.0.0.1:{port}/0"
            env = {**os.environ, "IUI_REDIS_URL": url, "IUI_PARTITIONS": str(args.partitions),
                   "IUI_LEASE_TTL_MS": str(args.ttl_ms), "IUI_LEASE_RENEW_MS": str(args.ttl_ms * 3 // 10)}
            try:
                lost, out, back, peak = one_run(redis.Redis.from_url(url), env, args.partitions)
            finally:
                server.kill()
                server.wait()
        ttl = args.ttl_ms / 1000
        print(f"run {run + 1}: leases lost {lost:.0f}; settle 1->3 {out:.2f} s, 3->1 {back:.2f} s "
              f"(bound 2 x TTL = {2 * ttl:.0f} s); peak sum(iui_leases_held) {peak:.0f} of {args.partitions}")
        status |= int(lost > 0 or peak > args.partitions or max(out, back) > 2 * ttl)
    return status
