"""`evaluate_expression` against a JavaScript evaluator run by Node.js (the oracle).

The JavaScript side is a direct reading of seed 000 §3 (the 18 operators, no implicit
conversions, every arithmetic intermediate finite and within 1e15, `round` as
`Number(x.toFixed(d))`, `concat` as `String(v)` with null as "") on JavaScript's own numbers,
so every number, comparison and text comes from V8 itself.  Thousands of seeded random
expressions over awkward numbers (0.1, 1.005, -0, 5e-324, 1e15, ...) and strings (astral,
empty) must give the same JSON text, or both an evaluation error.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import orjson
import pytest

from core.errors import UIExpressionError
from core.expression.language import evaluate_expression
from core.json._number import js_number_string, js_to_fixed
from core.json._pow import v8_pow
from core.json._text import utf16_length, utf16_prefix, utf16_sort_key
from core.json.canonical import canonical_json_string
from core.json.safe import assert_safe_json
from core.limits import UI_LIMITS
from tests.unit.javascript import NODE
from tests.unit.javascript import node_json as _node

pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js as the JavaScript oracle")

NUMBERS = [0, 1, -1, 2, 3, 7, 10, -0.0, 0.1, 0.2, 0.3, 0.5, 1.005, 2.5, -2.5, 1.45, 123.456, 1e-7, 5e-324,
           1 / 3, 2 / 3, 1e15, -1e15, 999999999999999.9, 4503599627370495.5 / 8, 1e14 + 0.5, 33.3, 1e-6,
           0.000001234, 6, 0.5e-6, 99.995, 2**20, 1e7 + 0.1]
STRINGS = ["", "a", "é", "😀", "1", "true", "x" * 40]
STATE = {"n": 2.5, "m": -0.1, "z": 0, "big": 1e15, "tiny": 5e-324, "s": "ab😀", "t": True, "f": False}
NUMBER_OPS = ["add", "sub", "mul", "div", "pow", "min", "max", "round"]
COMPARE_OPS = ["lt", "lte", "gt", "gte"]
ARITY = {"add": (2, 4), "mul": (2, 4), "min": (1, 4), "max": (1, 4), "round": (1, 2), "sub": (2, 2),
         "div": (2, 2), "pow": (2, 2), "lt": (2, 2), "lte": (2, 2), "gt": (2, 2), "gte": (2, 2),
         "eq": (2, 2), "and": (2, 3), "or": (2, 3), "not": (1, 1), "if": (3, 3), "concat": (1, 4)}

JAVASCRIPT = r"""
const MAX = 1e15, MAX_STRING = %(max_string)d, MAX_DEPTH = %(max_depth)d, MAX_DIGITS = %(max_digits)d;
const fail = () => { throw new Error('fail'); };
const scalar = v => v === null || typeof v === 'boolean'
  || (typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= MAX)
  || (typeof v === 'string' && v.length <= MAX_STRING);
