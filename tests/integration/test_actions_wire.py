"""The action wire contract as docs/actions.md documents it: its redis-cli sequence, and `iui action`/`tail`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.integration.actions_support import configure
from tests.integration.conftest import Runtime, example

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def documented_reserve_sequence() -> str:
    text = (ROOT / "docs" / "actions.md").read_text("utf-8")
    section = text.split("\n## With redis-cli only\n", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return "\n".join(line for line in block.splitlines() if "SUBSCRIBE" not in line)


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli not installed")
def test_the_documented_redis_cli_reserve_sequence_runs_as_written(runtime: Runtime, tmp_path: Path) -> None:
    configure(runtime, tmp_path).start()
    url = urlparse(runtime.redis_url)
    script = (f'redis-cli() {{ command redis-cli -h {url.hostname} -p {url.port} "$@"; }}\n'
              + documented_reserve_sequence())
    result = subprocess.run(["bash", "-ec", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    replies = [json.loads(line) for line in result.stdout.splitlines() if line.startswith('{"ok"')]
    assert [r["request"] for r in replies] == ["ui-1", "act-1"] and all(r["ok"] for r in replies), replies
    receipt = replies[1]["result"]["receipt"]
    assert receipt["status"] == "queued" and receipt["requestId"] == "wire-click-1"
    assert '"status":"queued"' in result.stdout.split('{"ok"')[-1]  # the receipt log line


def iui(runtime: Runtime, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "IUI_REDIS_URL": runtime.redis_url, "IUI_PARTITIONS": str(runtime.settings.partitions)}
    return subprocess.run([sys.executable, "-m", "workers.cli", *args], input=stdin, capture_output=True, text=True,
                          timeout=60, env=env, cwd=ROOT)


def test_iui_action_subcommands_and_tail_show_receipts(runtime: Runtime, tmp_path: Path) -> None:
    configure(runtime, tmp_path).start()
    document = example("actions-file-writer.json")
    runtime.call("cli-s", "intelligent_ui", {"document": document}, call="w-1")
    ref = {"sourceCallId": "w-1", "uiId": "file-writer", "generation": 0, "revision": 0}
    values = {key: field["initial"] for key, field in document["state"].items()}
    request = {"documentRef": ref, "requestId": "cli-1", "actionId": "save_note", "values": values}
    reserved = iui(runtime, "action", "reserve", "--session", "cli-s", stdin=json.dumps(request))
    assert reserved.returncode == 0, reserved.stderr
    op = json.loads(reserved.stdout)["result"]["receipt"]["operationId"]
    denied = iui(runtime, "action", "confirm", "--session", "cli-s", op, "deny")
    assert json.loads(denied.stdout)["result"]["receipt"]["status"] == "cancelled"
    again = iui(runtime, "action", "cancel", "--session", "cli-s", op)
    assert again.returncode == 1 and json.loads(again.stdout)["error"]["code"] == "not_cancellable"
    catalog = iui(runtime, "action", "catalog", "--session", "cli-s")
    assert "write_file" in {c["id"] for c in json.loads(catalog.stdout)["result"]["capabilities"]}
    listed = iui(runtime, "action", "list", "--session", "cli-s", stdin=json.dumps(ref))
    assert [r["status"] for r in json.loads(listed.stdout)["result"]["receipts"]] == ["cancelled"]
    tail = iui(runtime, "tail", "cli-s", "--timeout", "0.5")
    assert f"receipt operationId={op} actionId=save_note status=awaiting_confirmation" in tail.stdout
    assert f"receipt operationId={op} actionId=save_note status=cancelled" in tail.stdout


def test_iui_demo_goes_on_to_the_actions_after_the_stream_completes() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IUI_")}
    result = subprocess.run([sys.executable, "-m", "workers.cli", "demo"], capture_output=True, text=True,
                            timeout=120, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "status=running" in out and 'result={"totalLines": 4}' in out and "state.lines = 4" in out
    assert "status=awaiting_confirmation" in out and 'result={"operation": "create"}' in out
    assert "status=accepted" in out and '"prompt": "Please explain' in out
    assert "actions: every step as expected=True" in out
