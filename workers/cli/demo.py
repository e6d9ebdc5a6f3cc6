"""`iui demo`: the stream example end to end on an embedded or a real Redis.

Without `IUI_REDIS_URL` it runs on an in-process Redis (fakeredis with Lua) and worker
threads; with it, on that server.  It opens `examples/stream-initial.json`, applies the three
mutations of `examples/stream-mutations.json`, completes, prints each frame's cursor and the
UI tree as it grows, checks that a frame follower converged, then prints the metrics.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from config.settings import Settings

from ..client.client import Client
from ..observability.metrics import Metrics
from ..redisio.client import RedisClient
from ..runtime.pool import WorkerPool
from ..wire.names import COMPLETE, OPEN, PATCH
from .demo_actions import run_action_demo

# Copies of the examples the demo needs, shipped as package data so `iui demo` works from a wheel
# (tests/unit/test_packaging.py keeps them identical to examples/).
EXAMPLES = Path(str(resources.files("workers.cli") / "demo_examples"))
_LABELS = ("title", "label", "text", "content")


def tree_lines(node: Any, depth: int = 0) -> Iterator[str]:
    """A compact indented view of a UI node tree: `Type#id "label"`."""
    props = node.get("props") or {}
    label = next((props[k] for k in _LABELS if isinstance(props.get(k), str)), "")
    label = f' "{label[:48]}"' if label else ""
    yield f"{'  ' * depth}{node.get('type')}#{node.get('id')}{label}"
    for child in node.get("children") or ():
        yield from tree_lines(child, depth + 1)


def _cursor(frame: Any) -> str:
    return (f"generation={frame['generation']} seq={frame['seq']} revision={frame['revision']} "
            f"type={frame['type']}")


def _connect(settings: Settings, embedded: bool) -> tuple[Callable[[], RedisClient], str]:
    if embedded:
        import fakeredis

        server = fakeredis.FakeServer()
        return (lambda: fakeredis.FakeRedis(server=server)), "embedded in-process Redis (fakeredis with Lua)"
    from ..redisio.connection import connect, location

    return (lambda: connect(settings.redis_url)), f"Redis at {location(settings.redis_url)}"


def _start_pools(settings: Settings, factory: Callable[[], RedisClient], metrics: Metrics, count: int
                 ) -> list[tuple[WorkerPool, threading.Thread]]:
    pools = []
    for index in range(count):
        pool = WorkerPool(settings=settings, redis=factory(), metrics=metrics, worker_id=f"demo-worker-{index + 1}")
        thread = threading.Thread(target=pool.run, name=f"demo-pool-{index + 1}", daemon=True)
        thread.start()
        pools.append((pool, thread))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and sum(len(p.partitions) for p, _ in pools) < settings.partitions:
        time.sleep(0.05)
    return pools


def _show(out: Callable[[str], None], reply: dict[str, Any]) -> dict[str, Any]:
    if not reply.get("ok"):
        raise RuntimeError(f"demo call rejected: {reply['error']['code']}: {reply['error']['message']}")
    frame: dict[str, Any] = reply["result"]["frame"]
    out(f"frame {_cursor(frame)}")
    out(f"  receipt: {reply['result']['receipt']}")
    for line in tree_lines(frame["snapshot"]["root"]):
        out("    " + line)
    return frame


def run_demo(settings: Settings, *, embedded: bool, out: Callable[[str], None] = print,
             examples: Path = EXAMPLES, workers: int = 2) -> int:
    """Run the demo; returns 0 when the stream completed and a follower converged."""
    factory, where = _connect(settings, embedded)
    out(f"iui demo: using {where}; {workers} worker pools, {settings.partitions} partitions")
    metrics = Metrics(registry=CollectorRegistry())
    pools = _start_pools(settings, factory, metrics, workers)
    try:
        out("leases: " + "; ".join(f"{p.worker_id} holds {len(p.partitions)}" for p, _ in pools))
        client = Client(redis=factory(), prefix=settings.key_prefix, partitions=settings.partitions)
        run = uuid.uuid4().hex[:8]  # a real Redis may already hold earlier demo runs
        session = f"demo-{run}"
        document = json.loads((examples / "stream-initial.json").read_text("utf-8"))
        mutations = json.loads((examples / "stream-mutations.json").read_text("utf-8"))
        out(f"session {session}")
        with client.follow(session) as feed:
            frame = _show(out, client.call(session, OPEN, {"document": document}, call=f"open-{run}"))
            for index, mutation in enumerate(mutations):
                frame = _show(out, client.call(session, PATCH, {
                    "sourceCallId": frame["sourceCallId"], "generation": frame["generation"],
                    "baseRevision": frame["revision"], "mutation": mutation}, call=f"patch-{index + 1}-{run}"))
            frame = _show(out, client.call(session, COMPLETE, {
                "sourceCallId": frame["sourceCallId"], "generation": frame["generation"],
                "baseRevision": frame["revision"]}, call=f"complete-{run}"))
            seen = list(feed.states(timeout=0.3, idle=0.1))
            view = feed.views.get(frame["uiId"])
        converged = view is not None and view.checkpoint["seq"] == frame["seq"] and view.status == "complete"
        out(f"follower: {len(seen)} states received, converged={converged}"
            f" ({_cursor(view.checkpoint) if view else 'no view'})")
        acted = run_action_demo(client=client, redis=factory(), settings=settings, session=session, run=run,
                                examples=examples, out=out)
        out(f"actions: every step as expected={acted}")
    finally:
        for pool, _ in pools:
            pool.stop()
        for _, thread in pools:
            thread.join(timeout=10)
    out("metrics exported:")
    for line in metrics.exposition().splitlines():
        if line.startswith("iui_") and "_created" not in line and "_bucket" not in line \
                and not line.endswith(" 0.0"):
            out("  " + line)
    return 0 if converged and acted else 1
