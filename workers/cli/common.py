"""What every `iui` subcommand shares: its one-line error, its settings and its Redis client."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from config.settings import Settings, SettingsError, load_settings

if TYPE_CHECKING:  # imported where used: each subcommand loads only what it runs
    from ..client.client import Client
    from ..redisio.client import RedisClient

_SETTING_OPTIONS = ("redis_url", "key_prefix", "partitions", "lease_ttl_ms", "lease_renew_ms",
                    "metrics_port", "metrics_addr", "log_level", "max_document_bytes", "worker_id",
                    "gateway_host", "gateway_port")
_FLAGS = {"gateway_host": "--host", "gateway_port": "--port"}  # options not named after their setting
REPLY_BOUND_S = 5.0  # connect and non-blocking replies of client commands, at most their own timeout


class CommandError(Exception):
    """A one-line failure of a subcommand, with its exit status."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def _settings(args: argparse.Namespace, **extra: Any) -> Settings:
    given = {name: getattr(args, name, None) for name in _SETTING_OPTIONS}
    overrides = {**given, **{k: v for k, v in extra.items() if given.get(k) is None}}
    try:
        return load_settings(**overrides)
    except SettingsError as error:
        # A value typed on the command line is blamed as the option the user typed, not only as its variable.
        if error.field is not None and given.get(error.field) is not None:
            option = _FLAGS.get(error.field) or "--" + error.field.replace("_", "-")
            raise SettingsError(f"invalid {option} ({error.variable}): {error.reason}", field=error.field,
                                reason=error.reason) from None
        raise


def _redis(settings: Settings, timeout: float, *, blocking: float = 0.0) -> RedisClient:
    """A client whose connect and replies fail within `timeout` (+ `blocking` for BLPOP), never retried."""
    from ..redisio.connection import connect_within

    return connect_within(settings.redis_url, timeout, blocking=blocking)


def _client(settings: Settings, timeout: float, *, blocking: float = 0.0) -> Client:
    from ..client.client import Client

    return Client(redis=_redis(settings, timeout, blocking=blocking), prefix=settings.key_prefix)
