"""`python -m bench builds` drains a real worker of each build on its own redis-server."""

from __future__ import annotations

import sys

import pytest

from bench import builds


def test_one_round_of_one_build_prints_its_round_and_its_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert builds.main(["--python", f"here={sys.executable}", "--rounds", "1", "--sessions", "4",
                        "--per-session", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("round 1: here ")
    assert f"here ({builds.core_of(sys.executable)}, {sys.executable}): min " in out
    assert "median / here's 1.000" in out


def test_presubmitted_drains_say_so_and_drain_every_patch(capsys: pytest.CaptureFixture[str]) -> None:
    assert builds.main(["--python", f"here={sys.executable}", "--rounds", "1", "--sessions", "4",
                        "--per-session", "3", "--presubmitted"]) == 0
    out = capsys.readouterr().out
    assert "pre-submitted (the worker stopped meanwhile)" in out and "median / here's 1.000" in out
