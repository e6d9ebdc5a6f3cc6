"""Prometheus metrics of a worker process, registered on an explicit `CollectorRegistry`.

Labels are low-cardinality only (kind, tool, outcome, reason, partition); session and
request ids never become labels.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Mapping
from importlib.metadata import PackageNotFoundError, version

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)

from core.remote.records import RECEIPT_STATUSES
from core.stream._checkpoint import FRAME_TYPES

from ..redisio.dead_letter import DEAD_LETTER_REASONS
from ..redisio.seal import SEAL_OUTCOMES
from ..wire.errors import REJECTION_CODES
from ..wire.names import ACTION_NAMES, ANSWER_TOOLS, RESULT_NAMES, TOOLS, VIEW_NAMES
from .tally import CounterTally, HistogramTally

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
_FRAME_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
_BYTE_BUCKETS = tuple(2 ** n for n in range(10, 25, 2))
_JOB_BUCKETS = (0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0)
DISTRIBUTION = "intelligent-ui-host"
# The names an entry of each kind of the wire contract may carry (its `tool` label; any other is "other").
_NAMES_OF_KIND: dict[str, tuple[str, ...]] = {
    "tool": (*TOOLS, *ANSWER_TOOLS), "action": ACTION_NAMES, "result": RESULT_NAMES, "view": VIEW_NAMES}
_KNOWN_NAMES = {kind: frozenset(names) for kind, names in _NAMES_OF_KIND.items()}
# The known label values, so every labelled counter exports 0 from start-up: a first dead letter
# or a first rejection of a reason is then an increase(), not a series appearing from nothing.
ENTRY_KINDS = (*_NAMES_OF_KIND, "other")
ENTRY_TOOLS = tuple(dict.fromkeys((*(name for names in _NAMES_OF_KIND.values() for name in names), "other")))
OUTCOMES = ("accepted", "resent", "rejected", "dead_letter")


def entry_label(fields: Mapping[str, str]) -> str:
    """The `tool` label of an entry: its tool, request or report name when known, else `other`."""
    name = fields.get("name", "")
    return name if name in _KNOWN_NAMES.get(fields.get("kind", ""), ()) else "other"


def entry_kind(fields: Mapping[str, str]) -> str:
    """The `kind` label of an entry: its kind when it is one of the wire contract's, else `other`."""
    kind = fields.get("kind", "")
    return kind if kind in _KNOWN_NAMES else "other"


