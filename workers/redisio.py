"""Redis connections and the translation of Redis errors (the one module that knows them)."""

from __future__ import annotations

import random
from typing import Any

import redis

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


def connect(url: str, **options: Any) -> redis.Redis:
    """A redis-py client for `url` (a connection pool, safe to share between threads)."""
    return redis.Redis.from_url(url, health_check_interval=30, socket_keepalive=True, **options)


def is_busy_group(error: BaseException) -> bool:
    """True for the BUSYGROUP reply of XGROUP CREATE on an existing group."""
    return isinstance(error, redis.ResponseError) and "BUSYGROUP" in str(error)
