"""The per-call cost of a commit as EVALSHA of `commit.lua` next to FCALL of a Redis Function.

`python -m bench lua` starts a private redis-server (>= 7.0) and loads three variants of the
same commit: the script as it ships (EVALSHA), its body unchanged as a function of a library
(FCALL), and the body with the fence check, the gap check and the sliding expiry moved into
local helper functions of the library (FCALL, the shape a converted runtime would have).
Each run commits `--calls` pending entries of one partition, each an open of its own uiId with
a small document's frame (on 64 sessions, so no frame log reaches its cap), pipelined
`--pipeline` calls per round trip; the variants alternate (the order rotates every round) on
fresh keys of the same Redis.  Reported per variant: the client's wall time per call and the
server's (`INFO commandstats` usec_per_call), min and median over the rounds.  `--fakeredis`
also runs every converted function once on the embedded demo's Redis (fakeredis) and on the
real one, to check FUNCTION LOAD/FCALL there.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import redis

from workers.redisio.keys import ledger_name
from workers.redisio.local_server import start_redis_server
from workers.redisio.scripts import script_source

LIBRARY = "iui_bench"
GROUP = "workers"
FRAME = "x" * 1_300  # a small document's checkpoint (bench.workers small_document: ~1.3 KB)
SESSIONS = 64  # the commits of a run spread over this many sessions (frame logs below their cap)

# The helpers a converted library would hold once, and the lines of commit.lua they replace.
HELPERS = """
local function fenced(lease, fence)
  return redis.call('HGET', lease, 'fence') ~= fence
end
local function gap(input, group, entry_id)
  return redis.call('XPENDING', input, group, '-', '(' .. entry_id, 1)[1] ~= nil
end
local function slide(keys, ttl_ms)
  for _, key in ipairs(keys) do
    if ttl_ms == '0' then
      redis.call('PERSIST', key)
    else
      redis.call('PEXPIRE', key, ttl_ms)
    end
  end
end
"""
INLINE_CHECKS = """if redis.call('HGET', lease, 'fence') ~= fence then
  return {'fenced'}
end
if redis.call('XPENDING', input, group, '-', '(' .. entry_id, 1)[1] then
  return {'gap'}  -- an older entry of the partition is still pending: the caller replays it first
end"""
HELPER_CHECKS = """if fenced(lease, fence) then
  return {'fenced'}
end
if gap(input, group, entry_id) then
  return {'gap'}
end"""
INLINE_EXPIRY = """for _, key in ipairs(sliding) do
  if session_ttl_ms == '0' then
    redis.call('PERSIST', key)
  else
    redis.call('PEXPIRE', key, session_ttl_ms)
  end
end"""
HELPER_EXPIRY = "slide(sliding, session_ttl_ms)"
SCRIPTS = ("lease_acquire", "lease_renew", "lease_release", "read", "commit", "reply", "plain", "dead", "owner",
           "receipt", "answer", "view_put", "view_delete")


def _body(source: str) -> str:
    """A script's text as the body of a library function (its header comments kept)."""
    return source.replace("KEYS", "keys").replace("ARGV", "args")


def _function(name: str, body: str) -> str:
    return f"redis.register_function('{name}', function(keys, args)\n{body}\nend)\n"


def commit_library() -> str:
    """The library of the two FCALL variants: commit.lua's body as it is, and with the helpers."""
    source = script_source("commit")
    for old in (INLINE_CHECKS, INLINE_EXPIRY):
        if old not in source:
            raise SystemExit("commit.lua changed: update bench/lua.py's replaced lines")
    helped = source.replace(INLINE_CHECKS, HELPER_CHECKS).replace(INLINE_EXPIRY, HELPER_EXPIRY)
    return (f"#!lua name={LIBRARY}\n{HELPERS}\n" + _function("commit_same", _body(source))
            + _function("commit_helpers", _body(helped)))


def every_script_library() -> str:
    """Every runtime script as one function of a library (bodies unchanged)."""
    return "#!lua name=iui_all\n" + "".join(_function(f"iui_{name}", _body(script_source(name))) for name in SCRIPTS)


def prepare(client: redis.Redis, tag: str, calls: int) -> tuple[list[str], str, str]:
    """A lease held under a fence and `calls` entries pending in its partition's stream."""
    lease, stream = f"{{{tag}}}:lease", f"{{{tag}}}:in"
    client.hset(lease, mapping={"owner": "bench", "epoch": "1", "fence": "1:bench"})
    client.xgroup_create(stream, GROUP, id="0", mkstream=True)
    pipe = client.pipeline(transaction=False)
    for i in range(calls):
        pipe.xadd(stream, {"n": str(i)})
    ids = [entry.decode() for entry in pipe.execute()]
    client.xreadgroup(GROUP, "owner", {stream: ">"}, count=calls)
    return ids, lease, stream


