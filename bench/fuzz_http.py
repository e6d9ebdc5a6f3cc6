"""Live-gateway HTTP fuzzer: hostile requests against a real `iui gateway`, every answer checked.

`python -m bench fuzz-http --seconds N [--seed S] [--concurrency C]` starts a throwaway
redis-server, one `iui worker` and one `iui gateway` (uvicorn) as processes, opens a UI in a
session of its own, then sends generated requests (`bench/http_probes.py`: hostile methods,
paths, ids, tokens, headers, query strings and bodies, through httpx; malformed HTTP on raw
sockets) with a secret marker in every place a client controls, for N seconds.  It checks
what docs/gateway.md promises:

- no 5xx (`server_errors`); no connection closed without an answer or in the middle of one
  (`dropped`); an answer's headers within 5 s (`hangs`);
- every error is `application/problem+json` with `type`, `title`, `status` (the HTTP status),
  `code` and `detail`, a 401 with `WWW-Authenticate`, a 405 with an `Allow` that does not name
  the method refused (`misshapen`), and its code is in the docs (`undocumented`);
- the marker never appears in a response header, nor in the body of a refusal (`echoed`; a
  success returns the caller's own data, which other probes may have stored with the marker:
  documents, the ids it chose, a session's event stream);
- a ticket opens one stream only (`ticket_reused`);
- beside the storm, slow clients (a connection that sends nothing, a head trickled a byte at a
  time, a body that stops) are answered `request_timeout` (408) and let go within the gateway's
  read timeouts (`SLOW_TIMEOUT_S` for this stack) plus `HANG_S` (`slow_held`), their answers
  judged as every other;
- the gateway process is alive after the storm (`died`), logged no traceback (`tracebacks`),
  holds no event stream once every client left (`leaked_streams`, its `iui_gateway_streams`),
  and still serves a normal call and its event stream (`unhealthy`).

Any non-zero failure count makes the command exit 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any

import httpx
import orjson

from bench.scrape import samples
from gateway.identity import mint
from workers.redisio.local_server import free_port, start_redis_server

from .http_probes import ORIGIN, ROOT, Probe, ProbeGenerator, Target, marker_of

SECRET = b"bench-fuzz-http-secret-0123456789abcdef"
HANG_S = 5.0
SLOW_TIMEOUT_S = 2.0  # the fuzzed gateway's IUI_GATEWAY_HEADER_TIMEOUT_S and IUI_GATEWAY_BODY_TIMEOUT_S
SLOW_CLIENTS = 2  # connections sending slowly at any time, beside the storm
STREAM_READ_S = 0.3
MAX_BODY_BYTES = 1_048_576
EXAMPLES = 4  # of each failure, printed
FAILURES = ("server_errors", "dropped", "hangs", "misshapen", "undocumented", "echoed", "ticket_reused", "slow_held",
            "died", "tracebacks", "unhealthy", "leaked_streams")
PROBLEM_MEMBERS = frozenset({"type", "title", "status", "code", "detail"})


def documented_codes() -> frozenset[str]:
    """The runtime's codes (the error-code reference) and the gateway's (its Errors paragraph)."""
    reference = (ROOT / "docs" / "reference" / "error-codes.md").read_text("utf-8")
    runtime = {code for line in reference.splitlines() if line.startswith("| `")
               for code in re.findall(r"`([a-z_]+)`", line.split(" | ")[0])}
    page = (ROOT / "docs" / "gateway.md").read_text("utf-8")
    errors = page.split("**Errors**", 1)[1].split("\n\n", 1)[0]
    return frozenset(runtime | set(re.findall(r"`([a-z_]+)`", errors)))


@dataclass
class Answer:
    """What came back for one probe."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes
    complete: bool = True


@dataclass
class Tally:
    """The counts of a run and what each failure looked like first."""

    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    ticket_opens: Counter[str] = field(default_factory=Counter)

    def fail(self, name: str, probe: Probe, note: str) -> None:
        self.counts[name] += 1
        target = probe.raw[:120] if probe.raw is not None else f"{probe.method} {probe.target[:120]}"
        seen = self.examples.setdefault(name, [])
        if len(seen) < EXAMPLES:
            seen.append(f"{probe.kind}: {target!r} -> {note[:200]}")


# -- judging ---------------------------------------------------------------------------------------


