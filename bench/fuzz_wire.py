"""Live-worker wire fuzzer: hostile input entries against a real worker pool, every outcome checked.

`python -m bench fuzz-wire --seconds N [--seed S]` starts a throwaway redis-server and a worker
pool, then XADDs batches of generated and mutated entries: missing, extra and huge fields, bad
UTF-8, newline-terminated ids, 5,000 fields, 1 MB bodies, unknown tools and kinds, invalid and
deep JSON, hostile documents and cursors, with a secret marker in every client-controlled
place.  It checks the wire contract of the docs (docs/wire.md):

- an entry with a reply address gets exactly one reply (`lost`, `duplicated`);
- a reply is one JSON object of the documented shape (`misshapen`) whose error code is in the
  docs' error-code table (`undocumented`); `dead_letter` replies mean a crash (`crashed`);
- no error reply repeats the marker (`echoed`);
- an entry without a reply address lands in the dead-letter stream (`lost`);
- nothing stays pending once the pool is idle (`pending`).

Any non-zero failure count makes the command exit 1.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from prometheus_client import CollectorRegistry

from config.settings import load_settings
from workers.observability.metrics import Metrics
from workers.redisio.keys import GROUP, Keys, partition_of
from workers.redisio.local_server import start_redis_server
from workers.runtime.pool import WorkerPool

ROOT = Path(__file__).resolve().parent.parent
MARKER = "QXJZsecret"
PARTITIONS = 4
BATCH = 48
REPLY_TIMEOUT_S = 30.0
FAILURES = ("lost", "duplicated", "echoed", "undocumented", "misshapen", "crashed", "pending")
TOOLS = ("intelligent_ui", "intelligent_ui_open", "intelligent_ui_patch", "intelligent_ui_complete",
         "intelligent_ui_cancel")
_SESSION = re.compile(rb"[!-~]{1,128}")
_REQUEST = re.compile(rb"[ -~]{1,128}")

Fields = dict[str, "str | bytes"]


def documented_codes(page: Path = ROOT / "docs" / "reference" / "error-codes.md") -> frozenset[str]:
    """The codes of the docs' error-code table (the first column of its rows)."""
    rows = [line for line in page.read_text("utf-8").splitlines() if line.startswith("| `")]
    return frozenset(code for row in rows for code in re.findall(r"`([a-z_]+)`", row.split(" | ")[0]))


def reply_address(fields: Fields) -> tuple[bytes, bytes] | None:
    """The fuzzer's own reading of the address rule: whole-value matches on the raw bytes."""
    session, request = (_bytes(fields.get(name, b"")) for name in ("session", "request"))
    if not _SESSION.fullmatch(session) or re.search(rb"[:{}]", session) or not _REQUEST.fullmatch(request):
        return None
    return session, request