def commit_args(tag: str, entry_id: str, i: int, *, frame: str = FRAME, sessions: int = SESSIONS,
                log_max: int = 256) -> tuple[list[str], list[Any]]:
    """KEYS and ARGV of one commit: an open of uiId u<i> (fields as the runtime writes them), its
    frame `frame`, on session i % `sessions`, whose frame log keeps `log_max` frames."""
    session = f"{{{tag}}}:s{i % sessions}"
    keys = [f"{{{tag}}}:lease", f"{{{tag}}}:in", f"{session}:g", session, f"{session}:log", f"{session}:plain",
            f"{{{tag}}}:reply:{i}"]
    fields = ["seq", 1, "revision", 1, "status", "streaming", "frames", 1, "bytes", len(frame), "source", f"c{i}",
              "last_call", f"c{i}", "last_digest", f"d{i}", "last_receipt", "receipt text of the open",
              ledger_name(1), f"d{i}"]
    args = ["1:bench", GROUP, entry_id, "0", "0", "1", frame, log_max, 16 * 1024 * 1024, "reply " + frame,
            60_000, f"{{{tag}}}:frames", f"src:c{i}", f"u{i}", "0", 3_600_000, f"ui:u{i}", f"u{i}:1:", 0, *fields]
    return keys, args


def _run(client: redis.Redis, variant: str, sha: str, calls: int, chunk: int, tag: str) -> tuple[float, float]:
    """Wall and server microseconds per call of one run of `calls` commits."""
    ids, _, _ = prepare(client, tag, calls)
    commands = []
    for i, entry_id in enumerate(ids):
        keys, args = commit_args(tag, entry_id, i)
        head = ("EVALSHA", sha) if variant == "evalsha" else ("FCALL", variant)
        commands.append((*head, len(keys), *keys, *args))
    client.config_resetstat()
    started = time.perf_counter()
    send_commits(client, commands, chunk, variant)
    wall = (time.perf_counter() - started) / calls
    stats = client.info("commandstats")
    name = "cmdstat_evalsha" if variant == "evalsha" else "cmdstat_fcall"
    return wall * 1e6, float(stats[name]["usec_per_call"])


def send_commits(client: redis.Redis, commands: list[tuple[Any, ...]], chunk: int, label: str) -> None:
    """Send commit commands pipelined `chunk` per round trip; exit naming `label` if one did not commit."""
    for at in range(0, len(commands), chunk):
        pipe = client.pipeline(transaction=False)
        for command in commands[at:at + chunk]:
            pipe.execute_command(*command)
        replies = pipe.execute()
        if any(reply != [b"ok"] for reply in replies):
            raise SystemExit(f"{label}: a commit failed: {next(r for r in replies if r != [b'ok'])!r}")


def check_fakeredis(out: Callable[[str], None], url: str) -> None:
    """Load every script as a function on fakeredis and on the real server; run the commit on each."""
    import fakeredis  # the embedded demo's Redis

    for label, client in (("fakeredis", fakeredis.FakeRedis()), ("redis-server", redis.Redis.from_url(url))):
        client.function_load(every_script_library(), replace=True)
        client.function_load(commit_library(), replace=True)
        ids, _, _ = prepare(client, f"check-{label}", 2)
        results = []
        for i, name in enumerate(("iui_commit", "commit_helpers")):
            keys, args = commit_args(f"check-{label}", ids[i], i)
            results.append(client.fcall(name, len(keys), *keys, *args))
        missing = _missing_function(client)
        out(f"{label}: FUNCTION LOAD of {len(SCRIPTS)} scripts as one library ok; FCALL commit -> {results}; "
            f"an unknown function -> {missing}")


def _missing_function(client: Any) -> str:
    try:
        client.fcall("iui_no_such_function", 0)
    except redis.ResponseError as error:
        return f"{type(error).__name__}({error})"
    return "no error"


def main(argv: list[str] | None = None) -> int:
    """Print EVALSHA and FCALL per-call costs of the commit."""
    parser = argparse.ArgumentParser(prog="python -m bench lua", description=__doc__)
    parser.add_argument("--calls", type=int, default=2_000, help="commits per run")
    parser.add_argument("--pipeline", type=int, default=100, help="commits per round trip")
    parser.add_argument("--rounds", type=int, default=7, help="runs of each variant (alternated)")
    parser.add_argument("--fakeredis", action="store_true", help="also check the converted scripts on fakeredis")
    args = parser.parse_args(argv)
    process, port = start_redis_server(tempfile.mkdtemp(prefix="iui-bench-lua-"))
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url)
        sha = client.script_load(script_source("commit"))
        client.function_load(commit_library(), replace=True)
        variants = ["evalsha", "commit_same", "commit_helpers"]
        results: dict[str, list[tuple[float, float]]] = {v: [] for v in variants}
        for round_number in range(args.rounds):
            order = variants[round_number % 3:] + variants[:round_number % 3]
            for variant in order:
                client.flushdb()  # FLUSHDB keeps both the script cache and the functions
                results[variant].append(_run(client, variant, sha, args.calls, args.pipeline, f"r{round_number}"))
        print(f"commit, {args.calls} calls x {args.rounds} rounds, {args.pipeline} per round trip "
              f"(us per call: min / median)")
        for variant in variants:
            walls, servers = [r[0] for r in results[variant]], [r[1] for r in results[variant]]
            print(f"  {variant:15} wall {min(walls):6.2f} / {statistics.median(walls):6.2f}   "
                  f"server {min(servers):6.2f} / {statistics.median(servers):6.2f}")
        if args.fakeredis:
            check_fakeredis(print, url)
    finally:
        process.kill()
    return 0
