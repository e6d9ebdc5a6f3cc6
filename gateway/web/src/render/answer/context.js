/**
 * What the elements of one answer block read: the block, its DOM id prefix, and its view
 * state (element id → view fields of answer-view-state@1) with the setter that saves it.
 */

import { createContext, useContext } from '../../ui.js';

/**
 * @typedef {{
 *   block: Record<string, any>, idPrefix: string, nodes: Record<string, any>,
 *   setNode: (id: string, value: Record<string, any>) => void,
 *   onLocate?: (layer: string, featureId: string) => Promise<string>,
 *   onFollowUp?: (text: string) => Promise<void>, messageId?: string,
 * }} BlockScope
 */

export const BlockContext = createContext(/** @type {BlockScope | null} */ (null));

/** @returns {BlockScope} */
export function useBlock() {
  const scope = useContext(BlockContext);
  if (!scope) throw new Error('an element is rendered outside a block');
  return scope;
}

/** The view fields of one element, and a setter that merges a change into them. @param {string} id */
export function useNodeState(id) {
  const scope = useBlock();
  const current = scope.nodes[id] ?? {};
  const update = (/** @type {Record<string, any>} */ change) => scope.setNode(id, { ...current, ...change });
  return /** @type {const} */ ([current, update]);
}

/** Sort rows of cells by one column: numbers before text, nulls last, stable. */
export function sortRows(/** @type {any[][]} */ rows, /** @type {number} */ column, /** @type {'asc' | 'desc'} */ direction) {
  const sign = direction === 'desc' ? -1 : 1;
  return rows.map((row, i) => ({ row, i })).sort((a, b) => {
    const x = a.row[column];
    const y = b.row[column];
    if (x === null || x === '' ) return y === null || y === '' ? a.i - b.i : 1;
    if (y === null || y === '') return -1;
    const order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return order ? sign * order : a.i - b.i;
  }).map(({ row }) => row);
}
