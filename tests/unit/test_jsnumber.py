"""JavaScript number semantics: toFixed, the DSL's round and pow.

Expected texts in the tables were printed by Node.js (`x.toFixed(d)`, `a ** b`).  The
random checks compare against an independent exact oracle built on `decimal.Decimal`.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Context, Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import UIExpressionError
from core.json._number import js_number_string, js_pow, js_round, js_to_fixed

finite_floats = st.floats(allow_nan=False, allow_infinity=False)
near_ties = st.builds(lambda n, d: n / 10**d, st.integers(-(10**9), 10**9), st.integers(0, 8)).map(
    lambda x: x + 0.0
) | st.builds(lambda n, e: n / 2**e, st.integers(-(10**7), 10**7), st.integers(0, 14)).map(float)
_ORACLE_CONTEXT = Context(prec=1200)


def oracle_to_fixed(x: float, digits: int) -> str:
    """toFixed from the spec text, computed on the exact decimal expansion of the double."""
    if abs(x) >= 1e21:
        return js_number_string(x)
    exact = Decimal(x)  # every double has a finite decimal expansion
    rounded = exact.copy_abs().quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP, context=_ORACLE_CONTEXT)
    return ("-" if x < 0 else "") + f"{rounded:f}"


@pytest.mark.parametrize(
    ("x", "digits", "text"),
    [
        (1.005, 2, "1.00"),
        (1.255, 2, "1.25"),
        (10.235, 2, "10.23"),
        (8.345, 2, "8.35"),
        (1.45, 1, "1.4"),
        (2.5, 0, "3"),
        (-2.5, 0, "-3"),
        (1.5, 0, "2"),
        (0.5, 0, "1"),
        (-0.5, 0, "-1"),
        (-0.001, 2, "-0.00"),
        (-0.0, 2, "0.00"),
        (0, 0, "0"),
        (-1.5e-7, 6, "-0.000000"),
        (5e-324, 2, "0.00"),
        (123.456, 2, "123.46"),
        (0.000001, 7, "0.0000010"),
        (0.1, 20, "0.10000000000000000555"),
        (0.3, 17, "0.29999999999999999"),
        (999999999999999.9, 0, "1000000000000000"),
        (1.23e20, 2, "123000000000000000000.00"),
        (1e21, 2, "1e+21"),
        (-1e21, 2, "-1e+21"),
    ],
)
def test_to_fixed_prints_what_javascript_prints(x: float, digits: int, text: str) -> None:
    assert js_to_fixed(x, digits) == text


def test_to_fixed_of_non_finite_numbers_is_their_javascript_text() -> None:
    assert [js_to_fixed(v, 2) for v in (math.nan, math.inf, -math.inf)] == ["NaN", "Infinity", "-Infinity"]


@pytest.mark.parametrize("digits", [-1, 101, 2.5, True, "2", None, math.nan])
def test_to_fixed_rejects_digits_javascript_would_refuse(digits: object) -> None:
    with pytest.raises(UIExpressionError):
        js_to_fixed(1.5, digits)  # type: ignore[arg-type]


@settings(max_examples=400)
@given(x=finite_floats | near_ties, digits=st.integers(0, 100))
def test_to_fixed_matches_an_exact_decimal_oracle(x: float, digits: int) -> None:
    assert js_to_fixed(x, digits) == oracle_to_fixed(x, digits)


@pytest.mark.parametrize(
    ("x", "digits", "value"),
    [
        (2.5, 0, 3),
        (-2.5, 0, -3),
        (0.5, 0, 1),
        (-0.5, 0, -1),
        (1.005, 2, 1),
        (1.255, 2, 1.25),
        (123.456, 2, 123.46),
        (999999999999999.9, 0, 1e15),
        (7, 3, 7),
        (2.5, 0.0, 3),
    ],
)
def test_round_is_number_of_to_fixed(x: float, digits: int, value: float) -> None:
    assert js_round(x, digits) == value


def test_round_defaults_to_zero_digits() -> None:
    assert js_round(2.5) == 3


def test_round_returns_integral_values_as_int_so_they_serialize_like_javascript() -> None:
    assert type(js_round(2.4)) is int
    assert type(js_round(1.25, 1)) is float


@pytest.mark.parametrize(("x", "digits"), [(-0.001, 2), (-0.0, 2), (-1.5e-7, 6), (-0.4, 0)])
def test_round_never_yields_negative_zero(x: float, digits: int) -> None:
    result = js_round(x, digits)  # JS: Number("-0.00") is -0
    assert result == 0 and math.copysign(1, result) == 1


@pytest.mark.parametrize("digits", [-1, 7, 2.5, True, "2", None])
def test_round_accepts_only_zero_to_six_digits(digits: object) -> None:
    with pytest.raises(UIExpressionError):
        js_round(1.5, digits)  # type: ignore[arg-type]


@pytest.mark.parametrize("x", [math.nan, math.inf, -math.inf, True, "1", None])
def test_round_rejects_what_is_not_a_finite_number(x: object) -> None:
    with pytest.raises(UIExpressionError):
        js_round(x)  # type: ignore[arg-type]


@settings(max_examples=300)
@given(x=st.floats(-1e15, 1e15) | near_ties, digits=st.integers(0, 6))
def test_round_matches_the_oracle_text_parsed_as_a_number(x: float, digits: int) -> None:
    assert js_round(x, digits) == float(oracle_to_fixed(x, digits))


@pytest.mark.parametrize(
    ("a", "b", "value"),
    [
        (-8, 3, -512.0),
        (1, 1e300, 1.0),
        (0, 0, 1.0),
        (2, -1, 0.5),
        (4, 0.5, 2.0),
        (-3, 2, 9.0),
        (10, 15, 1e15),
        (10, -400, 0.0),
        (2.5, 2, 6.25),
    ],
)
def test_pow_follows_javascript_exponentiation(a: float, b: float, value: float) -> None:
    assert js_pow(a, b) == value


def test_pow_returns_floats_and_never_negative_zero() -> None:
    result = js_pow(-0.0, 3)  # JS: -0, whose String() is "0"
    assert type(result) is float and math.copysign(1, result) == 1


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (-8, 1 / 3),  # NaN in JS; Python would return a complex or raise ValueError
        (-1, 0.5),
        (0, -1),  # Infinity; Python raises ZeroDivisionError / ValueError
        (-0.0, -1),  # -Infinity
        (10, 16),  # beyond the 1e15 budget
        (-10, 15.0 + 2),
        (1e300, 2),  # overflows to Infinity
        (10, 400),  # Python raises OverflowError
        (2, 10**400),  # an int no double can hold
    ],
)
def test_pow_rejects_non_finite_or_out_of_budget_results(a: float, b: float) -> None:
    with pytest.raises(UIExpressionError):
        js_pow(a, b)


@pytest.mark.parametrize(("a", "b"), [(math.nan, 1), (1, math.inf), (True, 2), (2, None), ("2", 2)])
def test_pow_rejects_operands_that_are_not_finite_numbers(a: object, b: object) -> None:
    with pytest.raises(UIExpressionError):
        js_pow(a, b)  # type: ignore[arg-type]


@settings(max_examples=300)
@given(
    a=st.integers() | st.floats(allow_nan=True, allow_infinity=True),
    b=st.integers() | st.floats(allow_nan=True, allow_infinity=True),
)
def test_pow_raises_only_expression_errors_and_stays_in_budget(a: float, b: float) -> None:
    try:
        result = js_pow(a, b)
    except UIExpressionError:
        return
    assert type(result) is float and math.isfinite(result) and abs(result) <= 1e15


@settings(max_examples=200)
@given(a=st.integers(-30, 30), b=st.integers(0, 12))
def test_pow_of_small_integers_is_exact(a: int, b: int) -> None:
    if abs(a**b) > 1e15:
        return
    assert js_pow(a, b) == a**b


def _digits_text(x: float) -> str:
    """String(x) by the shortest-digits search alone (the general path, without the integral shortcut)."""
    from core.json._number import _shortest_digits

    if x == 0:
        return "0"
    if x < 0:
        return "-" + _digits_text(-x)
    digits, n = _shortest_digits(x)
    if len(digits) <= n <= 21:
        return digits + "0" * (n - len(digits))
    return js_number_string(x)  # not integral below 1e21: the shortcut does not apply


integral_floats = st.builds(lambda m, e, s: s * float(int(m * 2.0 ** (e - 53))),
                            st.integers(0, 2**53), st.integers(0, 75), st.sampled_from([1, -1]))


@settings(max_examples=3000)
@given(integral_floats | st.sampled_from([0.0, -0.0, 2.0**53, -(2.0**53), 2.0**53 + 2, 1e15, 1e16, 1e17, 1e20]))
def test_an_integral_float_prints_as_the_digit_search_prints_it(x: float) -> None:
    # Integral floats up to 2**53 print their own digits without the search; above, JS pads the
    # shortest digits with zeros (2**60 is "1152921504606847000", not its exact digits).
    assert js_number_string(x) == _digits_text(x)


@settings(max_examples=3000)
@given(st.floats(min_value=-1e15, max_value=1e15) | integral_floats.filter(lambda x: abs(x) <= 1e15)
       | st.floats(min_value=-1e-4, max_value=1e-4))
def test_the_byte_correction_of_a_float_is_its_texts_difference(x: float) -> None:
    # The safe-JSON walk takes most floats' correction (JS's text minus orjson's) as 0 without
    # printing either text: a body of 139,000 floats took the gateway 174 ms, now ~50 ms.
    import orjson

    from core.json.safe import _float_correction

    assert _float_correction(x) == len(js_number_string(x)) - len(orjson.dumps(x))
