"""answer-view-state@1 `put` round trips through the Redis runtime, and the validation cost.

Starts a private `redis-server` and worker processes (`python -m workers.cli worker`),
publishes the view-state example's blocks and final answer on many sessions, then:

- throughput: every session's puts submitted at once (each expecting the revision its
  predecessor writes, so all succeed), replies awaited: puts/s;
- latency: one session's puts one after another (submit -> reply), p50/p99;
- the Python work of one put: `parse_view_state` + canonical state text on the example's nodes, and
  `parse_answer_block` on a 48-element block (what `present_answer` costs, as `bench answer`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import redis

from core import canonical_json_string, parse_answer_block, parse_view_state, view_state_schema_digest
from workers.client import AnswerClient, Client
from workers.wire.entry import dumps

from .answer import block_of_48
from .timing import median_seconds
from .workers import PARTITIONS, start_redis, start_workers, stop

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "answer-ui" / "view-state.json"


def _prepare(answers: AnswerClient, sessions: list[str], example: dict[str, Any]) -> str:
    """Publish the example turn on every session; returns the target block's digest."""
    message = example["message_id"]
    for session in sessions:
        for block in example["published_blocks"]:
            assert answers.present_answer(session, message, block)["ok"]
        final = example["final_answer"]
        assert answers.final_answer(session, message, final["answer"], final["ui_block_ids"])["ok"]
    target = next(b for b in example["published_blocks"] if b["block_id"] == example["view_state"]["block_id"])
    return view_state_schema_digest(target)


def _body(example: dict[str, Any], digest: str, revision: int) -> str:
    nodes = json.loads(json.dumps(example["view_state"]["nodes"]))
    nodes["readings"]["search"] = f"J-{revision}"
    return dumps({"message_id": example["message_id"], "block_id": example["view_state"]["block_id"],
                  "schema_digest": digest, "expected_revision": revision, "request_id": f"put-{revision}",
                  "nodes": nodes})


def throughput(answers: AnswerClient, sessions: list[str], example: dict[str, Any], digest: str,
               per_session: int) -> float:
    """Puts per second with every put submitted at once."""
    bodies = [_body(example, digest, revision) for revision in range(per_session)]
    started = time.perf_counter()
    requests = [(s, answers.submit_view(s, "put", bodies[r])) for r in range(per_session) for s in sessions]
    for session, request in requests:
        reply = answers.client.reply(session, request, timeout=60)
        assert reply["ok"], reply
    return len(requests) / (time.perf_counter() - started)


def latency(answers: AnswerClient, session: str, example: dict[str, Any], digest: str, count: int) -> list[float]:
    """Round-trip seconds of sequential puts on one session."""
    times = []
    for revision in range(count):
        started = time.perf_counter()
        reply = answers.view(session, "put", _body(example, digest, revision), timeout=30)
        times.append(time.perf_counter() - started)
        assert reply["ok"], reply
    return sorted(times)


def main(argv: list[str] | None = None) -> int:
    """Print put round trips/s and the per-put validation cost."""
    parser = argparse.ArgumentParser(prog="python -m bench answer-store", description=__doc__)
    parser.add_argument("--sessions", type=int, default=32)
    parser.add_argument("--puts", type=int, default=50, help="puts per session in the throughput run")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker process counts to run")
    parser.add_argument("--latency-puts", type=int, default=400)
    args = parser.parse_args(argv)
    example = json.loads(EXAMPLE.read_text("utf-8"))
    block = parse_answer_block(next(b for b in example["published_blocks"]
                                    if b["block_id"] == example["view_state"]["block_id"]))
    nodes = example["view_state"]["nodes"]
    check = median_seconds(lambda: canonical_json_string(parse_view_state(nodes, block)), repeat=5, min_time=0.2)
    big = block_of_48()
    parse = median_seconds(lambda: parse_answer_block(big), repeat=5, min_time=0.2)
    print(f"validation: parse_view_state + canonical state of the example ({len(canonical_json_string(nodes))} bytes) "
          f"{check * 1e6:.1f} us; parse_answer_block on 48 elements {parse * 1e3:.2f} ms")
    directory = tempfile.mkdtemp(prefix="iui-bench-answer-")
    server, url = start_redis(directory)
    try:
        for count in args.workers:
            redis.Redis.from_url(url).flushall()
            workers = start_workers(url, count)
            try:
                connection = redis.Redis.from_url(url)
                answers = AnswerClient(client=Client(redis=connection, partitions=PARTITIONS),
                                       principal="bench-user", project="bench-project")
                run = uuid.uuid4().hex[:6]
                sessions = [f"bench-{run}-{i}" for i in range(args.sessions)]
                digest = _prepare(answers, [*sessions, f"bench-{run}-latency"], example)
                rate = throughput(answers, sessions, example, digest, args.puts)
                times = latency(answers, f"bench-{run}-latency", example, digest, args.latency_puts)
                p50, p99 = times[len(times) // 2], times[int(len(times) * 0.99) - 1]
                print(f"put, {count} worker process(es): {rate:,.0f} round trips/s "
                      f"({args.sessions} sessions x {args.puts} puts submitted at once); sequential on one "
                      f"session p50 {p50 * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms")
            finally:
                stop(workers)
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(directory, ignore_errors=True)
    return 0
