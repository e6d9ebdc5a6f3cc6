/**
 * A document's state in the page: initial values, validated updates, derived values,
 * display values and the local `set`/`reset` actions (seed 000 §3, §4, §6, §8).
 *
 * Mirrors core/state/ (values.py, evaluation.py, local_action.py): same checks in the same
 * order, same error classes and codes.  A state is a frozen plain object holding exactly the
 * declared fields; every function returns a new one and never touches the old, so a rejected
 * edit keeps what the user already typed elsewhere.
 */

import { ActionError, ExpressionError, StateError } from './errors.js';
import { evaluate, evaluateExpression, hasOwn, isObject } from './expression.js';
import { documentModel, fieldProblem } from './model.js';

/** @typedef {import('./model.js').DocumentModel} DocumentModel */
/** @typedef {import('./expression.js').Scalar} Scalar */
/** @typedef {Readonly<Record<string, string | number | boolean>>} State */

export const MAX_STATE_BYTES = 262144;

/**
 * Every declared field at its initial value.
 * @param {Record<string, any>} document a document core has validated
 * @returns {State}
 */
export function initialState(document) {
  return documentModel(document).initial;
}

/**
 * A new state with `key` set to `value`, or a StateError; the old state is untouched.
 * @param {Record<string, any>} document
 * @param {unknown} state
 * @param {unknown} key
 * @param {unknown} value
 * @returns {State}
 */
export function updateState(document, state, key, value) {
  const model = documentModel(document);
  assertStateFor(model, state);
  checkStateValue(model, key, value);
  // `key` is a declared identifier (never __proto__), so a computed key is a plain own property
  const candidate = { ...(/** @type {object} */ (state)), [/** @type {string} */ (key)]: value };
  assertBudget(candidate);
  return Object.freeze(candidate);
}

/**
 * Throw a StateError unless `state` holds exactly the declared fields, all valid.
 * @param {Record<string, any>} document
 * @param {unknown} state
 */
export function assertValidState(document, state) {
  assertStateFor(documentModel(document), state);
}

/** @param {DocumentModel} model @param {unknown} state @returns {asserts state is State} */
function assertStateFor(model, state) {
  if (!isObject(state)) throw new StateError('state must be an object');
  const keys = Object.keys(state);
  if (keys.length !== model.fields.size || [...model.fields.keys()].some((key) => !hasOwn(state, key))) {
    throw new StateError('state must contain exactly the declared fields', 'fields');
  }
  for (const key of keys) checkStateValue(model, key, state[key]);
  assertBudget(state);
}

/** @param {DocumentModel} model @param {unknown} key @param {unknown} value */
function checkStateValue(model, key, value) {
  const declared = typeof key === 'string' ? model.fields.get(key) : undefined;
  if (!declared) throw new StateError('unknown state field', 'unknown_field');
  const problem = fieldProblem(declared, value);
  if (problem) throw new StateError(problem, 'invalid_value'); // the field's rule, never the value itself
}

/**
 * The whole state is at most 262,144 UTF-8 bytes of its compact JSON (JS number text).
 * @param {Record<string, unknown>} state
 */
function assertBudget(state) {
  // every string field's value is well-formed here: `fieldProblem` refused a lone surrogate
  const size = utf8Length(JSON.stringify(state));
  if (size > MAX_STATE_BYTES) throw new StateError(`state is ${size} bytes; the limit is ${MAX_STATE_BYTES}`, 'too_large');
}

/** @param {string} text well-formed UTF-16 @returns {number} its UTF-8 byte count */
function utf8Length(text) {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff) { bytes += 4; i++; } // a surrogate pair: one 4-byte character
    else bytes += 3;
  }
  return bytes;
}

// ------------------------------------------------------------------ derived and display values

/**
 * A derived-value lookup that evaluates each needed field once, on demand; a failure is not
 * remembered, so it surfaces again in every value that needs it (seed 000 §6: an unrelated
 * failing field must not block other values).
 * @param {DocumentModel} model
 * @param {State} state
 * @returns {import('./expression.js').DerivedLookup}
 */
