/**
 * What the Client needs to know about a document: its fields and their shared domains,
 * its derived expressions and the local actions its buttons and forms declare.
 *
 * The document reaching the page has already passed core's `parse_document` on the host, so
 * nothing here re-validates it; this module only reads the declarations (seed 000 §4) and
 * the one check every writer of a field goes through, as core/document/_fields.py does.
 */

import { MAX_STRING, hasOwn, isObject, isSafeNumber } from './expression.js';

/** The step grid's tolerance, in steps, as core/document/_fields.py (docs/decisions.md, "Step grid tolerance"). */
export const STEP_TOLERANCE = 1e-9;
export const STEP_TOLERANCE_MAX = 1e-3;
export const STEP_REPRESENTATION = 2 ** -50;

/**
 * @typedef {{kind: 'number', initial: number, min: number | null, max: number | null, step: number | null}} NumberField
 * @typedef {{kind: 'string', initial: string, maxLength: number, options: Set<string> | null}} StringField
 * @typedef {{kind: 'boolean', initial: boolean}} BooleanField
 * @typedef {NumberField | StringField | BooleanField} Field
 * @typedef {{
 *   fields: Map<string, Field>,
 *   derived: Record<string, unknown>,
 *   initial: Readonly<Record<string, string | number | boolean>>,
 *   localActions: unknown[],
 * }} DocumentModel
 */

/** Models are built once per document object: a page re-renders the same document often. */
const models = new WeakMap();

/**
 * The model of a document that core has validated.
 * @param {Record<string, any>} document
 * @returns {DocumentModel}
 */
export function documentModel(document) {
  let model = models.get(document);
  if (!model) {
    model = buildModel(document);
    models.set(document, model);
  }
  return model;
}

/** @param {Record<string, any>} document @returns {DocumentModel} */
function buildModel(document) {
  /** @type {Map<string, Field>} */
  const fields = new Map();
  for (const [key, declaration] of Object.entries(document.state)) fields.set(key, field(declaration));
  const localActions = [];
  for (const node of nodes(document.root)) {
    const props = isObject(node.props) ? node.props : {};
    if (hasOwn(props, 'action')) localActions.push(props.action);
    const bound = node.type === 'Select' ? fields.get(props.bind) : undefined;
    if (bound && bound.kind === 'string') {
      // a Select makes its option values the domain of every writer of the field (seed 000 §4)
      bound.options = new Set(props.options.map((/** @type {any} */ option) => option.value));
    }
  }
  const initial = Object.freeze(Object.fromEntries([...fields].map(([key, f]) => [key, f.initial])));
  return { fields, derived: document.derived, initial, localActions };
}

/** @param {Record<string, any>} declaration @returns {Field} */
function field(declaration) {
  if (declaration.type === 'number') {
    const { initial, min = null, max = null, step = null } = declaration;
    return { kind: 'number', initial, min, max, step };
  }
  if (declaration.type === 'string') {
    return { kind: 'string', initial: declaration.initial, maxLength: declaration.maxLength ?? MAX_STRING, options: null };
  }
  return { kind: 'boolean', initial: declaration.initial };
}

/**
 * Every component node, depth first (iterative: no recursion over model-written input).
 * @param {unknown} root
 * @returns {Generator<Record<string, any>>}
 */
function* nodes(root) {
  const stack = [root];
  while (stack.length) {
    const node = stack.pop();
    if (!isObject(node)) continue;
    yield node;
    if (Array.isArray(node.children)) stack.push(...node.children);
  }
}

/**
 * True when value = origin + k × step for an integer k, within the relative tolerance.
 * Same operations in the same order as core, so both sides see the same doubles.
 * @param {number} value @param {number} origin @param {number} step
 */
export function onStepGrid(value, origin, step) {
  const quotient = (value - origin) / step;
  if (!Number.isFinite(quotient)) return false;
  const tolerance = Math.max(Math.min(STEP_TOLERANCE * Math.max(1, Math.abs(quotient)), STEP_TOLERANCE_MAX),
    STEP_REPRESENTATION * (Math.abs(value) + Math.abs(origin)) / step);
  return Math.abs(quotient - Math.round(quotient)) <= tolerance;
}

/**
 * Why `value` may not be written to a field, or null when it may.
 * @param {Field} declared
 * @param {unknown} value
 * @returns {string | null}
 */
export function fieldProblem(declared, value) {
  if (declared.kind === 'boolean') return typeof value === 'boolean' ? null : 'value must be a boolean';
  if (declared.kind === 'string') return stringProblem(declared, value);
  if (!isSafeNumber(value)) return 'value must be a finite number (not a boolean) within 1e15';
  if (declared.min !== null && value < declared.min) return 'value is below the minimum';
  if (declared.max !== null && value > declared.max) return 'value is above the maximum';
  const origin = declared.min ?? 0;
  if (declared.step !== null && !onStepGrid(value, origin, declared.step)) return 'value is not on the step grid';
  return null;
}

/** @param {StringField} declared @param {unknown} value */
function stringProblem(declared, value) {
  if (typeof value !== 'string') return 'value must be a string';
  // core cannot write a lone surrogate as UTF-8 and refuses it; TextEncoder would write U+FFFD
  if (!wellFormed(value)) return 'value must be valid Unicode (no lone surrogates)';
  if (value.length > declared.maxLength) return 'value exceeds maxLength'; // UTF-16 units, as the seed counts
  if (declared.options && !declared.options.has(value)) return 'value is not one of the Select options';
  return null;
}

/** @param {string} text No lone surrogate (what `String.prototype.isWellFormed` says, on older engines too). */
function wellFormed(text) {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      return false;
    }
  }
  return true;
}
