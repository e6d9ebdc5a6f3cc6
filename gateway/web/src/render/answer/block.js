/**
 * One answer-ui@1 block: checked against the catalog, then its element tree rendered with a
 * boundary per element; a block the page cannot mount shows its `fallback_text` instead.
 */

import { html, h, useContext, useMemo } from '../../ui.js';
import { blockProblem } from '../../answer/catalog.js';
import { elementDomId } from '../../answer/navigation.js';
import { NodeBoundary } from '../boundary.js';
import { MapLocation, Metric, Result, Section, Stack, Text } from './basic.js';
import { Chart } from './chart.js';
import { BlockContext } from './context.js';
import { Evidence, FollowUpForm } from './evidence.js';
import { Table } from './table.js';

const ELEMENTS = new Map(Object.entries({ Stack, Section, Text, Result, Metric, Table, Chart, Evidence, MapLocation, FollowUpForm }));

let serial = 0;

/** The block's fallback text in place of a block that cannot be mounted. @param {{block: any}} props */
export function Fallback({ block }) {
  const text = block && typeof block.fallback_text === 'string' && block.fallback_text ? block.fallback_text : 'This content is unavailable.';
  return html`<div class="a-fallback" role="note">${text}</div>`;
}

/** @param {{elements: Record<string, any>, id: string, version: number}} props */
function Element({ elements, id, version }) {
  const element = elements[id];
  const children = (element.children ?? []).map((/** @type {string} */ child) => html`<${Element} key=${child} elements=${elements} id=${child} version=${version} />`);
  const node = useMemo(() => ({ id }), [id]);
  const scope = useContext(BlockContext);
  // an id the answer's table of contents links to (in a turn: its message is known)
  const domId = scope?.messageId ? elementDomId(scope.messageId, String(scope.block.block_id), id) : undefined;
  return html`<${NodeBoundary} node=${node} version=${version}>
    <div class="a-element" id=${domId} data-element=${id} data-type=${element.type}>
      ${h(/** @type {any} */ (ELEMENTS.get(element.type)), { id, props: element.props ?? {} }, children)}
    </div>
  </${NodeBoundary}>`;
}

/**
 * @param {{block: Record<string, any>, nodes?: Record<string, any>, setNode?: (id: string, v: any) => void,
 *   version?: number, onLocate?: any, onFollowUp?: any, messageId?: string}} props  `messageId`: the turn's,
 *   which gives the elements the ids its table of contents links to
 */
export function BlockView({ block, nodes = {}, setNode = () => {}, version = 0, onLocate, onFollowUp, messageId }) {
  const problem = useMemo(() => blockProblem(block), [block]);
  const idPrefix = useMemo(() => `blk${++serial}`, []);
  const scope = useMemo(() => ({ block, idPrefix, nodes, setNode, onLocate, onFollowUp, messageId }),
    [block, nodes, setNode, onLocate, onFollowUp, messageId]);
  if (problem) return html`<${Fallback} block=${block} />`;
  return html`<div class="a-block" data-block=${block.block_id}>
    <${BlockContext.Provider} value=${scope}>
      <${Element} elements=${block.spec.elements} id=${block.spec.root} version=${version} />
    </${BlockContext.Provider}>
  </div>`;
}
