"""The Client's protocol logic (gateway/web/src, JavaScript) agrees with core on every case.

Seeded random expressions in random scopes, core's own expression conformance data, and state
updates, local actions, derived and display values on the example and generated documents
run through core in Python and through the browser modules in one Node.js process
(tests/unit/client_logic_runner.mjs).  Each case must give the same JSON text as JavaScript
prints it (so `1` vs `1.0` and `-0` are compared the way the page shows them) or the same
error class and code on both sides.
"""

from __future__ import annotations

import json
import math
import random
import re
import struct
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from core import (
    UIActionError,
    UIError,
    UIExpressionError,
    UIStateError,
    dispatch_local_action,
    evaluate_derived,
    evaluate_expression,
    initial_state,
    parse_document,
    resolve_document_value,
    resolve_value,
    update_state,
)
from core.json._number import js_number_string
from core.json._pow import v8_pow
from tests.unit import client_logic_cases as cases_of
from tests.unit import test_expression, test_expression_javascript
from tests.unit.javascript import NODE, node_json

pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js to run the Client's JavaScript modules")

RUNNER = Path(__file__).with_name("client_logic_runner.mjs")
SOURCE = Path(__file__).parents[2] / "gateway" / "web" / "src"
JS_CLASSES = {UIExpressionError: "ExpressionError", UIStateError: "StateError", UIActionError: "ActionError"}
Outcome = dict[str, Any]


def js_text(value: Any) -> str:
    """`JSON.stringify(value)` with DEL and non-ASCII escaped, as the runner prints it."""
    if value is None or value is True or value is False:
        return json.dumps(value)
    if isinstance(value, int | float):
        return js_number_string(value)
    if isinstance(value, str):
        return json.dumps(value)  # \\uXXXX per UTF-16 unit, lowercase, as the runner escapes
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(key)}:{js_text(item)}" for key, item in value.items()) + "}"
    return "[" + ",".join(js_text(item) for item in value) + "]"


def _operations(documents: list[Any]) -> dict[str, Callable[..., Any]]:
    return {
        "expr": evaluate_expression,
        "initial": lambda doc: initial_state(documents[doc]),
        "update": lambda doc, state, key, value: update_state(documents[doc], state, key, value),
        "derived": lambda doc, state: evaluate_derived(documents[doc], state),
        "resolve": lambda doc, state, value: resolve_document_value(documents[doc], state, value),
        "resolveValue": resolve_value,
        "action": lambda doc, state, action: dispatch_local_action(documents[doc], state, action),
    }


def python_outcome(operations: dict[str, Callable[..., Any]], case: list[Any]) -> Outcome:
    """What core gives for a case, in the runner's outcome shape."""
    operation, *args = case
    try:
        return {"ok": js_text(operations[operation](*args))}
    except UIError as error:
        return {"error": [JS_CLASSES.get(type(error), type(error).__name__), error.code]}
    except Exception as error:  # a foreign exception out of core is a difference too
        return {"crash": repr(error)}


def run_javascript(documents: list[Any], cases: list[list[Any]]) -> list[Outcome]:
    """The outcome of every case in the Client's modules, all in one Node.js process."""
    payload = json.dumps({"documents": documents, "cases": cases}, allow_nan=False)
    return node_json(f"import({json.dumps(RUNNER.as_uri())})", payload)  # type: ignore[no-any-return]


def differences(documents: list[Any], cases: list[list[Any]]) -> tuple[list[Any], list[Outcome]]:
    """Run every case on both sides; core gets what JavaScript gets (the JSON round trip)."""
    decoded = json.loads(json.dumps({"documents": documents, "cases": cases}, allow_nan=False))
    javascript = run_javascript(documents, cases)
    operations = _operations([parse_document(document) for document in decoded["documents"]])
    python = [python_outcome(operations, case) for case in decoded["cases"]]
    found = [(case, mine, theirs) for case, mine, theirs in zip(decoded["cases"], python, javascript, strict=True)
             if mine != theirs]
    return found, javascript


