"""Scale curves: `python -m bench scale [--levels 10,100,1000,10000] [--cache-mb 256] [--patches N]`.

For the small (10-component) and the large (200-component) document, one `iui worker`
process (64 partitions, `IUI_CACHE_BYTES` = `--cache-mb`) on a private redis-server: at each
level of concurrent sessions (opened cumulatively) it measures patch calls/s (every patch
submitted at once, replies collected in bulk), p50/p99 at half that rate (open loop), Redis
`used_memory` per session, the worker's RSS, and the frame-log bytes of one session against
`IUI_FRAME_LOG_MAX` / `IUI_FRAME_LOG_MAX_BYTES`.  `--patches N` patches every session N
times at each level (at least; 2,000 calls or one per session otherwise), so the worker's RSS
shows what long generations hold (a generation takes up to 250 patches here).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import redis

from bench.scrape import rss_kib
from bench.workers import PARTITIONS, Load, await_replies, large_document, latency, small_document
from workers.redisio.keys import Keys, partition_of
from workers.redisio.local_server import start_redis_server

PATCH = "intelligent_ui_patch"


def rss_mb(pid: int) -> float:
    """Resident set size of a process in MiB."""
    return rss_kib(pid) / 1024


def open_sessions(load: Load, names: list[str], document: dict[str, Any], *, distinct: bool = False) -> None:
    """Open a generation in every named session, pipelined, replies collected in bulk; with
    `distinct`, each session's document differs (its title names the session)."""
    body = json.dumps({"document": document})

    def body_of(session: str) -> str:
        return json.dumps({"document": {**document, "title": f"{document['title']} ({session})"}}) if distinct else body

    for start in range(0, len(names), 500):
        chunk = names[start:start + 500]
        pipe = load.redis.pipeline(transaction=False)
        requests = [load.submit_raw(s, "intelligent_ui_open", body_of(s), f"open-{s}", pipe) for s in chunk]
        keys = [load.keys.reply(partition_of(s, PARTITIONS), s, r) for s, r in zip(chunk, requests, strict=True)]
        for session, reply in zip(chunk, await_replies(load.redis, load.keys, pipe, keys, timeout=600), strict=True):
            decoded = json.loads(reply)
            if not decoded["ok"]:
                raise RuntimeError(f"an open was rejected: {decoded['error']}")
            frame = decoded["result"]["frame"]
            load.cursor[session] = [f"open-{session}", frame["generation"], 0]
        load.sessions.extend(chunk)


def patch_rate(load: Load, calls: int) -> float:
    """Calls/s of `calls` patches spread over the sessions, all submitted at once."""
    load.reopen_if_needed(calls // len(load.sessions) + 2)
    pipe = load.redis.pipeline(transaction=False)
    started = time.perf_counter()
    requests = [(s, load.patch(s, pipe)) for s in (load.sessions[i % len(load.sessions)] for i in range(calls))]
    await_replies(load.redis, load.keys, pipe,
                  [load.keys.reply(partition_of(s, PARTITIONS), s, r) for s, r in requests],
                  timeout=900)  # sessions beyond the cache re-parse their checkpoint: slow, not lost
    return calls / (time.perf_counter() - started)


def frame_log_bytes(client: redis.Redis, session: str) -> int:
    key = Keys("iui").frame_log(partition_of(session, PARTITIONS), session)
    return int(client.memory_usage(key) or 0)


def curve(url: str, name: str, document: dict[str, Any], levels: list[int], cache_mb: int, patches: int) -> None:
    env = {**os.environ, "IUI_REDIS_URL": url, "IUI_PARTITIONS": str(PARTITIONS),
           "IUI_CACHE_BYTES": str(cache_mb * 1024 * 1024)}
    worker = subprocess.Popen([sys.executable, "-m", "workers.cli", "worker"], env=env, stderr=subprocess.DEVNULL)
    client = redis.Redis.from_url(url)
    try:
        while client.exists(*[Keys("iui").lease(p) for p in range(PARTITIONS)]) < PARTITIONS:
            time.sleep(0.1)
        load = Load(url, document, 0, name)
        base = int(client.info("memory")["used_memory"])
        for level in levels:
            open_sessions(load, [f"{name}-{n}" for n in range(len(load.sessions), level)], document)
            rate = patch_rate(load, max(2_000, level, level * patches))
            p50, p99, _ = latency(load, rate / 2, 1_000)
            used = (int(client.info("memory")["used_memory"]) - base) / level
            print(f"{name:5} {level:6} sessions: {rate:7.0f} calls/s, at half rate p50 {p50:6.2f} ms p99 "
                  f"{p99:7.2f} ms; Redis {used / 1024:7.1f} KiB/session; worker RSS {rss_mb(worker.pid):7.1f} MiB "
                  f"(cache {cache_mb} MiB); frame log of one session "
                  f"{frame_log_bytes(client, load.sessions[0]) / 1024:.1f} KiB",
                  flush=True)
    finally:
        worker.kill()
        worker.wait()
        client.flushall()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench scale", description=__doc__.split("\n")[0])
    parser.add_argument("--levels", default="10,100,1000,10000")
    parser.add_argument("--large-levels", default=None, help="levels for the large document (default: --levels)")
    parser.add_argument("--cache-mb", type=int, default=512)
    parser.add_argument("--patches", type=int, default=0, help="patches per session at each level (long generations)")
    args = parser.parse_args(argv)
    levels = [int(n) for n in args.levels.split(",")]
    large_levels = [int(n) for n in (args.large_levels or args.levels).split(",")]
    with tempfile.TemporaryDirectory() as directory:
        server, port = start_redis_server(directory)
        url = f"redis://127.0.0.1:{port}/0"
        try:
            curve(url, "small", small_document(), levels, args.cache_mb, args.patches)
            curve(url, "large", large_document(), large_levels, args.cache_mb, args.patches)
        finally:
            server.kill()
            server.wait()
    print("frame log bounds: IUI_FRAME_LOG_MAX=1024 frames, IUI_FRAME_LOG_MAX_BYTES=16 MiB per session (defaults)")
    return 0