def judge(probe: Probe, answer: Answer, marker: str, codes: frozenset[str], tally: Tally) -> None:
    """Count one answer's outcome and every broken promise in it."""
    tally.counts[f"status:{answer.status}"] += 1
    if answer.status >= 500:
        tally.fail("server_errors", probe, f"{answer.status} {answer.body[:120]!r}")
    if not answer.complete:
        tally.fail("dropped", probe, f"{answer.status}, the connection closed mid-answer")
    needle = marker.lower().encode()
    if any(needle in (name + ":" + value).lower().encode("utf-8", "replace") for name, value in answer.headers):
        tally.fail("echoed", probe, "in a header")
    if answer.status >= 300 and needle in answer.body.lower():
        tally.fail("echoed", probe, f"{answer.status} body")
    if answer.status >= 400:
        _judge_problem(probe, answer, codes, tally)


def _judge_problem(probe: Probe, answer: Answer, codes: frozenset[str], tally: Tally) -> None:
    content_type = dict(answer.headers).get("content-type", "")
    if content_type != "application/problem+json":
        tally.fail("misshapen", probe, f"{answer.status} {content_type!r} {answer.body[:80]!r}")
        return
    if probe.method == "HEAD":
        return
    try:
        problem = orjson.loads(answer.body)
    except orjson.JSONDecodeError:
        tally.fail("misshapen", probe, f"{answer.status} not JSON")
        return
    if (type(problem) is not dict or not set(problem) >= PROBLEM_MEMBERS or problem["status"] != answer.status
            or problem["type"] != "about:blank" or problem["title"] != HTTPStatus(answer.status).phrase
            or type(problem["detail"]) is not str):
        tally.fail("misshapen", probe, f"{answer.status} {answer.body[:160]!r}")
        return
    tally.counts[f"code:{problem['code']}"] += 1
    if problem["code"] not in codes:
        tally.fail("undocumented", probe, str(problem["code"]))
    if answer.status == 401 and dict(answer.headers).get("www-authenticate") != 'Bearer realm="iui"':
        tally.fail("misshapen", probe, "401 without WWW-Authenticate")
    allow = {method.strip() for method in dict(answer.headers).get("allow", "").split(",") if method.strip()}
    if answer.status == 405 and (not allow or probe.method.upper() in allow):
        tally.fail("misshapen", probe, f"405 with Allow {sorted(allow)}")


# -- sending ---------------------------------------------------------------------------------------


async def send(client: httpx.AsyncClient, probe: Probe, port: int) -> Answer | str:
    """The probe's answer, or the name of what went wrong in transport (`hangs`, `dropped`, `unsendable`)."""
    if probe.raw is not None:
        return await send_raw(probe.raw, port)
    try:
        url = client.base_url.copy_with(raw_path=probe.target.encode("ascii", "replace"))
    except httpx.InvalidURL:  # longer than httpx sends (64 KiB): sent on a socket as it is
        return await send_raw(as_raw(probe), port)
    content: Any = probe.body
    if isinstance(probe.body, list):
        content = _chunks(probe.body)
    try:
        async with client.stream(probe.method, url, headers=probe.headers, content=content) as response:
            return await _read(response)
    except httpx.TimeoutException:
        return "hangs"
    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
        return "dropped"
    except (httpx.LocalProtocolError, httpx.UnsupportedProtocol, UnicodeEncodeError, ValueError):
        return "unsendable"


def as_raw(probe: Probe) -> bytes:
    """The bytes of a probe's request, with a `Content-Length` body."""
    body = b"".join(probe.body) if isinstance(probe.body, list) else probe.body or b""
    headers = [(b"host", b"127.0.0.1"), *probe.headers, (b"content-length", str(len(body)).encode())]
    head = b"".join(name + b": " + value + b"\r\n" for name, value in headers)
    return f"{probe.method} {probe.target} HTTP/1.1\r\n".encode("ascii", "replace") + head + b"\r\n" + body


async def _chunks(parts: list[bytes]) -> Any:
    for part in parts:
        yield part


async def _read(response: httpx.Response) -> Answer:
    headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in response.headers.raw]
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return Answer(response.status_code, headers, *await _sample_stream(response))
    body = b""
    async for chunk in response.aiter_raw():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            break
    return Answer(response.status_code, headers, body)


