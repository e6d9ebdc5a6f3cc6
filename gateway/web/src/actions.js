/**
 * Host actions in the page (seed 000 §10, §11, §13): the reserve request of a click, its
 * size check, the trusted result's `resultMap`, and the receipt statuses.
 *
 * The request is refused here at the host's own boundary: the UTF-8 bytes of the compact
 * JSON of `{documentRef, requestId, actionId, values}` (maxActionRequestBytes, 32,768), so
 * nothing the host would refuse is sent and nothing it would accept is refused.
 * `applyActionResult` mirrors core/state/host_action.py: every mapped value passes its
 * field's checks and the whole state its budget, or the state is unchanged.
 */

import { ActionError, StateError } from './errors.js';
import { hasOwn, isObject, isScalar } from './expression.js';
import { assertValidState } from './state.js';

export const MAX_REQUEST_BYTES = 32768;
export const MAX_RESULT_FIELDS = 32;
export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'unknown', 'accepted']);
/** Statuses a user may still cancel (a running operation is the host's: `not_cancellable`). */
export const CANCELLABLE = new Set(['queued', 'awaiting_confirmation']);

/** UTF-8 bytes of a string (lone surrogates count as U+FFFD, as TextEncoder writes them). */
export function utf8Bytes(/** @type {string} */ text) {
  return new TextEncoder().encode(text).length;
}

/**
 * The reserve request of a click, as the host measures it.
 * @param {Record<string, unknown>} documentRef
 * @param {string} requestId
 * @param {string} actionId
 * @param {Readonly<Record<string, unknown>>} values the state at the click
 */
export function reserveRequest(documentRef, requestId, actionId, values) {
  const request = { documentRef, requestId, actionId, values };
  const bytes = utf8Bytes(JSON.stringify(request));
  if (bytes > MAX_REQUEST_BYTES) {
    throw new ActionError(`the request is ${bytes} bytes; the limit is ${MAX_REQUEST_BYTES}`, 'too_large');
  }
  return request;
}

/**
 * Same state by value: the stale-result check compares the whole state (seed 000 §10).
 * @param {Readonly<Record<string, unknown>>} a
 * @param {Readonly<Record<string, unknown>>} b
 */
export function sameState(a, b) {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => hasOwn(b, key) && a[key] === b[key]);
}

/**
 * The state after mapping a succeeded receipt's public result through the action's resultMap.
 * @param {Record<string, any>} document
 * @param {Readonly<Record<string, string | number | boolean>>} state
 * @param {string} actionId
 * @param {unknown} result
 */
export function applyActionResult(document, state, actionId, result) {
  const actions = isObject(document.actions) ? document.actions : {};
  if (!hasOwn(actions, actionId)) throw new ActionError('the action is not declared by this document', 'unknown_action');
  const definition = actions[actionId];
  if (definition.kind !== 'tool') throw new ActionError('agent actions have no resultMap', 'agent_result');
  if (!isObject(result) || Object.keys(result).length > MAX_RESULT_FIELDS || !Object.values(result).every(isScalar)) {
    throw new ActionError('invalid action result', 'result');
  }
  const mapping = isObject(definition.resultMap) ? definition.resultMap : {};
  if (Object.values(mapping).some((field) => !hasOwn(result, field))) {
    throw new ActionError('the result lacks a field named in resultMap', 'missing_result_field');
  }
  const candidate = { ...state };
  for (const [key, field] of Object.entries(mapping)) candidate[key] = result[field];
  try {
    assertValidState(document, candidate);
  } catch (error) {
    if (error instanceof StateError) throw new ActionError(`result rejected, state unchanged: ${error.message}`, 'result_value');
    throw error;
  }
  return Object.freeze(candidate);
}
