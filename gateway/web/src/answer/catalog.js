/**
 * The answer-ui@1 catalog as the page checks it before mounting a block (seed 004).
 *
 * The host validated every block with core/answer (the one source of the catalog); the page
 * checks again because a block it cannot render safely must show its `fallback_text`, never
 * a half-rendered tree: an unknown version or component, a prop the catalog does not have or
 * of the wrong kind, a broken element tree.  The bounds are core's (core/answer/_catalog.py).
 */

import { hasOwn, isObject } from '../expression.js';

export const VERSION = 'answer-ui@1';
export const MAX_ELEMENTS = 48;
export const MAX_DEPTH = 12;
const IDENTIFIER = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const RESERVED = new Set(['__proto__', 'prototype', 'constructor']);

/** @typedef {(value: unknown) => boolean} Check */

/** @param {number} max @param {number} [min] @returns {Check} */
const str = (max, min = 1) => (v) => typeof v === 'string' && v.length >= min && v.length <= max;
/** @param {...string} values @returns {Check} */
const choice = (...values) => (v) => typeof v === 'string' && values.includes(v);
/** @param {number} low @param {number} high @returns {Check} */
const int = (low, high) => (v) => Number.isInteger(v) && /** @type {number} */ (v) >= low && /** @type {number} */ (v) <= high;
/** @type {Check} */
const bool = (v) => typeof v === 'boolean';
/** @param {boolean} nullable @returns {Check} */
const num = (nullable) => (v) => (nullable && v === null) || (typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= 1e15);
/** @param {Check} item @param {number} max @param {number} [min] @returns {Check} */
const array = (item, max, min = 0) => (v) => Array.isArray(v) && v.length >= min && v.length <= max && v.every(item);
/** @param {Record<string, [boolean, Check]>} props @returns {Check} */
const record = (props) => (v) => isObject(v) && Object.keys(v).every((k) => hasOwn(props, k))
  && Object.entries(props).every(([k, [required, check]]) => (hasOwn(v, k) ? check(v[k]) : !required));
/** @type {Check} */
const ident = (v) => typeof v === 'string' && IDENTIFIER.test(v) && !RESERVED.has(v);

const TITLE = str(200);
const LABEL = str(200);
const PROSE = str(4096);
const SOURCE = str(512);
const CELL = (/** @type {unknown} */ v) => str(1024, 0)(v) || num(true)(v);

/** @type {Map<string, {props: Record<string, [boolean, Check]>, container: boolean}>} */
export const CATALOG = new Map(Object.entries({
  Stack: { container: true, props: { columns: [false, int(1, 4)], gap: [false, choice('none', 'small', 'medium', 'large')],
    intent: [false, choice('response', 'comparison', 'report')], density: [false, choice('compact', 'comfortable')] } },
  Section: { container: true, props: { title: [false, TITLE], role: [false, choice('result', 'analysis', 'evidence', 'follow_up')] } },
  Text: { container: false, props: { text: [true, PROSE], title: [false, TITLE], tone: [false, choice('neutral', 'info', 'success', 'warning', 'error')] } },
  Result: { container: false, props: { title: [true, TITLE], summary: [true, PROSE],
    status: [true, choice('success', 'partial', 'unconfirmed', 'error')], source: [false, SOURCE] } },
  Metric: { container: false, props: { label: [true, LABEL], value: [true, (v) => str(64)(v) || num(false)(v)],
    unit: [false, str(32)], source: [false, SOURCE] } },
  Table: { container: false, props: { columns: [true, array(LABEL, 32, 1)], rows: [true, array(array(CELL, 32, 1), 500)],
    title: [false, TITLE], source: [false, SOURCE] } },
  Chart: { container: false, props: { title: [true, TITLE], categories: [true, array(LABEL, 200, 1)],
    series: [true, array(record({ name: [true, LABEL], values: [true, array(num(true), 200, 1)] }), 12, 1)],
    view: [false, choice('line', 'bar', 'table')], source: [false, SOURCE] } },
  Evidence: { container: false, props: { items: [true, array(record({ id: [true, (v) => typeof v === 'string' && /^[!-~]{1,128}$/.test(v)],
    summary: [true, PROSE], source: [true, SOURCE], recorded_at: [false, str(40)], category: [false, LABEL] }), 20, 1)], title: [false, TITLE] } },
  MapLocation: { container: false, props: { layer: [true, (v) => typeof v === 'string' && /^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/.test(v)],
    feature_id: [true, (v) => typeof v === 'string' && /^[!-~]{1,128}$/.test(v)], title: [false, TITLE], label: [false, LABEL] } },
  FollowUpForm: { container: false, props: { title: [true, TITLE], description: [false, PROSE],
    fields: [true, array(record({ name: [true, ident], label: [true, LABEL], type: [true, choice('text', 'textarea', 'number', 'date', 'select')],
      required: [false, bool], placeholder: [false, LABEL], options: [false, array(LABEL, 32, 1)] }), 16, 1)] } },
}));

/** Cross-field rules a renderer relies on: aligned chart series, table rows as wide as the header. */
const CROSS = new Map(Object.entries({
  Chart: (/** @type {any} */ p) => p.series.every((/** @type {any} */ s) => s.values.length === p.categories.length),
  Table: (/** @type {any} */ p) => p.rows.every((/** @type {any} */ r) => r.length === p.columns.length),
  FollowUpForm: (/** @type {any} */ p) => new Set(p.fields.map((/** @type {any} */ f) => f.name)).size === p.fields.length,
}));

/**
 * Why a block cannot be mounted, or null when it can.
 * @param {unknown} block
 * @returns {string | null}
 */
export function blockProblem(block) {
  if (!isObject(block) || block.version !== VERSION) return 'unknown block version';
  if (!ident(block.block_id)) return 'invalid block id';
  const spec = block.spec;
  if (!isObject(spec) || typeof spec.root !== 'string' || !isObject(spec.elements)) return 'invalid block spec';
  const elements = spec.elements;
  const ids = Object.keys(elements);
  if (ids.length > MAX_ELEMENTS) return 'too many elements';
  for (const id of ids) {
    const problem = elementProblem(elements[id]);
    if (problem) return problem;
  }
  return treeProblem(elements, spec.root);
}

/** @param {unknown} element */
function elementProblem(element) {
  if (!isObject(element) || typeof element.type !== 'string') return 'invalid element';
  const entry = CATALOG.get(element.type);
  if (!entry) return 'unknown component';
  if (Object.keys(element).some((k) => k !== 'type' && k !== 'props' && k !== 'children')) return 'unknown element field';
  if (!record(entry.props)(element.props ?? {})) return 'invalid props';
  const cross = CROSS.get(element.type);
  if (cross && !cross(element.props)) return 'inconsistent props';
  const children = element.children ?? [];
  if (!Array.isArray(children) || (!entry.container && children.length)) return 'invalid children';
  return null;
}

/** Every child exists, nothing is reached twice, all is reachable, depth ≤ 12. @param {Record<string, any>} elements @param {string} root */
function treeProblem(elements, root) {
  if (!hasOwn(elements, root)) return 'missing root';
  const seen = new Set([root]);
  const stack = [[root, 1]];
  while (stack.length) {
    const [id, depth] = /** @type {[string, number]} */ (stack.pop());
    if (depth > MAX_DEPTH) return 'too deep';
    for (const child of elements[id].children ?? []) {
      if (typeof child !== 'string' || !hasOwn(elements, child) || seen.has(child)) return 'broken element tree';
      seen.add(child);
      stack.push([child, depth + 1]);
    }
  }
  return seen.size === Object.keys(elements).length ? null : 'unreachable element';
}