def _report(found: list[Any], total: int) -> str:
    shown = "\n".join(f"  {json.dumps(case)[:300]}\n    core: {str(mine)[:300]}\n    js:   {str(theirs)[:300]}"
                      for case, mine, theirs in found[:8])
    return f"{len(found)} of {total} cases differ:\n{shown}"


def _operators(expr: Any) -> Iterator[str]:
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("op"), str):
                yield node["op"]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def test_random_expressions_in_random_scopes_agree_with_core() -> None:
    rng = random.Random(20240611)
    cases = cases_of.expression_cases(rng, 6_000) + cases_of.deep_cases()
    found, javascript = differences([], cases)
    assert not found, _report(found, len(cases))
    used = Counter(op for case in cases for op in _operators(case[1]))
    assert set(cases_of.ARITY) <= set(used), "every one of the 18 operators is exercised"
    assert sum("ok" in outcome for outcome in javascript) > len(cases) * 0.4  # most evaluate, many fail


def _parametrized(function: Any) -> list[Any]:
    """The parameter sets of a parametrized test function (core's documented expression cases)."""
    return [values for mark in function.pytestmark if mark.name == "parametrize" for values in mark.args[1]]


def conformance_cases() -> list[list[Any]]:
    """core's expression conformance data: its Node-checked random cases and documented examples."""
    state = test_expression_javascript.STATE
    rng = random.Random(0)
    exprs = [test_expression_javascript._expression(rng, rng.choice(["number", "boolean", "any"]), 1)
             for _ in range(1_500)]
    for x in test_expression_javascript.NUMBERS:
        exprs += [{"op": "round", "args": [x, digits]} for digits in range(7)]
        exprs += [{"op": "concat", "args": [x]}, {"op": "pow", "args": [x, 2]}, {"op": "pow", "args": [x, 0.5]},
                  {"op": "pow", "args": [x, -1]}, {"op": "pow", "args": [10, x]}, {"op": "div", "args": [1, x]}]
        exprs += [{"op": op, "args": [x, y]} for y in (0.1, 1.005, -0.0, 3) for op in ("add", "sub", "mul", "lt", "eq")]
    exprs += _parametrized(test_expression.test_failures_raise_expression_errors)
    rounds = _parametrized(test_expression.test_round_is_number_of_to_fixed)
    exprs += [{"op": "round", "args": list(args)} for args, _ in rounds]
    exprs += [{"op": "concat", "args": ["<", value, ">"]}
              for value, _ in _parametrized(test_expression.test_concat_prints_numbers_as_javascript_string)]
    return [["expr", expr, state, None] for expr in exprs]


def test_cores_expression_conformance_data_agrees() -> None:
    cases = conformance_cases()
    found, _ = differences([], cases)
    assert not found, _report(found, len(cases))


def document_case_set() -> tuple[list[Any], list[list[Any]]]:
    """The documents and their cases: every document at reachable and broken states."""
    rng = random.Random(31337)
    documents = cases_of.documents(rng, 40)
    cases: list[list[Any]] = []
    for index, document in enumerate(documents):
        if document["id"] == "budget":
            cases += cases_of.budget_cases(rng, index, 40)
        cases += cases_of.document_cases(rng, index, document, 20)
    return documents, cases


def test_state_updates_actions_and_values_on_documents_agree_with_core() -> None:
    documents, cases = document_case_set()
    found, javascript = differences(documents, cases)
    assert not found, _report(found, len(cases))
    kinds = Counter(case[0] for case in cases)
    assert kinds["update"] + kinds["action"] >= 1_000
    outcomes = Counter(outcome["error"][1] if "error" in outcome else "ok" for outcome in javascript)
    for code in ("ok", "invalid_value", "unknown_field", "fields", "too_large", "state", "undeclared", "not_local",
                 "expression"):
        assert outcomes[code], f"no case ended with {code}"


