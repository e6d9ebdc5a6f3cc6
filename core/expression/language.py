"""The restricted expression language: 18 operators, static types and evaluation.

Static checking (`check_expression`) runs once per document: operator names, arity,
argument types (both `if` branches), references and node/depth budgets.  Evaluation
(`evaluate_expression`) follows JavaScript number semantics and re-checks every value it
touches, so junk input raises `UIExpressionError`, never a Python error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core.errors import UNKNOWN_PROPERTY, Issue, Place, UIExpressionError
from core.json._frozen import ARRAY_KINDS, OBJECT_KINDS
from core.json._number import js_number_string, js_pow, js_round
from core.json._text import joined_text, same_text, utf16_length
from core.json.safe import json_type_problem
from core.limits import UI_LIMITS

# Static types are bit sets so that `if` can produce a union.
NUM, STR, BOOL, NULL = 1, 2, 4, 8
SCALAR = NUM | STR | BOOL | NULL
TYPE_NAMES = {NUM: "number", STR: "string", BOOL: "boolean", NULL: "null"}

MAX_ARGS = UI_LIMITS["maxExpressionArgs"]
MAX_DEPTH = UI_LIMITS["maxExpressionDepth"]
MAX_MAGNITUDE = UI_LIMITS["maxNumberMagnitude"]
MAX_STRING = UI_LIMITS["maxStringLength"]


@dataclass(frozen=True, slots=True)
class Operator:
    """Arity bounds, the type every argument must have, and the result type."""

    low: int
    high: int
    arg: int  # required type bits of each argument (SCALAR = any)
    result: int


OPERATORS: Mapping[str, Operator] = {
    "add": Operator(2, MAX_ARGS, NUM, NUM),
    "sub": Operator(2, 2, NUM, NUM),
    "mul": Operator(2, MAX_ARGS, NUM, NUM),
    "div": Operator(2, 2, NUM, NUM),
    "pow": Operator(2, 2, NUM, NUM),
    "min": Operator(1, MAX_ARGS, NUM, NUM),
    "max": Operator(1, MAX_ARGS, NUM, NUM),
    "round": Operator(1, 2, NUM, NUM),
    "eq": Operator(2, 2, SCALAR, BOOL),
    "lt": Operator(2, 2, NUM, BOOL),
    "lte": Operator(2, 2, NUM, BOOL),
    "gt": Operator(2, 2, NUM, BOOL),
    "gte": Operator(2, 2, NUM, BOOL),
    "and": Operator(2, MAX_ARGS, BOOL, BOOL),
    "or": Operator(2, MAX_ARGS, BOOL, BOOL),
    "not": Operator(1, 1, BOOL, BOOL),
    "if": Operator(3, 3, SCALAR, SCALAR),
    "concat": Operator(1, MAX_ARGS, SCALAR, STR),
}


def type_name(bits: int) -> str:
    """A readable name for a static type set, e.g. `number | null`."""
    return " | ".join(name for bit, name in TYPE_NAMES.items() if bits & bit) or "nothing"


def scalar_type(value: Any) -> int:
    """The static type bit of a scalar literal, or 0 if it is not a valid scalar."""
    if value is None:
        return NULL
    if value is True or value is False:
        return BOOL
    kind = type(value)
    if kind is str:  # up to 2,048 code points can never exceed 4,096 UTF-16 units
        return STR if len(value) <= MAX_STRING // 2 or utf16_length(value) <= MAX_STRING else 0
    if kind is int:
        return NUM if -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE else 0
    if kind is float:
        return NUM if math.isfinite(value) and abs(value) <= MAX_MAGNITUDE else 0
    return 0


class ExpressionBudget:
    """Counts expression nodes across one document (≤ maxExpressionNodes)."""

    __slots__ = ("nodes",)

    def __init__(self) -> None:
        self.nodes = 0


Resolver = Callable[[str, str], int | None]  # (kind "state"/"derived", key) -> type bits or None


def check_expression(expr: Any, place: Place, resolve: Resolver, budget: ExpressionBudget,
                     issues: list[Issue], depth: int = 1) -> int:
    """Statically check `expr`; append located issues; return its type bits (0 if invalid)."""
    budget.nodes += 1
    if type(expr) is not dict and not isinstance(expr, dict):
        bits = scalar_type(expr)
        if not bits:
            issues.append(Issue(place.pointer, *scalar_problem(expr)))
        return bits
    if depth > MAX_DEPTH:
        issues.append(Issue(place.pointer, f"expression nesting exceeds {MAX_DEPTH} levels", "too_deep"))
        return 0
    if "op" in expr:
        return _check_operation(expr, place, resolve, budget, issues, depth)
    if len(expr) == 1:
        kind, key = next(iter(expr.items()))
        if kind in ("state", "derived"):
            return _check_reference(kind, key, place, resolve, issues)
    issues.append(Issue(place.pointer, "expression must be a scalar, {state}, {derived} or {op, args}", "type"))
    return 0


def scalar_problem(value: Any) -> tuple[str, str]:
    """The message and code of a literal that is not a valid scalar."""
    if isinstance(value, str):
        return f"string exceeds {MAX_STRING} UTF-16 code units", "length"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "number must be finite and at most 1e15 in magnitude", "range"
    return "expression must be a scalar, {state}, {derived} or {op, args}", "type"


def _check_reference(kind: str, key: Any, place: Place, resolve: Resolver, issues: list[Issue]) -> int:
    if type(key) is not str:
        issues.append(Issue((place / kind).pointer, f"{kind} reference must be a string key", "type"))
        return 0
    bits = resolve(kind, key)
    if bits is None:
        issues.append(Issue((place / kind).pointer, f"{kind} reference is not declared", "unknown_reference"))
        return 0
    return bits


def _check_operation(expr: Mapping[str, Any], place: Place, resolve: Resolver, budget: ExpressionBudget,
                     issues: list[Issue], depth: int) -> int:
    if len(expr) != 2 or "args" not in expr:
        issues.append(Issue(place.pointer, UNKNOWN_PROPERTY, "unknown_property") if len(expr) > 2
                      else Issue(place.pointer, "operation needs op and args", "required"))
        return 0
    name, args = expr["op"], expr["args"]
    op = OPERATORS.get(name) if type(name) is str else None
    if op is None:
        issues.append(Issue((place / "op").pointer, "unknown operator", "unknown_operator"))
        return 0
    if not isinstance(args, list):
        issues.append(Issue((place / "args").pointer, "args must be an array", "type"))
        return 0
    if not op.low <= len(args) <= op.high:
        issues.append(Issue((place / "args").pointer, _arity_text(name, op), "arity"))
        return 0
    types = [check_expression(arg, place / "args" / i, resolve, budget, issues, depth + 1)
             for i, arg in enumerate(args)]
    return _operation_type(name, op, types, args, place, issues)


def _arity_text(name: str, op: Operator) -> str:
    count = str(op.low) if op.low == op.high else f"{op.low}-{op.high}"
    return f"{name} takes {count} arguments"


def _operation_type(name: str, op: Operator, types: list[int], args: list[Any], place: Place,
                    issues: list[Issue]) -> int:
    if 0 in types:
        return 0
    checked = types[:1] if name == "if" else types
    wanted = BOOL if name == "if" else op.arg
    ok = True
    for i, bits in enumerate(checked):
        if bits & ~wanted:
            message = f"{name} needs {type_name(wanted)}, got {type_name(bits)}"
            issues.append(Issue((place / "args" / i).pointer, message, "expression_type"))
            ok = False
    if name == "round" and len(args) == 2 and not _valid_digits_literal(args[1]):
        issues.append(Issue((place / "args" / 1).pointer, "round digits must be an integer from 0 to 6", "range"))
        ok = False
    if not ok:
        return 0
    return types[1] | types[2] if name == "if" else op.result


def _valid_digits_literal(arg: Any) -> bool:
    if isinstance(arg, dict):
        return True  # computed digits are checked when evaluated
    return scalar_type(arg) == NUM and arg == int(arg) and 0 <= arg <= UI_LIMITS["maxRoundDigits"]


# --------------------------------------------------------------------------- evaluation

DerivedLookup = Callable[[str], Any]


def evaluate_expression(expr: Any, state: Mapping[str, Any], derived: Mapping[str, Any] | None = None) -> Any:
    """Evaluate `expr` against `state` and already computed `derived` values."""
    if type(state) not in OBJECT_KINDS:
        raise UIExpressionError("state must be an object")
    # Exact JSON types only, before any key is looked up: a subclass's `__eq__`, `__hash__`
    # or `__len__` could answer anything (the parsed document's own expressions need no walk).
    for what, value in (("expression", expr), ("state", state), ("derived values", derived)):
        problem = json_type_problem(value)
        if problem:
            raise UIExpressionError(f"the {what} is not plain JSON: {problem}", code="unsafe_json")
    values: Mapping[str, Any] = {}
    if derived is not None and type(derived) in OBJECT_KINDS:  # other JSON: no derived values
        values = derived

    def lookup(key: str) -> Any:
        # the key came from the caller: never repeat it; a value handed in is checked like state
        if key not in values:
            raise UIExpressionError("derived reference is not available", code="unknown_derived")
        value = values[key]
        if not scalar_type(value):
            raise UIExpressionError("derived value is not a scalar", code="invalid_derived")
        return value

    return evaluate(expr, state, lookup)


def evaluate(expr: Any, state: Mapping[str, Any], derived: DerivedLookup, depth: int = 1) -> Any:
    """Evaluate with a derived-value callback (lets callers compute derived values lazily)."""
    if type(expr) not in OBJECT_KINDS:
        if scalar_type(expr):
            return expr
        raise UIExpressionError("invalid scalar in expression")
    if depth > MAX_DEPTH:
        raise UIExpressionError(f"expression nesting exceeds {MAX_DEPTH} levels")
    if len(expr) == 1:
        if "state" in expr:
            return _state_value(state, expr["state"])
        if "derived" in expr:
            key = expr["derived"]
            if type(key) is not str:
                raise UIExpressionError("derived reference must be a string key")
            return derived(key)
    if len(expr) == 2 and "op" in expr and type(expr.get("args")) in ARRAY_KINDS:
        handler = _HANDLERS.get(expr["op"]) if type(expr["op"]) is str else None
        if handler is not None:
            return handler(expr["args"], state, derived, depth + 1)
    raise UIExpressionError("invalid expression")


def _state_value(state: Mapping[str, Any], key: Any) -> Any:
    if type(key) is not str or key not in state:
        raise UIExpressionError("state reference is not available")
    value = state[key]
    if not scalar_type(value):
        raise UIExpressionError("state value is not a scalar")
    return value


def _number(value: Any) -> Any:
    if scalar_type(value) == NUM:
        return value
    raise UIExpressionError(f"expected a number, got {_kind(value)}")


def _checked(result: Any) -> Any:
    """Enforce the number budget; integral floats become ints (JS cannot tell them apart)."""
    if type(result) is float:
        if not math.isfinite(result) or abs(result) > MAX_MAGNITUDE:
            raise UIExpressionError("arithmetic result is not finite or exceeds 1e15")
        if result.is_integer():
            return int(result)
    elif not -MAX_MAGNITUDE <= result <= MAX_MAGNITUDE:
        raise UIExpressionError("arithmetic result exceeds 1e15")
    return result


def _boolean(value: Any) -> bool:
    if value is True or value is False:
        return value
    raise UIExpressionError(f"expected a boolean, got {_kind(value)}")


def _kind(value: Any) -> str:
    bits = scalar_type(value)
    return TYPE_NAMES.get(bits, "an invalid value")


def _arity(args: list[Any], low: int, high: int) -> None:
    if not low <= len(args) <= high:
        raise UIExpressionError("wrong number of arguments")


def _numbers(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int, low: int = 2,
             high: int = MAX_ARGS) -> list[Any]:
    _arity(args, low, high)
    return [_number(evaluate(arg, state, derived, depth)) for arg in args]


def _add(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> Any:
    total: int | float = 0  # mypyc checks a local against its inferred type: `0` alone would be `int`
    for value in _numbers(args, state, derived, depth):
        total = _checked(total + value)
    return total


def _mul(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> Any:
    product: int | float = 1
    for value in _numbers(args, state, derived, depth):
        product = _checked(product * value)
    return product


def _sub(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> Any:
    a, b = _numbers(args, state, derived, depth, 2, 2)
    return _checked(a - b)


def _div(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> Any:
    a, b = _numbers(args, state, derived, depth, 2, 2)
    if b == 0:
        raise UIExpressionError("division by zero")
    return _checked(a / b)


def _pow(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> Any:
    a, b = _numbers(args, state, derived, depth, 2, 2)
    return _checked(js_pow(a, b))


def _min(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> Any:
    return _checked(min(_numbers(args, state, derived, depth, 1)))  # an integral float as an int, as every operator


def _max(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> Any:
    return _checked(max(_numbers(args, state, derived, depth, 1)))  # an integral float as an int, as every operator


def _round(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> Any:
    values = _numbers(args, state, derived, depth, 1, 2)
    digits = values[1] if len(values) == 2 else 0
    if digits != int(digits) or not 0 <= digits <= UI_LIMITS["maxRoundDigits"]:
        raise UIExpressionError("round digits must be an integer from 0 to 6")
    return _checked(js_round(values[0], int(digits)))


Handler = Callable[[list[Any], Mapping[str, Any], DerivedLookup, int], Any]


def _compare(test: Callable[[Any, Any], bool]) -> Handler:
    def handler(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> bool:
        a, b = _numbers(args, state, derived, depth, 2, 2)
        return test(a, b)
    return handler


def _eq(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> bool:
    _arity(args, 2, 2)
    a, b = (evaluate(arg, state, derived, depth) for arg in args)
    if type(a) is str and type(b) is str:
        return same_text(a, b)  # UTF-16 code units, as `===` compares them
    return scalar_type(a) == scalar_type(b) and a == b


def _and(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> bool:
    _arity(args, 2, MAX_ARGS)
    return all(_boolean(evaluate(arg, state, derived, depth)) for arg in args)


def _or(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> bool:
    _arity(args, 2, MAX_ARGS)
    return any(_boolean(evaluate(arg, state, derived, depth)) for arg in args)


def _not(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> bool:
    _arity(args, 1, 1)
    return not _boolean(evaluate(args[0], state, derived, depth))


def _if(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> Any:
    _arity(args, 3, 3)
    chosen = args[1] if _boolean(evaluate(args[0], state, derived, depth)) else args[2]
    return evaluate(chosen, state, derived, depth)


def js_string(value: Any) -> str:
    """`concat`'s text of a scalar: JS `String(v)`, with null as the empty string."""
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return value
    return js_number_string(value)


def _concat(args: list[Any], state: Mapping[str, Any], derived: DerivedLookup, depth: int) -> str:
    _arity(args, 1, MAX_ARGS)
    text = ""
    for arg in args:
        text += js_string(evaluate(arg, state, derived, depth))
        if len(text) > MAX_STRING // 2 and utf16_length(text) > MAX_STRING:
            raise UIExpressionError(f"concat result exceeds {MAX_STRING} UTF-16 code units")
    # JavaScript strings are UTF-16: a high half joined to a low half is the character.
    return joined_text(text)


_HANDLERS: dict[str, Handler] = {
    "add": _add, "sub": _sub, "mul": _mul, "div": _div, "pow": _pow,
    "min": _min, "max": _max, "round": _round, "eq": _eq,
    "lt": _compare(lambda a, b: a < b), "lte": _compare(lambda a, b: a <= b),
    "gt": _compare(lambda a, b: a > b), "gte": _compare(lambda a, b: a >= b),
    "and": _and, "or": _or, "not": _not, "if": _if, "concat": _concat,
}
