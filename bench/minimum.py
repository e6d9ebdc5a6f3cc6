"""The contract minimum: a consumer that does only the Redis work each entry needs.

Per entry: the XREADGROUP that delivers it, then one small Lua script that compares and sets
the session's stored seq, writes a checkpoint of the real frame's size, appends it to a
capped log, pushes the reply, publishes the frame and acknowledges the entry; the scripts of
one read are pipelined (plain EVALSHA: no SCRIPT EXISTS round trip).  No validation, no
ledger, no fence, no expiry: `bench.workers.floor` runs the runtime's own commit script.
"""

from __future__ import annotations

import sys

from bench.workers import PARTITIONS, drain_consumer

MINIMUM_WORKER = r"""
import sys, redis
from workers.redisio.keys import Keys
from workers.redisio.connection import is_busy_group
url, partitions, frame_size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r, k = redis.Redis.from_url(url), Keys("minimum")
SHA = r.script_load('''
if tonumber(redis.call('HGET', KEYS[1], 'seq') or '0') ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'seq', ARGV[1] + 1, 'checkpoint', ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', 1024, '*', 'frame', ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[3])
redis.call('PEXPIRE', KEYS[3], 300000)
redis.call('PUBLISH', ARGV[4], ARGV[2])
redis.call('XACK', KEYS[4], 'minimum', ARGV[5])
return 1
''')
partition = {k.input(p): p for p in range(partitions)}
streams = {stream: ">" for stream in partition}
for s in streams:
    try: r.xgroup_create(s, "minimum", id="0", mkstream=True)
    except redis.ResponseError as error:
        if not is_busy_group(error): raise
frame = '"' + "x" * max(frame_size - 2, 0) + '"'
seqs = {}
print("ready", flush=True)
while True:
    pipe = r.pipeline(transaction=False)
    for stream, entries in r.xreadgroup("minimum", "minimum", streams, count=32, block=1000) or []:
        stream = stream.decode()
        p = partition[stream]
        for entry_id, f in entries:
            session, request = f[b"session"].decode(), f[b"request"].decode()
            seq = seqs.get(session, 0)
            seqs[session] = seq + 1
            pipe.evalsha(SHA, 4, k.session(p, session), k.frame_log(p, session), k.reply(p, session, request),
                         stream, seq, frame, '{"ok":true,"request":"%s","result":{"frame":%s}}' % (request, frame),
                         k.channel(p, session), entry_id)
    pipe.execute()
"""


def minimum_floor(url: str, frame_size: int, sessions: int, per_session: int, run: int, *,
                  presubmitted: bool = False) -> float:
    """Calls per second of the contract minimum (one process, commits pipelined per read;
    `presubmitted`: the consumer stopped while the calls are submitted, `bench.workers.drain`)."""
    return drain_consumer([sys.executable, "-c", MINIMUM_WORKER, url, str(PARTITIONS), str(frame_size)], url,
                          "minimum", [f"minimum{'p' if presubmitted else ''}{run}-{n}" for n in range(sessions)],
                          per_session,
                          presubmitted=presubmitted)
