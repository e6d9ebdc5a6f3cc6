"""Properties of the tool runtime over random call sequences (fakeredis with Lua, no server).

Whatever the order of opens, patches with current or stale cursors, invalid mutations,
resends and terminal calls: every entry gets exactly one reply and is acked, an accepted call
appends exactly one frame that becomes the stored checkpoint, and a rejected call leaves the
stored state and the frame log untouched.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fakeredis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from config.settings import load_settings
from workers.observability.metrics import Metrics
from workers.redisio.keys import CONSUMER, GROUP, Keys, ui_field
from workers.redisio.scripts import Scripts
from workers.runtime.partition import PartitionConsumer
from workers.wire.entry import decode_fields

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DOCUMENT = json.loads((EXAMPLES / "stream-initial.json").read_text("utf-8"))
MUTATIONS = [
    *json.loads((EXAMPLES / "stream-mutations.json").read_text("utf-8")),
    {"type": "remove", "nodeId": "report"},  # the root: always invalid
    {"type": "update", "nodeId": "summary-card", "props": {"title": "Other", "gap": "sm"}},
    {"type": "add", "parentId": "nowhere", "index": 0, "node": {"id": "x", "type": "Text", "props": {"text": "x"}}},
]
SESSION, UI = "prop-session", "sales-report"


class Harness:
    """One partition consumer driven entry by entry."""

    def __init__(self) -> None:
        self.redis = fakeredis.FakeRedis(server=fakeredis.FakeServer())
        self.settings = load_settings(partitions=1, max_frames_per_generation=6, max_generations_per_session=3)
        self.keys = Keys("iui")
        scripts = Scripts(redis=self.redis, group=GROUP, reply_ttl_ms=60_000, frame_log_max=10_000)
        lease = scripts.acquire(self.keys.lease(0), self.keys.epoch(0), "test", 600_000)
        self.consumer = PartitionConsumer(redis=self.redis, settings=self.settings, keys=self.keys, scripts=scripts,
                                          metrics=Metrics(registry=CollectorRegistry()), partition=0,
                                          epoch=lease.epoch, fence=lease.fence)
        self.consumer.ensure_group()
        self.requests = 0

    def call(self, tool: str, arguments: dict[str, Any], call: str) -> dict[str, Any]:
        self.requests += 1
        request = f"r{self.requests}"
        self.redis.xadd(self.keys.input(0), {"session": SESSION, "request": request, "kind": "tool", "name": tool,
                                             "call": call, "body": json.dumps(arguments)})
        [(_, entries)] = self.redis.xreadgroup(GROUP, CONSUMER, {self.keys.input(0): ">"})
        for entry_id, fields in entries:
            self.consumer._handle(entry_id.decode(), decode_fields(fields), 1)  # as `take` hands it over: text
        reply_key = self.keys.reply(0, SESSION, request)
        replies = self.redis.lrange(reply_key, 0, -1)
        assert len(replies) == 1, "exactly one reply per entry"
        assert self.redis.xpending(self.keys.input(0), GROUP)["pending"] == 0
        return json.loads(replies[0])

    def snapshot(self) -> tuple[Any, ...]:
        generation = self.redis.hget(self.keys.session(0, SESSION), ui_field(UI))
        prefix = f"{UI}:{int(generation)}:".encode() if generation else b"-"
        stored = {k[len(prefix):]: v for k, v in self.redis.hgetall(self.keys.generations(0, SESSION)).items()
                  if k.startswith(prefix)}
        return generation, stored, self.redis.xlen(self.keys.frame_log(0, SESSION))


operations = st.lists(
    st.tuples(
        st.sampled_from(["open", "patch", "patch", "patch", "complete", "cancel", "resend"]),
        st.sampled_from(["current", "current", "stale", "invented"]),
        st.integers(0, len(MUTATIONS) - 1),
        st.integers(0, 5),  # call id drawn from a small pool, so reuse happens
    ),
    min_size=1, max_size=12,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
def test_random_call_sequences_keep_every_invariant(steps: list[tuple[str, str, int, int]]) -> None:
    h = Harness()
    cursor: dict[str, Any] | None = None
    last: tuple[str, dict[str, Any], str] | None = None
    for kind, which, mutation, call_no in steps:
        call = f"call-{call_no}"
        if kind == "resend" and last is not None:
            tool, arguments, call = last
        elif kind == "open" or cursor is None:
            tool, arguments = "intelligent_ui_open", {"document": DOCUMENT}
        else:
            args = {"sourceCallId": cursor["sourceCallId"], "generation": cursor["generation"],
                    "baseRevision": cursor["revision"]}
            if which == "stale":
                args["baseRevision"] = max(0, cursor["revision"] - 1) if cursor["revision"] else 5
            elif which == "invented":
                args["sourceCallId"] = "invented"
            tool = {"patch": "intelligent_ui_patch", "complete": "intelligent_ui_complete",
                    "cancel": "intelligent_ui_cancel", "resend": "intelligent_ui_patch"}[kind]
            arguments = {**args, "mutation": MUTATIONS[mutation]} if tool == "intelligent_ui_patch" else args
        before = h.snapshot()
        reply = h.call(tool, arguments, call)
        after = h.snapshot()
        if not reply["ok"]:
            assert after == before, f"rejected {reply['error']['code']} changed the state"
            continue
        frame = reply["result"]["frame"]
        if after == before:  # an identical adjacent resend: the stored result, nothing new
            assert last is not None and (tool, arguments, call) == last
        else:
            assert after[2] == before[2] + 1
            assert json.loads(after[1][b"checkpoint"]) == frame
        cursor, last = frame, (tool, arguments, call)
    frames = [json.loads(f[b"frame"]) for _, f in h.redis.xrange(h.keys.frame_log(0, SESSION))]
    by_generation: dict[int, list[int]] = {}
    for frame in frames:
        by_generation.setdefault(frame["generation"], []).append(frame["seq"])
    for seqs in by_generation.values():
        assert seqs == list(range(1, len(seqs) + 1))
