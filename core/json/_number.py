"""JavaScript number semantics the TypeScript client relies on.

JSON numbers are JS doubles: `1` and `1.0` are one value and a Python `bool` is never a
number.  `js_number_string` is ECMAScript `Number::toString` (what `String(n)` and
`JSON.stringify` print), built from Python's shortest round-trip `repr`, which picks the
same digits as V8.

`js_to_fixed`, `js_round` and `js_pow` are the DSL's `toFixed`-based `round` and `**`-based
`pow`: exact-binary-value rounding with ties away from zero, and powers that must stay
finite and within the 1e15 budget.
"""

from __future__ import annotations

import math
from typing import TypeGuard

from core.errors import UIExpressionError
from core.json._frozen import EXACT_INTEGERS
from core.json._pow import v8_pow
from core.limits import UI_LIMITS

MAX_MAGNITUDE = 1e15
# The same bound for exact ints: compiled, an int compared with a float is converted first, and
# an int beyond a double's range would raise OverflowError instead of comparing.
_MAX_INT = 10**15
MAX_ROUND_DIGITS = UI_LIMITS["maxRoundDigits"]


def is_number_type(value: object) -> TypeGuard[int | float]:
    """An exact int or float (not a bool, not a subclass): any magnitude, infinities and NaN."""
    return type(value) is int or type(value) is float


def is_js_safe_number(value: object) -> bool:
    """A finite number within the protocol's magnitude budget (|x| <= 1e15)."""
    if not is_number_type(value):
        return False
    if type(value) is int:
        return -_MAX_INT <= value <= _MAX_INT
    return math.isfinite(value) and abs(value) <= MAX_MAGNITUDE


def is_plain_safe_number(value: object) -> bool:
    """An exact `int` or `float` (no bool, no subclass), finite and within 1e15: a value a
    number field accepts before any safe-JSON check has run."""
    if type(value) is int:
        return -_MAX_INT <= value <= _MAX_INT
    if type(value) is float:
        return math.isfinite(value) and abs(value) <= MAX_MAGNITUDE
    return False


def _shortest_digits(x: float) -> tuple[str, int]:
    """Digits `s` and exponent `n` with x = 0.s * 10**n (x > 0, finite)."""
    mantissa, _, exponent = repr(x).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    n = len(whole.lstrip("0")) if whole.lstrip("0") else -(len(fraction) - len(fraction.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    return digits, n + (int(exponent) if exponent else 0)


def float_is_plain(x: float) -> bool:
    """orjson prints `1.0` and `1e-6` where JS prints `1` and `0.000001`, elsewhere the same.

    NaN and Infinity fail the range tests (orjson would print them as null).
    """
    return (1e-5 <= x < math.inf or -math.inf < x <= -1e-5 or -1e-6 < x < 1e-6) and not x.is_integer()


def js_number_string(value: int | float) -> str:
    """`String(value)` as JavaScript prints it (`1.0 -> "1"`, `1e21 -> "1e+21"`)."""
    if type(value) is int and -(10**21) < value < 10**21:
        return str(value)
    if type(value) is float and value.is_integer() and -EXACT_INTEGERS <= value <= EXACT_INTEGERS:
        # Every integer up to 2**53 is a double, so its own digits are the shortest that name it,
        # as JS prints it (-0 as "0"); above, JS pads the shortest digits with zeros.
        return str(int(value))
    x = float(value)
    if math.isnan(x):
        return "NaN"
    if x == 0:
        return "0"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x < 0:
        return "-" + js_number_string(-x)
    digits, n = _shortest_digits(x)
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    sign = "+" if n - 1 >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{head}e{sign}{abs(n - 1)}"


def _to_double(value: int | float) -> float:
    """The JS double of a number (huge Python ints become +-Infinity, as JS parses them)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _fraction_digits(digits: object, limit: int) -> int:
    """An integral digit count in 0..limit, else `UIExpressionError` (JS throws RangeError)."""
    if is_number_type(digits) and math.isfinite(digits) and digits == int(digits) and 0 <= digits <= limit:
        return int(digits)
    raise UIExpressionError(f"digits must be an integer from 0 to {limit}", code="bad_digits")


def js_to_fixed(x: object, digits: object) -> str:
    """`x.toFixed(digits)` exactly as JavaScript prints it (exact binary value, ties up)."""
    if not is_number_type(x):
        raise UIExpressionError("toFixed needs a number", code="not_a_number")
    f = _fraction_digits(digits, 100)
    x = _to_double(x)
    if not math.isfinite(x):
        return js_number_string(x)
    # The spec's sign step: `-0` is not below zero, but -0.001 keeps its "-" after rounding to 0.
    sign = "-" if x < 0 else ""
    x = -x if x < 0 else x
    if x >= 1e21:
        return sign + js_number_string(x)
    # n / 10**f closest to the exact x = p / q; a tie picks the larger n.
    p, q = x.as_integer_ratio()
    n = (2 * p * 10**f + q) // (2 * q)
    text = str(n)
    if f:
        text = text.rjust(f + 1, "0")
        text = text[:-f] + "." + text[-f:]
    return sign + text


def js_round(x: object, digits: object = 0) -> int | float:
    """The DSL's `round`: `Number(x.toFixed(digits))`, digits 0..maxRoundDigits; -0 becomes 0."""
    if not is_number_type(x) or not math.isfinite(x):
        raise UIExpressionError("round needs a finite number", code="not_a_number")
    value = float(js_to_fixed(x, _fraction_digits(digits, MAX_ROUND_DIGITS)))
    if value.is_integer() and abs(value) <= 2**53:
        return int(value)  # also turns -0.0 into 0
    return value


def js_pow(a: object, b: object) -> float:
    """JS `a ** b` for finite numbers; `UIExpressionError` unless finite and |result| <= 1e15."""
    if not (is_number_type(a) and is_number_type(b)):
        raise UIExpressionError("pow needs two numbers", code="not_a_number")
    x, y = _to_double(a), _to_double(b)
    if not (math.isfinite(x) and math.isfinite(y)):
        raise UIExpressionError("pow needs finite numbers", code="not_finite")
    result = v8_pow(x, y)  # V8's own pow (fdlibm), not the C library's: see core.json._pow
    if not math.isfinite(result):
        raise UIExpressionError("pow result is not a finite number", code="not_finite")
    if abs(result) > MAX_MAGNITUDE:
        raise UIExpressionError("pow result exceeds 1e15 in magnitude", code="out_of_range")
    return result + 0.0  # -0.0 + 0.0 is 0.0: JS String(-0) is "0" anyway
