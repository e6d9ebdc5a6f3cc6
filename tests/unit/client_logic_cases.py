"""Seeded random cases for the differential test of the Client's logic against core.

Expressions over awkward numbers and strings in random scopes (`expression_cases`), and
documents (the examples, the base test document and generated ones) with random state
updates, local actions, derived and display values (`document_cases`).  A case is a list
`[operation, *arguments]` that the Node runner and the Python side both understand;
documents are referenced by index.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

from core import UIError, parse_document, update_state
from core.document._fields import BooleanField, NumberField, StringField
from core.json.safe import json_byte_size
from core.limits import UI_LIMITS
from tests.unit.documents import base_document

MAX_STATE_BYTES = UI_LIMITS["maxStateBytes"]
EXAMPLES = Path(__file__).parents[2] / "examples"

# Numbers where doubles, toFixed, String(n) and the 1e15 budget are awkward.
EDGE_NUMBERS: list[Any] = [
    0, -0.0, 1, -1, 2, 3, 7, 10, 100, 0.1, 0.2, 0.3, 0.1 + 0.2, 0.5, 1.5, 2.5, -2.5, -0.5, 0.125, 0.375,
    1.005, 1.255, 8.345, 2.675, 1.45, 4.35, 99.995, 0.0000005, 1.0000005, 123.456, 1e-7, 1e-6, 1.5e-7,
    5e-324, 2.2250738585072014e-308, 1e-300, 1 / 3, 2 / 3, 1e15, -1e15, 999999999999999.9, 999999999999999.5,
    1e14 + 0.5, 2.0**49, 2**20, 4503599627370495.5 / 8, 33.3, 1e7 + 0.1, 0.000001234, 12345.6789, -0.001,
    -1.5e-7, 0.49999999999999994, 0.5000000000000001, 1e21, 1e16, 10**15 + 1, 1.7976931348623157e308,
]
POW_BASES: list[Any] = [2, 10, -2, -8, 0, -0.0, 1, -1, 0.5, 1e-7, 5e-324, 1e15, 1.0000001, 0.1, 3, -0.5, 1e-300]
POW_EXPONENTS: list[Any] = [0, -0.0, 0.5, -0.5, 1 / 3, 2, 3, -1, -2, 15, 16, 49.8, 50, 1e15, -1e15, 1e-15, 0.1,
                            2.5, 1074, -1074, 1075, 0.9999999999999999, 31, 53]
STRINGS: list[str] = [
    "", "a", "ab", "é", "€", "😀", "1", "true", "null", "0", " ", "\x00", "\n\"\\", "\u2028", "\ud800", "\udbff",
    "\ude00", "\ud83d", "a\ud83d", "\ude00b", "x" * 2048, "😀" * 2048, "x" * 4096, "x" * 4097, "😀" * 2049,
    "é" * 3000,
]
ROUND_DIGITS: list[Any] = [0, 1, 2, 3, 6, 7, -1, 1.5, -0.0, 6.0, True, "2", None]
NUMBER_OPS = ["add", "sub", "mul", "div", "pow", "min", "max", "round", "if"]
BOOLEAN_OPS = ["eq", "lt", "lte", "gt", "gte", "and", "or", "not", "if"]
ARITY = {"add": (2, 16), "mul": (2, 16), "min": (1, 16), "max": (1, 16), "round": (1, 2), "sub": (2, 2),
         "div": (2, 2), "pow": (2, 2), "lt": (2, 2), "lte": (2, 2), "gt": (2, 2), "gte": (2, 2), "eq": (2, 2),
         "and": (2, 16), "or": (2, 16), "not": (1, 1), "if": (3, 3), "concat": (1, 16)}
OPS_BY_KIND = {"number": NUMBER_OPS, "boolean": BOOLEAN_OPS, "string": ["concat", "if"], "any": [*ARITY]}
ARG_KIND = {"eq": "any", "concat": "any", "and": "boolean", "or": "boolean", "not": "boolean"}
JUNK: list[Any] = [
    [1, 2], {"op": "add"}, {"op": "add", "args": [1, 2], "x": 1}, {"op": "nope", "args": [1]},
    {"op": 5, "args": [1, 2]}, {"op": "add", "args": {"0": 1}}, {"state": "n", "x": 1}, {}, {"expr": 1},
    {"derived": 3}, {"state": None}, {"state": ["n"]}, {"op": "constructor", "args": [1]},
    {"op": "toString", "args": []}, {"op": "__proto__", "args": [1, 2]}, {"args": [1, 2], "op": "add"},
]
# Scope keys by the type of value they usually hold; the rest are missing, invalid or prototype names.
STATE_KEYS = {"number": ["n", "m", "z", "big", "tiny"], "string": ["s", "e"], "boolean": ["t", "f"],
              "null": ["nul"], "odd": ["bad", "missing", "constructor", "__proto__", "toString", "hasOwnProperty"]}
DERIVED_KEYS = {"number": ["d1"], "string": ["d3"], "boolean": ["d2"], "null": ["dnul"],
                "odd": ["dbad", "dmissing", "constructor", "valueOf"]}
INVALID_VALUES: list[Any] = [1e16, -1e16, [1], {"x": 1}, "x" * 4097, 10**15 + 1]


# ------------------------------------------------------------------ expressions in random scopes

def random_number(rng: random.Random) -> Any:
    """An awkward number most of the time, else a random one from every scale."""
    if rng.random() < 0.6:
        return rng.choice(EDGE_NUMBERS)
    kind = rng.randrange(5)
    if kind == 0:
        return rng.randint(-100, 100)
    if kind == 1:
        return rng.randint(-400, 400) / 4
    if kind == 2:
        return round(rng.uniform(-1000, 1000), rng.randint(0, 7))
    if kind == 3:
        return rng.choice([-1, 1]) * 10 ** rng.uniform(-12, 15.2)
    return rng.randint(-(10**15), 10**15)


def _any_leaf(rng: random.Random) -> Any:
    return rng.choice([random_number(rng), rng.choice(STRINGS), rng.choice([True, False, None])])


def _reference(rng: random.Random, kind: str) -> dict[str, Any]:
    pool = STATE_KEYS if rng.random() < 0.75 else DERIVED_KEYS
    wanted = kind if kind in pool and rng.random() < 0.9 else rng.choice([*pool])
    return {"state" if pool is STATE_KEYS else "derived": rng.choice(pool[wanted])}


def _leaf(rng: random.Random, kind: str) -> Any:
    if rng.random() < 0.25:
        return _reference(rng, kind)
    if kind == "number":
        return random_number(rng)
    if kind == "boolean":
        return rng.choice([True, False])
    if kind == "string":
        return rng.choice(STRINGS)
    return _any_leaf(rng)


def random_expression(rng: random.Random, kind: str, depth: int = 1) -> Any:
    """A random expression that mostly has the wanted static type, with some junk and errors."""
    if rng.random() < 0.02:
        return rng.choice(JUNK)
    if depth >= 7 or rng.random() < 0.2 + 0.12 * depth:
        return _leaf(rng, kind)
    op = rng.choice(OPS_BY_KIND[kind])
    low, high = ARITY[op]
    count = rng.randint(low, min(high, low + 3))
    if rng.random() < 0.03:
        count = rng.choice([low - 1, high + 1, high])
    args = [random_expression(rng, _argument_kind(rng, op, kind, i), depth + 1) for i in range(max(count, 0))]
    if op == "round" and count == 2 and rng.random() < 0.7:
        args[1] = rng.choice(ROUND_DIGITS)
    if op == "pow" and count == 2 and rng.random() < 0.5:
        args = [rng.choice(POW_BASES), rng.choice(POW_EXPONENTS)]
    return {"op": op, "args": args}


def _argument_kind(rng: random.Random, op: str, kind: str, index: int) -> str:
    if rng.random() < 0.04:
        return "any"  # a run-time type error now and then
    if op == "if":
        return "boolean" if index == 0 else kind
    return ARG_KIND.get(op, "number")


def random_scope(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A state and a derived mapping (or None) of mixed, sometimes invalid, values."""
    state: dict[str, Any] = {
        "n": random_number(rng), "m": random_number(rng), "z": rng.choice([0, -0.0, 0.0]),
        "big": rng.choice([1e15, -1e15, 10**15]), "tiny": rng.choice([5e-324, -5e-324, 1e-300]),
        "s": rng.choice(STRINGS), "e": "", "t": True, "f": False, "nul": None, "bad": rng.choice(INVALID_VALUES),
    }
    if rng.random() < 0.2:
        state["__proto__"] = random_number(rng)
        state["constructor"] = rng.choice(STRINGS)
    state = {key: value for key, value in state.items() if rng.random() > 0.05}
    if rng.random() < 0.3:
        return state, None
    derived: dict[str, Any] = {"d1": random_number(rng), "d2": rng.choice([True, False]), "d3": rng.choice(STRINGS),
                               "dnul": None, "dbad": rng.choice(INVALID_VALUES)}
    if rng.random() < 0.2:
        derived["constructor"] = 1
    return state, {key: value for key, value in derived.items() if rng.random() > 0.05}


