"""The gateway under load: idle connections, fan-out latency, resume, HTTP calls against direct XADDs.

`python -m bench gateway [--connections 2000] [--subscribers 1000] [--sessions 100] [--rate 200]
[--seconds 10] [--behind 1000] [--calls 2000] [--concurrency 32]` starts a private redis-server, one
`iui worker` and one `iui gateway` process, and measures, with a load generator in this process
(asyncio, raw sockets for the streams so the generator stays cheap):

- idle: the gateway's RSS per open event stream, at `--connections` streams over `--sessions`
  sessions (RSS after minus before, divided by the streams; goal <= 30 KiB);
- fan-out: `--subscribers` streams over `--sessions` sessions while patches are committed at
  `--rate` frames/s: latency from the submit of a patch to its frame at each subscriber, p50/p99
  (goal p99 < 50 ms); the submit-to-reply latency of the same patches beside it;
- resume: a client `--behind` events behind connects with its cursor: seconds until it has them all;
- calls: `--calls` patches through `POST /v1/sessions/{s}/calls` with `--concurrency` in flight,
  against the same patches XADDed by a direct producer (redis.asyncio, same concurrency): calls/s
  of each and their ratio;
- agui-opening: in this process, an AG-UI connection's opening (RUN_STARTED, the STATE_SNAPSHOT
  of `--agui-uis` UIs at the document limit) written and encoded in one step with sse-starlette's
  own event, as before, and a frame at a time (`gateway.agui._opening`, the heap relieved as the
  gateway's policy does), alternated for `--rounds`: the event loop's longest stall during each
  (what every other stream waited), and while its state is freed at the stream's end, in one
  piece as before and a UI at a time (`gateway.heap.release`);
- churn: `--churn` streams started, each ended after its first frame (100 at a time), beside
  `--idle-streams` open ones over `--sessions` sessions: the gateway's RSS before and after, and the
  whole-heap collections of its heap policy meanwhile (`iui_gateway_full_collection_seconds`);
- resync: in this process, a `resync` of `--agui-uis` UIs at the document limit with a full receipt
  log and a full answer log (a reconnection whose cursor the logs no longer hold) written as before
  (joined, then sse-starlette's event; the AG-UI rendering decoded whole) and a piece at a time
  (`gateway.events.sse_parts`, `gateway.agui._resynced`), alternated for `--rounds`: the event
  loop's longest stall during each;
- limit (only with `--only limit`): `--max-connections` event streams fill the gateway (started
  with `IUI_GATEWAY_MAX_CONNECTIONS` at that), then `--over` more connections each ask for a
  stream: how many were refused `overloaded` (all must be) and how fast (p50/p99), whether the
  gateway stayed ready, and whether a stream is served again once the others closed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import redis.asyncio as aioredis

from bench.scrape import rss_kib, samples
from gateway.identity import mint
from workers.redisio.keys import Keys, partition_of
from workers.redisio.local_server import free_port, start_redis_server

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "stream-initial.json"
SECRET = "bench-gateway-secret-0123456789abcdefgh"
PARTITIONS = 16
GENERATION_PATCHES = 250  # patches per generation (a generation holds 256 frames)
RESYNC_RECEIPTS = 4_096  # resync: a full receipt log (IUI_RECEIPT_LOG_MAX) ...
RESYNC_ANSWERS = 1_024  # ... and a full answer log (IUI_FRAME_LOG_MAX events)


class Stack:
    """redis-server, one worker and one gateway process."""

    def __init__(self, directory: str, max_connections: int | None) -> None:
        self.redis, port = start_redis_server(directory)
        self.url = f"redis://127.0.0.1:{port}/0"
        self.port = free_port()
        env = {**os.environ, "IUI_REDIS_URL": self.url, "IUI_PARTITIONS": str(PARTITIONS),
               "IUI_GATEWAY_JWT_SECRET": SECRET, "IUI_GATEWAY_PORT": str(self.port),
               "IUI_GATEWAY_MAX_LAG": "1000000", "IUI_FRAME_LOG_MAX": "100000",
               **({} if max_connections is None else {"IUI_GATEWAY_MAX_CONNECTIONS": str(max_connections)})}
        self.worker = subprocess.Popen([sys.executable, "-m", "workers.cli", "worker"], env=env,
                                       stderr=subprocess.DEVNULL)
        self.gateway = subprocess.Popen([sys.executable, "-m", "workers.cli", "gateway"], env=env,
                                        stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(self.base + "/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the gateway did not start")
            time.sleep(0.1)

    def close(self) -> None:
        for process in (self.gateway, self.worker, self.redis):
            process.kill()
            process.wait()


def token(role: str) -> str:
    return mint(secret=SECRET.encode(), principal="bench", project="bench", role=role, ttl_s=3600)


class Producer:
    """Opens streams on sessions and patches them through redis.asyncio (the agent's side)."""

    def __init__(self, url: str) -> None:
        self.redis = aioredis.Redis.from_url(url)
        self.keys = Keys("iui")
        self.revision: dict[str, int] = {}
        self.generation: dict[str, int] = {}
        self._n = 0

    async def call(self, session: str, tool: str, args: dict[str, Any], call: str) -> dict[str, Any]:
        self._n += 1
        request = f"r{self._n}"
        p = partition_of(session, PARTITIONS)
        await self.redis.xadd(self.keys.input(p), {"session": session, "request": request, "kind": "tool",
                                                   "name": tool, "call": call, "body": json.dumps(args),
                                                   "principal": "bench", "project": "bench"})
        key = self.keys.reply(p, session, request)
        value = await self.redis.execute_command("BLMOVE", key, key, "LEFT", "RIGHT", 30)
        await self.redis.execute_command("LREM", key, 1, value)
        reply: dict[str, Any] = json.loads(value)
        return reply

    async def open(self, session: str) -> None:
        """A new generation of the session's UI (a generation holds at most 256 frames)."""
        generation = self.generation.get(session, 0) + 1
        reply = await self.call(session, "intelligent_ui_open", {"document": json.loads(EXAMPLE.read_text())},
                                f"open-{session}-{generation}")
        assert reply["ok"], reply
        self.generation[session] = reply["result"]["frame"]["generation"]
        self.revision[session] = 0

    def patch_args(self, session: str, title: str) -> dict[str, Any]:
        revision = self.revision[session]
        self.revision[session] += 1
        generation = self.generation[session]
        return {"sourceCallId": f"open-{session}-{generation}", "generation": generation, "baseRevision": revision,
                "mutation": {"type": "update", "nodeId": "summary-card", "props": {"title": title, "gap": "sm"}}}

    async def patch(self, session: str, title: str) -> dict[str, Any]:
        if self.revision[session] >= GENERATION_PATCHES:
            await self.open(session)
        reply = await self.call(session, "intelligent_ui_patch", self.patch_args(session, title),
                                f"p-{session}-{self.generation[session]}-{self.revision[session]}")
        assert reply["ok"], reply
        return reply


async def stream(port: int, session: str, auth: str, cursor: str | None = None
                 ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A raw event stream connection (request sent, response headers read)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_events_request(session, auth, cursor))
    await writer.drain()
    await reader.readuntil(b"\r\n\r\n")
    return reader, writer


def _events_request(session: str, auth: str, cursor: str | None = None) -> bytes:
    """The raw request of a session's event stream."""
    extra = f"last-event-id: {cursor}\r\n" if cursor else ""
    return (f"GET /v1/sessions/{session}/events HTTP/1.1\r\nhost: bench\r\nauthorization: Bearer {auth}\r\n"
            f"{extra}\r\n").encode()


async def frames(reader: asyncio.StreamReader) -> Any:
    """The `data:` payloads of frame events (chunked transfer framing skipped)."""
    event = ""
    while True:
        line = (await reader.readline()).decode().rstrip("\r\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event == "frame":
            yield json.loads(line[6:])


FLOOR_APP = r"""
import asyncio, sys
import uvicorn
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.routing import Route


async def events(request):
    async def forever():
        yield ServerSentEvent(comment="floor", retry=3000)
        await asyncio.Event().wait()
    return EventSourceResponse(forever(), ping=0)

app = Starlette(routes=[Route("/v1/sessions/{session}/events", events)])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error")
"""


async def open_streams(port: int, sessions: list[str], count: int, auth: str) -> list[Any]:
    """`count` idle event streams, round-robin over `sessions`."""
    return [await stream(port, sessions[i % len(sessions)], auth) for i in range(count)]


async def floor_rss(args: argparse.Namespace) -> float:
    """KiB per idle stream of a bare Starlette + sse-starlette + uvicorn endpoint (the stack's floor)."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", FLOOR_APP, str(port)], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                _reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)
        before = rss_kib(process.pid)
        streams = await open_streams(port, ["floor"], args.connections, "none")
        await asyncio.sleep(2)
        after = rss_kib(process.pid)
        for _, writer in streams:
            writer.close()
        return (after - before) / args.connections
    finally:
        process.kill()
        process.wait()


async def idle(stack: Stack, args: argparse.Namespace, producer: Producer) -> str:
    sessions = [f"idle-{n}" for n in range(args.sessions)]
    for session in sessions:
        await producer.open(session)
    await asyncio.sleep(1)
    before = rss_kib(stack.gateway.pid)
    connections = await open_streams(stack.port, sessions, args.connections, token("viewer"))
    await asyncio.sleep(2)
    after = rss_kib(stack.gateway.pid)
    for _, writer in connections:
        writer.close()
    per = (after - before) / args.connections
    floor = await floor_rss(args)
    return (f"idle: {args.connections} streams over {len(sessions)} sessions: gateway RSS {before:,} -> {after:,} KiB, "
            f"{per:.1f} KiB per stream (goal <= 30); a bare sse-starlette endpoint on uvicorn, same load: "
            f"{floor:.1f} KiB per stream")


async def churn(stack: Stack, args: argparse.Namespace, producer: Producer) -> str:
    """Streams that end while others stay open (browsers coming and going): what the gateway keeps
    of them (its RSS) and the whole-heap collections their ending brings (the heap policy's)."""
    sessions = [f"churn-{n}" for n in range(args.sessions)]
    for session in sessions:
        await producer.open(session)
    viewer = token("viewer")
    held = await open_streams(stack.port, sessions, args.idle_streams, viewer)

    async def one(n: int) -> None:
        reader, writer = await stream(stack.port, sessions[n % len(sessions)], viewer)
        try:
            await anext(frames(reader))
        finally:
            writer.close()

    async with httpx.AsyncClient(base_url=stack.base, timeout=10) as client:
        await asyncio.sleep(2)
        before, collections_before = rss_kib(stack.gateway.pid), await _full_collections(client)
        started = time.perf_counter()
        for batch in range(0, args.churn, 100):
            await asyncio.gather(*(one(n) for n in range(batch, min(batch + 100, args.churn))))
        elapsed = time.perf_counter() - started
        await asyncio.sleep(2.5)  # the heap policy's next tick
        after, (count, total) = rss_kib(stack.gateway.pid), await _full_collections(client)
    for _, writer in held:
        writer.close()
    count, total = count - collections_before[0], total - collections_before[1]
    mean = f", {total / count * 1000:.0f} ms each on average" if count else ""
    return (f"churn: {args.churn:,} streams started and ended beside {args.idle_streams:,} open ones "
            f"({args.churn / elapsed:,.0f}/s): gateway RSS {before:,} -> {after:,} KiB "
            f"({(after - before) / args.churn * 1024:.0f} bytes per ended stream); {count:.0f} whole-heap "
            f"collection(s){mean}")


async def _full_collections(client: httpx.AsyncClient) -> tuple[float, float]:
    """`iui_gateway_full_collection_seconds`'s count and sum (prometheus-client's own parser)."""
    name = "iui_gateway_full_collection_seconds"
    text = (await client.get("/metrics")).text
    found = samples(text, name)
    return found.get(f"{name}_count", 0.0), found.get(f"{name}_sum", 0.0)


async def _status(port: int, session: str, auth: str) -> tuple[int, float]:
    """One stream asked for on a new connection: the answer's status and seconds to its head."""
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(_events_request(session, auth))
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        return int(head.split(b" ", 2)[1]), time.perf_counter() - started
    finally:
        writer.close()


async def limit(stack: Stack, args: argparse.Namespace, producer: Producer) -> str:
    await producer.open("limit")
    viewer = token("viewer")
    held = await open_streams(stack.port, ["limit"], args.max_connections, viewer)
    answers = await asyncio.gather(*(_status(stack.port, "limit", viewer) for _ in range(args.over)))
    async with httpx.AsyncClient(base_url=stack.base, timeout=10) as client:
        ready = (await client.get("/readyz")).status_code  # a connection past the limit too
    for _, writer in held:
        writer.close()
    await asyncio.sleep(1)
    again, _ = await _status(stack.port, "limit", viewer)
    refused = sorted(seconds for status, seconds in answers if status == 503)
    others = len(answers) - len(refused)
    return (f"limit: {args.max_connections} streams held, {args.over} more asked at once: {len(refused)} refused "
            f"overloaded (p50 {_ms(refused, 0.5)}, p99 {_ms(refused, 0.99)} ms), {others} answered otherwise; "
            f"/readyz past the limit {ready}; a stream once they closed: {again}")


async def fanout(stack: Stack, args: argparse.Namespace, producer: Producer) -> str:
    sessions = [f"fan-{n}" for n in range(args.sessions)]
    for session in sessions:
        await producer.open(session)
    auth = token("viewer")
    latencies: list[float] = []
    readers = []
    for i in range(args.subscribers):
        reader, writer = await stream(stack.port, sessions[i % len(sessions)], auth)
        readers.append((reader, writer))

    live: list[int] = []

    async def listen(reader: asyncio.StreamReader) -> None:
        first = True
        async for frame in frames(reader):
            if first:  # the session's open frame, replayed: this stream is live
                live.append(1)
                first = False
            title = _title(frame["snapshot"]["root"])
            if title.startswith("t="):
                latencies.append(time.time() - float(title[2:]))

    listeners = [asyncio.create_task(listen(reader)) for reader, _ in readers]
    while len(live) < len(readers):  # every stream caught up and live before the load starts
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)
    gc.freeze()  # the load generator's own collections would be counted as the gateway's latency
    replies: list[float] = []
    locks = {session: asyncio.Lock() for session in sessions}
    interval = 1 / args.rate
    started = time.monotonic()
    count = 0
    pending = set()
    while time.monotonic() - started < args.seconds:
        session = sessions[count % len(sessions)]
        count += 1

        async def one(session: str = session) -> None:
            async with locks[session]:  # a session's patches go one after the other (precomputed cursors)
                sent = time.time()
                reply = await producer.patch(session, f"t={sent}")
                replies.append(time.time() - sent)
                assert reply["ok"], reply

        pending.add(asyncio.create_task(one()))
        await asyncio.sleep(max(0.0, started + count * interval - time.monotonic()))
    await asyncio.gather(*pending)
    await asyncio.sleep(2)
    for task in listeners:
        task.cancel()
    for _, writer in readers:
        writer.close()
    expected = count * args.subscribers // len(sessions)
    return (f"fan-out: {args.subscribers} subscribers over {len(sessions)} sessions, {count} frames at "
            f"{args.rate}/s: {len(latencies):,} of {expected:,} deliveries; submit -> subscriber p50 "
            f"{_ms(latencies, 0.5)} ms, p99 {_ms(latencies, 0.99)} ms (goal p99 < 50); submit -> reply p50 "
            f"{_ms(replies, 0.5)} ms, p99 {_ms(replies, 0.99)} ms")


async def storm(stack: Stack, args: argparse.Namespace, producer: Producer) -> str:
    """Streams asked for all at once (browsers reconnecting after a gateway restart), until each
    has its session's first frame: over as many sessions (a feed, its channels' SUBSCRIBE and the
    logs' ends read for each) and over one session (one feed), alternated round by round."""
    distinct = [f"storm-{n}" for n in range(args.storm)]
    for session in [*distinct, "storm-one"]:
        await producer.open(session)
    auth = token("viewer")

    async def first_frame(session: str) -> None:
        reader, writer = await stream(stack.port, session, auth)
        try:
            await anext(frames(reader))
        finally:
            writer.close()

    async def round_of(sessions: list[str]) -> float:
        started = time.perf_counter()
        await asyncio.gather(*(first_frame(session) for session in sessions))
        elapsed = time.perf_counter() - started
        await asyncio.sleep(1.0)  # the streams' feeds retire and unsubscribe before the next round
        return elapsed

    figures: dict[str, list[float]] = {"distinct": [], "one": []}
    for _ in range(args.rounds):
        figures["distinct"].append(await round_of(distinct))
        figures["one"].append(await round_of(["storm-one"] * args.storm))
    low = {name: min(values) * 1000 for name, values in figures.items()}
    mid = {name: statistics.median(values) * 1000 for name, values in figures.items()}
    return (f"storm: {args.storm} streams asked for at once, until each has its first frame, {args.rounds} "
            f"alternated rounds: over {args.storm} sessions min {low['distinct']:.0f} / median "
            f"{mid['distinct']:.0f} ms; over one session {low['one']:.0f} / {mid['one']:.0f} ms; "
            f"ratio of medians {mid['distinct'] / mid['one']:.2f}")


async def resume(stack: Stack, args: argparse.Namespace, producer: Producer) -> str:
    session = "resume"
    await producer.open(session)
    auth = token("viewer")
    reader, writer = await stream(stack.port, session, auth)
    cursor = None
    while cursor is None:
        line = (await reader.readline()).decode().rstrip("\r\n")
        if line.startswith("id: "):
            cursor = line[4:]
    writer.close()
    for i in range(args.behind):
        await producer.patch(session, f"r{i}")
    started = time.perf_counter()
    reader, writer = await stream(stack.port, session, auth, cursor)
    got = 0
    async for _ in frames(reader):
        got += 1
        if got >= args.behind:
            break
    elapsed = time.perf_counter() - started
    writer.close()
    return (f"resume: {args.behind} events behind, caught up in {elapsed * 1000:.0f} ms "
            f"({args.behind / elapsed:,.0f} events/s)")


class HttpConnection:
    """A keep-alive HTTP/1.1 connection on raw asyncio streams: the load generator's side of an
    HTTP call costs a few microseconds (a client library's per-request overhead, ~2 ms for httpx,
    would be measured as the gateway's)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> HttpConnection:
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    async def post(self, path: str, body: bytes, auth: str) -> tuple[int, bytes]:
        self._writer.write(f"POST {path} HTTP/1.1\r\nhost: bench\r\nauthorization: Bearer {auth}\r\n"
                           f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n".encode() + body)
        head = await self._reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        return status, await self._reader.readexactly(length)

    def close(self) -> None:
        self._writer.close()


async def calls(stack: Stack, args: argparse.Namespace, producer: Producer) -> str:
    sessions = [f"calls-{n}" for n in range(args.concurrency)]
    for session in sessions:
        await producer.open(session)
    auth = token("agent")
    per_session = args.calls // len(sessions)

    async def via_http(session: str) -> None:
        connection = await HttpConnection.open(stack.port)
        try:
            for i in range(per_session):
                if producer.revision[session] >= GENERATION_PATCHES:
                    await producer.open(session)
                body = json.dumps({"tool": "intelligent_ui_patch",
                                   "arguments": producer.patch_args(session, f"h{i}")}).encode()
                status, answer = await connection.post(f"/v1/sessions/{session}/calls", body, auth)
                assert status == 200, answer
        finally:
            connection.close()

    async def direct(session: str) -> None:
        for i in range(per_session):
            await producer.patch(session, f"d{i}")

    rates: dict[str, list[float]] = {"http": [], "direct": []}
    for _ in range(3):  # alternated: the machine's slow phases fall on both
        started = time.perf_counter()
        await asyncio.gather(*(via_http(s) for s in sessions))
        rates["http"].append(per_session * len(sessions) / (time.perf_counter() - started))
        started = time.perf_counter()
        await asyncio.gather(*(direct(s) for s in sessions))
        rates["direct"].append(per_session * len(sessions) / (time.perf_counter() - started))
    http, direct_rate = statistics.median(rates["http"]), statistics.median(rates["direct"])
    return (f"calls: POST /calls {', '.join(f'{r:,.0f}' for r in rates['http'])} calls/s, direct XADD "
            f"{', '.join(f'{r:,.0f}' for r in rates['direct'])} calls/s ({args.concurrency} in flight); "
            f"median ratio {http / direct_rate:.2f}")


async def agui_opening(stack: Stack, args: argparse.Namespace, producer: Producer) -> str:
    from sse_starlette import ServerSentEvent

    from bench.documents import maximal_document
    from gateway.agui import AguiRenderer, _opening, encoded
    from gateway.cursor import Cursor
    from gateway.heap import release, relieve
    from workers.runtime.heap import THRESHOLDS

    document, cursor = maximal_document(), Cursor(1, (1, 0), (0, 0), (0, 0))
    frames = [json.dumps({"uiId": f"u{n}", "type": "complete", "generation": 1, "seq": n + 1, "revision": 3,
                          "sourceCallId": f"call-{n}", "snapshot": {**document, "id": f"u{n}"}})
              for n in range(args.agui_uis)]

    kept: list[Any] = []  # each opening's state and bytes, freed after its measure (`released`)

    async def one_step() -> None:  # and encoded as sse-starlette's own event writes it
        renderer = AguiRenderer("s")
        kept.append((renderer, [ServerSentEvent.encode(encoded(event, cursor)) for event in renderer.start(frames)]))

    async def framewise() -> None:  # and encoded as sse-starlette does (`ensure_bytes`)
        renderer = AguiRenderer("s")
        kept.append((renderer, [item if isinstance(item, bytes) else item.encode()
                                async for item in _opening(renderer, frames, cursor, relieve)]))

    thresholds = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)  # the gateway's heap policy (`gateway.heap.keep_heap`)
    gc.freeze()
    async def in_one_piece() -> None:  # the stream ends: its renderer and state go at once
        kept.clear()

    async def a_ui_at_a_time() -> None:  # the stream ends: `AguiRenderer.release` (gateway/agui.py)
        tasks = [release(renderer.state["uis"]) for renderer, _ in kept]
        kept.clear()
        await asyncio.gather(*(task for task in tasks if task is not None))

    stalls: dict[str, list[float]] = {"one step": [], "a frame at a time": []}
    ends: dict[str, list[float]] = {"in one piece": [], "a UI at a time": []}
    try:
        for _ in range(args.rounds):
            for (label, write), (end, free) in zip((("one step", one_step), ("a frame at a time", framewise)),
                                                  (("in one piece", in_one_piece), ("a UI at a time", a_ui_at_a_time)),
                                                  strict=True):
                stalls[label].append(await _longest_stall(write))
                ends[end].append(await _longest_stall(free))
                gc.freeze()  # the next one starts as the policy leaves a heap
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)

    def figures(measured: dict[str, list[float]]) -> str:
        return "; ".join(f"{label} min {min(v) * 1000:.1f} / median {statistics.median(v) * 1000:.1f} ms"
                         for label, v in measured.items())

    size = sum(map(len, frames)) / 1e6
    return (f"agui-opening: {args.agui_uis} UIs ({size:.1f} MB), the loop's longest stall: {figures(stalls)}; "
            f"freeing the state at the stream's end: {figures(ends)}")


async def resync(stack: Stack, args: argparse.Namespace, producer: Producer) -> str:
    from bench.documents import maximal_document
    from gateway.agui import AguiRenderer, _resynced, encoded
    from gateway.backend import Snapshot
    from gateway.cursor import Cursor
    from gateway.events import Event, Resync, sse_event, sse_parts
    from gateway.heap import relieve
    from workers.runtime.heap import THRESHOLDS

    document, cursor = maximal_document(), Cursor(1, (1, 0), (0, 0), (0, 0))
    state = Snapshot(frames=[json.dumps({"uiId": f"u{n}", "type": "complete", "generation": 1, "seq": n + 1,
                                         "revision": 3, "sourceCallId": f"call-{n}",
                                         "snapshot": {**document, "id": f"u{n}"}}) for n in range(args.agui_uis)],
                     receipts=[json.dumps({"operationId": f"op-{n}", "actionId": "export", "status": "succeeded",
                                           "message": "\u00e9" * 200, "result": {"rows": list(range(40))}})
                               for n in range(RESYNC_RECEIPTS)],
                     answers=[json.dumps({"type": "block", "messageId": f"m{n}", "blockId": "b",
                                          "block": {"text": "\u4f60\u597d " * 300}}) for n in range(RESYNC_ANSWERS)])
    event, ident = Resync("expired", state), cursor.text()
    kept: list[Any] = []  # what each way wrote and held, freed after its measure

    async def native_joined() -> None:  # as `EventStream._resync` and the route wrote it before
        data = ('{"reason":"expired","frames":[' + ",".join(state.frames) + '],"receipts":['
                + ",".join(state.receipts) + '],"answers":[' + ",".join(state.answers) + "]}")
        kept.append(sse_event(data=data, event="resync", id=ident).encode())

    async def native_pieces() -> None:
        kept.append([chunk async for chunk in sse_parts(event.parts(), event="resync", ident=ident)])

    async def agui_whole() -> None:  # as `AguiRenderer.render` of the joined data and `encoded` wrote it
        renderer = AguiRenderer("s")
        rendered = renderer.render(Event("resync", cursor, "", event))
        kept.append((renderer, [encoded(e, cursor).encode() for e in rendered]))

    async def agui_pieces() -> None:
        renderer = AguiRenderer("s")
        kept.append((renderer, [item async for item in _resynced(renderer, event, cursor, relieve)]))

    ways = {"native, joined": native_joined, "native, in pieces": native_pieces,
            "AG-UI, whole": agui_whole, "AG-UI, in pieces": agui_pieces}
    stalls: dict[str, list[float]] = {label: [] for label in ways}
    thresholds = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)  # the gateway's heap policy (`gateway.heap.keep_heap`)
    gc.freeze()
    try:
        for _ in range(args.rounds):
            for label, write in ways.items():
                stalls[label].append(await _longest_stall(write))
                kept.clear()
                gc.freeze()
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
    figures = "; ".join(f"{label} min {min(v) * 1000:.1f} / median {statistics.median(v) * 1000:.1f} ms"
                        for label, v in stalls.items())
    size, logs = (sum(map(len, texts)) / 1e6 for texts in (state.frames, [*state.receipts, *state.answers]))
    return (f"resync: {args.agui_uis} UIs ({size:.1f} MB), {RESYNC_RECEIPTS} receipts and {RESYNC_ANSWERS} answer "
            f"events ({logs:.1f} MB), the loop's longest stall: {figures}")


async def _longest_stall(work: Any) -> float:
    """The longest the event loop went without running another task while `work()` ran."""
    longest, running = 0.0, True

    async def ticker() -> None:
        nonlocal longest
        last = time.perf_counter()
        while running:
            await asyncio.sleep(0)
            now = time.perf_counter()
            longest, last = max(longest, now - last), now

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    await work()
    running = False
    await task
    return longest


def _title(node: dict[str, Any]) -> str:
    """The title of the patched node (`summary-card`) of a snapshot's tree."""
    if node.get("id") == "summary-card":
        return str(node.get("props", {}).get("title", ""))
    for child in node.get("children", ()):
        found = _title(child)
        if found:
            return found
    return ""


def _ms(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[int(q * (len(ordered) - 1))] * 1000:.1f}"


async def run(stack: Stack, args: argparse.Namespace) -> None:
    producer = Producer(stack.url)
    parts = {"idle": idle, "fanout": fanout, "resume": resume, "calls": calls, "limit": limit, "storm": storm,
             "agui-opening": agui_opening, "resync": resync, "churn": churn}
    for part in args.only or ("idle", "fanout", "resume", "calls", "storm"):
        print(part, "...", flush=True)
        print(await parts[part](stack, args, producer), flush=True)
    await producer.redis.aclose()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench gateway", description=__doc__.split("\n")[0])
    parser.add_argument("--connections", type=int, default=2000)
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--behind", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--max-connections", type=int, default=None,
                        help="the gateway's IUI_GATEWAY_MAX_CONNECTIONS (default: unset, what its open files "
                             "allow; with --only limit: 1,000)")
    parser.add_argument("--over", type=int, default=500)
    parser.add_argument("--storm", type=int, default=500, help="streams asked for at once (storm)")
    parser.add_argument("--idle-streams", type=int, default=500, help="streams held open (churn)")
    parser.add_argument("--churn", type=int, default=3000, help="streams started and ended (churn)")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds (storm, agui-opening, resync)")
    parser.add_argument("--agui-uis", type=int, default=100, help="UIs at the document limit (agui-opening, resync)")
    parser.add_argument("--only", action="append",
                        choices=["idle", "fanout", "resume", "calls", "limit", "storm", "agui-opening", "resync",
                                 "churn"])
    args = parser.parse_args(argv)
    if "limit" in (args.only or ()) and len(set(args.only)) > 1:
        parser.error("--only limit runs alone: its gateway's connection limit would refuse the other parts' streams")
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the processes started below inherit it
    with tempfile.TemporaryDirectory() as directory:
        if args.max_connections is None and "limit" in (args.only or ()):
            args.max_connections = 1_000
        stack = Stack(directory, args.max_connections)
        try:
            asyncio.run(run(stack, args))
        finally:
            stack.close()
    return 0
