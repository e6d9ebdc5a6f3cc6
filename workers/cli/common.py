"""What every `iui` subcommand shares: its one-line error, its settings and its Redis client."""

from __future__ import annotations

import argparse
import contextlib
import errno
import signal
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from config.settings import ENV_PREFIX, Settings, SettingsError, load_settings

if TYPE_CHECKING:  # imported where used: each subcommand loads only what it runs
    from ..client.client import Client
    from ..redisio.client import RedisClient

_SETTING_OPTIONS = ("redis_url", "key_prefix", "partitions", "lease_ttl_ms", "lease_renew_ms",
                    "metrics_port", "metrics_addr", "log_level", "max_document_bytes", "worker_id",
                    "gateway_host", "gateway_port")
_FLAGS = {"gateway_host": "--host", "gateway_port": "--port"}  # options not named after their setting
REPLY_BOUND_S = 5.0  # connect and non-blocking replies of client commands, at most their own timeout
OVERRUN_S = 0.25  # `within`: past the command's own deadline, which fires first when Redis answers


class CommandError(Exception):
    """A one-line failure of a subcommand, with its exit status."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def unlistenable(args: argparse.Namespace, settings: Settings, error: OSError, doing: str,
                 fields: tuple[str, str]) -> SettingsError:
    """The one-line error of an address (`fields`: its host and port settings) that cannot be listened
    on: blaming the host when it does not resolve or is not this machine's, else the port (in use,
    privileged)."""
    host, port = (getattr(settings, field) for field in fields)
    address = isinstance(error, socket.gaierror) or error.errno == errno.EADDRNOTAVAIL
    reason = f"cannot {doing} on {host} port {port}: " + (error.strerror or type(error).__name__)
    return setting_error(args, fields[0] if address else fields[1], reason)


@contextlib.contextmanager
def within(seconds: float, settings: Settings) -> Iterator[None]:
    """A command that waits on a reply ends by `seconds` (+ OVERRUN_S) even when Redis accepts the
    connection and never answers: every read is bounded, but a read bound that admits a blocking
    reply would let each non-blocking one wait as long (the main thread's timer; the CLI's only)."""
    from ..redisio.connection import no_answer

    def expired(signum: int, frame: object) -> None:
        raise CommandError(str(no_answer(settings.redis_url)))

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds + OVERRUN_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _settings(args: argparse.Namespace, **extra: Any) -> Settings:
    given = {name: getattr(args, name, None) for name in _SETTING_OPTIONS}
    overrides = {**given, **{k: v for k, v in extra.items() if given.get(k) is None}}
    try:
        return load_settings(**overrides)
    except SettingsError as error:
        if error.field is not None and given.get(error.field) is not None:
            raise setting_error(args, error.field, error.reason) from None
        raise


def setting_error(args: argparse.Namespace, field: str, reason: str) -> SettingsError:
    """The one-line error blaming setting `field`: as the option the user typed when it was given on
    the command line (`invalid --metrics-port (IUI_METRICS_PORT): ...`), else as its variable."""
    error = SettingsError(f"invalid setting {ENV_PREFIX}{field.upper()}: {reason}", field=field, reason=reason)
    if getattr(args, field, None) is None:
        return error
    option = _FLAGS.get(field) or "--" + field.replace("_", "-")
    return SettingsError(f"invalid {option} ({error.variable}): {reason}", field=field, reason=reason)


def _redis(settings: Settings, timeout: float, *, blocking: float = 0.0) -> RedisClient:
    """A client whose connect and replies fail within `timeout` (+ `blocking` for BLPOP), never retried."""
    from ..redisio.connection import connect_within

    return connect_within(settings.redis_url, timeout, blocking=blocking)


def _client(settings: Settings, timeout: float, *, blocking: float = 0.0) -> Client:
    from ..client.client import Client

    # The partition count only when it was given (`--partitions`, IUI_PARTITIONS): the client then
    # refuses a deployment of another count, and can address one whose meta no worker wrote yet.
    given = settings.partitions if "partitions" in settings.model_fields_set else None
    return Client(redis=_redis(settings, timeout, blocking=blocking), prefix=settings.key_prefix, partitions=given)