def _bytes(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8")


# -- generation ------------------------------------------------------------------------------


def _document() -> dict[str, Any]:
    return json.loads((ROOT / "examples" / "stream-initial.json").read_text("utf-8"))


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


class Generator:
    """Hostile entries, and valid ones that open streams the hostile cursors can aim at."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.streams: list[tuple[str, str, int, int]] = []  # session, sourceCallId, generation, revision
        self._n = 0
        self._cases: list[Callable[[Fields], None]] = [
            self._valid, self._valid, self._missing_field, self._extra_field, self._huge_field,
            self._bad_utf8, self._newline_id, self._many_fields, self._megabyte_body, self._unknown_tool,
            self._other_kind, self._invalid_json, self._deep_json, self._not_an_object, self._hostile_document,
            self._hostile_cursor, self._hostile_source, self._hostile_call, self._unknown_argument,
            self._no_address,
        ]

    def entry(self) -> tuple[str, Fields]:
        """(case name, fields) of the next entry."""
        self._n += 1
        session = self.rng.choice([f"fz-{self.rng.randrange(12)}", f"{MARKER}-{self.rng.randrange(4)}"])
        fields: Fields = {"session": session, "request": f"r{self._n}", "kind": "tool",
                          "name": "intelligent_ui_open", "call": f"c{self._n}",
                          "body": json.dumps({"document": self._text_document(f"t{self._n}")})}
        case = self.rng.choice(self._cases)
        case(fields)
        return case.__name__.lstrip("_"), fields

    def _text_document(self, text: str) -> dict[str, Any]:
        document = _document()
        document["id"] = self.rng.choice(["sales-report", "other-report"])
        document["root"]["children"].append({"id": "note", "type": "Text", "props": {"text": text + MARKER}})
        return document

    # Each case mutates the fields of a valid open in place.

    def _valid(self, fields: Fields) -> None:
        if self.streams and self.rng.random() < 0.6:
            session, source, generation, revision = self.rng.choice(self.streams)
            tool = self.rng.choice(TOOLS[2:])
            args: dict[str, Any] = {"sourceCallId": source, "generation": generation, "baseRevision": revision}
            if tool == "intelligent_ui_patch":
                args["mutation"] = {"type": "update", "nodeId": "note",
                                    "props": {"text": MARKER + str(self.rng.random())}}
            fields.update(session=session, name=tool, body=json.dumps(args))
        elif self.rng.random() < 0.2:
            fields["name"] = "intelligent_ui"

    def _missing_field(self, fields: Fields) -> None:
        del fields[self.rng.choice(["kind", "name", "call", "body"])]

    def _extra_field(self, fields: Fields) -> None:
        fields[self.rng.choice([MARKER, f"x{MARKER}", "reason", "origin"])] = MARKER

    def _huge_field(self, fields: Fields) -> None:
        fields[self.rng.choice(["call", "name", "kind", "request"])] = MARKER * self.rng.choice([30, 5_000])

    def _bad_utf8(self, fields: Fields) -> None:
        name = self.rng.choice(["session", "request", "call", "name", "body", "kind"])
        fields[name] = _bytes(fields[name]) + b"\xff\xfe" + MARKER.encode()

    def _newline_id(self, fields: Fields) -> None:
        name = self.rng.choice(["session", "request", "call", "name"])
        fields[name] = _bytes(fields[name]).decode() + MARKER + self.rng.choice(["\n", "\r\n", " \n"])

    def _many_fields(self, fields: Fields) -> None:
        fields.update({f"{MARKER}{i}": MARKER for i in range(5_000)})

    def _megabyte_body(self, fields: Fields) -> None:
        fields["body"] = json.dumps({"document": {"id": MARKER * (1_000_000 // len(MARKER))}})

    def _unknown_tool(self, fields: Fields) -> None:
        fields["name"] = self.rng.choice([f"{MARKER}_tool", "intelligent_ui_explode", MARKER])

    def _other_kind(self, fields: Fields) -> None:
        fields["kind"] = self.rng.choice(["action", "result", MARKER, ""])

    def _invalid_json(self, fields: Fields) -> None:
        fields["body"] = self.rng.choice([f'{{"{MARKER}": ', f"{MARKER}", '{"document": NaN}', '"\\ud800"',
                                          '{"document": {"id": "\\udc00' + MARKER + '"}}'])

    def _deep_json(self, fields: Fields) -> None:
        depth = self.rng.choice([200, 1_100, 5_000])
        fields["body"] = self.rng.choice([_deep(depth), '{"document": ' + _deep(depth) + "}",
                                          '{"document": {"x": ' + _deep(depth) + "}}"])

    def _not_an_object(self, fields: Fields) -> None:
        fields["body"] = self.rng.choice(["[1]", f'"{MARKER}"', "7", "null", '{"document": "{}"}'])

    def _hostile_document(self, fields: Fields) -> None:
        document = self._text_document("")
        spot = self.rng.randrange(5)
        if spot == 0:
            document[MARKER] = 1
        elif spot == 1:
            document["state"][f"{MARKER}!"] = {"type": "string", "initial": MARKER}
        elif spot == 2:
            document["id"] = f"{MARKER} id"
        elif spot == 3:
            document["root"]["props"][MARKER] = {"deep": [MARKER]}
        else:
            document["derived"]["x"] = {"op": "add", "args": [{"derived": MARKER}, 1]}
        fields["body"] = json.dumps({"document": document})

    def _hostile_cursor(self, fields: Fields) -> None:
        session, source, generation, revision = self.rng.choice(self.streams or [("fz-0", "c0", 1, 0)])
        args = {"sourceCallId": source, "generation": self.rng.choice([generation, -1, 1e300, MARKER, True]),
                "baseRevision": self.rng.choice([revision, revision + 1, 0.5, None])}
        fields.update(session=session, name=self.rng.choice(TOOLS[3:]), body=json.dumps(args))

    def _hostile_source(self, fields: Fields) -> None:
        source: Any = self.rng.choice([MARKER, f"{MARKER}é", f"{MARKER}\n", "", MARKER * 30, 7, [MARKER]])
        args = {"sourceCallId": source, "generation": 1, "baseRevision": 0}
        fields.update(name=self.rng.choice(TOOLS[3:]), body=json.dumps(args))

    def _hostile_call(self, fields: Fields) -> None:
        fields["call"] = self.rng.choice([f"{MARKER}é", f"{MARKER}\t", "", f"{MARKER}-{self._n}"])
        if fields["call"] == f"{MARKER}-{self._n}":
            # A valid call id that opened a stream is that stream's cursor, which conflict
            # replies rightly name; so a marked valid call id only ever goes with a rejection.
            args = {"sourceCallId": f"unknown-{self._n}", "generation": 1, "baseRevision": 0}
            fields.update(name=self.rng.choice(TOOLS[2:]), body=json.dumps(args))

    def _unknown_argument(self, fields: Fields) -> None:
        body = json.loads(_bytes(fields["body"]))
        body[MARKER] = {MARKER: MARKER}
        fields["body"] = json.dumps(body)

    def _no_address(self, fields: Fields) -> None:
        # Never a valid request id: two entries must not share one reply key.
        name = self.rng.choice(["session", "request"])
        value = self.rng.choice(["", f"a:{MARKER}", "{x}", "sp ace", "é", "s" * 129, "-"] if name == "session"
                                else ["", f"{MARKER}é", "\x01", "r" * 129, "-"])
        if value == "-":
            del fields[name]
        else:
            fields[name] = value


# -- checking --------------------------------------------------------------------------------


@dataclass
class Sent:
    """One XADDed entry and where its outcome must appear."""

    case: str
    entry_id: str
    partition: int
    session: str
    request: str
    reply_key: str | None  # None: the entry must be dead-lettered


class WireFuzzer:
    """Feeds batches to a running pool and checks every outcome."""

    def __init__(self, *, client: Any, keys: Keys, partitions: int, rng: random.Random) -> None:
        self.client = client
        self.keys = keys
        self.partitions = partitions
        self.rng = rng
        self.generator = Generator(rng)
        self.codes = documented_codes()
        self.counts: Counter[str] = Counter({name: 0 for name in ("entries", "replies", "accepted", "dead_letters",
                                                                    *FAILURES)})
        self.reply_keys: list[str] = []
        self._used: set[str] = set()
        self._dead_seen: dict[int, str] = {p: "0" for p in range(partitions)}
        self._dead_origins: set[str] = set()

    def batch(self, size: int) -> None:
        """XADD `size` entries, then wait for and check every outcome."""
        sent = [self._send(*self.generator.entry()) for _ in range(size)]
        self.counts["entries"] += len(sent)
        waiting = {s.reply_key: s for s in sent if s.reply_key}
        orphans = {s.entry_id for s in sent if not s.reply_key}
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while (waiting or orphans) and time.monotonic() < deadline:
            for key, reply in zip(list(waiting), self._first_replies(list(waiting)), strict=False):
                if reply is not None:
                    self._check(waiting.pop(key), reply)
            orphans -= self._new_dead_origins()
            if waiting or orphans:
                time.sleep(0.01)
        self.counts["lost"] += len(waiting) + len(orphans)
        for lost in [*waiting.values(), *(s for s in sent if s.entry_id in orphans)][:3]:
            print(f"lost ({lost.case}): entry {lost.entry_id} of partition {lost.partition}")

    def _send(self, case: str, fields: Fields) -> Sent:
        session = _bytes(fields.get("session", b"")).decode("utf-8", "replace")
        partition = partition_of(session, self.partitions)
        if self.rng.random() < 0.03:
            partition = self.rng.randrange(self.partitions)  # wrong_partition: answered on this stream
        entry_id = self.client.xadd(self.keys.input(partition), fields).decode()
        address = reply_address(fields)
        reply_key = None
        if address is not None:
            reply_key = self.keys.reply(partition, address[0].decode(), address[1].decode())
            if reply_key in self._used:
                raise RuntimeError(f"the generator reused the reply key {reply_key!r}")
            self._used.add(reply_key)
            self.reply_keys.append(reply_key)
        request = address[1].decode() if address else ""
        return Sent(case, entry_id, partition, session, request, reply_key)

    def _first_replies(self, keys: list[str]) -> list[bytes | None]:
        pipe = self.client.pipeline(transaction=False)
        for key in keys:
            pipe.lindex(key, 0)
        return pipe.execute()

    def _new_dead_origins(self) -> set[str]:
        for p in range(self.partitions):
            for entry_id, fields in self.client.xrange(self.keys.dead(p), f"({self._dead_seen[p]}", "+"):
                self._dead_seen[p] = entry_id.decode()
                self._dead_origins.add(fields[b"origin"].decode())
                self.counts["dead_letters"] += 1
        found, self._dead_origins = self._dead_origins, set()
        return found

    def _check(self, sent: Sent, raw: bytes) -> None:
        self.counts["replies"] += 1
        try:
            reply = json.loads(raw)
        except ValueError:
            self.counts["misshapen"] += 1
            return
        if not _well_formed(reply, sent.request):
            self.counts["misshapen"] += 1
            return
        if reply["ok"]:
            self.counts["accepted"] += 1
            self._remember(sent, reply["result"])
            return
        error = reply["error"]
        self.counts[f"code:{error['code']}"] += 1
        if error["code"] not in self.codes:
            self.counts["undocumented"] += 1
        if error["code"] == "dead_letter":
            self.counts["crashed"] += 1
        if MARKER in json.dumps(error, ensure_ascii=False):
            self.counts["echoed"] += 1
            if self.counts["echoed"] <= 5:
                print(f"echo ({sent.case}): {json.dumps(error, ensure_ascii=False)[:300]}")

    def _remember(self, sent: Sent, result: dict[str, Any]) -> None:
        frame = result.get("frame")
        if not isinstance(frame, dict) or frame.get("type") not in ("snapshot", "add", "update", "remove"):
            return
        self.generator.streams.append((sent.session, frame["sourceCallId"], frame["generation"], frame["revision"]))
        del self.generator.streams[:-64]

    def finish(self, idle_timeout: float = 15.0) -> None:
        """Count duplicated replies and entries still pending once the pool is idle."""
        deadline = time.monotonic() + idle_timeout
        while self._pending() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.counts["pending"] += self._pending()
        for start in range(0, len(self.reply_keys), 512):
            pipe = self.client.pipeline(transaction=False)
            for key in self.reply_keys[start:start + 512]:
                pipe.llen(key)
            self.counts["duplicated"] += sum(1 for n in pipe.execute() if n > 1)

    def _pending(self) -> int:
        return sum(int(self.client.xpending(self.keys.input(p), GROUP)["pending"]) for p in range(self.partitions))


def _well_formed(reply: Any, request: str) -> bool:
    if not isinstance(reply, dict) or reply.get("request") != request:
        return False
    if reply.get("ok") is True:
        return set(reply) == {"ok", "request", "result"} and isinstance(reply["result"], dict)
    error = reply.get("error")
    if reply.get("ok") is not False or set(reply) != {"ok", "request", "error"} or not isinstance(error, dict):
        return False
    issues = error.get("issues", [])
    return (set(error) <= {"code", "message", "issues"} and isinstance(error.get("code"), str)
            and isinstance(error.get("message"), str) and isinstance(issues, list) and len(issues) <= 10
            and all(isinstance(i, dict) and set(i) == {"path", "message"} for i in issues))


# -- running ---------------------------------------------------------------------------------


def run_wire(seconds: float, seed: int, *, redis_url: str | None = None, batch: int = BATCH,
             max_entries: int | None = None) -> dict[str, int]:
    """Fuzz a live pool for `seconds` or `max_entries` (a throwaway redis-server unless `redis_url`); the counts."""
    with tempfile.TemporaryDirectory() as directory:
        process = None
        if redis_url is None:
            process, port = start_redis_server(directory)
            redis_url = f"redis://127.0.0.1:{port}/0"
        try:
            return _run(seconds, seed, redis_url, batch, max_entries)
        finally:
            if process is not None:
                process.kill()
                process.wait()


def _run(seconds: float, seed: int, redis_url: str, batch: int, max_entries: int | None) -> dict[str, int]:
    # Dead-letter budgets above one batch's worth, so no letter is trimmed before it is seen.
    settings = load_settings(redis_url=redis_url, partitions=PARTITIONS, lease_ttl_ms=2_000, lease_renew_ms=500,
                             heartbeat_ms=100, dead_letter_max_entries=100_000,
                             dead_letter_max_bytes=64 * 1024 * 1024)
    client = redis.Redis.from_url(redis_url)
    pool = WorkerPool(settings=settings, redis=redis.Redis.from_url(redis_url),
                      metrics=Metrics(registry=CollectorRegistry()), worker_id="fuzz-wire")
    thread = threading.Thread(target=pool.run, daemon=True)
    thread.start()
    keys = Keys(settings.key_prefix)
    fuzzer = WireFuzzer(client=client, keys=keys, partitions=PARTITIONS, rng=random.Random(seed))
    try:
        _wait_for_owners(client, keys)
        started = time.monotonic()
        limit = max_entries if max_entries is not None else float("inf")
        while time.monotonic() - started < seconds and fuzzer.counts["entries"] < limit:
            fuzzer.batch(int(min(batch, limit - fuzzer.counts["entries"])))
        fuzzer.finish()
        fuzzer.counts["elapsed_ms"] = int((time.monotonic() - started) * 1000)
    finally:
        pool.stop()
        thread.join(timeout=15)
        client.close()
    return dict(fuzzer.counts)


def _wait_for_owners(client: Any, keys: Keys, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not all(client.exists(keys.lease(p)) for p in range(PARTITIONS)):
        if time.monotonic() > deadline:
            raise RuntimeError("the worker pool did not take every partition")
        time.sleep(0.02)


def failures(counts: dict[str, int]) -> int:
    """The number of contract violations in a result of `run_wire`."""
    return sum(counts.get(name, 0) for name in FAILURES)


def main(argv: list[str]) -> int:
    """`python -m bench fuzz-wire --seconds N [--seed S]`: exit 1 on any contract violation."""
    parser = argparse.ArgumentParser(prog="python -m bench fuzz-wire")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    counts = run_wire(args.seconds, args.seed)
    rate = counts["entries"] / max(counts["elapsed_ms"] / 1000, 1e-9)
    print(f"fuzz-wire: {counts['entries']} entries in {counts['elapsed_ms'] / 1000:.1f} s ({rate:,.0f} entries/s), "
          f"{counts['replies']} replies ({counts['accepted']} accepted), {counts['dead_letters']} dead letters")
    print("  " + ", ".join(f"{name} {counts[name]}" for name in FAILURES))
    print("  codes: " + ", ".join(f"{k[5:]} {v}" for k, v in sorted(counts.items()) if k.startswith("code:")))
    return 1 if failures(counts) else 0
