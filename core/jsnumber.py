"""JavaScript number semantics the TypeScript client relies on.

JSON numbers are JS doubles: `1` and `1.0` are one value and a Python `bool` is never a
number.  `js_number_string` is ECMAScript `Number::toString` (what `String(n)` and
`JSON.stringify` print), built from Python's shortest round-trip `repr`, which picks the
same digits as V8.
"""

from __future__ import annotations

import math

MAX_MAGNITUDE = 1e15


def is_number(value: object) -> bool:
    """True for an int or float that is not a bool."""
    return (type(value) is int or type(value) is float) or (
        isinstance(value, (int, float)) and not isinstance(value, bool)
    )


def is_js_safe_number(value: object) -> bool:
    """A finite number within the protocol's magnitude budget (|x| <= 1e15)."""
    if not is_number(value):
        return False
    if type(value) is int:
        return -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE
    return math.isfinite(value) and abs(value) <= MAX_MAGNITUDE


def _shortest_digits(x: float) -> tuple[str, int]:
    """Digits `s` and exponent `n` with x = 0.s * 10**n (x > 0, finite)."""
    mantissa, _, exponent = repr(x).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    n = len(whole.lstrip("0")) if whole.lstrip("0") else -(len(fraction) - len(fraction.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    return digits, n + (int(exponent) if exponent else 0)


def js_number_string(value: int | float) -> str:
    """`String(value)` as JavaScript prints it (`1.0 -> "1"`, `1e21 -> "1e+21"`)."""
    if type(value) is int and -(10**21) < value < 10**21:
        return str(value)
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
