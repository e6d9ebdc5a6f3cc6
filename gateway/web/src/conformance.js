/**
 * The page's own check of every document it is given (seed 000 §1: "Client 从成功、已完成的结果中
 * 读取并再次验证"; §10: a reopened session validates its documents again).
 *
 * The host runs core's full `parse_document` on every document before it is sent, so this is a
 * second layer, not the first: a document reaches the views only if it conforms to the
 * protocol's JSON Schema (`ui-schema.js`, generated from core: unknown fields, unknown
 * components, wrong case and props a component does not take are refused, as seed 000 §2 asks)
 * and its component ids are unique.  The semantic rules the schema cannot state (references,
 * expression types, domains) stay core's; a value that breaks one anyway fails at its node's
 * boundary.
 *
 * The schema is interpreted, never compiled to code (no eval under the page's CSP): the keywords
 * core's schema uses, with JSON Schema 2020-12's meaning.  Only own keys are read, so a document
 * key such as `__proto__` or `constructor` is just a key.  A document nested past the stack's
 * depth does not conform.
 */

import { UI_SCHEMA } from './ui-schema.js';
import { hasOwn, isObject } from './expression.js';

/** @typedef {Record<string, any> | boolean} Schema */

/** @type {WeakMap<object, boolean>} each document object is checked once */
const checked = new WeakMap();
/**
 * Verdicts by component node and schema: the page keeps the objects of unchanged subtrees from
 * frame to frame (`shareDocument`), so a patch's snapshot is checked along the changed path only.
 * Documents are never mutated, and a subtree moved into another context (a Form, say) is judged
 * against that context's schema: another key.  Only a node (an object with `props`) against a
 * `$ref` (where the schema names a node's variant) is kept: a memo of every object and schema cost
 * a third more on a document's first check.
 * @type {WeakMap<object, Map<Schema, boolean>>}
 */
const verdicts = new WeakMap();
/** @type {Map<string, RegExp>} */
const patterns = new Map();

/**
 * True when `document` conforms to the protocol's schema and its component ids are unique.
 * @param {Record<string, unknown>} document
 */
export function conforms(document) {
  let verdict = checked.get(document);
  if (verdict === undefined) {
    try {
      verdict = matches(UI_SCHEMA, document) && uniqueIds(document.root);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error; // nested past the stack: not a document
      verdict = false;
    }
    checked.set(document, verdict);
  }
  return verdict;
}

/**
 * Whether `value` matches `schema` (core's keywords; `$ref` only to `#/$defs/...`).
 * @param {Schema} schema
 * @param {unknown} value
 * @returns {boolean}
 */
export function matches(schema, value) {
  if (schema === true) return true;
  if (schema === false) return false;
  if (!hasOwn(schema, '$ref') || !isObject(value) || !hasOwn(value, 'props')) return judged(schema, value);
  let known = verdicts.get(value);
  if (known === undefined) {
    known = new Map();
    verdicts.set(value, known);
  }
  let verdict = known.get(schema);
  if (verdict === undefined) {
    verdict = judged(schema, value);
    known.set(schema, verdict);
  }
  return verdict;
}

/**
 * `matches` without the memo.
 * @param {Record<string, any>} schema
 * @param {unknown} value
 * @returns {boolean}
 */
function judged(schema, value) {
  if (hasOwn(schema, '$ref') && !matches(definition(schema.$ref), value)) return false;
  if (hasOwn(schema, 'type') && !typed(schema.type, value)) return false;
  if (hasOwn(schema, 'const') && !same(schema.const, value)) return false;
  if (hasOwn(schema, 'enum') && !schema.enum.some((/** @type {unknown} */ option) => same(option, value))) return false;
  if (!combined(schema, value)) return false;
  if (typeof value === 'number') return numberMatches(schema, value);
  if (typeof value === 'string') return stringMatches(schema, value);
  if (Array.isArray(value)) return arrayMatches(schema, value);
  if (isObject(value)) return objectMatches(schema, value);
  return true;
}

/** @param {string} ref */
function definition(ref) {
  const name = ref.startsWith('#/$defs/') ? ref.slice('#/$defs/'.length) : '';
  if (!hasOwn(UI_SCHEMA.$defs, name)) throw new Error(`the schema has no definition ${ref}`);
  return UI_SCHEMA.$defs[name];
}

/** @param {Record<string, any>} schema @param {unknown} value */
function combined(schema, value) {
  if (hasOwn(schema, 'allOf') && !schema.allOf.every((/** @type {Schema} */ part) => matches(part, value))) return false;
  if (hasOwn(schema, 'anyOf') && !schema.anyOf.some((/** @type {Schema} */ part) => matches(part, value))) return false;
  if (hasOwn(schema, 'oneOf')
      && schema.oneOf.filter((/** @type {Schema} */ part) => matches(part, value)).length !== 1) return false;
  if (hasOwn(schema, 'not') && matches(schema.not, value)) return false;
  if (hasOwn(schema, 'if')) {
    const branch = matches(schema.if, value) ? schema.then : schema.else;
    if (branch !== undefined && !matches(branch, value)) return false;
  }
  return true;
}

