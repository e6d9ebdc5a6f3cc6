"""The alert rules: promtool's own checks and unit tests where promtool is installed, plus coverage."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml

from tests.external_tools import needs

ROOT = Path(__file__).resolve().parents[2]
OPS = ROOT / "ops"
PROMTOOL = shutil.which("promtool")
needs_promtool = needs(PROMTOOL is not None,
                       "promtool is not installed (Debian: apt-get install -y prometheus)")


def _alerts() -> list[dict]:
    return [rule for group in yaml.safe_load((OPS / "alerts.yml").read_text())["groups"] for rule in group["rules"]]


def _promtool(*args: str) -> str:
    assert PROMTOOL is not None
    result = subprocess.run([PROMTOOL, *args], check=False, cwd=OPS, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@needs_promtool
def test_promtool_accepts_the_alert_rules():
    assert "SUCCESS" in _promtool("check", "rules", "alerts.yml")


@needs_promtool
def test_every_alert_fires_and_stays_quiet_as_its_promtool_unit_tests_say():
    assert "SUCCESS" in _promtool("test", "rules", "alerts.test.yml")


def test_every_alert_has_a_unit_test_that_expects_it_to_fire():
    tests = yaml.safe_load((OPS / "alerts.test.yml").read_text())["tests"]
    firing = {case["alertname"] for test in tests for case in test["alert_rule_test"] if case.get("exp_alerts")}
    assert {rule["alert"] for rule in _alerts()} <= firing


def test_the_named_outages_are_unit_tested():
    text = (OPS / "alerts.test.yml").read_text()
    for scenario in ("All workers gone", "no worker at all", "7 leases of 8 partitions", "The first dead letter",
                     "Everything rejected at low traffic", "The gateway is gone", "Redis away: every call answers 503",
                     "Prometheus's own scrapes never dilute", "One Redis restart", "One slow reader a minute",
                     "At its connection limit", "A burst of refusals at one moment"):
        assert scenario in text, scenario


def _gateway_rule(name: str) -> dict:
    return next(rule for rule in _alerts() if rule["alert"] == name)


def test_the_gateway_alerts_exist_and_read_only_the_gateway_job():
    names = {rule["alert"] for rule in _alerts() if "gateway" in rule["expr"]}
    assert names == {"IUIGatewayDown", "IUIGatewayErrors", "IUIGatewaySlowReaders", "IUIGatewaySubscriptionFlapping",
                     "IUIGatewayAtConnectionLimit"}
    assert _gateway_rule("IUIGatewayDown")["expr"] == 'up{job="iui-gateway"} == 0'
    assert _gateway_rule("IUIGatewayDown")["for"] == "1m"
    assert _gateway_rule("IUIGatewayDown")["labels"]["severity"] == "critical"


def test_the_gateway_error_share_leaves_out_prometheus_scrapes():
    rule = _gateway_rule("IUIGatewayErrors")
    assert 'status=~"5.."' in rule["expr"] and rule["expr"].count('route!="/metrics"') == 2
    assert "> 0.05" in rule["expr"] and rule["for"] == "5m"


def test_slow_readers_and_flapping_must_last_ten_minutes():
    assert 'reason="slow_reader"' in _gateway_rule("IUIGatewaySlowReaders")["expr"]
    assert _gateway_rule("IUIGatewaySlowReaders")["for"] == "10m"
    assert "iui_gateway_subscription_reconnects_total" in _gateway_rule("IUIGatewaySubscriptionFlapping")["expr"]
    assert _gateway_rule("IUIGatewaySubscriptionFlapping")["for"] == "10m"


def test_no_alert_hard_codes_the_partition_count():
    unowned = next(rule for rule in _alerts() if rule["alert"] == "IUIPartitionsUnowned")
    assert "iui_partitions" in unowned["expr"] and not re.search(r"\b64\b", unowned["expr"])
    assert "absent(" in unowned["expr"]


def test_the_rejection_ratio_is_not_masked_at_low_traffic():
    rule = next(rule for rule in _alerts() if rule["alert"] == "IUIRejectionRateHigh")
    assert "clamp_min" not in rule["expr"]


def test_every_alert_is_in_the_operations_table():
    operations = (ROOT / "docs" / "operations.md").read_text()
    listed = {line.split("`")[1] for line in operations.splitlines() if line.startswith("| `IUI")}
    assert listed == {rule["alert"] for rule in _alerts()}


def test_every_alert_has_a_runbook_section_in_the_docs():
    runbook = (ROOT / "docs" / "runbook.md").read_text()
    for rule in _alerts():
        assert f"\n## {rule['alert']}\n" in runbook, rule["alert"]
        assert rule["annotations"]["runbook"] == f"docs/runbook.md#{rule['alert'].lower()}"


def test_the_connection_limit_alert_reads_only_overloaded_refusals():
    rule = _gateway_rule("IUIGatewayAtConnectionLimit")
    assert 'iui_gateway_protocol_refused_total{code="overloaded"}' in rule["expr"]
    assert rule["for"] == "5m" and rule["labels"]["severity"] == "warning"
