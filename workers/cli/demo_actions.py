"""The action half of `iui demo`: the three action examples, reserved and run end to end.

After the stream example completes, the demo stores the file reader, file writer and agent
callback examples as plain UIs, then: reserves the read (queued -> running -> succeeded) and
maps its result into state with `apply_action_result`; reserves the write
(awaiting_confirmation), approves it and waits for it to succeed; triggers the agent action
and prints its inbox entry.  The RQ jobs are executed by a thread of the demo process that
takes them off the RQ queue and runs exactly what `rq worker` runs (`OperationRun`), so the
embedded Redis needs no separate process.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from redis import Redis

from config.capabilities import Catalog, load_catalog
from config.settings import Settings
from core import apply_action_result, initial_state, parse_document

from ..actions.jobs import OperationRun
from ..client.client import Client
from ..redisio.client import RedisClient
from ..redisio.connection import connect_server, text
from ..wire.names import PLAIN

FINAL = {"succeeded", "failed", "cancelled", "unknown"}


class JobThread:
    """Runs the jobs of the catalog's RQ queues inside this process (the demo's `rq worker`)."""

    def __init__(self, *, redis: RedisClient, settings: Settings, catalog: Catalog) -> None:
        self._redis, self._settings, self._catalog = redis, settings, catalog
        # RQ's queues: on the same server, or its own (RQ does not support Redis Cluster)
        self._rq: Redis = redis if isinstance(redis, Redis) else connect_server(settings.rq_url)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="demo-rq", daemon=True)

    def __enter__(self) -> JobThread:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        from rq import Queue
        from rq.job import Job

        queues = [Queue(name, connection=self._rq) for name in self._catalog.queues]
        while not self._stop.is_set():
            ran = False
            for queue in queues:
                job_id = self._rq.lpop(queue.key)
                if job_id is None:
                    continue
                ran = True
                payload = Job.fetch(text(job_id), connection=self._rq).args[0]
                OperationRun(redis=self._redis, settings=self._settings, payload=payload, catalog=self._catalog).run()
            if not ran:
                self._stop.wait(0.05)


def _receipt_line(receipt: dict[str, Any]) -> str:
    extra = f" result={json.dumps(receipt['result'])}" if "result" in receipt else ""
    extra += f" message={receipt['message']!r}" if receipt.get("message") else ""
    return f"  receipt {receipt['actionId']} {receipt['operationId']} status={receipt['status']}{extra}"


def run_action_demo(*, client: Client, redis: RedisClient, settings: Settings, session: str, run: str,
                    examples: Path, out: Callable[[str], None]) -> bool:
    """Reserve, confirm and run the example actions; True when every step ended as expected."""
    with tempfile.TemporaryDirectory(prefix="iui-demo-files-") as root:
        (Path(root) / "docs").mkdir()
        (Path(root) / "docs" / "CHANGELOG.md").write_text("# Changelog\n\n- 1.1: host actions\n- 1.0: first\n")
        job_settings = settings.model_copy(update={"files_root": Path(root)})
        catalog = load_catalog(settings.capabilities)
        with JobThread(redis=redis, settings=job_settings, catalog=catalog), client.follow_receipts(session) as feed:
            return _steps(client, feed, session, run, examples, out, Path(root))


def _plain(client: Client, session: str, run: str, examples: Path, name: str) -> tuple[Any, dict[str, Any]]:
    document = json.loads((examples / name).read_text("utf-8"))
    call = f"{name.split('.')[0]}-{run}"
    reply = client.call(session, PLAIN, {"document": document}, call=call)
    if not reply.get("ok"):
        raise RuntimeError(f"demo call rejected: {reply['error']['code']}")
    ref = {"sourceCallId": call, "uiId": document["id"], "generation": 0, "revision": 0}
    return parse_document(document), ref


def _reserve(client: Client, session: str, ref: dict[str, Any], action: str, state: Any,
             out: Callable[[str], None]) -> dict[str, Any]:
    reply = client.reserve(session, ref, action, dict(state))
    if not reply.get("ok"):
        raise RuntimeError(f"demo reserve rejected: {reply['error']['code']}: {reply['error']['message']}")
    receipt: dict[str, Any] = reply["result"]["receipt"]
    out(_receipt_line(receipt))
    return receipt


def _follow(client: Client, feed: Any, session: str, op: str, out: Callable[[str], None]) -> dict[str, Any]:
    """Wait for the outcome, then print every later change of the operation from the receipt log."""
    done: dict[str, Any] = feed.wait_for(op, FINAL, timeout=30)
    changes = [r for _, r in client.receipt_log(session) if r["operationId"] == op]
    for receipt in changes[1:]:
        out(_receipt_line(receipt))
    return done


def _steps(client: Client, feed: Any, session: str, run: str, examples: Path, out: Callable[[str], None],
           root: Path) -> bool:
    out("actions: the file reader (read_file, no approval)")
    reader, ref = _plain(client, session, run, examples, "actions-file-reader.json")
    state = initial_state(reader)
    read = _follow(client, feed, session, _reserve(client, session, ref, "count_lines", state, out)["operationId"], out)
    ok = read["status"] == "succeeded"
    if ok:
        state = apply_action_result(reader, state, "count_lines", read["result"])
        out(f"  apply_action_result: state.lines = {state['lines']}")
    out("actions: the file writer (write_file, needs approval)")
    writer, ref = _plain(client, session, run, examples, "actions-file-writer.json")
    waiting = _reserve(client, session, ref, "save_note", initial_state(writer), out)
    client.confirm(session, waiting["operationId"], True)
    out("  approved")
    written = _follow(client, feed, session, waiting["operationId"], out)
    ok = ok and waiting["status"] == "awaiting_confirmation" and written["status"] == "succeeded"
    target = root / "notes" / "meeting.md"
    out(f"  wrote {target.relative_to(root)} ({target.stat().st_size if target.exists() else 0} bytes)")
    out("actions: the agent callback (a follow-up user input)")
    agent, ref = _plain(client, session, run, examples, "agent-callback.json")
    accepted = _reserve(client, session, ref, "explain", initial_state(agent), out)
    inbox = [entry for _, entry in client.inbox(session) if entry["operationId"] == accepted["operationId"]]
    out(f"  inbox: {json.dumps(inbox[0], ensure_ascii=False) if inbox else 'missing'}")
    return ok and accepted["status"] == "accepted" and bool(inbox)
