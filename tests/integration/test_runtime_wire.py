"""The wire contract exactly as docs/wire.md and docs/stream-tools.md document it: redis-cli alone, and the demo."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zlib
from urllib.parse import urlparse

import pytest

from tests.integration.conftest import Runtime, example

pytestmark = pytest.mark.integration


def redis_cli(url: str, *args: str) -> str:
    parsed = urlparse(url)
    result = subprocess.run(["redis-cli", "-h", parsed.hostname, "-p", str(parsed.port), "--raw", *args],
                            capture_output=True, text=True, timeout=30, check=True)
    return result.stdout


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli not installed")
def test_a_tool_call_submitted_and_answered_with_redis_cli_alone(runtime: Runtime) -> None:
    runtime.start()
    url = runtime.redis_url
    partitions = int(redis_cli(url, "HGET", "iui:meta", "partitions"))
    session, request = "cli-session", "req-1"
    n = zlib.crc32(session.encode("utf-8")) % partitions
    body = json.dumps({"document": example("stream-initial.json")})
    entry_id = redis_cli(url, "XADD", f"iui:{{p{n}}}:in", "*", "session", session, "request", request,
                         "kind", "tool", "name", "intelligent_ui_open", "call", "call-1", "body", body)
    assert entry_id.strip()
    out = redis_cli(url, "BLPOP", f"iui:{{p{n}}}:reply:{session}:{request}", "10").splitlines()
    assert out[0] == f"iui:{{p{n}}}:reply:{session}:{request}"
    reply = json.loads(out[1])
    assert reply["ok"] is True and reply["request"] == request
    assert reply["result"]["frame"]["sourceCallId"] == "call-1"
    assert "generation=1 revision=0 seq=1 type=snapshot" in reply["result"]["receipt"]
    patch = json.dumps({"sourceCallId": "call-1", "generation": 1, "baseRevision": 0,
                        "mutation": example("stream-mutations.json")[0]})
    redis_cli(url, "XADD", f"iui:{{p{n}}}:in", "*", "session", session, "request", "req-2",
              "kind", "tool", "name", "intelligent_ui_patch", "call", "call-2", "body", patch)
    out = redis_cli(url, "BLPOP", f"iui:{{p{n}}}:reply:{session}:req-2", "10").splitlines()
    patched = json.loads(out[1])["result"]["frame"]
    assert (patched["seq"], patched["baseRevision"], patched["revision"], patched["type"]) == (2, 0, 1, "add")
    frames = redis_cli(url, "XRANGE", f"iui:{{p{n}}}:s:{session}:log", "-", "+").splitlines()
    assert json.loads(frames[-1]) == patched


def test_iui_demo_runs_to_completion_on_the_embedded_redis() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IUI_")}
    result = subprocess.run([sys.executable, "-m", "workers.cli", "demo"], capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert "embedded in-process Redis" in result.stdout
    assert "type=complete" in result.stdout
    assert "converged=True" in result.stdout
    assert "iui_frames_published_total" in result.stdout