const num = v => typeof v === 'number' ? v : fail();
const bool = v => typeof v === 'boolean' ? v : fail();
const checked = x => Number.isFinite(x) && Math.abs(x) <= MAX ? x : fail();
function ev(e, state, depth) {
  if (e === null || typeof e !== 'object' || Array.isArray(e)) return scalar(e) ? e : fail();
  if (depth > MAX_DEPTH) fail();
  const keys = Object.keys(e);
  if (keys.length === 1 && keys[0] === 'state') {
    const v = state[e.state];
    return typeof e.state === 'string' && Object.hasOwn(state, e.state) && scalar(v) ? v : fail();
  }
  if (keys.length !== 2 || !('op' in e) || !Array.isArray(e.args)) fail();
  const a = e.args, n = a.length, d = depth + 1, at = i => ev(a[i], state, d);
  const arity = (lo, hi) => { if (n < lo || n > hi) fail(); };
  const nums = (lo, hi) => { arity(lo, hi); return a.map((_, i) => num(at(i))); };
  switch (e.op) {
    case 'add': return nums(2, 16).reduce((s, x) => checked(s + x), 0);
    case 'mul': return nums(2, 16).reduce((p, x) => checked(p * x), 1);
    case 'sub': { const [x, y] = nums(2, 2); return checked(x - y); }
    case 'div': { const [x, y] = nums(2, 2); if (y === 0) fail(); return checked(x / y); }
    case 'pow': { const [x, y] = nums(2, 2); return checked(x ** y); }
    case 'min': return Math.min(...nums(1, 16));
    case 'max': return Math.max(...nums(1, 16));
    case 'round': {
      const v = nums(1, 2), digits = v.length === 2 ? v[1] : 0;
      if (!Number.isInteger(digits) || digits < 0 || digits > MAX_DIGITS) fail();
      return checked(Number(v[0].toFixed(digits)));
    }
    case 'lt': { const [x, y] = nums(2, 2); return x < y; }
    case 'lte': { const [x, y] = nums(2, 2); return x <= y; }
    case 'gt': { const [x, y] = nums(2, 2); return x > y; }
    case 'gte': { const [x, y] = nums(2, 2); return x >= y; }
    case 'eq': { arity(2, 2); return at(0) === at(1); }
    case 'and': { arity(2, 16); for (let i = 0; i < n; i++) if (!bool(at(i))) return false; return true; }
    case 'or': { arity(2, 16); for (let i = 0; i < n; i++) if (bool(at(i))) return true; return false; }
    case 'not': { arity(1, 1); return !bool(at(0)); }
    case 'if': { arity(3, 3); return bool(at(0)) ? at(1) : at(2); }
    case 'concat': {
      arity(1, 16);
      let text = '';
      for (let i = 0; i < n; i++) {
        const v = at(i);
        text += v === null ? '' : String(v);
        if (text.length > MAX_STRING) fail();
      }
      return text;
    }
  }
  return fail();
}
const { state, cases } = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(cases.map(e => {
  try { return JSON.stringify(ev(e, state, 1)); } catch (error) { return null; }
})));
"""


def _leaf(rng: random.Random, kind: str) -> Any:
    if rng.random() < 0.2:
        return {"state": rng.choice(list(STATE))}  # any type: runtime type errors are compared too
    if kind == "number" or (kind == "any" and rng.random() < 0.5):
        return rng.choice(NUMBERS)
    if kind == "boolean":
        return rng.choice([True, False])
    return rng.choice([*STRINGS, None, True, 7, 0.1])


def _expression(rng: random.Random, kind: str, depth: int) -> Any:
    if depth > 3 or rng.random() < 0.3:
        return _leaf(rng, kind)
    if kind == "number":
        op = rng.choice(NUMBER_OPS)
    elif kind == "boolean":
        op = rng.choice([*COMPARE_OPS, "eq", "and", "or", "not", "if"])
    else:
        op = rng.choice([*ARITY])
    low, high = ARITY[op]
    count = rng.randint(low, high)
    if op == "round" and count == 2:
        return {"op": op, "args": [_expression(rng, "number", depth + 1), rng.choice([0, 1, 2, 3, 6, 7, 1.5, -1])]}
    if op == "if":
        args = [_expression(rng, "boolean", depth + 1), _expression(rng, kind, depth + 1),
                _expression(rng, kind, depth + 1)]
    else:
        arg_kind = {"and": "boolean", "or": "boolean", "not": "boolean", "eq": "any", "concat": "any"}.get(op, "number")
        args = [_expression(rng, arg_kind, depth + 1) for _ in range(count)]
    if rng.random() < 0.03:  # a wrong arity now and then
        args = args[:-1] if len(args) > 1 else [*args, 1]
    return {"op": op, "args": args}


def _python(expr: Any) -> str | None:
    try:
        return canonical_json_string(evaluate_expression(expr, STATE))
    except UIExpressionError:
        return None


def _javascript(cases: list[Any]) -> list[str | None]:
    script = JAVASCRIPT % {"max_string": UI_LIMITS["maxStringLength"], "max_depth": UI_LIMITS["maxExpressionDepth"],
                           "max_digits": UI_LIMITS["maxRoundDigits"]}
    return _node(script, json.dumps({"state": STATE, "cases": cases}))  # type: ignore[no-any-return]


@pytest.mark.parametrize("seed", range(4))
def test_random_expressions_evaluate_as_javascript_evaluates_them(seed: int) -> None:
    rng = random.Random(seed)
    cases = [_expression(rng, rng.choice(["number", "boolean", "any"]), 1) for _ in range(1_500)]
    expected = _javascript(cases)
    mismatches = [(case, _python(case), js) for case, js in zip(cases, expected, strict=True) if _python(case) != js]
    assert not mismatches[:5], f"{len(mismatches)} of {len(cases)} differ from JavaScript"
    assert sum(result is not None for result in expected) > len(cases) // 3  # most cases evaluate


def test_awkward_numbers_round_compare_and_print_as_in_javascript() -> None:
    cases: list[Any] = []
    for x in NUMBERS:
        cases += [{"op": "round", "args": [x, digits]} for digits in range(7)]
        cases += [{"op": "concat", "args": [x]}, {"op": "pow", "args": [x, 2]}, {"op": "pow", "args": [x, 0.5]},
                  {"op": "pow", "args": [x, -1]}, {"op": "pow", "args": [10, x]}, {"op": "div", "args": [1, x]}]
        cases += [{"op": op, "args": [x, y]} for y in (0.1, 1.005, -0.0, 3) for op in ("add", "sub", "mul", "lt", "eq")]
    expected = _javascript(cases)
    assert [_python(case) for case in cases] == expected


POW_SCRIPT = r"""
const pairs = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const text = v => Object.is(v, -0) ? '-0' : String(v);
process.stdout.write(JSON.stringify(pairs.map(([x, y]) => text(x ** y))));
"""


def _double_of(rng: random.Random) -> float:
    """Doubles from every part of the range: small integers, halves, decimals, subnormals, huge."""
    kind = rng.randrange(6)
    if kind == 0:
        return float(rng.randint(-40, 40))
    if kind == 1:
        return rng.randint(-80, 80) / 2
    if kind == 2:
        return rng.uniform(-10, 10)
    if kind == 3:
        return rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-320, 308)
    if kind == 4:
        return 1.0 + rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-16, -5)  # close to one
    return rng.choice([0.0, -0.0, 0.5, -0.5, 2.0, 1.0, -1.0, 5e-324, 1e300, 2.0**31 + 1, 2.0**53, 1e20])


@pytest.mark.parametrize("seed", range(3))
def test_pow_is_v8s_pow_bit_for_bit(seed: int) -> None:
    # Every pair of doubles, results beyond the DSL's range included (Infinity, NaN, -0, subnormals).
    rng = random.Random(seed)
    pairs = [(_double_of(rng), _double_of(rng)) for _ in range(20_000)]
    javascript = _node(POW_SCRIPT, json.dumps(pairs))
    results = [v8_pow(x, y) for x, y in pairs]
    ours = ["-0" if r == 0 and math.copysign(1, r) < 0 else js_number_string(r) for r in results]
    mismatches = [(pair, mine, theirs) for pair, mine, theirs in zip(pairs, ours, javascript, strict=True)
                  if mine != theirs]
    assert not mismatches[:5], f"{len(mismatches)} of {len(pairs)} differ from V8"


NUMBER_SCRIPT = r"""
const { numbers, values } = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify({
  strings: numbers.map(x => String(x)),
  fixed: numbers.map(x => [0, 1, 2, 3, 6, 20, 100].map(d => x.toFixed(d))),
  sizes: values.map(v => Buffer.byteLength(JSON.stringify(v), 'utf8')),
}));
"""


def _json_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(7 if depth < 4 else 4)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return _double_of(rng) if rng.random() < 0.5 else rng.randint(-(10**15), 10**15)
    if kind in (2, 3):
        return "".join(rng.choice(["a", "\"", "\\", "\n", "\x01", "\x7f", "é", "€", "😀", "\u2028", " "])
                       for _ in range(rng.randrange(6)))
    if kind in (4, 5):
        return [_json_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {f"k{n}é": _json_value(rng, depth + 1) for n in range(rng.randrange(4))}


def test_number_text_to_fixed_and_json_sizes_are_javascripts() -> None:
    rng = random.Random(7)
    numbers = [x for x in (_double_of(rng) for _ in range(20_000)) if math.isfinite(x)]
    values = [v for v in (_json_value(rng) for _ in range(3_000)) if _finite_within(v)]
    expected = _node(NUMBER_SCRIPT, json.dumps({"numbers": numbers, "values": values}))
    assert [js_number_string(x) for x in numbers] == expected["strings"]
    fixed = [[js_to_fixed(x, d) for d in (0, 1, 2, 3, 6, 20, 100)] for x in numbers]
    assert fixed == expected["fixed"]
    assert [assert_safe_json(v) for v in values] == expected["sizes"]


def _finite_within(value: Any) -> bool:
    """Within the safe-JSON number budget (|x| <= 1e15), which JSON sizes are measured for."""
    if isinstance(value, float | int) and not isinstance(value, bool):
        return math.isfinite(value) and abs(value) <= 1e15
    if isinstance(value, list):
        return all(_finite_within(item) for item in value)
    if isinstance(value, dict):
        return all(_finite_within(item) for item in value.values())
    return True


def _decimal_text(rng: random.Random) -> str:
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 30))).lstrip("0") or "0"
    cut = rng.randint(0, len(digits))
    text = (digits[:cut] or "0") + ("." + digits[cut:] if cut < len(digits) else "")
    if rng.random() < 0.5:
        text += f"e{rng.randint(-330, 270)}"
    return "-" + text if rng.random() < 0.3 else text


def test_numbers_decoded_from_json_text_are_the_doubles_json_parse_gives() -> None:
    # The worker decodes entries with orjson; the browser and the model's tooling with JSON.parse.
    rng = random.Random(11)
    texts = [_decimal_text(rng) for _ in range(30_000)]
    array = "[" + ",".join(texts) + "]"
    parsed = _node("const a = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
                   "process.stdout.write(JSON.stringify(a.map(String)))", array)
    within = [(text, ours, theirs) for text, ours, theirs in zip(texts, orjson.loads(array), parsed, strict=True)
              if abs(ours) <= 1e15]  # larger numbers are unsafe JSON, refused before any use
    assert len(within) > 10_000
    assert [js_number_string(ours) for _, ours, _ in within] == [theirs for _, _, theirs in within]


JCS_SCRIPT = r"""
const values = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const c = v => v === null || typeof v !== 'object' ? JSON.stringify(v)
  : Array.isArray(v) ? '[' + v.map(c).join(',') + ']'
  : '{' + Object.keys(v).sort().map(k => JSON.stringify(k) + ':' + c(v[k])).join(',') + '}';
