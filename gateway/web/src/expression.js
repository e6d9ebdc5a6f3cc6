/**
 * The 18-operator expression language of derived values and dynamic props (seed 000 §3).
 *
 * This is the reference semantics that core/expression/language.py emulates in Python, so
 * it is written to fail exactly where core fails, with the same error codes and in the same
 * order: arity first, then each argument in turn, then the result budget, on every expression
 * and state a validated document can hold.  (Core's raw `evaluate_expression` also walks its
 * whole input for safe JSON first, so a branch never taken that nests past 128 levels fails
 * there and not here: a document cannot hold one.)  Documents are
 * validated by core before they reach the page, but every value is re-checked here anyway:
 * state is browser-written and a bug must surface as an ExpressionError, never as a wrong
 * number.  No eval, no property paths: references are own keys of plain objects only.
 */

import { ExpressionError } from './errors.js';
import { v8Pow } from './pow.js';

export const MAX_MAGNITUDE = 1e15;
export const MAX_STRING = 4096;
export const MAX_DEPTH = 32;
export const MAX_ARGS = 16;
export const MAX_ROUND_DIGITS = 6;

/** @typedef {string | number | boolean | null} Scalar */
/** @typedef {(key: string) => Scalar} DerivedLookup */

/**
 * An own key only: `{"state": "constructor"}` must not read Object.prototype.
 * @param {object} object
 * @param {string} key
 */
export const hasOwn = (object, key) => Object.prototype.hasOwnProperty.call(object, key);

/**
 * A plain JSON object (not null, not an array): what core calls a Mapping.
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
export function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A finite number within the protocol's magnitude budget.
 * @param {unknown} value
 * @returns {value is number}
 */
export function isSafeNumber(value) {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= MAX_MAGNITUDE;
}

/**
 * A value an expression may hold: null, a boolean, a budgeted number or a string of at
 * most 4,096 UTF-16 units (`length` already counts UTF-16 units, as the seed does).
 * @param {unknown} value
 * @returns {value is Scalar}
 */
export function isScalar(value) {
  if (value === null || typeof value === 'boolean') return true;
  if (typeof value === 'string') return value.length <= MAX_STRING;
  return isSafeNumber(value);
}

/**
 * `concat`'s text of a scalar and the text a plain display slot shows: `String(v)`,
 * except that null is the empty string (seed 000 §3).
 * @param {Scalar} value
 * @returns {string}
 */
export function scalarText(value) {
  return value === null ? '' : String(value);
}

/**
 * Evaluate `expr` against a state and already computed derived values.
 * @param {unknown} expr
 * @param {unknown} state
 * @param {unknown} [derived]
 * @returns {Scalar}
 */
export function evaluateExpression(expr, state, derived) {
  if (!isObject(state)) throw new ExpressionError('state must be an object');
  const values = isObject(derived) ? derived : {};
  /** @type {DerivedLookup} */
  const lookup = (key) => {
    // a derived value handed in is checked as a state value is: the caller may be wrong
    if (!hasOwn(values, key)) throw new ExpressionError('derived reference is not available', 'unknown_derived');
    const value = values[key];
    if (!isScalar(value)) throw new ExpressionError('derived value is not a scalar', 'invalid_derived');
    return value;
  };
  return evaluate(expr, state, lookup);
}

/**
 * Evaluate with a derived-value callback, so callers can compute derived values lazily.
 * @param {unknown} expr
 * @param {Record<string, unknown>} state
 * @param {DerivedLookup} derived
 * @param {number} [depth]
 * @returns {Scalar}
 */
export function evaluate(expr, state, derived, depth = 1) {
  if (!isObject(expr)) {
    if (isScalar(expr)) return expr;
    throw new ExpressionError('invalid scalar in expression');
  }
  if (depth > MAX_DEPTH) throw new ExpressionError(`expression nesting exceeds ${MAX_DEPTH} levels`);
  const keys = Object.keys(expr);
  if (keys.length === 1 && keys[0] === 'state') return stateValue(state, expr.state);
  if (keys.length === 1 && keys[0] === 'derived') {
    if (typeof expr.derived !== 'string') throw new ExpressionError('derived reference must be a string key');
    return derived(expr.derived);
  }
  if (keys.length === 2 && hasOwn(expr, 'op') && Array.isArray(expr.args)) {
    const handler = typeof expr.op === 'string' ? HANDLERS.get(expr.op) : undefined;
    if (handler) return handler(expr.args, state, derived, depth + 1);
  }
  throw new ExpressionError('invalid expression');
}

/**
 * @param {Record<string, unknown>} state
 * @param {unknown} key
 * @returns {Scalar}
 */
function stateValue(state, key) {
  if (typeof key !== 'string' || !hasOwn(state, key)) throw new ExpressionError('state reference is not available');
  const value = state[key];
  if (!isScalar(value)) throw new ExpressionError('state value is not a scalar');
  return value;
}

/** @param {number} x */
function checked(x) {
  if (!isSafeNumber(x)) throw new ExpressionError('arithmetic result is not finite or exceeds 1e15');
  return x;
}

/** @param {unknown} value */
function asNumber(value) {
  if (isSafeNumber(value)) return value;
  throw new ExpressionError('expected a number');
}

/** @param {unknown} value */
function asBoolean(value) {
  if (typeof value === 'boolean') return value;
  throw new ExpressionError('expected a boolean');
}

/** @param {unknown[]} args @param {number} low @param {number} high */
function arity(args, low, high) {
  if (args.length < low || args.length > high) throw new ExpressionError('wrong number of arguments');
}

