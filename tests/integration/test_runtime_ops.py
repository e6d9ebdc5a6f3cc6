"""What an operator sees: `iui status --json`, a real `iui worker` process's metrics endpoint, and a real
Prometheus evaluating the alert rules on a worker and a gateway."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import redis

from tests.external_tools import needs
from tests.integration.conftest import Runtime, example
from workers.cli import main
from workers.client import Client
from workers.redisio.local_server import free_port

pytestmark = pytest.mark.integration
OPS = Path(__file__).resolve().parents[2] / "ops"


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
    assert "serving 'iui' (a pool of 4 partitions shared by its workers)" in err


PROMETHEUS = shutil.which("prometheus")


def _get_json(url: str, deadline: float) -> dict:
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return json.loads(response.read())  # type: ignore[no-any-return]
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@needs(PROMETHEUS is not None, "needs Prometheus (Debian: apt-get install -y prometheus)")
def test_a_live_prometheus_scrapes_a_worker_and_a_gateway_and_evaluates_every_alert_rule_without_error(
        redis_url: str, tmp_path: Path) -> None:
    metrics_port, gateway_port, web_port = free_port(), free_port(), free_port()
    env = {**os.environ, "IUI_REDIS_URL": redis_url, "IUI_PARTITIONS": "4", "IUI_METRICS_PORT": str(metrics_port),
           "IUI_METRICS_ADDR": "127.0.0.1", "IUI_LEASE_TTL_MS": "1000", "IUI_LEASE_RENEW_MS": "200",
           "IUI_HEARTBEAT_MS": "100"}
    jobs = {"iui-workers": metrics_port, "iui-gateway": gateway_port}  # the job names of ops/prometheus.yml
    (tmp_path / "prometheus.yml").write_text(json.dumps({  # YAML is a superset of JSON
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(OPS / "alerts.yml")],
        "scrape_configs": [{"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}
                           for job, port in jobs.items()],
    }))
    worker = subprocess.Popen([sys.executable, "-m", "workers.cli", "worker"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    gateway = subprocess.Popen([sys.executable, "-m", "workers.cli", "gateway", "--port", str(gateway_port)],
                               env={**env, "IUI_GATEWAY_JWT_SECRET": "s" * 32},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = subprocess.Popen([PROMETHEUS, f"--config.file={tmp_path / 'prometheus.yml'}",
                               f"--storage.tsdb.path={tmp_path / 'data'}",
                               f"--web.listen-address=127.0.0.1:{web_port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    api = f"http://127.0.0.1:{web_port}/api/v1"
    try:
        deadline = time.monotonic() + 60
        held: list = []
        while not held and time.monotonic() < deadline:
            held = _get_json(f"{api}/query?query=iui_leases_held%3D%3D4", deadline)["data"]["result"]
            time.sleep(0.5)
        assert held and held[0]["metric"]["job"] == "iui-workers"  # scraped, with every lease held
        rules: list = []
        while time.monotonic() < deadline:
            groups = _get_json(f"{api}/rules", deadline)["data"]["groups"]
            rules = [rule for group in groups for rule in group["rules"]]
            if rules and all(rule.get("lastEvaluation", "0001").startswith("20") for rule in rules):
                break
            time.sleep(0.5)
        assert rules, "no rule was loaded"
        used = set(re.findall(r"iui_[a-z_]+", (OPS / "alerts.yml").read_text()))
        missing = used
        while missing and time.monotonic() < deadline:  # the lag is reported every 5 s
            missing = used - set(_get_json(f"{api}/label/__name__/values", deadline)["data"])
            time.sleep(0.5)
        assert missing == set()  # every series an alert reads is one a worker or a gateway exports, once scraped
        up = _get_json(f"{api}/query?query=up", deadline)["data"]["result"]
        assert sorted((r["metric"]["job"], r["value"][1]) for r in up) == [("iui-gateway", "1"), ("iui-workers", "1")]
        assert [(r["name"], r.get("lastError", "")) for r in rules if r["health"] != "ok"] == []
        assert [r["name"] for r in rules if r.get("state") == "firing"] == []  # a healthy pool alarms nothing
    finally:
        server.terminate()
        worker.send_signal(signal.SIGTERM)
        gateway.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        worker.wait(timeout=30)
        gateway.wait(timeout=30)
