"""The machine-slowdown probe of `bench workers` and `bench stalls`: how slowed units are joined."""

from __future__ import annotations

import time

from bench.stalls import NONE, Slowdowns, StallProbe, slowdowns

UNIT = 0.0001  # the usual CPU seconds of one unit


def units(*cpu: float, every: float = 0.002) -> list[tuple[float, ...]]:
    """Units started `every` seconds apart, each lasting its CPU time."""
    return [(i * every, i * every + c, c) for i, c in enumerate(cpu)]


def test_a_run_at_the_usual_speed_has_no_slowdown() -> None:
    assert slowdowns(units(*[UNIT] * 50)) == Slowdowns(0, 0.0, 0.0, 49 * 0.002 + UNIT)


def test_slowed_units_closer_than_the_join_gap_form_one_slowdown_and_far_ones_another() -> None:
    cpu = [UNIT] * 20 + [0.003, 0.003, 0.003] + [UNIT] * 20 + [0.004] + [UNIT] * 20
    found = slowdowns(units(*cpu, every=0.004))
    assert found.count == 2
    assert round(found.longest_ms, 6) == round((2 * 0.004 + 0.003) * 1000, 6)  # first start to last end
    assert round(found.total_ms, 6) == 11 + 4  # the first slowdown, then one 4 ms unit


def test_a_unit_at_the_threshold_is_not_slowed_and_one_above_it_is() -> None:
    assert slowdowns(units(*[UNIT] * 30, 5 * UNIT)).count == 0
    assert slowdowns(units(*[UNIT] * 30, 5.01 * UNIT)).count == 1


def test_no_units_no_slowdowns_and_sums_add_up() -> None:
    assert slowdowns([]) == NONE
    assert Slowdowns(2, 10.0, 15.0, 8.0) + Slowdowns(1, 30.0, 30.0, 8.0) == Slowdowns(3, 30.0, 45.0, 16.0)


def test_the_probe_process_reports_the_block_it_covered() -> None:
    with StallProbe() as probe:
        time.sleep(0.3)
    assert 0.25 <= probe.slowdowns.seconds < 5.0
    assert probe.slowdowns.total_ms <= probe.slowdowns.seconds * 1000
