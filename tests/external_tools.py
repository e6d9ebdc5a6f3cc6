"""External tools that some tests run (Compose, hadolint, promtool, Node packages).

Where a tool is missing its tests skip with the install hint, except in CI (`CI` set to true, as
.ci/run runs): CI installs every tool, so a missing one there is a failure, never a silent skip.
"""

from __future__ import annotations

import os

import pytest


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