async def _sample_stream(response: httpx.Response) -> tuple[bytes, bool]:
    """The first bytes of an event stream (read for a moment; whether it broke meanwhile)."""
    body, chunks = b"", response.aiter_raw()
    deadline = time.monotonic() + STREAM_READ_S
    try:
        while len(body) < MAX_BODY_BYTES and (left := deadline - time.monotonic()) > 0:
            body += await asyncio.wait_for(anext(chunks), left)
    except (TimeoutError, StopAsyncIteration):
        pass
    except (httpx.RemoteProtocolError, httpx.ReadError):
        return body, False
    return body, True


async def send_raw(raw: bytes, port: int) -> Answer | str:
    """Send bytes as they are; the first answer on the connection."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), HANG_S)
    except (OSError, TimeoutError):
        return "dropped"
    try:
        writer.write(raw)
        with contextlib.suppress(ConnectionError):  # the server may answer and close before reading it all
            await writer.drain()
        return await asyncio.wait_for(read_answer(reader), HANG_S)
    except TimeoutError:
        return "hangs"
    except (ConnectionError, asyncio.IncompleteReadError, ValueError):
        return "dropped"
    finally:
        writer.close()


async def read_answer(reader: asyncio.StreamReader) -> Answer:
    """One HTTP/1.1 answer read off a raw connection (its body by `content-length`, chunked, or to EOF)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = [(name.strip().lower(), value.strip()) for name, _, value in
               (line.partition(":") for line in lines[1:] if line)]
    fields = dict(headers)
    if "content-length" in fields:
        return Answer(status, headers, await reader.readexactly(int(fields["content-length"])))
    if fields.get("transfer-encoding") == "chunked":
        body = b""
        while size := int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16):
            body += await reader.readexactly(size + 2)
        return Answer(status, headers, body)
    return Answer(status, headers, await reader.read(MAX_BODY_BYTES))


@dataclass
class Slow:
    """What a slow client got: the answer (None: none came), seconds from connect to it, and
    whether the gateway closed the connection after it."""

    answer: Answer | None
    elapsed: float
    closed: bool


