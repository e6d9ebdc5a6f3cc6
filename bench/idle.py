"""What an idle worker costs: `python -m bench idle [--partitions 64] [--seconds 10]`.

Starts a private redis-server and one `iui worker` holding every partition, lets it settle,
then counts for `--seconds` the commands Redis executes (INFO commandstats, commands run
inside scripts included) and the worker's CPU time, and prints both with a per-command
breakdown.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import redis

from bench.workers import cpu_seconds
from workers.redisio.local_server import start_redis_server


def _commands(client: redis.Redis) -> dict[str, int]:
    return {name.removeprefix("cmdstat_"): int(stats["calls"]) for name, stats in client.info("commandstats").items()}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench idle", description=__doc__.split("\n")[0])
    parser.add_argument("--partitions", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        server, port = start_redis_server(directory)
        url = f"redis://127.0.0.1:{port}/0"
        env = {**os.environ, "IUI_REDIS_URL": url, "IUI_PARTITIONS": str(args.partitions)}
        worker = subprocess.Popen([sys.executable, "-m", "workers.cli", "worker"], env=env,
                                  stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(url)
        try:
            time.sleep(6)  # acquisition, first renewals and sweeps
            before, cpu_before, started = _commands(client), cpu_seconds(worker.pid), time.monotonic()
            time.sleep(args.seconds)
            after, cpu_after, elapsed = _commands(client), cpu_seconds(worker.pid), time.monotonic() - started
        finally:
            worker.kill()
            worker.wait()
            server.kill()
            server.wait()
    per_second = {name: (calls - before.get(name, 0)) / elapsed for name, calls in after.items()}
    per_second.pop("info", None)  # this benchmark's own reads
    busy = sorted(((rate, name) for name, rate in per_second.items() if rate > 0), reverse=True)
    print(f"idle worker, {args.partitions} partitions: {sum(per_second.values()):.0f} commands/s in Redis, "
          f"{100 * (cpu_after - cpu_before) / elapsed:.1f}% of a core")
    print("  " + ", ".join(f"{name} {rate:.1f}/s" for rate, name in busy))
    return 0
