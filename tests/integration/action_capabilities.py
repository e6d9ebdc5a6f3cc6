"""Capabilities of the action tests (named by the test catalog, run by real `rq worker` processes)."""

from __future__ import annotations

import os
import time
from typing import Annotated, Any

import redis
from pydantic import Field
from rq.timeouts import JobTimeoutException

from config.capabilities import CapabilityContext
from workers.actions.capabilities.files import CapabilityError

STOPS: dict[str, type[BaseException]] = {"timeout": JobTimeoutException, "exit": SystemExit,
                                         "interrupt": KeyboardInterrupt}


def noop(value: int = 0) -> dict[str, Any]:
    """Returns its argument, and a private field that must never reach a receipt."""
    return {"value": value, "private": "never public"}


def count_and_sleep(key: Annotated[str, Field(min_length=1, max_length=64)], seconds: float) -> dict[str, Any]:
    """Increments a counter in the test's Redis (the side effect), then sleeps."""
    client = redis.Redis.from_url(os.environ["IUI_REDIS_URL"])
    try:
        count = int(client.incr(f"test:side-effect:{key}"))
    finally:
        client.close()
    time.sleep(seconds)
    return {"count": count}


def bad_result(value: int = 0) -> dict[str, Any]:
    """Returns a public field that is not a scalar: the operation must end `failed`."""
    return {"value": {"nested": value}}


def explode(value: int = 0) -> dict[str, Any]:
    """Raises: the operation must end `failed` with the exception's type only."""
    raise RuntimeError("secret detail that must not be echoed")


def write_then_sleep(name: Annotated[str, Field(pattern=r"^[a-z0-9-]{1,32}$")], seconds: float, *,
                     context: CapabilityContext) -> dict[str, Any]:
    """Writes `<files root>/<name>` (the side effect), then sleeps."""
    (context.files_root / name).write_text("written", "utf-8")
    time.sleep(seconds)
    return {"count": 1}


def write_then_stop(name: Annotated[str, Field(pattern=r"^[a-z0-9-]{1,32}$")], *,
                    context: CapabilityContext) -> dict[str, Any]:
    """Writes `<files root>/<name>`, then is stopped from outside as `name` says: RQ's job
    timeout (raised in this frame, as RQ's SIGALRM handler does), SystemExit or KeyboardInterrupt."""
    (context.files_root / name).write_text("written", "utf-8")
    raise STOPS[name.split("-")[0]]("stopped")


def huge_result(value: int = 0) -> dict[str, Any]:
    """A public result of ~100 KB: over the protocol's 32 KiB, and over a report entry's 64 KiB."""
    return {"value": "x" * 100_000}


def long_error(value: int = 0) -> dict[str, Any]:
    """A capability error whose message is 40,000 emoji (160 KB, 80,000 UTF-16 units)."""
    raise CapabilityError("too_long", "\U0001F600" * 40_000)