async def send_slowly(port: int, parts: list[tuple[float, bytes]], wait_s: float = 30.0) -> Slow:
    """Send each part after its pause (stopping once an answer came), then wait up to `wait_s` for
    the answer and the connection's end."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    started = time.monotonic()
    answer_task = asyncio.ensure_future(read_answer(reader))
    try:
        for pause, data in parts:
            done, _ = await asyncio.wait({answer_task}, timeout=pause)
            if done:
                break
            writer.write(data)
            with contextlib.suppress(ConnectionError):
                await writer.drain()
        try:
            answer: Answer | None = await asyncio.wait_for(answer_task, wait_s)
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError, ValueError):
            return Slow(None, time.monotonic() - started, False)
        elapsed = time.monotonic() - started
        try:
            closed = await asyncio.wait_for(reader.read(), wait_s) == b""
        except (TimeoutError, ConnectionError):
            closed = False
        return Slow(answer, elapsed, closed)
    finally:
        answer_task.cancel()
        writer.close()


def slow_parts(kind: str, marker: str, target: Target) -> list[tuple[float, bytes]]:
    """The timed parts a slow client of `kind` sends: nothing, a head trickled a byte every 0.2 s
    (longer in all than the read timeout), or a head and the start of a body that never ends."""
    if kind == "slow_silent":
        return []
    if kind == "slow_head":
        head = f"GET /v1/catalog HTTP/1.1\r\nhost: x\r\nx-{marker}: {marker}\r\n\r\n".encode()
        return [(0.2, head[i:i + 1]) for i in range(len(head))]
    head = (f"POST /v1/sessions/{target.session}/calls HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            f"authorization: Bearer {_token(target, 'agent')}\r\ncontent-length: 4096\r\n\r\n").encode()
    return [(0, head), (0.3, f'{{"tool": "{marker}'.encode())]


async def slow_client(port: int, target: Target, marker: str, codes: frozenset[str], tally: Tally,
                       deadline: float, rng: random.Random) -> None:
    """One slow client after another until `deadline`, each checked to be answered 408 in time."""
    while time.monotonic() < deadline:
        kind = rng.choice(("slow_silent", "slow_head", "slow_body"))
        tally.counts[f"kind:{kind}"] += 1
        probe = Probe(kind, "SLOW")
        slow = await send_slowly(port, slow_parts(kind, marker, target), wait_s=SLOW_TIMEOUT_S + HANG_S)
        if slow.answer is None:
            tally.fail("slow_held", probe, "no answer")
            continue
        judge(probe, slow.answer, marker, codes, tally)
        if slow.answer.status != 408 or slow.elapsed > SLOW_TIMEOUT_S + HANG_S or not slow.closed:
            tally.fail("slow_held", probe, f"{slow.answer.status} after {slow.elapsed:.1f} s, closed {slow.closed}")


# -- the storm -------------------------------------------------------------------------------------


async def storm(base: str, target: Target, *, seconds: float, seed: int, concurrency: int,
                max_requests: int | None = None, slow_clients: int = 0) -> Tally:
    """Send probes from `concurrency` tasks for `seconds` (or `max_requests`), beside `slow_clients`
    slow ones (for a gateway whose read timeouts are `SLOW_TIMEOUT_S`); the tally."""
    rng = random.Random(seed)
    marker = marker_of(rng)
    generator = ProbeGenerator(rng, marker, target)
    codes = documented_codes()
    tally = Tally()
    port = int(base.rsplit(":", 1)[1])
    deadline = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=concurrency * 2, max_keepalive_connections=concurrency)
    timeout = httpx.Timeout(HANG_S, pool=None)
    async with httpx.AsyncClient(base_url=base, timeout=timeout, limits=limits) as client:
        async def worker() -> None:
            while time.monotonic() < deadline and (max_requests is None or tally.counts["requests"] < max_requests):
                tally.counts["requests"] += 1
                if tally.counts["requests"] % 40 == 0:
                    await _refill_ticket(client, target)
                probe = generator.probe()
                tally.counts[f"kind:{probe.kind}"] += 1
                answer = await send(client, probe, port)
                if isinstance(answer, str):
                    if answer == "unsendable":
                        tally.counts["unsendable"] += 1
                    else:
                        tally.fail(answer, probe, "no answer" if answer == "dropped" else f"> {HANG_S:.0f} s")
                    continue
                judge(probe, answer, marker, codes, tally)
                _note_ticket(probe, answer, tally)

        slow = (slow_client(port, target, marker, codes, tally, deadline, random.Random(seed + n))
                for n in range(slow_clients))
        await asyncio.gather(*(worker() for _ in range(concurrency)), *slow)
    tally.counts["ticket_reused"] += sum(1 for opens in tally.ticket_opens.values() if opens > 1)
    return tally


async def _refill_ticket(client: httpx.AsyncClient, target: Target) -> None:
    try:
        reply = await client.post(f"/v1/sessions/{target.session}/tickets",
                                  headers={"authorization": f"Bearer {_token(target, 'viewer')}"})
    except httpx.HTTPError:  # the gateway dropped it: the probes that follow count what went wrong
        return
    if reply.status_code == 200:
        target.tickets.append(reply.json()["ticket"])
        del target.tickets[:-8]


def _note_ticket(probe: Probe, answer: Answer, tally: Tally) -> None:
    if probe.kind == "ticket" and answer.status == 200 and "ticket=" in probe.target:
        tally.ticket_opens[probe.target.split("ticket=", 1)[1].split("&", 1)[0]] += 1


def _token(target: Target, role: str) -> str:
    return mint(secret=target.secret, principal=target.principal, project=target.project, role=role, ttl_s=600)


def prepare(base: str, secret: bytes, session: str = "fuzz-session") -> Target:
    """Open a UI in the fuzzer's session and learn its epoch (so generated cursors can be of it)."""
    target = Target(session=session, secret=secret)
    document = orjson.loads((ROOT / "examples" / "stream-initial.json").read_bytes())
    with httpx.Client(base_url=base, timeout=15) as client:
        agent = {"authorization": f"Bearer {_token(target, 'agent')}"}
        reply = client.post(f"/v1/sessions/{session}/calls", headers=agent,
                            json={"tool": "intelligent_ui_open", "arguments": {"document": document}, "call": "c1"})
        reply.raise_for_status()
        cursor = _first_event_id(client, target)
    target.epoch = int(cursor.split(".")[1])
    return target


def _first_event_id(client: httpx.Client, target: Target) -> str:
    headers = {"authorization": f"Bearer {_token(target, 'viewer')}"}
    with client.stream("GET", f"/v1/sessions/{target.session}/events", headers=headers, timeout=5) as response:
        for line in response.iter_lines():
            if line.startswith("id: "):
                return line[4:]
    raise RuntimeError("the event stream ended before its first event")


