"""Prometheus metrics of a gateway process (registered on an explicit registry; no session ids as labels)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector

_SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 30.0)
EVENT_TYPES = ("frame", "receipt", "answer", "resync")
RESYNC_REASONS = ("expired", "epoch", "ahead", "slow_reader")
# requests the application refused (a token, a role, a missing or foreign thing, a body too large,
# backpressure) or gave up on (no reply in time): `iui_gateway_refused_total`
REFUSED_CODES = ("unauthorized", "forbidden", "not_found", "payload_too_large", "backpressure", "timeout")
# bytes that are not HTTP/1.1; a request not read in time; one past IUI_GATEWAY_MAX_CONNECTIONS
PROTOCOL_REFUSALS = ("bad_request", "request_timeout", "headers_too_large", "overloaded")
SERVER_ERRORS = ("503", "504")  # what the gateway answers when it cannot (an unexpected error is a 503 too)


class GatewayMetrics:
    """Every metric a gateway exports."""

    def __init__(self, *, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.requests = Counter("iui_gateway_requests_total", "HTTP requests by route and status.",
                                ["route", "status"], registry=registry)
        self.latency = Histogram("iui_gateway_request_seconds", "Time to answer an HTTP request (not streams).",
                                 ["route"], buckets=_SECONDS, registry=registry)
        self.streams = Gauge("iui_gateway_streams", "Open event streams (native and AG-UI).", registry=registry)
        self.events = Counter("iui_gateway_events_total", "Events sent on event streams.", ["type"],
                              registry=registry)
        self.resyncs = Counter("iui_gateway_resyncs_total", "resync events sent, by reason.", ["reason"],
                               registry=registry)
        self.stalled_streams = Counter(
            "iui_gateway_stalled_streams_total",
            "Event streams ended because their client took no bytes for IUI_GATEWAY_SEND_TIMEOUT_S.",
            registry=registry)
        self.reconnects = Counter("iui_gateway_subscription_reconnects_total",
                                  "Times the pub/sub subscription was (re)established.", registry=registry)
        self.refused = Counter("iui_gateway_refused_total",
                               "Requests refused (a token, a role, a missing or foreign path, session or "
                               "operation, a body too large, backpressure) or answered timeout, by code.",
                               ["code"], registry=registry)
        self.protocol_refused = Counter(
            "iui_gateway_protocol_refused_total",
            "Requests the HTTP protocol answered itself, before the application read them, by code.",
            ["code"], registry=registry)
        self.connections = Gauge("iui_gateway_connections",
                                 "Open client connections (event streams and kept-alive ones included).",
                                 registry=registry)
        self.connection_limit = Gauge("iui_gateway_connection_limit",
                                      "Client connections held before requests are refused overloaded.",
                                      registry=registry)
        self.full_collections = Histogram(
            "iui_gateway_full_collection_seconds",
            "Whole-heap garbage collections of the heap policy (IUI_GC_FREEZE_S), each a pause of every stream.",
            buckets=_SECONDS, registry=registry)
        ProcessCollector(registry=registry)
        for kind in EVENT_TYPES:
            self.events.labels(kind)
        for reason in RESYNC_REASONS:
            self.resyncs.labels(reason)
        for code in REFUSED_CODES:
            self.refused.labels(code)
        for code in PROTOCOL_REFUSALS:
            self.protocol_refused.labels(code)

    def declare_routes(self, routes: Iterable[str]) -> None:
        """Export 0 for each route's server errors from start-up: a route's first 503 or 504 is then an
        `increase()` IUIGatewayErrors sees, not a series appearing at 1 (a quiet gateway's failures)."""
        for route in routes:
            for status in SERVER_ERRORS:
                self.requests.labels(route, status)

    def watch_connections(self, count: Callable[[], int], limit: int) -> None:
        """Export the server's open connections (read at each scrape) and its connection limit."""
        self.connections.set_function(count)
        self.connection_limit.set(limit)

    def refused_by_protocol(self, code: str) -> None:
        """Count a request the HTTP protocol refused (`gateway.protocol`): the application never saw it."""
        self.protocol_refused.labels(code).inc()