def test_scopes_that_are_not_objects_fail_or_are_ignored_alike() -> None:
    cases: list[list[Any]] = [["expr", 1, state, None] for state in (None, [1], "state", 5, True)]
    cases += [["expr", {"derived": "d"}, {}, derived] for derived in (None, [1], "d", 5, {"d": 1}, {"d": [1]})]
    cases += [["resolveValue", value, {"n": 2}, {"d": 3}]
              for value in (1, None, {"expr": {"op": "add", "args": [{"state": "n"}, {"derived": "d"}]}},
                            {"expr": 1, "x": 2}, {"state": "n"}, [1], {"expr": {"derived": "nope"}})]
    found, javascript = differences([], cases)
    assert not found, _report(found, len(cases))
    assert javascript[0] == {"error": ["ExpressionError", "expression"]}


def _set_button_document(value: Any) -> dict[str, Any]:
    action = {"type": "set", "key": "s", "value": value}
    button = {"id": "b", "type": "Button", "props": {"label": "Set", "action": action}}
    return {"version": "1.0", "id": "d", "mode": "interactive_ui", "title": "t", "derived": {},
            "state": {"s": {"type": "string", "initial": ""}, "n": {"type": "number", "initial": 1}},
            "root": {"id": "r", "type": "Column", "props": {}, "children": [button]}}


CRAFTED_ACTION = ["action", 0, {"s": "", "n": 1},
                  {"type": "set", "key": "s", "value": {"expr": {"op": "concat", "args": ["x", True]}}}]


def test_an_action_that_differs_from_the_declared_one_by_true_for_1_is_undeclared_in_javascript() -> None:
    document = _set_button_document({"expr": {"op": "concat", "args": ["x", 1]}})
    _, javascript = differences([document], [CRAFTED_ACTION])
    assert javascript == [{"error": ["ActionError", "undeclared"]}]


def test_core_refuses_an_action_that_differs_from_the_declared_one_by_true_for_1() -> None:
    document = _set_button_document({"expr": {"op": "concat", "args": ["x", 1]}})
    found, _ = differences([document], [CRAFTED_ACTION])
    assert not found, _report(found, 1)


def test_joined_surrogate_halves_are_one_character_in_javascript() -> None:
    joined = {"op": "eq", "args": [{"op": "concat", "args": ["\ud83d", "\ude00"]}, "😀"]}
    _, javascript = differences([], [["expr", joined, {}, None]])
    assert javascript == [{"ok": "true"}]


def test_core_joins_surrogate_halves_as_javascript_does() -> None:
    joined = {"op": "eq", "args": [{"op": "concat", "args": ["\ud83d", "\ude00"]}, "😀"]}
    found, _ = differences([], [["expr", joined, {}, None]])
    assert not found, _report(found, 1)


FORMATS: list[tuple[Any, Any, Any, str]] = [
    (0.05, {"style": "percent"}, "en-US", "5.00%"),
    (0.123456, {"style": "percent", "digits": 1}, "en-US", "12.3%"),
    (1234.5, {"style": "currency", "currency": "CNY"}, "en-US", "CN¥1,234.50"),
    (1234.5, {"style": "currency", "currency": "CNY"}, "zh-CN", "¥1,234.50"),
    (1234.5, {"style": "currency", "currency": "EUR", "digits": 0}, "de-DE", "1.235\u00a0€"),
    (-3, {"style": "currency", "currency": "USD"}, "en-US", "-$3.00"),
    (1e15, {"style": "decimal", "digits": 6}, "en-US", "1,000,000,000,000,000.000000"),
    (5, {"style": "decimal"}, "en-US", "5.00"),
    (1.005, {"style": "decimal"}, "en-US", "1.01"),  # Intl rounds the decimal text; round(1.005, 2) is 1
    (-0.001, {"style": "decimal"}, "en-US", "0.00"),  # no "-0.00"
    (-0.0, {"style": "percent", "digits": 0}, "en-US", "0%"),
    ("n/a", {"style": "decimal"}, "en-US", "n/a"),
    (None, None, None, ""),
    (True, None, None, "true"),
    (1e-7, None, None, "1e-7"),
    (0.1 + 0.2, None, None, "0.30000000000000004"),
]


