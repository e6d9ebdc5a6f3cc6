"""`workers.wire.entry.json_integer`: the one reading of an integer argument, for the stream tools'
cursors and the view-state PUT's `expected_revision`."""

from __future__ import annotations

import math

from workers.wire.entry import json_integer


def test_a_json_integer_is_an_integral_number_at_least_the_bound() -> None:
    assert [json_integer(value, 0) for value in (0, 0.0, -0.0, 7, 7.0, 2**53)] == [0, 0, 0, 7, 7, 2**53]
    assert json_integer(1, 1) == 1 and json_integer(0, 1) is None and json_integer(-1.0, 0) is None
    for value in (0.5, -0.5, True, False, "1", None, [1], {"n": 1}, math.inf, -math.inf, math.nan):
        assert json_integer(value, 0) is None, value