process.stdout.write(JSON.stringify(values.map(c)));
"""
KEYS = ["a", "B", "é", "\ue000", "\U0001f600", "\U00010000", "\uffff", "1", "10", "2", "", " ", "\x7f", "\u2028"]


def _keyed_value(rng: random.Random, depth: int = 0) -> Any:
    if depth < 4 and rng.random() < 0.4:
        return {rng.choice(KEYS) + rng.choice(["", "x"]): _keyed_value(rng, depth + 1) for _ in range(rng.randrange(5))}
    if depth < 4 and rng.random() < 0.3:
        return [_keyed_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return _json_value(rng, 9)


def test_canonical_json_is_what_a_javascript_jcs_prints_for_random_values() -> None:
    # Keys sort by UTF-16 code units (JavaScript's sort), which differs from code points when
    # a key holds U+E000..U+FFFF and another an astral character; numbers print as JS prints them.
    rng = random.Random(5)
    values = [v for v in (_keyed_value(rng) for _ in range(4_000)) if _finite_within(v)]
    assert [canonical_json_string(v) for v in values] == _node(JCS_SCRIPT, json.dumps(values))


def test_string_lengths_and_order_are_javascripts() -> None:
    # `maxLength` and every string budget count UTF-16 code units, as `String.prototype.length`.
    rng = random.Random(3)
    alphabet = ["a", "é", "€", "\ue000", "\uffff", "😀", "\U00010000", "\U0010ffff", "\x00", "\u2028"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(12))) for _ in range(5_000)]
    script = ("const t = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "process.stdout.write(JSON.stringify({lengths: t.map(s => s.length), order: [...t].sort()}));")
    expected = _node(script, json.dumps(texts))
    assert [utf16_length(text) for text in texts] == expected["lengths"]
    assert sorted(texts, key=utf16_sort_key) == expected["order"]


@pytest.mark.parametrize(("text", "units", "prefix"), [
    ("abc", 2, "ab"), ("abc", 3, "abc"), ("ab\U0001F600c", 3, "ab"), ("ab\U0001F600c", 4, "ab\U0001F600"),
    ("\U0001F600" * 600, 512, "\U0001F600" * 256), ("\ud800x", 1, ""), ("x\udc00", 2, "x\udc00"), ("", 0, ""),
])
def test_a_utf16_prefix_keeps_whole_characters_within_the_units(text: str, units: int, prefix: str) -> None:
    # a receipt message was cut at 512 code points: 1,024 units of emoji, which core then refused
    assert utf16_prefix(text, units) == prefix
    assert utf16_length(utf16_prefix(text, units)) <= units
