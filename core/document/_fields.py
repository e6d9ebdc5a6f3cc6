"""State field declarations (seed 000 section 4) and the one check every writer uses.

A number field's `min`/`max`/`step` form the shared numeric domain of every control bound
to it; a string field bound by a Select takes only that Select's option values.  Inputs,
`set` actions, action results and `restore_state` all go through `value_problem`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from core.json._number import is_plain_safe_number, js_number_string
from core.json._text import is_utf8_text, utf16_length
from core.limits import UI_LIMITS

MAX_STRING = UI_LIMITS["maxStringLength"]
MAX_MAGNITUDE = UI_LIMITS["maxNumberMagnitude"]
# The step grid's tolerance, in steps (docs/decisions.md, "Step grid tolerance"): 0.1 + 0.2 lies on
# a 0.1 grid, 10.5 not on a 1 grid, and 999999999.5 not either.  Two parts: the drift of arithmetic
# over many steps, relative to the count of steps but never above STEP_TOLERANCE_MAX of a step (a
# relative bound alone reached half a step from 5 x 10^8 steps on, and passed every value); and what
# the inputs' own representation leaves undecided, four units in the last place of |value| + |origin|.
STEP_TOLERANCE = 1e-9
STEP_TOLERANCE_MAX = 1e-3
STEP_REPRESENTATION = 2.0**-50


def grid_is_countable(step: float) -> bool:
    """True when every distance within the number budget is a finite count of steps."""
    return math.isfinite(2 * MAX_MAGNITUDE / step)


def on_step_grid(value: float, origin: float, step: float) -> bool:
    """True when value = origin + k × step for an integer k, within float tolerance."""
    quotient = (value - origin) / step
    if not math.isfinite(quotient):  # a step no parsed document has; `round` would overflow
        return False
    tolerance = max(min(STEP_TOLERANCE * max(1.0, abs(quotient)), STEP_TOLERANCE_MAX),
                    STEP_REPRESENTATION * (abs(value) + abs(origin)) / step)
    return abs(quotient - round(quotient)) <= tolerance


@dataclass(frozen=True, slots=True)
class NumberField:
    """A number state field and its shared domain.

    `int | float`, never `float`: compiled, a `float` attribute stores a C double, and the integer
    40 a document declares came back as 40.0 (a capability's `int` parameter then refused it)."""

    initial: int | float
    min: int | float | None = None
    max: int | float | None = None
    step: int | float | None = None
    kind = "number"

    def problem(self, value: Any) -> str | None:
        if not is_plain_safe_number(value):
            return "value must be a finite number (not a boolean) within 1e15"
        if self.min is not None and value < self.min:
            return f"value is below the minimum {js_number_string(self.min)}"
        if self.max is not None and value > self.max:
            return f"value is above the maximum {js_number_string(self.max)}"
        origin = self.min if self.min is not None else 0
        if self.step is not None and not on_step_grid(value, origin, self.step):
            return f"value is not on the step grid {js_number_string(origin)} + k × {js_number_string(self.step)}"
        return None


@dataclass(frozen=True, slots=True)
class StringField:
    """A string state field; `options` is the Select domain when a Select binds it."""

    initial: str
    max_length: int = MAX_STRING
    options: frozenset[str] | None = None
    kind = "string"

    def problem(self, value: Any) -> str | None:
        if type(value) is not str:  # exact: a subclass's `__len__` or `__eq__` could lie
            return "value must be a string"
        if not value.isascii() and not is_utf8_text(value):  # refused here, the field alone, not the state
            return "value must be valid Unicode (no lone surrogates)"
        if len(value) > self.max_length // 2 and utf16_length(value) > self.max_length:
            return f"value exceeds maxLength {self.max_length}"
        if self.options is not None and value not in self.options:
            return "value is not one of the Select options"
        return None


@dataclass(frozen=True, slots=True)
class BooleanField:
    """A boolean state field."""

    initial: bool
    kind = "boolean"

    def problem(self, value: Any) -> str | None:
        return None if value is True or value is False else "value must be a boolean"


Field = NumberField | StringField | BooleanField
