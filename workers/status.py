"""The `iui status` report: partitions, owners, epochs, pending counts and lag."""

from __future__ import annotations

from typing import Any, Iterator

from config.settings import Settings

from .keys import GROUP, Keys


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def deployment_status(redis: Any, settings: Settings) -> Iterator[str]:
    """Lines describing the deployment (one per partition)."""
    keys = Keys(settings.key_prefix)
    meta = {_text(k): _text(v) for k, v in redis.hgetall(keys.meta).items()}
    seconds, micros = redis.time()
    now = int(seconds) * 1000 + int(micros) // 1000
    live = [_text(m) for m in redis.zrangebyscore(keys.workers, now, "+inf")]
    yield f"meta: partitions={meta.get('partitions', '-')} protocol={meta.get('protocol', '-')}"
    yield f"workers: {len(live)} live" + (f" ({', '.join(live)})" if live else "")
    partitions = int(meta.get("partitions", settings.partitions))
    pipe = redis.pipeline(transaction=False)
    for p in range(partitions):
        pipe.hgetall(keys.lease(p))
        pipe.pttl(keys.lease(p))
        pipe.get(keys.epoch(p))
        pipe.xinfo_groups(keys.input(p))
    rows = pipe.execute(raise_on_error=False)
    yield f"{'partition':>9} {'owner':<20} {'epoch':>6} {'ttl_ms':>7} {'pending':>8} {'lag':>6}"
    for p in range(partitions):
        lease, ttl, epoch, groups = rows[4 * p: 4 * p + 4]
        lease = {_text(k): _text(v) for k, v in lease.items()} if isinstance(lease, dict) else {}
        group = next((g for g in groups if _text(g["name"]) == GROUP), {}) if isinstance(groups, list) else {}
        yield (f"{p:>9} {lease.get('owner', '-'):<20} {_text(epoch) if epoch else '-':>6} "
               f"{ttl if isinstance(ttl, int) and ttl > 0 else '-':>7} {group.get('pending', 0):>8} "
               f"{group.get('lag', 0) if group.get('lag') is not None else '-':>6}")