def open_streams(base: str, settle_s: float = 5.0) -> int:
    """The gateway's open event streams once they had `settle_s` to notice their clients left."""
    deadline = time.monotonic() + settle_s
    while True:
        found = samples(httpx.get(base + "/metrics", timeout=5).text, "iui_gateway_streams")
        count = int(found.get("iui_gateway_streams", -1))
        if count == 0 or time.monotonic() > deadline:
            return abs(count)
        time.sleep(0.1)


def healthy(base: str, secret: bytes) -> bool:
    """A normal agent call on a new session succeeds and its frame arrives on the event stream."""
    try:
        target = prepare(base, secret, session=f"after-storm-{os.getpid()}-{time.monotonic_ns()}")
    except (httpx.HTTPError, RuntimeError, ValueError, IndexError):
        return False
    return target.epoch > 0


# -- processes -------------------------------------------------------------------------------------


class Stack:
    """redis-server, one `iui worker` and one `iui gateway`, as processes; the gateway's log in a file."""

    def __init__(self, directory: str) -> None:
        self.redis, redis_port = start_redis_server(directory)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = Path(directory) / "gateway.log"
        env = {**os.environ, "IUI_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0", "IUI_PARTITIONS": "4",
               "IUI_GATEWAY_JWT_SECRET": SECRET.decode(), "IUI_GATEWAY_PORT": str(self.port),
               "IUI_GATEWAY_ORIGINS": ORIGIN, "IUI_GATEWAY_HEADER_TIMEOUT_S": str(SLOW_TIMEOUT_S),
               "IUI_GATEWAY_BODY_TIMEOUT_S": str(SLOW_TIMEOUT_S)}
        self.worker = subprocess.Popen([sys.executable, "-m", "workers.cli", "worker"], env=env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with self.log.open("wb") as log:
            self.gateway = subprocess.Popen([sys.executable, "-m", "workers.cli", "gateway"], env=env,
                                            stdout=log, stderr=log)
        self._wait()

    def _wait(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.base + "/readyz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.gateway.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError("the gateway did not start")

    def tracebacks(self) -> int:
        """Tracebacks the gateway logged."""
        return self.log.read_text("utf-8", "replace").count("Traceback (most recent call last)")

    def close(self) -> None:
        for process in (self.gateway, self.worker, self.redis):
            process.kill()
            process.wait()


def run_http(seconds: float, seed: int, *, concurrency: int = 8, max_requests: int | None = None) -> Tally:
    """Fuzz a fresh stack for `seconds` (or `max_requests`); the tally with the after-storm checks."""
    with tempfile.TemporaryDirectory() as directory:
        stack = Stack(directory)
        try:
            target = prepare(stack.base, SECRET)
            started = time.monotonic()
            tally = asyncio.run(storm(stack.base, target, seconds=seconds, seed=seed, concurrency=concurrency,
                                      max_requests=max_requests, slow_clients=SLOW_CLIENTS))
            tally.counts["elapsed_ms"] = int((time.monotonic() - started) * 1000)
            tally.counts["died"] = int(stack.gateway.poll() is not None)
            tally.counts["leaked_streams"] = open_streams(stack.base) if not tally.counts["died"] else 0
            tally.counts["unhealthy"] = int(not healthy(stack.base, SECRET))
            tally.counts["tracebacks"] = stack.tracebacks()
        finally:
            stack.close()
    return tally


def failures(counts: Counter[str]) -> int:
    """The number of broken promises in a tally's counts."""
    return sum(counts.get(name, 0) for name in FAILURES)


def main(argv: list[str]) -> int:
    """`python -m bench fuzz-http --seconds N [--seed S] [--concurrency C]`: exit 1 on any defect."""
    parser = argparse.ArgumentParser(prog="python -m bench fuzz-http")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args(argv)
    tally = run_http(args.seconds, args.seed, concurrency=args.concurrency)
    counts = tally.counts
    elapsed = counts["elapsed_ms"] / 1000
    print(f"fuzz-http: {counts['requests']} requests in {elapsed:.1f} s ({counts['requests'] / elapsed:,.0f}/s), "
          f"{counts['unsendable']} unsendable by the client")
    print("  failures: " + ", ".join(f"{name} {counts[name]}" for name in FAILURES))
    for prefix in ("kind:", "status:", "code:"):
        print(f"  {prefix[:-1]}: " + ", ".join(f"{k[len(prefix):]} {v}" for k, v in sorted(counts.items())
                                              if k.startswith(prefix)))
    for name, examples in tally.examples.items():
        for example in examples:
            print(f"  {name}: {example}")
    return 1 if failures(counts) else 0
