"""The exported metrics: known label sets start at 0, the partition gauge, build info, collectors."""

from __future__ import annotations

import re
from pathlib import Path

from prometheus_client import CollectorRegistry

from workers.observability.metrics import ENTRY_KINDS, ENTRY_TOOLS, OUTCOMES, Metrics, build_version
from workers.redisio.dead_letter import DEAD_LETTER_REASONS
from workers.wire.errors import REJECTION_CODES

ROOT = Path(__file__).resolve().parents[2]


def _samples(metrics: Metrics) -> dict[tuple[str, frozenset], float]:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in metrics.registry.collect() for s in family.samples}


def _documented_error_codes() -> dict[str, str]:
    """The error-code table of the docs (docs/reference/error-codes.md): code -> meaning."""
    page = (ROOT / "docs" / "reference" / "error-codes.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    return {re.fullmatch(r"`([a-z_]+)`", cells[0]).group(1): cells[1]
            for cells in ([cell.strip() for cell in row.strip("|").split(" | ")] for row in rows)}


def test_rejection_codes_are_the_documented_error_code_table():
    documented = _documented_error_codes()
    assert list(REJECTION_CODES) == list(documented)
    assert all(meaning for meaning in documented.values())


def test_every_code_the_runtime_raises_is_a_known_rejection_code():
    raised = set()
    for path in (ROOT / "workers").rglob("*.py"):
        raised |= set(re.findall(r'code="([a-z_]+)"', path.read_text()))
    raised |= {"malformed_entry", "cursor_conflict"}  # the class defaults of MalformedEntry, ConflictError
    assert raised <= set(REJECTION_CODES), raised - set(REJECTION_CODES)


def test_every_dead_letter_reason_the_consumer_writes_is_known():
    source = (ROOT / "workers" / "runtime" / "partition.py").read_text()
    written = set(re.findall(r'self\._dead\([^)]*?"([a-z_]+)"', source, re.DOTALL))
    assert written and written <= set(DEAD_LETTER_REASONS), written


def test_labelled_counters_start_at_zero_for_every_known_label():
    samples = _samples(Metrics(registry=CollectorRegistry()))
    for code in REJECTION_CODES:
        assert samples[("iui_rejections_total", frozenset({("reason", code)}))] == 0
    for reason in DEAD_LETTER_REASONS:
        assert samples[("iui_dead_lettered_total", frozenset({("reason", reason)}))] == 0
    for kind in ENTRY_KINDS:
        for tool in ENTRY_TOOLS:
            for outcome in OUTCOMES:
                key = frozenset({("kind", kind), ("tool", tool), ("outcome", outcome)})
                assert samples[("iui_entries_processed_total", key)] == 0
    for frame_type in ("snapshot", "add", "update", "remove", "complete", "cancel", "error"):
        assert samples[("iui_frames_published_total", frozenset({("type", frame_type)}))] == 0


def test_the_partition_gauge_and_build_info_are_exported():
    metrics = Metrics(registry=CollectorRegistry())
    metrics.partitions.set(64)
    samples = _samples(metrics)
    assert samples[("iui_partitions", frozenset())] == 64
    info = [labels for name, labels in samples if name == "iui_build_info"]
    assert len(info) == 1 and dict(info[0])["version"] == build_version() != ""


def test_process_platform_and_gc_collectors_are_registered():
    names = {family.name for family in Metrics(registry=CollectorRegistry()).registry.collect()}
    assert {"python_info", "python_gc_objects_collected"} <= names
    assert "process_cpu_seconds" in names or not Path("/proc/self/stat").exists()


def test_every_capability_of_the_catalog_exports_its_unknown_outcomes_from_zero():
    metrics = Metrics(registry=CollectorRegistry())
    assert not any(name == "iui_unknown_outcomes_total" for name, _ in _samples(metrics))  # no catalog yet
    metrics.initialise_capabilities(["send_email", "refund"])
    samples = _samples(metrics)
    for capability in ("send_email", "refund", "none"):
        assert samples[("iui_unknown_outcomes_total", frozenset({("capability", capability)}))] == 0
        assert samples[("iui_jobs_enqueued_total", frozenset({("capability", capability)}))] == 0
    # an audit: a capability's first receipt change, job and approval wait made their series at 1,
    # which the dashboards' increase() and histogram_quantile() never saw
    for capability in ("send_email", "refund"):
        for status in ("queued", "awaiting_confirmation", "running", "succeeded", "failed", "cancelled", "unknown"):
            assert samples[("iui_receipts_total", frozenset({("capability", capability), ("status", status)}))] == 0
        assert samples[("iui_job_seconds_count", frozenset({("capability", capability)}))] == 0
        assert samples[("iui_confirmation_wait_seconds_count", frozenset({("capability", capability)}))] == 0
