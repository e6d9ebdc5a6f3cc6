"""A commit to a session whose frame log is full: the capped append as it ships next to the one before.

`python -m bench frame-log` starts a private redis-server and loads `commit.lua` twice: as it
ships (`capped_log.lua`: the oldest frames the caps drop are read once, then one exact `XTRIM
MAXLEN`) and with the trim it had before (pages of 16 frames read from the oldest until the first
one kept, then `XTRIM MINID`: a full log's every commit read 16 frames to drop one).  Each run fills
the frame logs of `--sessions` sessions to `--log-max` frames, then times `--calls` more commits
(each drops one frame), pipelined `--pipeline` per round trip, with a small document's frame
(1.3 KB) and a 200-component one's (22 KB); the variants alternate (the order swaps every round)
on fresh keys.  Reported per frame size: the server's microseconds per commit (`INFO
commandstats`), min and median over `--rounds`, and before / now.  What a worker gains from it
end to end is in docs/benchmarks.md (its Redis CPU per call, every session's log full).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import redis

from workers.redisio.local_server import start_redis_server
from workers.redisio.scripts import script_source, with_includes

from .lua import commit_args, prepare, send_commits

FRAMES = {"small (1.3 KB)": "x" * 1_300, "200 components (22 KB)": "y" * 22_000}
# The trim of commit.lua before `capped_log.lua` (the reference): capped_append's own lines up to
# its trim, then this in place of the trim.
PAGED_TRIM = """  if count > max_count or bytes > max_bytes then
    local start, keep = '-', nil
    while keep == nil do
      local rows = redis.call('XRANGE', log, start, '+', 'COUNT', 16)
      if #rows == 0 then
        break
      end
      for _, row in ipairs(rows) do
        if count <= max_count and bytes <= max_bytes then
          keep = row[1]
          break
        end
        count = count - 1
        bytes = bytes - #row[2][2]
      end
      start = '(' .. rows[#rows][1]
    end
    if keep ~= nil then
      redis.call('XTRIM', log, 'MINID', keep)
    end
    redis.call('HSET', hash, hash_field, math.max(bytes, 0))
  end
end"""
TRIM_STARTS = "  if count <= max_count and bytes <= max_bytes then\n"  # where capped_append's trim begins


def paged_piece() -> str:
    """capped_log.lua with its trim replaced by the one before (PAGED_TRIM)."""
    piece = with_includes("-- include: capped_log")
    if TRIM_STARTS not in piece:
        raise SystemExit("capped_log.lua changed: update bench/frame_log.py's TRIM_STARTS")
    return piece[:piece.index(TRIM_STARTS)] + PAGED_TRIM


def paged_commit() -> str:
    """commit.lua with the trim it had before (its capped append's trim replaced by PAGED_TRIM)."""
    shipped, piece = script_source("commit"), with_includes("-- include: capped_log")
    if piece not in shipped:
        raise SystemExit("commit.lua no longer includes capped_log: update bench/frame_log.py")
    return shipped.replace(piece, paged_piece())


def run(client: redis.Redis, sha: str, frame: str, args: argparse.Namespace, tag: str) -> float:
    """Server microseconds per commit once every session's log is full."""
    fill = args.sessions * args.log_max
    ids, _, _ = prepare(client, tag, fill + args.calls)
    commands = []
    for i, entry_id in enumerate(ids):
        keys, argv = commit_args(tag, entry_id, i, frame=frame, sessions=args.sessions, log_max=args.log_max)
        commands.append(("EVALSHA", sha, len(keys), *keys, *argv))
    send_commits(client, commands[:fill], args.pipeline, "fill")
    client.config_resetstat()
    send_commits(client, commands[fill:], args.pipeline, "timed")
    return float(client.info("commandstats")["cmdstat_evalsha"]["usec_per_call"])


def main(argv: list[str] | None = None) -> int:
    """Print the server's cost of a commit to a full frame log, before and now."""
    parser = argparse.ArgumentParser(prog="python -m bench frame-log", description=__doc__)
    parser.add_argument("--sessions", type=int, default=16, help="sessions the commits spread over")
    parser.add_argument("--log-max", type=int, default=64, help="frames a session's log keeps (IUI_FRAME_LOG_MAX)")
    parser.add_argument("--calls", type=int, default=2_000, help="commits timed per run, each dropping one frame")
    parser.add_argument("--pipeline", type=int, default=50, help="commits per round trip")
    parser.add_argument("--rounds", type=int, default=5, help="runs of each variant and frame size (alternated)")
    args = parser.parse_args(argv)
    process, port = start_redis_server(tempfile.mkdtemp(prefix="iui-bench-frame-log-"))
    try:
        client = redis.Redis.from_url(f"redis://127.0.0.1:{port}/0")
        variants = {"before": client.script_load(paged_commit()), "now": client.script_load(script_source("commit"))}
        started = time.perf_counter()
        print(f"commits to full frame logs ({args.sessions} sessions x {args.log_max} frames), {args.calls} per run, "
              f"{args.rounds} alternated rounds; server us per commit, min / median")
        for label, frame in FRAMES.items():
            results: dict[str, list[float]] = {name: [] for name in variants}
            for round_number in range(args.rounds):
                order = list(variants) if round_number % 2 == 0 else list(reversed(variants))
                for name in order:
                    client.flushdb()  # keeps the script cache
                    results[name].append(run(client, variants[name], frame, args, f"r{round_number}"))
            medians = {name: statistics.median(values) for name, values in results.items()}
            cells = "   ".join(f"{name} {min(values):7.1f} / {medians[name]:7.1f}" for name, values in results.items())
            print(f"  {label:24} {cells}   before / now {medians['before'] / medians['now']:.2f}x")
        print(f"({time.perf_counter() - started:.0f} s)")
    finally:
        process.kill()
    return 0
