/**
 * What every node of one rendered document reads: the document, the local state, a resolver
 * of Values at that state, and the callbacks that change state or start actions.
 */

import { createContext, useContext } from '../ui.js';

/**
 * @typedef {{
 *   document: Record<string, any>,
 *   state: Readonly<Record<string, string | number | boolean>>,
 *   version: number,
 *   resolve: (value: unknown) => import('../expression.js').Scalar,
 *   setField: (key: string, value: unknown) => string | null,
 *   runAction: (action: Record<string, any>, label: string, nodeId: string) => void,
 *   externalEnabled: boolean,
 *   externalReason: string,
 *   busy: ReadonlySet<string>,
 *   idPrefix: string,
 *   locale: string | undefined,
 * }} Scope
 */

export const ScopeContext = createContext(/** @type {Scope | null} */ (null));

/** The scope of the document being rendered. @returns {Scope} */
export function useScope() {
  const scope = useContext(ScopeContext);
  if (!scope) throw new Error('a node is rendered outside a document');
  return scope;
}

/** A DOM id unique on the page for a node's element (`suffix` tells parts of one node apart). */
export function domId(/** @type {Scope} */ scope, /** @type {string} */ nodeId, suffix = '') {
  return `${scope.idPrefix}-${nodeId}${suffix}`;
}
