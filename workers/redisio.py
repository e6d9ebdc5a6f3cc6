"""Redis connections and the translation of Redis errors (the one module that knows them)."""

from __future__ import annotations

import random
from typing import Any
from urllib.parse import urlsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

# Errors that mean "the server is not reachable right now": retry with backoff, never exit.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError, ConnectionError, OSError,
)


class Backoff:
    """Exponential back-off with jitter, reset after a success."""

    def __init__(self, *, first: float = 0.05, limit: float = 2.0) -> None:
        self._first = first
        self._limit = limit
        self._delay = first

    def next(self) -> float:
        """The next delay in seconds."""
        delay = self._delay
        self._delay = min(self._limit, self._delay * 2)
        return delay * (0.5 + random.random() / 2)

    def reset(self) -> None:
        """Back to the first delay."""
        self._delay = self._first


def text(value: Any) -> str:
    """A value of a Redis reply as text: bytes decoded as UTF-8 (bad bytes replaced), None as ""."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


class RedisUnavailable(Exception):
    """Redis could not be reached or did not answer in time; the message is one line."""


def connect(url: str, **options: Any) -> redis.Redis:
    """A redis-py client for `url` (a connection pool, safe to share between threads)."""
    return redis.Redis.from_url(url, health_check_interval=30, socket_keepalive=True, **options)


def connect_within(url: str, timeout: float, *, blocking: float = 0.0) -> redis.Redis:
    """A client whose connect and every reply are bounded by `timeout` seconds, never retried.

    `blocking` is the longest a command of the caller blocks on the server (BLPOP), added to the
    read bound, so a command-line tool fails at its own deadline rather than redis-py's default.
    """
    return connect(url, socket_connect_timeout=timeout, socket_timeout=blocking + timeout,
                   retry=Retry(NoBackoff(), 0), retry_on_timeout=False)


def unavailable(error: BaseException, url: str) -> RedisUnavailable | None:
    """The one-line translation of a connection or timeout error (never the URL's credentials)."""
    if not isinstance(error, TRANSIENT_ERRORS):
        return None
    parts = urlsplit(url)
    where = f"{parts.hostname or 'localhost'}:{parts.port or 6379}" if parts.scheme != "unix" else parts.path
    if isinstance(error, (redis.TimeoutError, TimeoutError)):
        return RedisUnavailable(f"Redis at {where} did not answer in time")
    reason = " ".join(str(error).split()) or type(error).__name__
    return RedisUnavailable(f"Redis at {where} is unreachable: {reason}")


def is_busy_group(error: BaseException) -> bool:
    """True for the BUSYGROUP reply of XGROUP CREATE on an existing group."""
    return isinstance(error, redis.ResponseError) and "BUSYGROUP" in str(error)


def is_no_script(result: object) -> bool:
    """True for the NOSCRIPT error of an EVALSHA whose script the server does not hold."""
    return isinstance(result, redis.exceptions.NoScriptError)
