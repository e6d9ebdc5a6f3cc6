"""The `iui status` report: the tools served, partitions, owners, epochs, pending counts and lag."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from config.settings import Settings

from ..redisio.client import RedisClient, Reply
from ..redisio.connection import array, integer, text
from ..redisio.keys import GROUP, Keys
from ..wire.names import served_tools


def deployment_report(redis: RedisClient, settings: Settings) -> dict[str, Any]:
    """The deployment as data: meta, live workers and one row per partition (what `--json` prints).

    A partition row holds `partition`, `owner` and `epoch` (null when unowned or never owned),
    `ttl_ms` (null without a lease), `pending` and `lag` (null when Redis cannot tell).
    `streaming` and `tools` are what the workers advertise in `{prefix}:meta` (null before any did).
    """
    keys = Keys(settings.key_prefix)
    meta = {text(k): text(v) for k, v in redis.hgetall(keys.meta).items()}
    seconds, micros = redis.time()
    now = int(seconds) * 1000 + int(micros) // 1000
    live = [text(m) for m in array(redis.zrangebyscore(keys.workers, now, "+inf"))]
    partitions = int(meta.get("partitions", settings.partitions))
    pipe = redis.pipeline(transaction=False)
    for p in range(partitions):
        pipe.hgetall(keys.lease(p))
        pipe.pttl(keys.lease(p))
        pipe.get(keys.epoch(p))
        pipe.xinfo_groups(keys.input(p))
    rows = pipe.execute(raise_on_error=False)
    report: list[dict[str, Any]] = []
    for p in range(partitions):
        lease, ttl, epoch, groups = rows[4 * p: 4 * p + 4]
        lease = {text(k): text(v) for k, v in lease.items()} if isinstance(lease, dict) else {}
        group: dict[Reply, Reply] = {}
        if isinstance(groups, list):
            group = next((g for g in groups if text(g["name"]) == GROUP), {})
        report.append({
            "partition": p, "owner": lease.get("owner"), "epoch": integer(epoch) if epoch else None,
            "ttl_ms": ttl if isinstance(ttl, int) and ttl > 0 else None,
            "pending": integer(group.get("pending") or 0),
            "lag": integer(group["lag"]) if group.get("lag") is not None else None,
        })
    streaming = meta["streaming"] == "1" if meta.get("streaming") in ("0", "1") else None
    return {
        "meta": {"partitions": int(meta["partitions"]) if "partitions" in meta else None,
                 "protocol": int(meta["protocol"]) if "protocol" in meta else None},
        "streaming": streaming,
        "tools": None if streaming is None else served_tools(streaming),
        "workers": live,
        "owned": sum(1 for row in report if row["owner"] is not None),
        "partitions": report,
    }


def deployment_status(redis: RedisClient, settings: Settings) -> Iterator[str]:
    """Lines describing the deployment (one per partition)."""
    report = deployment_report(redis, settings)
    meta, live = report["meta"], report["workers"]
    yield f"meta: partitions={_dash(meta['partitions'])} protocol={_dash(meta['protocol'])}"
    if report["streaming"] is None:
        yield "streaming: - (no worker has advertised its tools)"
    else:
        yield f"streaming: {'enabled' if report['streaming'] else 'disabled'}; tools: {', '.join(report['tools'])}"
    yield f"workers: {len(live)} live" + (f" ({', '.join(live)})" if live else "")
    yield f"{'partition':>9} {'owner':<20} {'epoch':>6} {'ttl_ms':>7} {'pending':>8} {'lag':>6}"
    for row in report["partitions"]:
        yield (f"{row['partition']:>9} {_dash(row['owner']):<20} {_dash(row['epoch']):>6} {_dash(row['ttl_ms']):>7} "
               f"{row['pending']:>8} {_dash(row['lag']):>6}")


def _dash(value: Any) -> str:
    return "-" if value is None else str(value)