function lazyDerived(model, state) {
  /** @type {Map<string, Scalar>} */
  const memo = new Map();
  const lookup = (/** @type {string} */ key) => {
    if (memo.has(key)) return /** @type {Scalar} */ (memo.get(key));
    if (!hasOwn(model.derived, key)) throw new ExpressionError('derived value is not declared');
    const value = evaluate(model.derived[key], state, lookup);
    memo.set(key, value);
    return value;
  };
  return lookup;
}

/** @param {DocumentModel} model @param {unknown} state @returns {asserts state is State} */
function validState(model, state) {
  try {
    assertStateFor(model, state);
  } catch (error) {
    // a value cannot be computed from a broken state: that is an evaluation failure (as core)
    if (error instanceof StateError) throw new ExpressionError(`invalid state: ${error.message}`);
    throw error;
  }
}

/**
 * Every derived field at `state`, in declaration order; throws on the first failure.
 * @param {Record<string, any>} document
 * @param {unknown} state
 * @returns {Readonly<Record<string, Scalar>>}
 */
export function evaluateDerived(document, state) {
  const model = documentModel(document);
  validState(model, state);
  const lookup = lazyDerived(model, state);
  return Object.freeze(Object.fromEntries(Object.keys(model.derived).map((key) => [key, lookup(key)])));
}

/**
 * The expression of a component Value: a scalar as is, or the body of `{"expr": ...}`.
 * @param {unknown} value
 */
function unwrap(value) {
  if (!isObject(value)) return value;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== 'expr') throw new ExpressionError('a dynamic value must be written as {"expr": <expression>}');
  return value.expr;
}

/**
 * A component Value with already computed derived values (from `evaluateDerived`).
 * @param {unknown} value
 * @param {unknown} state
 * @param {unknown} derived
 * @returns {Scalar}
 */
export function resolveValue(value, state, derived) {
  return evaluateExpression(unwrap(value), state, derived);
}

/**
 * A resolver of component Values at one state that shares derived values among them: a page
 * renders many nodes per keystroke, and each derived field is computed at most once while a
 * failure still surfaces in every value that needs it (exactly `resolveDocumentValue`'s
 * result for each value).
 * @param {Record<string, any>} document
 * @param {unknown} state
 * @returns {(value: unknown) => Scalar}
 */
export function valueResolver(document, state) {
  const model = documentModel(document);
  validState(model, state);
  const lookup = lazyDerived(model, /** @type {State} */ (state));
  return (value) => evaluate(unwrap(value), /** @type {State} */ (state), lookup);
}

/**
 * A component Value, computing only the derived fields it depends on: a node whose value
 * fails shows its own error while the rest of the page renders.
 * @param {Record<string, any>} document
 * @param {unknown} state
 * @param {unknown} value
 * @returns {Scalar}
 */
export function resolveDocumentValue(document, state, value) {
  const model = documentModel(document);
  validState(model, state);
  return evaluate(unwrap(value), state, lazyDerived(model, state));
}

// ------------------------------------------------------------------ local actions

/**
 * Apply a declared `reset` or `set` action; return the new state.
 * @param {Record<string, any>} document
 * @param {unknown} state
 * @param {unknown} action
 * @returns {State}
 */
export function dispatchLocalAction(document, state, action) {
  const model = documentModel(document);
  if (!isObject(action) || (action.type !== 'reset' && action.type !== 'set')) {
    throw new ActionError('only reset and set actions run locally', 'not_local');
  }
  // only what the document itself declares runs: a crafted action is refused before anything
  if (!model.localActions.some((declared) => sameJson(action, declared))) {
    throw new ActionError('the action is not declared by this document', 'undeclared');
  }
  assertStateFor(model, state);
  if (action.type === 'reset') return model.initial;
  let value = action.value;
  if (isObject(value)) value = evaluate(hasOwn(value, 'expr') ? value.expr : null, state, lazyDerived(model, state));
  return updateState(document, state, action.key, value);
}

/**
 * Deep equality of decoded JSON (numbers by value, so 1 and 1.0 are one; keys in any order).
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
function sameJson(a, b) {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => hasOwn(b, key) && sameJson(a[key], b[key]));
}
