"""The shared machinery of document validation: issue collection and value checks.

A `Checker` holds what the rule functions need while one document is walked: the
declared fields and derived values, the expression budget, the located issues (at most
20: the walk stops as soon as the list is full) and the `set` actions whose check must
wait until every Select domain is known.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mypy_extensions import mypyc_attr

from core._identifier import is_identifier
from core.document._fields import Field
from core.errors import (
    MAX_ISSUES,
    UNKNOWN_PROPERTY,
    Issue,
    Place,
    UIExpressionError,
)
from core.expression.language import (
    NUM,
    SCALAR,
    ExpressionBudget,
    check_expression,
    evaluate,
    scalar_problem,
    scalar_type,
    type_name,
)
from core.json._frozen import FrozenDict
from core.json._text import utf16_length


class IssueLimit(Exception):
    """Raised inside the walk once MAX_ISSUES issues are collected."""


@mypyc_attr(native_class=False)  # as the error it extends (core/errors.py)
class DerivedFailure(UIExpressionError):
    """A value depends on a derived field whose default evaluation already failed."""


class Checker:
    """Mutable walk state for one document validation.

    A plain class, not a dataclass: each patch builds one, and a compiled dataclass's
    `__init__` stays interpreted (core/document/_model.py)."""

    __slots__ = ("actions", "budget", "defaults", "deferred", "derived_types", "failed_derived", "fields", "initial",
                 "issues", "mode", "version")

    def __init__(self, *, version: str = "1.1", mode: str = "interactive_ui", fields: Mapping[str, Field] | None = None,
                 derived_types: dict[str, int] | None = None, defaults: dict[str, Any] | None = None,
                 actions: Mapping[str, Any] | None = None, initial: FrozenDict | None = None) -> None:
        self.version = version
        self.mode = mode
        self.fields: Mapping[str, Field] = {} if fields is None else fields
        self.derived_types: dict[str, int] = {} if derived_types is None else derived_types
        self.defaults: dict[str, Any] = {} if defaults is None else defaults
        self.failed_derived: set[str] = set()
        self.actions = actions
        self.initial: FrozenDict = FrozenDict() if initial is None else initial
        self.budget = ExpressionBudget()
        self.issues: list[Issue] = []
        # Callbacks take the checker as an argument: capturing it would make a reference cycle.
        self.deferred: list[Callable[[Checker], None]] = []

    # ------------------------------------------------------------------ issues
    def add(self, place: Place, message: str, code: str) -> None:
        """Record one issue; stop the walk when the list is full."""
        self.issues.append(Issue(place.pointer, message, code))
        if len(self.issues) >= MAX_ISSUES:
            raise IssueLimit

    def closed(self, value: Mapping[str, Any], allowed: frozenset[str] | set[str], place: Place) -> None:
        """Report unknown properties once, without echoing them."""
        if not allowed.issuperset(value):
            self.add(place, UNKNOWN_PROPERTY, "unknown_property")

    def required(self, value: Mapping[str, Any], names: tuple[str, ...], place: Place) -> bool:
        """Report each missing required property; True when all are present."""
        ok = True
        for name in names:
            if name not in value:
                self.add(place / name, "required property is missing", "required")
                ok = False
        return ok

    def mapping(self, value: Any, place: Place, what: str = "value") -> bool:
        """True when `value` is an object, else report it."""
        if isinstance(value, dict):
            return True
        self.add(place, f"{what} must be an object", "type")
        return False

    def identifier(self, value: Any, place: Place) -> bool:
        if is_identifier(value):
            return True
        self.add(place, "must be an identifier: a letter, then up to 63 letters, digits, _ or -"
                       " (not __proto__, prototype or constructor)", "format")
        return False

    def text(self, value: Any, place: Place, low: int, high: int) -> bool:
        """A plain string whose UTF-16 length is within [low, high]."""
        if not isinstance(value, str):
            self.add(place, "must be a string", "type")
            return False
        length = len(value) if value.isascii() else utf16_length(value)
        if not low <= length <= high:
            self.add(place, f"length must be {low}-{high} UTF-16 code units" if low else
                     f"length must be at most {high} UTF-16 code units", "length")
            return False
        return True

    def keyed(self, value: Any, place: Place, limit: int, what: str) -> list[tuple[str, Any, Place]]:
        """Entries of an object whose keys must be identifiers (bad keys are never echoed)."""
        if not self.mapping(value, place, what):
            return []
        if len(value) > limit:
            self.add(place, f"{what} has more than {limit} entries", "too_many")
        entries = []
        for key, item in value.items():
            if is_identifier(key):
                entries.append((key, item, place / key))
            else:
                self.add(place, f"every {what} key must be an identifier"
                               " (not __proto__, prototype or constructor)", "format")
        return entries

    # ------------------------------------------------------------------ values
    def resolve(self, kind: str, key: str) -> int | None:
        """Static type of a state or derived reference (None when undeclared)."""
        if kind == "state":
            declared = self.fields.get(key)
            return None if declared is None else _FIELD_TYPES[declared.kind]
        return self.derived_types.get(key)

    def expression(self, expr: Any, place: Place) -> int:
        return check_expression(expr, place, self.resolve, self.budget, self.issues)

    def value(self, value: Any, place: Place, allowed: int = SCALAR, evaluate: bool = True) -> tuple[int, Any]:
        """Check a component Value (scalar or {expr}); return (type bits, default value)."""
        before = len(self.issues)
        if isinstance(value, dict):
            if len(value) != 1 or "expr" not in value:
                self.add(place, 'dynamic values must be written as {"expr": <expression>}', "type")
                return 0, None
            bits = self.expression(value["expr"], place / "expr")
            self._check_full()
        else:
            bits = scalar_type(value)
            if not bits and isinstance(value, str):
                self.add(place, *scalar_problem(value))  # the code a literal in an expression gets
            elif not bits:
                self.add(place, "must be a string (≤ 4,096 UTF-16 units), a finite number within 1e15,"
                               " a boolean, null or {\"expr\": ...}", "type")
        if len(self.issues) > before or not bits:
            return 0, None
        if bits & ~allowed:
            self.add(place, f"must always be {type_name(allowed)}, but can be {type_name(bits)}", "expression_type")
            return 0, None
        return bits, self.default(value, place) if evaluate else None

    def default(self, value: Any, place: Place) -> Any:
        """Evaluate a checked Value at the initial state; report a failure."""
        if not isinstance(value, dict):
            return value
        try:
            return evaluate(value["expr"], self.initial, self.derived_default)
        except DerivedFailure:
            return None
        except UIExpressionError as error:
            self.add(place, f"fails at the initial state: {error}", "default_evaluation")
            return None

    def derived_default(self, key: str) -> Any:
        if key in self.failed_derived or key not in self.defaults:
            raise DerivedFailure("depends on a failing derived value")
        return self.defaults[key]

    def _check_full(self) -> None:
        if len(self.issues) >= MAX_ISSUES:
            del self.issues[MAX_ISSUES:]
            raise IssueLimit

    def number(self, value: Any, place: Place) -> bool:
        if scalar_type(value) == NUM:
            return True
        self.add(place, "must be a finite number (not a boolean) within 1e15", "type")
        return False


_FIELD_TYPES = {"number": 1, "string": 2, "boolean": 4}