/**
 * Every argument evaluated in order and required to be a number (the first failure wins).
 * @param {unknown[]} args
 * @param {Record<string, unknown>} state
 * @param {DerivedLookup} derived
 * @param {number} depth
 * @param {number} [low]
 * @param {number} [high]
 * @returns {number[]}
 */
function numbers(args, state, derived, depth, low = 2, high = MAX_ARGS) {
  arity(args, low, high);
  return args.map((arg) => asNumber(evaluate(arg, state, derived, depth)));
}

/** @typedef {(args: unknown[], state: Record<string, unknown>, derived: DerivedLookup, depth: number) => Scalar} Handler */

/** @type {Handler} */
function add(args, state, derived, depth) {
  // every partial sum is an intermediate result and must stay within the budget
  return numbers(args, state, derived, depth).reduce((total, x) => checked(total + x), 0);
}

/** @type {Handler} */
function mul(args, state, derived, depth) {
  return numbers(args, state, derived, depth).reduce((product, x) => checked(product * x), 1);
}

/** @type {Handler} */
function sub(args, state, derived, depth) {
  const [a, b] = numbers(args, state, derived, depth, 2, 2);
  return checked(a - b);
}

/** @type {Handler} */
function div(args, state, derived, depth) {
  const [a, b] = numbers(args, state, derived, depth, 2, 2);
  if (b === 0) throw new ExpressionError('division by zero');
  return checked(a / b);
}

/** @type {Handler} */
function pow(args, state, derived, depth) {
  const [a, b] = numbers(args, state, derived, depth, 2, 2);
  // V8's fdlibm pow on every engine, never the engine's own `**`, which may call the C
  // library's pow and differ from core in the last bit (src/pow.js, core/json/_pow.py)
  const result = v8Pow(a, b);
  // core's codes: NaN and ±Infinity are not_finite, a finite result beyond 1e15 out_of_range
  if (!Number.isFinite(result)) throw new ExpressionError('pow result is not a finite number', 'not_finite');
  if (Math.abs(result) > MAX_MAGNITUDE) throw new ExpressionError('pow result exceeds 1e15', 'out_of_range');
  return result + 0; // -0 + 0 is 0, as core's js_pow returns it (String(-0) is "0" anyway)
}

/** @type {Handler} */
function round(args, state, derived, depth) {
  const values = numbers(args, state, derived, depth, 1, 2);
  const digits = values.length === 2 ? values[1] : 0;
  if (!Number.isInteger(digits) || digits < 0 || digits > MAX_ROUND_DIGITS) {
    throw new ExpressionError(`round digits must be an integer from 0 to ${MAX_ROUND_DIGITS}`);
  }
  // the seed's definition: exact binary value, ties away from zero (1.005 -> 1.00)
  return checked(Number(values[0].toFixed(digits)));
}

/**
 * @param {(a: number, b: number) => boolean} test
 * @returns {Handler}
 */
function compare(test) {
  return (args, state, derived, depth) => {
    const [a, b] = numbers(args, state, derived, depth, 2, 2);
    return test(a, b);
  };
}

/** @type {Handler} */
function eq(args, state, derived, depth) {
  arity(args, 2, 2);
  const a = evaluate(args[0], state, derived, depth);
  const b = evaluate(args[1], state, derived, depth);
  return a === b; // strict: no conversion between 1, "1" and true
}

/** @type {Handler} */
function and(args, state, derived, depth) {
  arity(args, 2, MAX_ARGS);
  for (const arg of args) if (!asBoolean(evaluate(arg, state, derived, depth))) return false;
  return true; // short-circuit: a later failing argument is never evaluated
}

/** @type {Handler} */
function or(args, state, derived, depth) {
  arity(args, 2, MAX_ARGS);
  for (const arg of args) if (asBoolean(evaluate(arg, state, derived, depth))) return true;
  return false;
}

/** @type {Handler} */
function not(args, state, derived, depth) {
  arity(args, 1, 1);
  return !asBoolean(evaluate(args[0], state, derived, depth));
}

/** @type {Handler} */
function ifThen(args, state, derived, depth) {
  arity(args, 3, 3);
  const chosen = asBoolean(evaluate(args[0], state, derived, depth)) ? args[1] : args[2];
  return evaluate(chosen, state, derived, depth); // only the chosen branch runs
}

/** @type {Handler} */
function concat(args, state, derived, depth) {
  arity(args, 1, MAX_ARGS);
  let text = '';
  for (const arg of args) {
    text += scalarText(evaluate(arg, state, derived, depth));
    if (text.length > MAX_STRING) throw new ExpressionError(`concat result exceeds ${MAX_STRING} UTF-16 code units`);
  }
  return text;
}

/** A Map, not an object: an `op` such as "constructor" must not find a prototype method. */
const HANDLERS = new Map([
  ['add', add], ['sub', sub], ['mul', mul], ['div', div], ['pow', pow],
  ['min', (args, state, derived, depth) => Math.min(...numbers(args, state, derived, depth, 1))],
  ['max', (args, state, derived, depth) => Math.max(...numbers(args, state, derived, depth, 1))],
  ['round', round], ['eq', eq],
  ['lt', compare((a, b) => a < b)], ['lte', compare((a, b) => a <= b)],
  ['gt', compare((a, b) => a > b)], ['gte', compare((a, b) => a >= b)],
  ['and', and], ['or', or], ['not', not], ['if', ifThen], ['concat', concat],
]);