def build_version() -> str:
    """The installed distribution's version (`unknown` when run from a tree that is not installed)."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


class Metrics:
    """Every metric the runtime exports."""

    def __init__(self, *, registry: CollectorRegistry) -> None:
        self.registry = registry
        # The three counts of every processed entry are tallies (workers/observability/tally.py).
        self.entries = CounterTally("iui_entries_processed_total", "Input entries processed.",
                                    ["kind", "tool", "outcome"], registry=registry)
        self.rejections = Counter("iui_rejections_total", "Rejected requests by reason.",
                                  ["reason"], registry=registry)
        self.latency = HistogramTally("iui_processing_seconds", "Time to validate and commit one entry.",
                                      ["tool"], _LATENCY_BUCKETS, registry=registry)
        self.frames = CounterTally("iui_frames_published_total", "Accepted frames published.",
                                   ["type"], registry=registry)
        self.generation_frames = Histogram("iui_generation_frames",
                                           "Frames used by a generation at its terminal frame.",
                                           buckets=_FRAME_BUCKETS, registry=registry)
        self.generation_bytes = Histogram("iui_generation_bytes",
                                          "Frame bytes used by a generation at its terminal frame.",
                                          buckets=_BYTE_BUCKETS, registry=registry)
        self.leases_held = Gauge("iui_leases_held", "Partition leases held by this process, not past their TTL.",
                                 registry=registry)
        self.leases_acquired = Counter("iui_leases_acquired_total", "Partition leases acquired.", registry=registry)
        self.leases_lost = Counter("iui_leases_lost_total", "Partition leases lost (fenced or expired).",
                                   registry=registry)
        self.leases_taken = Counter("iui_leases_taken_total",
                                    "Renewals that found another owner in a lease this process held (it "
                                    "stopped serving the partition at once).", registry=registry)
        self.leases_released = Counter("iui_leases_released_total", "Partition leases released on purpose.",
                                       registry=registry)
        self.lag = Gauge("iui_partition_lag",
                         "Entries not yet processed (undelivered plus pending) in an owned partition.",
                         ["partition"], registry=registry)
        self.dead_lettered = Counter("iui_dead_lettered_total", "Entries moved to a dead-letter stream.",
                                     ["reason"], registry=registry)
        self.redis_errors = Counter("iui_redis_errors_total", "Transient Redis errors retried.", registry=registry)
        self.partitions = Gauge("iui_partitions", "Configured partition count P (IUI_PARTITIONS).", registry=registry)
        self.build_info = Gauge("iui_build_info", "Always 1; the labels name the running build.",
                                ["version", "python"], registry=registry)
        self.build_info.labels(build_version(), platform.python_version()).set(1)
        # The action runtime (labels: capability ids of the admin catalog, or "agent"; statuses).
        self.receipts = Counter("iui_receipts_total", "Committed receipt changes by capability and new status.",
                                ["capability", "status"], registry=registry)
        self.job_seconds = Histogram("iui_job_seconds", "Time from running to the outcome of an operation.",
                                     ["capability"], buckets=_JOB_BUCKETS, registry=registry)
        self.unknown_outcomes = Counter("iui_unknown_outcomes_total",
                                        "Operations whose job was lost (status unknown, never re-executed).",
                                        ["capability"], registry=registry)
        self.confirmation_wait = Histogram("iui_confirmation_wait_seconds",
                                           "Time an operation waited for its approval or denial.",
                                           ["capability"], buckets=_JOB_BUCKETS, registry=registry)
        self.queued_oldest = Gauge("iui_operations_queued_oldest_seconds",
                                   "How long the oldest queued operation of an owned partition has waited for its "
                                   "job to start (0: none queued); RQ workers down or saturated make it grow.",
                                   ["partition"], registry=registry)
        self.jobs_enqueued = Counter("iui_jobs_enqueued_total", "RQ jobs enqueued (by the commit or the reaper).",
                                     ["capability"], registry=registry)
        self.state_reads = Counter("iui_state_reads_total",
                                   "Stored generations read for a session this process held nothing of, by what "
                                   "their seal proved: valid (restored), missing or invalid (validated in full).",
                                   ["seal"], registry=registry)
        self.snapshots_shared = Counter("iui_restored_snapshots_shared_total",
                                        "Cold sessions restored around a snapshot this process restored before for "
                                        "another session holding the same document (no parse of it).",
                                        registry=registry)
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)
        self._lease_counts: list[Callable[[], int]] = []
        self._initialise_labels()

    def count_entry(self, fields: Mapping[str, str], seconds: float, outcome: str) -> None:
        """One processed entry: its latency and its (kind, tool, outcome) count."""
        tool, kind = entry_label(fields), entry_kind(fields)
        self.latency.observe((tool,), seconds)
        self.entries.inc((kind, tool, outcome))

    def count_frame(self, frame_type: str) -> None:
        """One accepted frame of `frame_type` (a type outside the protocol's is labelled as given)."""
        self.frames.inc((frame_type,))

    def _initialise_labels(self) -> None:
        for kind in ENTRY_KINDS:
            for tool in ENTRY_TOOLS:
                for outcome in OUTCOMES:
                    self.entries.declare((kind, tool, outcome))
        for code in REJECTION_CODES:
            self.rejections.labels(code)
        for reason in DEAD_LETTER_REASONS:
            self.dead_lettered.labels(reason)
        for frame_type in FRAME_TYPES:
            self.frames.declare((frame_type,))
        for tool in ENTRY_TOOLS:
            self.latency.declare((tool,))
        self._state_reads_of = {outcome: self.state_reads.labels(outcome) for outcome in SEAL_OUTCOMES}

    def watch_leases(self, valid_leases: Callable[[], int]) -> None:
        """Export `iui_leases_held` as the sum of what each pool of this process counts valid at
        the scrape (a lease past its TTL while Redis is away is no longer held)."""
        self._lease_counts.append(valid_leases)
        counts = self._lease_counts
        self.leases_held.set_function(lambda: sum(count() for count in counts))

    def count_state_read(self, seal: str) -> None:
        """One stored generation read, with what its seal proved (`SEAL_OUTCOMES`)."""
        self._state_reads_of[seal].inc()

    def count_shared_snapshot(self) -> None:
        """One cold session restored around a shelved snapshot (workers/sessions/snapshots.py)."""
        self.snapshots_shared.inc()

    def initialise_capabilities(self, capability_ids: list[str]) -> None:
        """Export 0 for every capability of the catalog (and `none`) from start-up, so the first
        unknown outcome, receipt change, job or approval of one is an `increase()` the alert and the
        dashboards see, not a series appearing at 1."""
        for capability in (*capability_ids, "none"):
            self.unknown_outcomes.labels(capability)
            self.jobs_enqueued.labels(capability)
            self.job_seconds.labels(capability)
            self.confirmation_wait.labels(capability)
            for status in RECEIPT_STATUSES:
                if status != "accepted":  # an agent callback's alone
                    self.receipts.labels(capability, status)
        self.receipts.labels("agent", "accepted")

    def exposition(self) -> str:
        """The text exposition format of every metric."""
        return generate_latest(self.registry).decode("utf-8")