/** @param {string | string[]} type @param {unknown} value */
function typed(type, value) {
  return (Array.isArray(type) ? type : [type]).some((name) => {
    switch (name) {
      case 'object': return isObject(value);
      case 'array': return Array.isArray(value);
      case 'string': return typeof value === 'string';
      case 'number': return typeof value === 'number' && Number.isFinite(value);
      case 'integer': return Number.isInteger(value);
      case 'boolean': return typeof value === 'boolean';
      case 'null': return value === null;
      default: return false;
    }
  });
}

/** JSON equality (a number equals a number of the same value, objects key by key). */
function same(/** @type {unknown} */ a, /** @type {unknown} */ b) {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, at) => same(item, b[at]));
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => hasOwn(b, key) && same(a[key], b[key]));
}

/** @param {Record<string, any>} schema @param {number} value */
function numberMatches(schema, value) {
  return !(hasOwn(schema, 'minimum') && value < schema.minimum)
    && !(hasOwn(schema, 'maximum') && value > schema.maximum)
    && !(hasOwn(schema, 'exclusiveMinimum') && value <= schema.exclusiveMinimum);
}

/** @param {Record<string, any>} schema @param {string} value */
function stringMatches(schema, value) {
  if (hasOwn(schema, 'minLength') || hasOwn(schema, 'maxLength')) {
    const length = [...value].length; // JSON Schema counts code points
    if (hasOwn(schema, 'minLength') && length < schema.minLength) return false;
    if (hasOwn(schema, 'maxLength') && length > schema.maxLength) return false;
  }
  return !hasOwn(schema, 'pattern') || pattern(schema.pattern).test(value);
}

/** @param {string} source */
function pattern(source) {
  let compiled = patterns.get(source);
  if (compiled === undefined) {
    compiled = new RegExp(source, 'u'); // the schema's own pattern, never the document's text
    patterns.set(source, compiled);
  }
  return compiled;
}

/** @param {Record<string, any>} schema @param {unknown[]} value */
function arrayMatches(schema, value) {
  if (hasOwn(schema, 'minItems') && value.length < schema.minItems) return false;
  if (hasOwn(schema, 'maxItems') && value.length > schema.maxItems) return false;
  return !hasOwn(schema, 'items') || value.every((item) => matches(schema.items, item));
}

/** @param {Record<string, any>} schema @param {Record<string, unknown>} value */
function objectMatches(schema, value) {
  const keys = Object.keys(value);
  if (hasOwn(schema, 'minProperties') && keys.length < schema.minProperties) return false;
  if (hasOwn(schema, 'maxProperties') && keys.length > schema.maxProperties) return false;
  if (hasOwn(schema, 'required') && !schema.required.every((/** @type {string} */ key) => hasOwn(value, key))) return false;
  const properties = hasOwn(schema, 'properties') ? schema.properties : {};
  for (const key of keys) {
    if (hasOwn(schema, 'propertyNames') && !matches(schema.propertyNames, key)) return false;
    if (hasOwn(properties, key)) {
      if (!matches(properties[key], value[key])) return false;
    } else if (hasOwn(schema, 'additionalProperties') && !matches(schema.additionalProperties, value[key])) {
      return false;
    }
  }
  return true;
}

/** Whether no two components of the tree share an id (the schema cannot say it). */
function uniqueIds(/** @type {unknown} */ root) {
  const seen = new Set();
  const pending = [root];
  while (pending.length) {
    const node = /** @type {Record<string, any>} */ (pending.pop());
    if (seen.has(node.id)) return false;
    seen.add(node.id);
    if (Array.isArray(node.children)) pending.push(...node.children);
  }
  return true;
}

const VERSIONS = new Set(['1.0', '1.1']);

/** Our own words for a document the views cannot read, or null (never the document's text). */
export function documentProblem(/** @type {any} */ document) {
  if (!isObject(document)) return 'it is not a document';
  if (!VERSIONS.has(document.version)) return 'its protocol version is not one this page knows (1.0, 1.1)';
  if (typeof document.title !== 'string' || !isObject(document.state) || !isObject(document.derived)
      || !isObject(document.root) || (document.version === '1.1' && !isObject(document.actions))) {
    return 'it is not the shape of a validated document';
  }
  if (!conforms(document)) return 'it is not a valid document of the protocol (checked again by this page)';
  return null;
}
