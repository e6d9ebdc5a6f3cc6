"""The local stack and monitoring files, checked without a Docker engine or Prometheus."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from prometheus_client import CollectorRegistry

from workers.metrics import Metrics

ROOT = Path(__file__).resolve().parents[2]
METRIC = re.compile(r"\biui_[a-z_]+")


def _exported_names() -> set[str]:
    registry = CollectorRegistry()
    Metrics(registry=registry)
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
    return {family.name + suffix for family in registry.collect() for suffix in suffixes[family.type]}


def _load(path: str):
    return yaml.safe_load((ROOT / path).read_text())


def test_compose_brings_up_the_whole_stack():
    services = _load("docker-compose.yml")["services"]
    assert {"redis", "worker", "rq-worker", "prometheus", "grafana"} <= services.keys()
    worker = services["worker"]
    assert worker["environment"]["IUI_REDIS_URL"].startswith("redis://redis:")
    assert worker["depends_on"]["redis"]["condition"] == "service_healthy"
    assert worker["stop_signal"] == "SIGTERM"
    assert services["rq-worker"]["entrypoint"][:2] == ["rq", "worker"]


def test_every_file_the_stack_mounts_or_builds_exists():
    services = _load("docker-compose.yml")["services"]
    for service in services.values():
        if "build" in service:
            assert (ROOT / service["build"]["dockerfile"]).is_file()
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            assert (ROOT / source).exists(), source


def test_the_worker_image_runs_iui():
    dockerfile = (ROOT / "ops" / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["iui"]' in dockerfile


def test_prometheus_scrapes_the_worker_metrics_port():
    config = _load("ops/prometheus.yml")
    port = _load("docker-compose.yml")["services"]["worker"]["environment"]["IUI_METRICS_PORT"]
    targets = config["scrape_configs"][0]["dns_sd_configs"][0]
    assert targets["names"] == ["worker"] and str(targets["port"]) == port


def test_alerts_and_dashboard_use_only_exported_metrics():
    exported = _exported_names()
    rules = [rule for group in _load("ops/alerts.yml")["groups"] for rule in group["rules"]]
    assert rules and all("alert" in rule and "expr" in rule for rule in rules)
    dashboard = (ROOT / "ops" / "grafana" / "iui-workers.json").read_text()
    json.loads(dashboard)
    used = set(METRIC.findall(" ".join(str(rule["expr"]) for rule in rules) + dashboard))
    assert used and used <= exported, used - exported