def test_result_formats_and_plain_display_text_are_the_seeds() -> None:
    # seed 000 §5: Intl.NumberFormat, digits default 2, percent as a ratio; a plain slot
    # shows String(v) with null as "" (§3)
    javascript = run_javascript([], [["format", value, format, locale] for value, format, locale, _ in FORMATS])
    assert javascript == [{"ok": json.dumps(text)} for *_, text in FORMATS]


def test_the_client_modules_are_plain_es_modules_without_eval_or_dependencies() -> None:
    # they ship as static files: no build step, no package imports (only the Client's own modules
    # and the pinned files vendored beside them, tests/unit/test_web_static.py), nothing that runs
    # text as code
    sources = sorted(SOURCE.glob("*.js"))
    assert sources
    for source in sources:
        text = source.read_text()
        imports = re.findall(r"^(?:import|export)\b[^;]*? from '([^']+)';$", text, flags=re.MULTILINE)
        assert all((name.startswith("./") and name.endswith(".js")) or re.fullmatch(r"\.\./vendor/[a-z]+\.mjs", name)
                   for name in imports), source.name
        assert not re.search(r"\beval\(|\bFunction\(|innerHTML|require\(|process\.", text), source.name


# Pairs where a C library's pow (glibc's, Debian Chromium's `**`) and V8's fdlibm pow differ in
# the last bit: the first is the compound-interest factor of 5% over ten years.
LIBM_DIFFERS = [(1.05, 10.0), (2.5, 1 / 3), (10.0, 2.5)]
SPECIAL_DOUBLES = [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
                   2.225073858507201e-308, 1.7976931348623157e308, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 1 / 3, 2 / 3,
                   2.0**31, 2.0**31 + 1, 2.0**53, 2.0**53 + 2, 2.0**64, 2.0**64 * 3, 1e20, 1 - 2.0**-53, 1 + 2.0**-52]
POW_SCRIPT = r"""
const { readFileSync } = require('node:fs');
import(%s).then(({ v8Pow }) => {
  const view = new DataView(new ArrayBuffer(8));
  const double = (hex) => { view.setBigUint64(0, BigInt(`0x${hex}`)); return view.getFloat64(0); };
  const bits = (x) => {
    if (Number.isNaN(x)) return 'nan';
    view.setFloat64(0, x);
    return view.getBigUint64(0).toString(16).padStart(16, '0');
  };
  const pairs = JSON.parse(readFileSync(0, 'utf8'));
  process.stdout.write(JSON.stringify(pairs.map(([x, y]) => bits(v8Pow(double(x), double(y))))));
});
"""


def _hex(x: float) -> str:
    """The 64-bit pattern of a double as 16 hex digits, big-endian."""
    return struct.pack(">d", x).hex()


def _bits(x: float) -> str:
    """A result's 64-bit pattern; any NaN is "nan" (its payload is not observable in the DSL)."""
    return "nan" if math.isnan(x) else _hex(x)


def _any_double(rng: random.Random) -> float:
    """Doubles from every part of the range: the expression corpus's (`_double_of`: integers, halves,
    decimals, every magnitude, values near one), any bit pattern, subnormals and the special values."""
    kind = rng.randrange(5)
    if kind == 0:
        return float(struct.unpack(">d", rng.getrandbits(64).to_bytes(8, "big"))[0])
    if kind == 1:
        return rng.choice([-1.0, 1.0]) * rng.randint(1, 2**52 - 1) * 5e-324  # subnormal
    if kind == 2:
        return rng.choice(SPECIAL_DOUBLES)
    return test_expression_javascript._double_of(rng)


