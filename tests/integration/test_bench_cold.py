"""`python -m bench cold` drains real cold and warm sessions, by either ruler."""

from __future__ import annotations

import pytest

from bench import cold

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("ruler", [[], ["--presubmitted"]])
def test_a_cold_round_then_a_warm_one_print_their_rates_and_ratio(capsys: pytest.CaptureFixture[str],
                                                                    ruler: list[str]) -> None:
    assert cold.main(["--sessions", "3", "--repeat", "1", *ruler]) == 0
    out = capsys.readouterr().out
    assert out.startswith("run 1: cold ") and "cold/warm: min " in out and "(goal >= 0.7)" in out
