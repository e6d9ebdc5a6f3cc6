"""What the benchmarks read of a running process from outside: a sample of its `/metrics` page
(prometheus-client's own text parser, the one the suite's `sample` uses) and its resident set
(Linux `/proc`)."""

from __future__ import annotations

from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families


def samples(text: str, family: str) -> dict[str, float]:
    """The unlabelled samples of one metric family on a `/metrics` page, by sample name (a
    histogram's `_count` and `_sum`, a gauge's own name); empty when the page has none."""
    return {sample.name: sample.value for found in text_string_to_metric_families(text)
            if found.name == family for sample in found.samples if not sample.labels}


def rss_kib(pid: int) -> int:
    """Resident set size of a process in KiB (0 when /proc does not say)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0