def _pow_pair(rng: random.Random) -> tuple[float, float]:
    """A pair for pow: any two doubles or one of the paths of fdlibm's pow, each often."""
    kind = rng.randrange(9)
    if kind == 0:  # a negative base with an integer exponent, small or beyond 2**20 (odd and even)
        y = float(rng.randint(-400, 400)) if rng.random() < 0.7 else float(2 ** rng.randint(21, 60) + rng.randint(0, 1))
        return -abs(_any_double(rng)), rng.choice([-1.0, 1.0]) * y
    if kind == 1:  # the exponents with shortcuts of their own, and 1/3
        return _any_double(rng), rng.choice([0.5, -0.5, 2.0, -2.0, 1.0, -1.0, 3.0, 1 / 3, -1 / 3, 0.0, -0.0])
    if kind == 2:  # |y| > 2**31 with x near one: fdlibm's log2 near one, over- and underflow
        x = 1.0 + rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-20, -4)
        return x, rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(9, 21)
    if kind == 3:  # results near the overflow threshold and in the subnormal range
        x = rng.uniform(1.5, 2.5) if rng.random() < 0.5 else -float(rng.choice([2, 3]))
        y = rng.uniform(1020, 1030) if rng.random() < 0.3 else rng.uniform(-1080, -1015)
        return x, (float(round(y)) if x < 0 else y)
    if kind == 4:  # what documents compute: growth factors over whole numbers of years
        return 1 + rng.randint(0, 60) * 0.25 / 100, float(rng.randint(1, 50))
    if kind == 5:  # y * log2(x) a few ulps from 1024 or -1075 exactly: fdlibm's two threshold tests
        x = rng.uniform(1.01, 8) if rng.random() < 0.5 else rng.uniform(0.125, 0.99)
        y = rng.choice([1024.0, -1075.0]) / math.log2(x)
        return x, y + rng.randint(-3, 3) * math.ulp(y)
    return _any_double(rng), _any_double(rng)


def test_the_clients_pow_is_cores_v8_pow_bit_for_bit() -> None:
    # Node.js 20's own `**` is V8's fdlibm pow already, so the reference is core's Python port:
    # a broken port cannot pass by agreeing with the engine it runs in.
    rng = random.Random(1993)
    pairs = LIBM_DIFFERS + [(x, y) for x in SPECIAL_DOUBLES for y in SPECIAL_DOUBLES]
    pairs += [_pow_pair(rng) for _ in range(20_000 - len(pairs))]
    assert len(pairs) == 20_000
    uri = json.dumps((SOURCE / "pow.js").as_uri())
    javascript = node_json(POW_SCRIPT % uri, json.dumps([[_hex(x), _hex(y)] for x, y in pairs]))
    python = [_bits(v8_pow(x, y)) for x, y in pairs]
    found = [(x, y, mine, theirs) for (x, y), mine, theirs in zip(pairs, python, javascript, strict=True)
             if mine != theirs]
    assert not found, f"{len(found)} of {len(pairs)} differ (x, y, core, Client): {found[:8]}"
    assert javascript[:3] == [_bits(1.6288946267774422), _bits(1.3572088082974534), _bits(316.2277660168379)]
    kinds = Counter("nan" if bits == "nan" else "zero" if float.fromhex(f"0x{bits}p0") == 0 else "other"
                    for bits in javascript)
    assert kinds["nan"] > 500 and kinds["zero"] > 500  # the corpus reaches the special paths too


def _code(source: Path) -> str:
    """A module's text without its comments (line comments and JSDoc blocks)."""
    text = re.sub(r"/\*.*?\*/", "", source.read_text(), flags=re.DOTALL)
    return re.sub(r"(^|\s)//.*$", "", text, flags=re.MULTILINE)


def test_the_dsls_pow_never_calls_the_engines_pow() -> None:
    # a browser's `**` and Math.pow may be the C library's pow (Debian's Chromium), which
    # differs from V8's fdlibm pow in the last bit: the DSL's `pow` is src/pow.js's v8Pow
    code = _code(SOURCE / "expression.js")
    assert "import { v8Pow } from './pow.js';" in code
    assert not re.search(r"\*\*|Math\.pow", code)
    assert not re.search(r"\*\*|Math\.pow", _code(SOURCE / "pow.js"))
