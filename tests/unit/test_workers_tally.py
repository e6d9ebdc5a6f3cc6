"""The hot path's tallies export what prometheus-client's Counter and Histogram export."""

from __future__ import annotations

import math
import re
import threading

import prometheus_client
import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from workers.observability.metrics import Metrics
from workers.observability.tally import CounterTally, HistogramTally

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 1.0)


def _exposition(registry: CollectorRegistry) -> str:
    """The text exposition with each `_created` value blanked (creation times differ by microseconds)."""
    return re.sub(r"(_created\{[^}]*\}) \S+", r"\1 T", generate_latest(registry).decode())


def _pair() -> tuple[CollectorRegistry, Counter, Histogram, CollectorRegistry, CounterTally, HistogramTally]:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    counter = Counter("x_entries_total", "Entries.", ["kind", "outcome"], registry=theirs)
    histogram = Histogram("x_seconds", "Seconds.", ["tool"], buckets=BUCKETS, registry=theirs)
    tally = CounterTally("x_entries_total", "Entries.", ["kind", "outcome"], registry=ours)
    spread = HistogramTally("x_seconds", "Seconds.", ["tool"], BUCKETS, registry=ours)
    return theirs, counter, histogram, ours, tally, spread


@pytest.mark.parametrize("created", [True, False])
def test_the_exposition_is_prometheus_clients_own(created: bool) -> None:
    if not created:
        prometheus_client.disable_created_metrics()
    try:
        theirs, counter, histogram, ours, tally, spread = _pair()
        counter.labels("tool", "accepted")  # declared: exported at 0 before any count
        tally.declare(("tool", "accepted"))
        histogram.labels("open")
        spread.declare(("open",))
        # every bucket edge, between them, above them all, zero, negative, NaN, a label set used unannounced
        for amount in (0.0005, 0.0004, 0.001, 0.003, 0.01, 0.5, 1.0, 2.0, 0.0, -1.0, math.nan, 1e9):
            histogram.labels("patch").observe(amount)
            spread.observe(("patch",), amount)
        for labels, amount in ((("tool", "accepted"), 1), (("view", "rejected"), 2.5), (("tool", "accepted"), 3)):
            counter.labels(*labels).inc(amount)
            tally.inc(labels, amount)
        assert _exposition(ours) == _exposition(theirs)
        assert ("_created" in _exposition(ours)) is created
    finally:
        prometheus_client.enable_created_metrics()


def test_the_workers_metrics_export_the_same_families_as_before() -> None:
    metrics = Metrics(registry=CollectorRegistry())
    metrics.count_entry({"kind": "tool", "name": "intelligent_ui_patch"}, 0.0007, "accepted")
    metrics.count_entry({"kind": "nonsense", "name": "<script>"}, 0.3, "rejected")
    metrics.count_frame("update")
    families = {family.name: family for family in metrics.registry.collect()}
    assert families["iui_entries_processed"].type == "counter"
    assert families["iui_processing_seconds"].type == "histogram"
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for name in ("iui_entries_processed", "iui_processing_seconds", "iui_frames_published")
               for s in families[name].samples}
    assert samples["iui_entries_processed_total", (("kind", "tool"), ("outcome", "accepted"),
                                                   ("tool", "intelligent_ui_patch"))] == 1
    assert samples["iui_entries_processed_total", (("kind", "other"), ("outcome", "rejected"), ("tool", "other"))] == 1
    assert samples["iui_processing_seconds_bucket", (("le", "0.0005"), ("tool", "intelligent_ui_patch"))] == 0
    assert samples["iui_processing_seconds_bucket", (("le", "0.001"), ("tool", "intelligent_ui_patch"))] == 1
    assert samples["iui_processing_seconds_count", (("tool", "other"),)] == 1
    assert samples["iui_frames_published_total", (("type", "update"),)] == 1
    assert samples["iui_frames_published_total", (("type", "add"),)] == 0


def test_two_tallies_of_one_name_cannot_share_a_registry() -> None:
    registry = CollectorRegistry()
    CounterTally("x_total", "X.", ["a"], registry=registry)
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        Counter("x_total", "X.", ["a"], registry=registry)
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        HistogramTally("x", "X.", ["a"], BUCKETS, registry=registry)


def test_label_values_of_another_arity_and_unordered_buckets_are_refused() -> None:
    registry = CollectorRegistry()
    tally = CounterTally("x_total", "X.", ["a", "b"], registry=registry)
    spread = HistogramTally("y", "Y.", ["a"], BUCKETS, registry=registry)
    with pytest.raises(ValueError, match="takes 2 label values"):
        tally.inc(("only",))
    with pytest.raises(ValueError, match="takes 1 label values"):
        spread.observe(("a", "b"), 1.0)
    with pytest.raises(ValueError, match="increasing order"):
        HistogramTally("z", "Z.", [], (1.0, 0.5), registry=registry)
    with pytest.raises(ValueError, match="at least one bucket"):
        HistogramTally("w", "W.", [], (math.inf,), registry=registry)
    with pytest.raises(ValueError, match="non-negative"):
        tally.inc(("a", "b"), -1)
    assert [s for family in (*tally.collect(), *spread.collect()) for s in family.samples] == []  # nothing kept


def test_counts_from_many_threads_are_all_kept() -> None:
    registry = CollectorRegistry()
    tally = CounterTally("x_total", "X.", ["a"], registry=registry)
    spread = HistogramTally("y", "Y.", ["a"], BUCKETS, registry=registry)

    def count() -> None:
        for n in range(20_000):
            tally.inc((str(n % 3),))
            spread.observe((str(n % 3),), 0.002)

    threads = [threading.Thread(target=count) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(tally.value((str(n),)) for n in range(3)) == 80_000
    counts = {s.labels["a"]: s.value for family in spread.collect() for s in family.samples if s.name == "y_count"}
    assert sum(counts.values()) == 80_000