def expression_cases(rng: random.Random, count: int) -> list[list[Any]]:
    """`count` random expressions, each with its own random scope."""
    cases = []
    for _ in range(count):
        state, derived = random_scope(rng)
        expr = random_expression(rng, rng.choice(["number", "number", "boolean", "string", "any"]))
        cases.append(["expr", expr, state, derived])
    return cases


def deep_cases() -> list[list[Any]]:
    """Nesting around the 32-level limit: an operation (or reference) at level 33 fails."""
    state = {"t": True, "n": 1}
    cases = []
    for levels in range(28, 36):
        for leaf in (True, {"state": "t"}):
            expr: Any = leaf
            for _ in range(levels):
                expr = {"op": "not", "args": [expr]}
            cases.append(["expr", expr, state, None])
        expr = 1
        for _ in range(levels):
            expr = {"op": "add", "args": [expr, {"state": "n"}]}
        cases.append(["expr", expr, state, None])
    return cases


# ------------------------------------------------------------------ documents

def example_documents() -> list[dict[str, Any]]:
    """The example UI documents (stream-mutations.json is a list of mutations, not a document)."""
    documents = [json.loads(path.read_text()) for path in sorted(EXAMPLES.glob("*.json"))]
    return [document for document in documents if isinstance(document, dict) and "root" in document]


