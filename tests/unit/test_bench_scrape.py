"""The benchmarks read `/metrics` with prometheus-client's parser (`bench.scrape`), not by matching
lines: a counter's family drops its `_total`, a histogram's samples are its `_count` and `_sum`."""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from bench.scrape import rss_kib, samples


def test_samples_of_a_gauge_a_counter_and_a_histogram_by_name() -> None:
    registry = CollectorRegistry()
    Gauge("iui_gateway_streams", "open streams", registry=registry).set(3)
    Counter("iui_leases_lost_total", "leases lost", registry=registry).inc(2)
    Histogram("iui_gateway_full_collection_seconds", "pauses", registry=registry).observe(0.25)
    Gauge("iui_labelled", "by kind", ["kind"], registry=registry).labels("a").set(9)
    text = generate_latest(registry).decode()
    assert samples(text, "iui_gateway_streams") == {"iui_gateway_streams": 3.0}
    assert samples(text, "iui_leases_lost")["iui_leases_lost_total"] == 2.0
    histogram = samples(text, "iui_gateway_full_collection_seconds")
    assert histogram["iui_gateway_full_collection_seconds_count"] == 1.0
    assert histogram["iui_gateway_full_collection_seconds_sum"] == 0.25
    assert samples(text, "iui_labelled") == {} and samples(text, "iui_absent") == {}
    assert samples("", "iui_gateway_streams") == {}


def test_the_resident_set_of_this_process() -> None:
    assert rss_kib(os.getpid()) > 1024
