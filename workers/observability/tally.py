"""The hot path's metrics, kept as plain numbers and turned into metric families when scraped.

Every processed entry counts itself three times: its latency (`iui_processing_seconds`), its
(kind, tool, outcome) and, when it published a frame, the frame's type.  prometheus-client's
`Histogram.observe` and `Counter.inc` each take a lock per value they change and run a few
interpreted frames: ~3 µs of every entry, 3-5 % of a drained small call (benchmarks.md, the
fifteenth pass).  A tally instead adds to a row of numbers under one lock, and exports the
family prometheus-client's object would have exported (name, help, type, label values in the
order they were first used, buckets, and `_created` as prometheus-client's switch says, which
`PROMETHEUS_DISABLE_CREATED_SERIES` sets) when the registry collects it: the exposition, the
dashboards and the alerts see no difference.  Each tally registers itself on the registry it is
given, where the object it replaces was registered.
"""

from __future__ import annotations

import math
import threading
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from typing import Final, cast

import prometheus_client.metrics
from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

Labels = tuple[str, ...]
# A bucket's `le` label as prometheus-client writes it ("+Inf", "0.0005", "1e+06"); untyped upstream.
bucket_label = cast(Callable[[float], str], floatToGoString)


class Declaration:
    """What a tally declares (its family's name, without a counter's `_total`, as prometheus-client
    keeps it; its type, label names and help): the metrics reference page (docs/pages.py) reads it
    as it reads a prometheus-client object's."""

    __slots__ = ("documentation", "kind", "labelnames", "name")

    def __init__(self, name: str, kind: str, labelnames: Labels, documentation: str) -> None:
        self.name: Final = name
        self.kind: Final = kind
        self.labelnames: Final = labelnames
        self.documentation: Final = documentation


def created_series() -> bool:
    """Whether `_created` samples are exported: prometheus-client's own switch, which its objects
    read when collected (set from `PROMETHEUS_DISABLE_CREATED_SERIES` at import, changed by
    `disable_created_metrics()` / `enable_created_metrics()`)."""
    return bool(getattr(prometheus_client.metrics, "_use_created", True))


class Tally:
    """What both tallies keep: their declaration, their lock, and when each label values were first used."""

    def __init__(self, declaration: Declaration) -> None:
        self.declaration: Final = declaration
        self._lock = threading.Lock()
        self._created: dict[Labels, float] = {}

    def describe(self) -> Iterable[Metric]:
        """The family without samples (what the registry checks for name clashes)."""
        return [self._family()]

    def _family(self) -> Metric:
        raise NotImplementedError

    def _first_use(self, labels: Labels) -> None:
        """Record when `labels` were first used, once they are as many as the label names."""
        if len(labels) != len(self.declaration.labelnames):
            raise ValueError(f"{self.declaration.name} takes {len(self.declaration.labelnames)} label values")
        self._created[labels] = time.time()


class CounterTally(Tally):
    """A labelled counter: one number per label values, each with the time it was first used."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], *,
                 registry: CollectorRegistry) -> None:
        super().__init__(Declaration(name.removesuffix("_total"), "counter", tuple(labelnames), documentation))
        self._values: dict[Labels, float] = {}
        registry.register(self)

    def declare(self, labels: Labels) -> None:
        """Export `labels` from now on, at 0 until counted."""
        with self._lock:
            if labels not in self._values:
                self._declare(labels)

    def inc(self, labels: Labels, amount: float = 1.0) -> None:
        if amount < 0:  # as prometheus-client refuses it: a counter never goes down
            raise ValueError("a counter can only be incremented by a non-negative amount")
        with self._lock:
            if labels not in self._values:
                self._declare(labels)
            self._values[labels] += amount

    def value(self, labels: Labels) -> float:
        """The count of `labels` (0 for label values never used)."""
        with self._lock:
            return self._values.get(labels, 0.0)

    def _declare(self, labels: Labels) -> None:
        self._first_use(labels)
        self._values[labels] = 0.0

    def _family(self) -> CounterMetricFamily:
        declared = self.declaration
        return CounterMetricFamily(declared.name, declared.documentation, labels=declared.labelnames)

    def collect(self) -> Iterable[Metric]:
        family = self._family()
        created = created_series()
        with self._lock:  # a copy, so that no count waits for the samples to be built
            rows = [(labels, value, self._created[labels]) for labels, value in self._values.items()]
        for labels, value, at in rows:
            family.add_metric(labels, value, created=at if created else None)
        return [family]


class HistogramTally(Tally):
    """A labelled histogram: per label values, the count of each bucket, the sum and the creation time."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], buckets: Sequence[float], *,
                 registry: CollectorRegistry) -> None:
        bounds = [float(bound) for bound in buckets]
        if bounds != sorted(bounds) or any(math.isnan(bound) for bound in bounds):
            raise ValueError("the buckets must be in increasing order")
        if not bounds or bounds[-1] != math.inf:
            bounds.append(math.inf)
        if len(bounds) < 2:  # as prometheus-client: +Inf alone is no histogram
            raise ValueError("a histogram needs at least one bucket below +Inf")
        super().__init__(Declaration(name, "histogram", tuple(labelnames), documentation))
        self._bounds = bounds
        self._rows: dict[Labels, list[float]] = {}  # labels -> one count per bucket, then the sum
        registry.register(self)

    def declare(self, labels: Labels) -> None:
        """Export `labels` from now on, empty until observed."""
        with self._lock:
            if labels not in self._rows:
                self._declare(labels)

    def observe(self, labels: Labels, amount: float) -> None:
        """One observation: counted in the first bucket whose bound is at least `amount`, as
        prometheus-client counts it (a NaN in none, but in the sum)."""
        at = bisect_left(self._bounds, amount) if amount == amount else len(self._bounds)
        with self._lock:
            row = self._rows.get(labels)
            if row is None:
                row = self._declare(labels)
            if at < len(self._bounds):
                row[at] += 1
            row[-1] += amount

    def _declare(self, labels: Labels) -> list[float]:
        self._first_use(labels)
        row = self._rows[labels] = [0.0] * (len(self._bounds) + 1)
        return row

    def _family(self) -> HistogramMetricFamily:
        declared = self.declaration
        return HistogramMetricFamily(declared.name, declared.documentation, labels=declared.labelnames)

    def collect(self) -> Iterable[Metric]:
        family = self._family()
        with self._lock:  # a copy, so that no observation waits for the samples to be built
            rows = [(labels, list(row), self._created[labels]) for labels, row in self._rows.items()]
        created = created_series()
        for labels, row, at in rows:
            self._add(family, labels, row, at if created else None)
        return [family]

    def _add(self, family: HistogramMetricFamily, labels: Labels, row: list[float], created: float | None) -> None:
        """The samples of one label values: cumulative buckets, count, sum, then `_created` unless
        `created` is None (as prometheus-client's `Histogram` orders them)."""
        cumulative, buckets = 0.0, []
        for bound, count in zip(self._bounds, row, strict=False):
            cumulative += count
            buckets.append((bucket_label(bound), cumulative))
        family.add_metric(labels, buckets, row[-1])
        if created is not None:
            names = self.declaration.labelnames
            family.samples.append(Sample(self.declaration.name + "_created", dict(zip(names, labels, strict=True)),
                                         created))
