"""What an acknowledged call survives: the deployment's durability mode (`IUI_DURABILITY`).

- `fast`: a reply is sent once Redis ran the commit in memory.  A Redis crash loses what
  its persistence had not written yet: with `appendfsync everysec`, up to about 2 s of
  acknowledged calls (Redis 7.0 postpones an AOF write for up to 2 s while a background fsync
  runs, and still answers).  Exactly-once holds: nothing is applied twice or out of order.
- `local`: every master must run `appendonly yes` with `appendfsync always`, checked by every
  worker at start and again every `CHECK_EVERY_S`; a worker refuses to serve otherwise.  Redis
  then writes and fsyncs the AOF before it sends any reply of the same event-loop pass, so a
  reply (read by another client's BLMOVE) is only ever seen once its commit is on disk.
- `replica:N`: a reply counts as acknowledged only once N replicas hold its commit.  The
  reader confirms it with `WAIT N timeout` on the connection that read the reply: that read
  (`BLMOVE key key ...`, a rotation Redis propagates as a write) comes after the commit in the
  replication stream, so WAIT covers the commit.  The reply stays in Redis until then.

The mode is a property of the deployment, like P: the first worker writes it to
`{prefix}:meta` (`durability`), every worker refuses a mismatch, and clients read it there.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .client import RedisClient, ServerClient
from .connection import is_cluster, is_refused, text

CHECK_EVERY_S = 5.0  # a `local` worker checks the servers' fsync policy at most this often


class Mode(enum.StrEnum):
    """The three durability modes."""

    FAST = "fast"
    LOCAL = "local"
    REPLICA = "replica"


class DurabilityUnmet(Exception):
    """The Redis servers cannot keep the configured durability promise; the message says why."""


@dataclass(frozen=True, slots=True)
class Durability:
    """A durability mode, with the replicas and the wait of `replica` mode."""

    mode: Mode = Mode.FAST
    replicas: int = 0
    timeout_ms: int = 1_000

    @classmethod
    def of(cls, mode: str, replicas: int, timeout_ms: int) -> Durability:
        """The durability of the settings (`replicas` counts only in `replica` mode)."""
        kind = Mode(mode)
        return cls(kind, replicas if kind is Mode.REPLICA else 0, timeout_ms)

    @classmethod
    def parse(cls, value: str, timeout_ms: int = 1_000) -> Durability:
        """The durability a `{prefix}:meta` value names (`fast`, `local`, `replica:<N>`); ValueError otherwise."""
        name, _, count = value.partition(":")
        kind = Mode(name)
        if kind is Mode.REPLICA:
            if not count.isdigit() or not 1 <= int(count) <= 64:
                raise ValueError("replica durability needs 1-64 replicas")
            return cls(kind, int(count), timeout_ms)
        if count:
            raise ValueError(f"{kind} durability takes no replica count")
        return cls(kind, 0, timeout_ms)

    @property
    def meta(self) -> str:
        """The `{prefix}:meta` value of this durability."""
        return f"replica:{self.replicas}" if self.mode is Mode.REPLICA else str(self.mode)


def check_server(redis: RedisClient) -> None:
    """Raise `DurabilityUnmet` unless every master appends and fsyncs every write (`local`)."""
    for where, config in _configs(redis):
        appendonly, appendfsync = config.get("appendonly", ""), config.get("appendfsync", "")
        if appendonly != "yes" or appendfsync != "always":
            raise DurabilityUnmet(
                f"IUI_DURABILITY=local needs appendonly yes and appendfsync always on every Redis master; "
                f"{where} has appendonly {appendonly or '?'}, appendfsync {appendfsync or '?'} "
                f"(or set IUI_DURABILITY=fast and accept losing recent acknowledged calls on a Redis crash)")


def _configs(redis: RedisClient) -> list[tuple[str, dict[str, str]]]:
    """(server name, {appendonly, appendfsync}) of every master the client reaches."""
    try:
        if is_cluster(redis):
            return [(node.name, _config(redis.get_redis_connection(node))) for node in redis.get_primaries()]
        return [("the Redis server", _config(redis))]
    except Exception as error:
        if is_refused(error):
            raise DurabilityUnmet("IUI_DURABILITY=local needs CONFIG GET (appendonly, appendfsync): the Redis "
                                  "user of the workers may not run it (ACL: +config|get)") from None
        raise


def _config(client: ServerClient) -> dict[str, str]:
    reply = client.config_get("append*")
    return {text(key): text(value) for key, value in reply.items()}
