"""Helpers of the action tests: a test catalog, documents with actions, real `rq worker` processes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Runtime
from workers.actions.rq_worker import WORKER_CLASS

ROOT = Path(__file__).resolve().parents[2]
CATALOG = '''
[[capability]]
id = "read_file"
title = "Read a file"
risk = "read"
requiresConfirmation = false
callable = "workers.actions.capabilities.files:read_file"
resultFields = ["totalLines"]
timeout = 10

[[capability]]
id = "write_file"
title = "Write a file"
risk = "write"
requiresConfirmation = true
callable = "workers.actions.capabilities.files:write_file"
resultFields = ["operation"]
timeout = 10

[[capability]]
id = "noop"
title = "Do nothing"
risk = "read"
requiresConfirmation = false
callable = "tests.integration.action_capabilities:noop"
resultFields = ["value"]
timeout = 10

[[capability]]
id = "noop_confirmed"
title = "Do nothing after approval"
risk = "external"
requiresConfirmation = true
callable = "tests.integration.action_capabilities:noop"
resultFields = ["value"]
timeout = 10

[[capability]]
id = "noop_hurried"
title = "Do nothing after an approval given within a second"
risk = "external"
requiresConfirmation = true
confirmationTimeout = 1
callable = "tests.integration.action_capabilities:noop"
resultFields = ["value"]
timeout = 10

[[capability]]
id = "counter"
title = "Count and sleep"
risk = "external"
requiresConfirmation = false
callable = "tests.integration.action_capabilities:count_and_sleep"
resultFields = ["count"]
timeout = 60

[[capability]]
id = "bad_result"
title = "Return a nested value"
risk = "read"
requiresConfirmation = false
callable = "tests.integration.action_capabilities:bad_result"
resultFields = ["value"]
timeout = 10

[[capability]]
id = "explode"
title = "Raise"
risk = "read"
requiresConfirmation = false
callable = "tests.integration.action_capabilities:explode"
resultFields = ["value"]
timeout = 10

[[capability]]
id = "slow"
title = "Write a file, then sleep past the timeout"
risk = "write"
requiresConfirmation = false
callable = "tests.integration.action_capabilities:write_then_sleep"
resultFields = ["count"]
timeout = 1

[[capability]]
id = "huge_result"
title = "Return 100 KB"
risk = "read"
requiresConfirmation = false
callable = "tests.integration.action_capabilities:huge_result"
resultFields = ["value"]
timeout = 10

[[capability]]
id = "long_error"
title = "Fail with a long message"
risk = "read"
requiresConfirmation = false
callable = "tests.integration.action_capabilities:long_error"
resultFields = ["value"]
timeout = 10

[[capability]]
id = "stopped"
title = "Write a file, then be stopped from outside"
risk = "write"
requiresConfirmation = false
callable = "tests.integration.action_capabilities:write_then_stop"
resultFields = ["count"]
timeout = 10
'''


def tool(capability: str, arguments: dict[str, Any], result_map: dict[str, str] | None = None) -> dict[str, Any]:
    action: dict[str, Any] = {"kind": "tool", "capabilityId": capability, "arguments": arguments}
    if result_map:
        action["resultMap"] = result_map
    return action


def state(name: str) -> dict[str, Any]:
    return {"expr": {"state": name}}


def actions_document(ui_id: str = "ops") -> dict[str, Any]:
    """A v1.1 document with one action per test capability (and one agent action)."""
    return {
        "version": "1.1", "id": ui_id, "mode": "interactive_ui", "title": "Operations",
        "state": {
            "value": {"type": "number", "initial": 1, "min": 0, "max": 1000, "step": 1},
            "key": {"type": "string", "initial": "k", "maxLength": 64},
            "seconds": {"type": "number", "initial": 0, "min": 0, "max": 30, "step": 0.1},
            "count": {"type": "number", "initial": 0, "min": 0, "max": 1000000, "step": 1},
        },
        "derived": {},
        "actions": {
            "noop": tool("noop", {"value": state("value")}, {"value": "value"}),
            "confirmed": tool("noop_confirmed", {"value": state("value")}),
            "hurried": tool("noop_hurried", {"value": state("value")}),
            "count": tool("counter", {"key": state("key"), "seconds": state("seconds")}, {"count": "count"}),
            "bad": tool("bad_result", {"value": state("value")}),
            "explode": tool("explode", {"value": state("value")}),
            "huge": tool("huge_result", {"value": state("value")}),
            "long_error": tool("long_error", {"value": state("value")}),
            "mismatch": tool("noop", {"value": state("key")}),
            "slow": tool("slow", {"name": state("key"), "seconds": state("seconds")}),
            "stopped": tool("stopped", {"name": state("key")}),
            "missing": tool("not_in_catalog", {"value": state("value")}),
            "ask": {"kind": "agent", "prompt": {"expr": {"op": "concat", "args": ["Explain ", {"state": "key"}]}}},
        },
        "root": {"id": "root", "type": "Card", "props": {"gap": "md"}, "children": [
            {"id": f"b-{name}", "type": "Button",
             "props": {"label": name, "action": {"type": "invoke", "actionId": name}}}
            for name in ("noop", "confirmed", "count", "bad", "explode", "mismatch", "missing", "ask", "slow",
                         "stopped")
        ]},
    }


VALUES = {"value": 1, "key": "k", "seconds": 0, "count": 0}


def plain_ref(call: str, ui_id: str = "ops") -> dict[str, Any]:
    return {"sourceCallId": call, "uiId": ui_id, "generation": 0, "revision": 0}


def configure(runtime: Runtime, tmp_path: Path, **overrides: Any) -> Runtime:
    """Point the runtime at the test catalog and a files root, with fast reaper timings."""
    catalog = tmp_path / "capabilities.toml"
    catalog.write_text(CATALOG, "utf-8")
    files = tmp_path / "files"
    files.mkdir(exist_ok=True)
    options = {"capabilities": str(catalog), "files_root": str(files), "job_heartbeat_ms": 600,
               "reaper_interval_ms": 100, "job_start_timeout_s": 10, **overrides}
    return runtime.configure(**options)


def _descendants(root: int) -> list[int]:
    """Every live descendant of a process (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


class RQWorkers:
    """Real `rq worker` processes on the suite's Redis (each in its own process group)."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self.processes: list[subprocess.Popen] = []

    def environment(self) -> dict[str, str]:
        settings = self._runtime.settings
        env = dict(os.environ)
        env.update({"IUI_REDIS_URL": self._runtime.redis_url, "IUI_KEY_PREFIX": settings.key_prefix,
                    "IUI_PARTITIONS": str(settings.partitions), "IUI_CAPABILITIES": str(settings.capabilities),
                    "IUI_FILES_ROOT": str(settings.files_root),
                    "IUI_JOB_HEARTBEAT_MS": str(settings.job_heartbeat_ms),
                    "IUI_JOB_START_TIMEOUT_S": str(settings.job_start_timeout_s),
                    "PYTHONPATH": str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")})
        return env

    def start(self, count: int = 1) -> RQWorkers:
        for _ in range(count):
            process = subprocess.Popen(
                [sys.executable, "-m", "rq.cli", "worker", "--url", self._runtime.redis_url, "--quiet",
                 "--worker-class", WORKER_CLASS, "iui"],
                cwd=ROOT, env=self.environment(), start_new_session=True,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.processes.append(process)
        return self

    def kill(self, process: subprocess.Popen) -> None:
        """SIGKILL the worker and its work horse (RQ puts the horse in a process group of its own)."""
        for pid in [process.pid, *_descendants(process.pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait(timeout=10)

    def stop(self) -> None:
        for process in self.processes:
            self.kill(process)
        self.processes.clear()


@pytest.fixture()
def rq_workers(runtime: Runtime) -> Iterator[RQWorkers]:
    workers = RQWorkers(runtime)
    yield workers
    workers.stop()


def wait_status(runtime: Runtime, session: str, op: str, statuses: set[str], timeout: float = 20.0) -> dict[str, Any]:
    """Poll `get` until the operation's status is in `statuses`."""
    deadline = time.monotonic() + timeout
    receipt: dict[str, Any] = {}
    while time.monotonic() < deadline:
        reply = runtime.client.get(session, op, timeout=10)
        receipt = reply["result"]["receipt"]
        if receipt["status"] in statuses:
            return receipt
        time.sleep(0.05)
    raise AssertionError(f"operation {op} is {receipt.get('status')}, not one of {sorted(statuses)}")