def _number_declaration(rng: random.Random) -> dict[str, Any]:
    low = rng.choice([None, None, 0, -10, 0.5, -1e15, 1e-7, -3.3])
    high = rng.choice([None, 100, 1e15, 10.5, 1, 250])
    if low is not None and high is not None and low > high:
        high = None
    step = rng.choice([None, None, 1, 0.1, 0.5, 0.01, 0.25, 1e-6, 3, 1 / 3, 0.3, 0.05, 2.5])
    declaration = {"type": "number", "initial": 0}
    declaration.update({name: value for name, value in (("min", low), ("max", high), ("step", step))
                        if value is not None})
    origin = low if low is not None else 0
    k = rng.randint(0, 20)
    initial = origin + k * step if step is not None else origin + rng.choice([0, 0.5, 1e-7, 3])
    field = NumberField(0, low, high, step)
    declaration["initial"] = initial if field.problem(initial) is None else origin
    return declaration


OPTION_VALUES = ["a", "b", "😀", "€uro", "", "x y", "long-option-value", "\u2028"]


def _string_declaration(rng: random.Random) -> tuple[dict[str, Any], list[str] | None]:
    limit = rng.choice([None, 1, 3, 8, 32, 4096])
    declaration: dict[str, Any] = {"type": "string", "initial": ""}
    if limit is not None:
        declaration["maxLength"] = limit
    bound = limit or 4096
    if rng.random() < 0.5:
        fitting = [value for value in OPTION_VALUES if len(value.encode("utf-16-le")) // 2 <= bound]
        options = rng.sample(fitting, rng.randint(1, min(4, len(fitting))))
        declaration["initial"] = rng.choice(options)
        return declaration, options
    declaration["initial"] = rng.choice(["", "a", "😀"]) if bound >= 2 else rng.choice(["", "a"])
    return declaration, None


def _control(key: str, declaration: dict[str, Any], options: list[str] | None, rng: random.Random) -> dict[str, Any]:
    node_id = f"control-{key}"
    if declaration["type"] == "boolean":
        return {"id": node_id, "type": "Checkbox", "props": {"label": key, "bind": key}}
    if declaration["type"] == "string":
        if options is not None:
            choices = [{"label": value or "(empty)", "value": value} for value in options]
            return {"id": node_id, "type": "Select", "props": {"label": key, "bind": key, "options": choices}}
        return {"id": node_id, "type": "Input", "props": {"label": key, "bind": key}}
    props: dict[str, Any] = {"label": key, "bind": key}
    repeated = [name for name in ("min", "max", "step") if name in declaration and rng.random() < 0.3]
    props.update({name: declaration[name] for name in repeated})  # a control may repeat its field's domain
    slider = "min" in declaration and "max" in declaration and declaration["min"] < declaration["max"]
    return {"id": node_id, "type": "Slider" if slider and rng.random() < 0.5 else "NumberInput", "props": props}


def _document_expression(rng: random.Random, kind: str, refs: dict[str, list[Any]], depth: int = 1) -> Any:
    """A well-typed expression over the document's declared fields and earlier derived values."""
    if depth >= 4 or rng.random() < 0.3 + 0.15 * depth:
        if refs.get(kind) and rng.random() < 0.6:
            return rng.choice(refs[kind])
        if kind == "any":
            kind = rng.choice(["number", "string", "boolean"])
            if refs.get(kind) and rng.random() < 0.6:
                return rng.choice(refs[kind])
        return rng.choice({"number": [0, 1, 2, 3, 0.5, 0.1, 10, 100, -1, 2.5, 1.005, 1e-7, 0.3],
                           "string": ["", "a", "😀", " x "], "boolean": [True, False]}[kind])
    op = rng.choice(OPS_BY_KIND[kind])
    low, high = ARITY[op]
    count = rng.randint(low, min(high, low + 2))
    args = [_document_expression(rng, "boolean" if op == "if" and i == 0 else kind if op == "if"
                                 else ARG_KIND.get(op, "number"), refs, depth + 1) for i in range(count)]
    if op == "round" and count == 2:
        args[1] = rng.randint(0, 6)
    return {"op": op, "args": args}


def _accepted(document: dict[str, Any]) -> bool:
    try:
        parse_document(document)
    except UIError:
        return False
    return True


def random_document(rng: random.Random, index: int) -> dict[str, Any]:
    """A valid v1.0 document: random fields, their controls, derived values, texts and buttons."""
    state: dict[str, Any] = {}
    controls = []
    for i in range(rng.randint(1, 7)):
        kind = rng.choice(["number", "number", "string", "boolean"])
        key = f"{kind[0]}{i}"
        options = None
        if kind == "number":
            state[key] = _number_declaration(rng)
        elif kind == "string":
            state[key], options = _string_declaration(rng)
        else:
            state[key] = {"type": "boolean", "initial": rng.random() < 0.5}
        controls.append(_control(key, state[key], options, rng))
    refs: dict[str, list[Any]] = {"number": [], "string": [], "boolean": []}
    for key, declaration in state.items():
        refs[declaration["type"]].append({"state": key})
    refs["any"] = [ref for kind in ("number", "string", "boolean") for ref in refs[kind]]
    root = {"id": "root", "type": "Column", "props": {}, "children": controls}
    document = {"version": "1.0", "id": f"generated-{index}", "mode": "interactive_ui", "title": "Generated",
                "state": state, "derived": {}, "root": root}
    for j in range(rng.randint(0, 5)):
        kind = rng.choice(["number", "number", "string", "boolean"])
        document["derived"][f"v{j}"] = _document_expression(rng, kind, refs)
        if _accepted(document):
            refs[kind].append({"derived": f"v{j}"})
            refs["any"].append({"derived": f"v{j}"})
        else:
            del document["derived"][f"v{j}"]
    for j in range(rng.randint(1, 6)):
        _try_add(document, _display_node(rng, refs, j) if rng.random() < 0.4 else _button(rng, state, refs, j))
    _try_add(document, {"id": "reset", "type": "Button", "props": {"label": "Reset", "action": {"type": "reset"}}})
    return document


def _try_add(document: dict[str, Any], node: dict[str, Any]) -> None:
    children = document["root"]["children"]
    children.append(node)
    if not _accepted(document):
        children.pop()


def _display_node(rng: random.Random, refs: dict[str, list[Any]], j: int) -> dict[str, Any]:
    if rng.random() < 0.5:
        value = {"expr": _document_expression(rng, "number", refs)}
        return {"id": f"result-{j}", "type": "Result",
                "props": {"value": value, "format": {"style": "percent", "digits": rng.randint(0, 6)}}}
    return {"id": f"text-{j}", "type": "Text", "props": {"text": {"expr": _document_expression(rng, "any", refs)}}}


def _button(rng: random.Random, state: dict[str, Any], refs: dict[str, list[Any]], j: int) -> dict[str, Any]:
    key = rng.choice([*state])
    declaration = state[key]
    value: Any = declaration["initial"]
    if rng.random() < 0.7:
        value = {"expr": _document_expression(rng, declaration["type"], refs)}
    action = {"type": "set", "key": key, "value": value}
    if rng.random() < 0.2:  # a Form's action is declared as well
        return {"id": f"form-{j}", "type": "Form", "props": {"submitLabel": "Go", "action": action},
                "children": [{"id": f"form-text-{j}", "type": "Text", "props": {"text": "inside"}}]}
    return {"id": f"button-{j}", "type": "Button", "props": {"label": f"Set {key}", "action": action}}


BUDGET_FIELDS = 12


def budget_document() -> dict[str, Any]:
    """Twelve 4,096-unit string fields: together they can exceed the 262,144-byte state budget."""
    keys = [f"s{i}" for i in range(BUDGET_FIELDS)]
    return {
        "version": "1.0", "id": "budget", "mode": "interactive_ui", "title": "Budget",
        "state": {key: {"type": "string", "initial": ""} for key in keys}, "derived": {},
        "root": {"id": "root", "type": "Column", "props": {},
                 "children": [{"id": f"input-{key}", "type": "Input", "props": {"label": key, "bind": key}}
                              for key in keys]},
    }


def documents(rng: random.Random, generated: int) -> list[dict[str, Any]]:
    """The examples, the base test document, the budget document and `generated` random ones."""
    return [*example_documents(), base_document(), budget_document(),
            *(random_document(rng, i) for i in range(generated))]


# ------------------------------------------------------------------ values, states and cases per document

GRID_OFFSETS = [0, 1e-10, -1e-10, 5e-10, -5e-10, 9.99e-10, 1e-9, -1e-9, 1.0000001e-9, 2e-9, -2e-9, 1e-6, 0.5, 0.3,
                1e-4, -1e-3, 2e-3]
TRICKY_CHARS = ["a", "\"", "\\", "\n", "\x01", "\x1f", "\x7f", "é", "€", "😀", "\u2028", "/", "<"]


def number_value(rng: random.Random, field: NumberField) -> Any:
    """On, near and off the field's grid and bounds, or junk."""
    kind = rng.randrange(6)
    origin = field.min if field.min is not None else 0
    if kind == 0 and field.step is not None:
        top = math.floor((field.max - origin) / field.step) if field.max is not None else 1000
        k = rng.choice([0, top, rng.randint(-5, max(top, 0) + 5)])
        return origin + (k + rng.choice(GRID_OFFSETS) * max(1, abs(k))) * field.step
    if kind == 1:
        bounds = [b for b in (field.min, field.max) if b is not None] or [0, 1e15]
        bound = rng.choice(bounds)
        return rng.choice([bound, math.nextafter(bound, math.inf), math.nextafter(bound, -math.inf),
                           bound + (field.step or 1), bound - (field.step or 1)])
    if kind == 2:
        return rng.choice([True, False, "1", None, [1], {"a": 1}, 1e16, -1e16, 1e15, -1e15, -0.0, 5e-324])
    if kind == 3:
        return random_number(rng)
    low = field.min if field.min is not None else -1e6
    high = field.max if field.max is not None else 1e6
    return rng.uniform(low, high)


def string_value(rng: random.Random, field: StringField) -> Any:
    """Options, strings at and over maxLength in UTF-16 units, lone surrogates, or junk."""
    limit = field.max_length
    kind = rng.randrange(5)
    if kind == 0 and field.options:
        return rng.choice(sorted(field.options))
    if kind == 1:
        return rng.choice(["a" * limit, "a" * (limit + 1), "😀" * (limit // 2) + "a" * (limit % 2),
                           "😀" * (limit // 2 + 1), "é" * limit])
    if kind == 2:
        return rng.choice(["\ud800", "a\udc00", "\ud83d", "😀\ude00"])
    if kind == 3:
        return rng.choice([1, True, None, ["a"], {"a": "b"}])
    return "".join(rng.choice(TRICKY_CHARS) for _ in range(rng.randint(0, 6)))


def field_value(rng: random.Random, field: Any) -> Any:
    """A value to write to `field`: valid or not, as a user or an action might write it."""
    if isinstance(field, NumberField):
        return number_value(rng, field)
    if isinstance(field, StringField):
        return string_value(rng, field)
    assert isinstance(field, BooleanField)
    return rng.choice([True, False, True, False, 0, 1, "true", None])


def reachable_states(rng: random.Random, parsed: Any, count: int) -> list[dict[str, Any]]:
    """Valid states reached from the initial one by random updates that core accepts."""
    fields = parsed.model.fields
    states = [dict(parsed.model.initial)]
    while fields and len(states) < count:
        state = dict(rng.choice(states))
        for _ in range(rng.randint(1, 4)):
            key = rng.choice([*fields])
            try:
                state = dict(update_state(parsed, state, key, field_value(rng, fields[key])))
            except UIError:
                continue
        states.append(state)
    return states


def invalid_state(rng: random.Random, state: dict[str, Any]) -> Any:
    """A state the document rejects: a field missing or extra, a wrong value, or not an object."""
    broken = dict(state)
    kind = rng.randrange(4) if broken else 1
    if kind == 0:
        del broken[rng.choice([*broken])]
    elif kind == 1:
        broken["extra"] = 1
    elif kind == 2:
        broken[rng.choice([*broken])] = rng.choice([[1], {"a": 1}, 1e16, "\ud800", None])
    else:
        return rng.choice([None, [1], "state", 5])
    return broken


def _declared_actions(node: Any) -> list[Any]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if "action" in current.get("props", {}):
            found.append(current["props"]["action"])
        stack.extend(current.get("children", []))
    return found


def _mutated_action(rng: random.Random, action: dict[str, Any]) -> Any:
    kind = rng.randrange(5)
    if kind == 0:
        return {**action, "extra": 1}
    if kind == 1:
        return {"type": "invoke", "actionId": "save"}
    if kind == 2:
        return rng.choice([None, "reset", ["reset"], {"type": "RESET"}, {}])
    if kind == 3 and action.get("type") == "set":
        return {**action, "key": "nope"}
    return {"type": "set", "key": action.get("key", "x"), "value": "changed"}


def _display_values(node: Any) -> list[Any]:
    values, stack = [], [node]
    while stack:
        current = stack.pop()
        props = current.get("props", {})
        values += [props[name] for name in ("text", "value", "message") if name in props]
        values += [point["value"] for point in props.get("data", [])]
        stack.extend(current.get("children", []))
    return values


UNDECLARED_KEYS: list[Any] = ["nope", "__proto__", "constructor", 1, None]
JUNK_VALUES: list[Any] = [{"expr": 1, "x": 2}, {"state": "n"}, [1], 5, "text", None, {"expr": {"derived": "nope"}},
                          {"expr": {"state": "nope"}}, {}]


def document_cases(rng: random.Random, index: int, document: dict[str, Any], rounds: int) -> list[list[Any]]:
    """Updates, actions, derived and display values of one document at reachable states."""
    parsed = parse_document(document)
    fields = parsed.model.fields
    keys = [*fields]
    states = reachable_states(rng, parsed, 6)
    actions = _declared_actions(document["root"])
    values = _display_values(document["root"])
    refs: dict[str, list[Any]] = {"number": [], "string": [], "boolean": [], "any": []}
    for key, field in fields.items():
        refs[field.kind].append({"state": key})
        refs["any"].append({"state": key})
    for key in parsed.model.derived:
        refs["any"].append({"derived": key})
    cases: list[list[Any]] = [["initial", index]]
    for _ in range(rounds):
        state = rng.choice(states)
        if rng.random() < 0.08:
            state = invalid_state(rng, state)
        key = rng.choice(keys) if keys and rng.random() < 0.95 else rng.choice(UNDECLARED_KEYS)
        value = field_value(rng, fields[key]) if key in fields else 1
        cases.append(["update", index, state, key, value])
        if actions:
            action = rng.choice(actions)
            cases.append(["action", index, state, action if rng.random() < 0.8 else _mutated_action(rng, action)])
        if rng.random() < 0.3:
            cases.append(["derived", index, state])
        value = rng.choice(values) if values and rng.random() < 0.5 else (
            {"expr": _document_expression(rng, "any", refs)} if rng.random() < 0.8 else rng.choice(JUNK_VALUES))
        cases.append(["resolve", index, state, value])
    return cases


def budget_cases(rng: random.Random, index: int, count: int) -> list[list[Any]]:
    """Updates whose candidate state is within a few bytes of the 262,144-byte budget."""
    last = f"s{BUDGET_FIELDS - 1}"
    cases = []
    for _ in range(count):
        spare = rng.randint(20, 12_000)  # the bytes the last field's new value will need
        state = {f"s{i}": _tricky_text(rng, rng.randint(0, 200)) for i in range(BUDGET_FIELDS - 1)}
        state[last] = ""
        for key in [*state][:-1]:  # pad with 6-byte characters up to `spare` bytes below the limit
            room = 4096 - len(state[key].encode("utf-16-le")) // 2
            state[key] += "\x01" * min(room, max((MAX_STATE_BYTES - spare - json_byte_size(state)) // 6, 0))
        target = MAX_STATE_BYTES + rng.randint(-3, 3)
        value = _text_of_bytes(rng, target - json_byte_size(state))
        if value is not None:
            cases.append(["update", index, state, last, value])
    return cases


def _tricky_text(rng: random.Random, chars: int) -> str:
    return "".join(rng.choice(TRICKY_CHARS) for _ in range(chars))


def _text_of_bytes(rng: random.Random, size: int) -> str | None:
    """A string of at most 4,096 UTF-16 units whose JSON text adds exactly `size` bytes, or None."""
    parts: list[str] = []
    remaining, units = size, 0
    while remaining > 8:
        char = "\x01" if rng.random() < 0.5 else rng.choice(TRICKY_CHARS)
        parts.append(char)
        remaining -= json_byte_size(char) - 2
        units += len(char.encode("utf-16-le")) // 2
    parts.append("a" * remaining)
    units += remaining
    return "".join(parts) if units <= 4096 and remaining >= 0 else None
