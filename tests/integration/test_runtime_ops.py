"""What an operator sees: `iui status --json` and a real `iui worker` process's metrics endpoint."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
import redis

from tests.integration.conftest import Runtime, example
from workers.cli import main
from workers.client import Client
from workers.local_redis import free_port

pytestmark = pytest.mark.integration


def test_status_json_is_one_object_with_every_partition(runtime: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    runtime.start(1)
    assert main(["status", "--json", "--redis-url", runtime.redis_url, "--partitions", "4", "--timeout", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["meta"] == {"partitions": 4, "protocol": 1}
    assert report["workers"] == [runtime.pools[0][0].worker_id] and report["owned"] == 4
    assert [row["partition"] for row in report["partitions"]] == [0, 1, 2, 3]
    assert all(row["owner"] == report["workers"][0] and row["epoch"] >= 1 and row["ttl_ms"] > 0
               for row in report["partitions"])


def _scrape(port: int, deadline: float) -> str:
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as response:
                return response.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_a_worker_process_exports_partitions_build_info_zeroed_counters_and_process_metrics(redis_url: str) -> None:
    port = free_port()
    env = {**os.environ, "IUI_REDIS_URL": redis_url, "IUI_PARTITIONS": "4", "IUI_METRICS_PORT": str(port),
           "IUI_METRICS_ADDR": "127.0.0.1", "IUI_LOG_LEVEL": "info", "IUI_LEASE_TTL_MS": "1000",
           "IUI_LEASE_RENEW_MS": "200", "IUI_HEARTBEAT_MS": "100"}
    worker = subprocess.Popen([sys.executable, "-m", "workers.cli", "worker"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        text = _scrape(port, deadline)
        while "iui_leases_held 4.0" not in text and time.monotonic() < deadline:
            time.sleep(0.2)
            text = _scrape(port, deadline)
        assert "iui_partitions 4.0" in text and "iui_leases_held 4.0" in text
        assert 'iui_build_info{python="' in text
        assert 'iui_dead_lettered_total{reason="failed"} 0.0' in text
        assert 'iui_rejections_total{reason="cursor_conflict"} 0.0' in text
        assert "process_cpu_seconds_total" in text and "python_gc_objects_collected_total" in text
        client = Client(redis=redis.Redis.from_url(redis_url))
        assert client.call("ops", "intelligent_ui_open", {"document": example("stream-initial.json")})["ok"]
        assert client.call("ops", "intelligent_ui_patch", {"sourceCallId": "none", "generation": 1,
                                                           "baseRevision": 0, "mutation": {}})["error"]
        text = _scrape(port, deadline)
        assert 'iui_entries_processed_total{kind="tool",outcome="accepted",tool="intelligent_ui_open"} 1.0' in text
        assert 'iui_rejections_total{reason="unknown_source"} 1.0' in text
        if shutil.which("promtool"):  # the exposition passes Prometheus's own lint, with data in it
            lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True,
                                  timeout=60, check=False)
            assert (lint.returncode, lint.stdout + lint.stderr) == (0, "")
    finally:
        worker.send_signal(signal.SIGTERM)
        _, err = worker.communicate(timeout=30)
    assert worker.returncode == 0, err
    assert "serving 4 partitions" in err
