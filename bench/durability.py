"""What each durability mode costs: the same load under `fast`, `local` and `replica:1`, side by side.

`python -m bench durability [--rounds 3] [--sessions 64] [--per-session 100] [--sequential 300]`
runs, for each mode in turn (alternated over the rounds, so the machine's slow phases fall on
every mode alike), a private redis-server on its AOF in a folder on disk:

- `fast`: `appendonly yes`, `appendfsync everysec` (what a crash may lose: about 2 s);
- `local`: `appendonly yes`, `appendfsync always` (Redis fsyncs before it answers);
- `replica:1`: `fast`'s master plus one replica; a reply counts once WAIT saw the replica hold it;

one `iui worker` in that mode, and measures:

- drained: patches of `--sessions` sessions submitted at once (cursors precomputed), calls/s
  until the last frame reached a subscriber;
- sequential: one client calling one patch at a time through `workers.client.Client` (which
  confirms the reply as the mode asks), p50 and p99 round trip in ms.

It prints min and median per mode and the median's ratio to `fast`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench.workers import PARTITIONS, Load, mutation, small_document, throughput
from workers.client import Client
from workers.redisio.connection import connect
from workers.redisio.local_server import start_redis_server

MODES = {"fast": ("everysec", 0), "local": ("always", 0), "replica": ("everysec", 1)}


def start_worker(url: str, mode: str) -> subprocess.Popen[bytes]:
    """One worker in `mode`; returns once it holds every partition."""
    env = {**os.environ, "IUI_REDIS_URL": url, "IUI_PARTITIONS": str(PARTITIONS), "IUI_DURABILITY": mode,
           "IUI_DURABILITY_REPLICAS": "1", "IUI_LEASE_TTL_MS": "2000", "IUI_LEASE_RENEW_MS": "500"}
    worker = subprocess.Popen([sys.executable, "-m", "workers.cli", "worker"], env=env, stderr=subprocess.DEVNULL)
    client = connect(url)
    deadline = time.monotonic() + 30
    while not all(client.exists(f"iui:{{p{p}}}:lease") for p in range(PARTITIONS)):
        if time.monotonic() > deadline or worker.poll() is not None:
            raise RuntimeError(f"the {mode} worker did not take every partition")
        time.sleep(0.05)
    client.close()
    return worker


def sequential(url: str, count: int) -> tuple[float, float]:
    """p50 and p99 (ms) of `count` patch calls made one at a time by the client library."""
    client = Client(redis=connect(url))
    opened = client.call("seq", "intelligent_ui_open", {"document": small_document()}, call="seq-open")
    frame = opened["result"]["frame"]
    times = []
    for i in range(count):
        args = {"sourceCallId": "seq-open", "generation": frame["generation"], "baseRevision": i,
                "mutation": mutation(i)}
        started = time.perf_counter()
        reply = client.call("seq", "intelligent_ui_patch", args, call=f"seq-{i}")
        times.append((time.perf_counter() - started) * 1000)
        if not reply["ok"]:
            raise RuntimeError(f"rejected: {reply['error']}")
    times.sort()
    return statistics.median(times), times[int(0.99 * (len(times) - 1))]


def one_run(mode: str, args: argparse.Namespace) -> tuple[float, float, float]:
    """(drained calls/s, sequential p50 ms, sequential p99 ms) of one mode on fresh servers."""
    fsync, replicas = MODES[mode]
    with tempfile.TemporaryDirectory(dir=args.dir) as master_dir, tempfile.TemporaryDirectory(dir=args.dir) as rdir:
        options = ("--appendonly", "yes", "--appendfsync", fsync)
        master, port = start_redis_server(master_dir, *options)
        processes: list[subprocess.Popen[bytes]] = [master]
        url = f"redis://127.0.0.1:{port}/0"
        try:
            if replicas:
                replica, _ = start_redis_server(rdir, *options, "--replicaof", "127.0.0.1", str(port))
                processes.append(replica)
                _wait_replica(url)
            processes.append(start_worker(url, mode))
            load = Load(url, small_document(), args.sessions, mode)
            calls = throughput(load, args.per_session)
            p50, p99 = sequential(url, args.sequential)
            return calls, p50, p99
        finally:
            for process in reversed(processes):
                process.kill()
                process.wait()


def _wait_replica(url: str) -> None:
    client = connect(url)
    deadline = time.monotonic() + 10
    while client.info("replication").get("connected_slaves", 0) < 1:
        if time.monotonic() > deadline:
            raise RuntimeError("the replica did not connect")
        time.sleep(0.05)
    client.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench durability", description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--per-session", type=int, default=100)
    parser.add_argument("--sequential", type=int, default=300)
    parser.add_argument("--dir", default=None, help="folder for the AOF files (default: the system's temp folder)")
    args = parser.parse_args(argv)
    results: dict[str, list[tuple[float, float, float]]] = {mode: [] for mode in MODES}
    for round_number in range(args.rounds):
        order = list(MODES) if round_number % 2 == 0 else list(reversed(MODES))
        for mode in order:
            results[mode].append(one_run(mode, args))
    _report(results)
    return 0


def _report(results: dict[str, list[tuple[float, float, float]]]) -> None:
    base = statistics.median(r[0] for r in results["fast"])
    base_p50 = statistics.median(r[1] for r in results["fast"])
    print(f"{'mode':<10} {'drained calls/s min / median':>30} {'x fast':>7} {'sequential p50 / p99 ms':>26} "
          f"{'p50 x fast':>10}")
    for mode, runs in results.items():
        calls = [r[0] for r in runs]
        p50, p99 = statistics.median(r[1] for r in runs), statistics.median(r[2] for r in runs)
        label = "replica:1" if mode == "replica" else mode
        print(f"{label:<10} {min(calls):>14,.0f} / {statistics.median(calls):>13,.0f} "
              f"{statistics.median(calls) / base:>7.2f} {p50:>14.2f} / {p99:>9.2f} {p50 / base_p50:>10.2f}")
