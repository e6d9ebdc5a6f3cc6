"""The reference pages built from the code: settings, error codes and metrics."""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen
from prometheus_client import CollectorRegistry
from prometheus_client.metrics import MetricWrapperBase
from pydantic.fields import FieldInfo

from config.settings import ENV_PREFIX, Settings
from gateway.metrics import GatewayMetrics
from workers.observability.metrics import Metrics
from workers.observability.tally import Tally
from workers.wire.errors import REJECTION_CODES, ErrorCode

from .markdown import code, page, table
from .source import attribute_docstrings, shown_path

# ---------------------------------------------------------------------------------------------- settings


def settings_page() -> str:
    """Every field of `config.settings.Settings`: name, variable, default, bounds and description."""
    rows = [(code(name), code(ENV_PREFIX + name.upper()), _default(field.default), _bounds(field),
             field.description or "") for name, field in Settings.model_fields.items()]
    intro = ("Every setting is an environment variable (prefix `IUI_`); `iui` options override them. "
             "How to set them, and what an invalid value does: [Configuration](../configuration.md).")
    return page("Settings", "config/settings.py", intro,
                table(("setting", "variable", "default", "bounds", "description"), rows))


def _default(value: Any) -> str:
    if value is None:
        return "unset"
    if value == "":
        return "empty"
    if isinstance(value, bool):
        return code(str(value).lower())
    if isinstance(value, Path):
        return code(shown_path(value))
    if isinstance(value, float) and value.is_integer():
        return code(int(value))
    return code(value)


def _bounds(field: FieldInfo) -> str:
    choices = typing.get_args(field.annotation) if typing.get_origin(field.annotation) is typing.Literal else ()
    if choices:
        return ", ".join(code(choice) for choice in choices)
    if field.annotation is bool:
        return "`true`, `false`"
    return "; ".join(_constraints(field.metadata)) or "—"


def _constraints(metadata: list[Any]) -> Iterator[str]:
    low = next((m.ge for m in metadata if isinstance(m, Ge)), None)
    high = next((m.le for m in metadata if isinstance(m, Le)), None)
    if low is not None and high is not None:
        yield f"{_number(low)}–{_number(high)}"
    else:
        lower = [f"≥ {_number(low)}"] if low is not None else [f"> {_number(m.gt)}" for m in metadata
                                                              if isinstance(m, Gt)]
        upper = [f"≤ {_number(high)}"] if high is not None else [f"< {_number(m.lt)}" for m in metadata
                                                                 if isinstance(m, Lt)]
        if lower or upper:
            yield ", ".join((*lower, *upper))
    shortest = next((m.min_length for m in metadata if isinstance(m, MinLen)), None)
    longest = next((m.max_length for m in metadata if isinstance(m, MaxLen)), None)
    if longest is not None:
        yield f"length {shortest}–{_number(longest)}" if shortest else f"length ≤ {_number(longest)}"
    elif shortest:
        yield f"length ≥ {shortest}"
    yield from (code(m.pattern) for m in metadata if getattr(m, "pattern", None))


def _number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


# ------------------------------------------------------------------------------------------- error codes


def error_codes_page() -> str:
    """Every `workers.wire.errors.ErrorCode` with its meaning, in the enum's order."""
    meanings = attribute_docstrings(ErrorCode)
    rows = [(code(member.value), meanings.get(member.name, "")) for member in ErrorCode]
    intro = ("Every error reply carries one of these codes (`{\"ok\": false, \"error\": {\"code\", \"message\", "
             "\"issues\"?}}`, see [the wire contract](../wire.md#replies)); each is also a value of the `reason` "
             "label of `iui_rejections_total`, exported at 0 from start-up. `issues` (at most 10) carry "
             "[core's issue codes](issue-codes.md).")
    return page("Error codes", "workers/wire/errors.py", intro, table(("code", "meaning"), rows))


# ----------------------------------------------------------------------------------------------- metrics

_COLLECTORS = ("`process_*`, `python_info` and `python_gc_*` come from the client library's process, platform "
               "and GC collectors, registered on the same registry (the gateway registers the process collector).")


def metrics_page() -> str:
    """Every `iui_*` metric of a fresh worker `Metrics` and gateway `GatewayMetrics`: name, type, labels, help."""
    intro = ("Every `iui worker` with `--metrics-port` serves the worker's metrics, every `iui gateway` the "
             "gateway's; labels never carry session or request ids. Labels with known values list the values "
             "exported at 0 from start-up. Each counter and histogram series also has prometheus-client's "
             "`_created` series (when it was created, a Unix time), which Prometheus stores as a gauge; "
             "`PROMETHEUS_DISABLE_CREATED_SERIES=true` in a process's environment drops them (about half the "
             "series). What to watch and alert on: [Operations](../operations.md#metrics).")
    return page("Metrics", "workers/observability/metrics.py and gateway/metrics.py", intro,
                "## Worker", _metrics_table(Metrics), _COLLECTORS,
                "## Gateway", _metrics_table(GatewayMetrics))


def _metrics_table(kind_of_metrics: Callable[..., object]) -> str:
    registry = CollectorRegistry()
    metrics = kind_of_metrics(registry=registry)
    families = {family.name: family for family in registry.collect()}
    rows = []
    for metric in vars(metrics).values():
        if isinstance(metric, MetricWrapperBase):
            # prometheus_client keeps a metric's declaration on the wrapper only (a family without a child
            # yet has no sample to read its label names from).
            name, kind, labels, help_text = metric._name, metric._type, metric._labelnames, metric._documentation
        elif isinstance(metric, Tally):  # workers/observability/tally.py
            declared = metric.declaration
            name, kind, labels, help_text = declared.name, declared.kind, declared.labelnames, declared.documentation
        else:
            continue
        # a gauge's values are its state (the build, the partitions held), not label values known in advance
        exported = _exported_values(families.get(name)) if kind != "gauge" else {}
        shown = ", ".join(code(label) + _known(exported.get(label, [])) for label in labels) or "—"
        rows.append((code(name + ("_total" if kind == "counter" else "")), kind, shown, help_text))
    return table(("metric", "type", "labels (values exported from start-up)", "help"), sorted(rows))


def _exported_values(family: Any) -> dict[str, list[str]]:
    values: dict[str, dict[str, None]] = {}
    for sample in family.samples if family is not None else ():
        for label, value in sample.labels.items():
            values.setdefault(label, {})[value] = None
    return {label: list(seen) for label, seen in values.items()}


def _known(values: list[str]) -> str:
    if not values:
        return ""
    if values == list(REJECTION_CODES):
        return " (every [error code](error-codes.md))"
    return " (" + ", ".join(code(v) for v in values) + ")"
