/** The DSL Table: static scalar cells under labelled columns (seed 000 §5). */

import { html, memo } from '../ui.js';
import { displayText } from '../format.js';

/**
 * Rendered again only for another node: a Table reads no state, and re-rendering its cells (up to
 * 500 x 32) at every keystroke of the document cost 10-20 ms.
 */
export const Table = memo(TableBody);

/** @param {{node: Record<string, any>}} props */
function TableBody({ node }) {
  const { columns, rows } = node.props;
  const name = columns.map((/** @type {any} */ c) => c.label).join(', ');
  // a scrolling region must be reachable by keyboard, so the wrapper takes focus
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${`Table: ${name}`}>
    <table>
      <thead><tr>${columns.map((/** @type {any} */ c) => html`<th key=${c.key} scope="col">${c.label}</th>`)}</tr></thead>
      <tbody>${rows.map((/** @type {any} */ row, /** @type {number} */ i) => html`<tr key=${i}>
        ${columns.map((/** @type {any} */ c) => html`<td key=${c.key}>${displayText(row[c.key])}</td>`)}</tr>`)}</tbody>
    </table>
  </div>`;
}
