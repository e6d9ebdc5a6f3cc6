"""External tools that some tests run (Compose, hadolint, promtool, Prometheus, Node packages).

Where a tool is missing its tests skip with the install hint, except in CI (`CI` set to true, as
.ci/run runs): CI installs every tool, so a missing one there is a failure, never a silent skip.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

Test = TypeVar("Test", bound=Callable[..., Any])


def in_ci() -> bool:
    """True when the suite runs in CI (the `CI` variable is 1, true or yes)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def require(available: bool, what: str) -> None:
    """Skip the calling test when `what` is not available; fail it instead in CI."""
    if available:
        return
    if in_ci():
        pytest.fail(f"{what} (CI installs it: see .ci/run)", pytrace=False)
    pytest.skip(what)


def needs(available: bool, what: str) -> Callable[[Test], Test]:
    """A test decorator: `require(available, what)` before the test body runs (its fixtures are kept)."""
    def decorate(test: Test) -> Test:
        @functools.wraps(test)
        def run(*args: Any, **kwargs: Any) -> Any:
            require(available, what)
            return test(*args, **kwargs)
        return run  # type: ignore[return-value]
    return decorate
