/**
 * The answer Table: search and sort of the loaded rows, kept in the block's view state
 * (`search`, `sort {column, direction}`, `selection: []`: rows are never selectable).
 */

import { html } from '../../ui.js';
import { displayText } from '../../format.js';
import { sortRows, useBlock, useNodeState } from './context.js';

/** Rows whose cells contain the search text (case-insensitive). @param {any[][]} rows @param {string} search */
export function searchRows(rows, search) {
  const needle = search.trim().toLowerCase();
  if (!needle) return rows;
  return rows.filter((row) => row.some((cell) => displayText(cell).toLowerCase().includes(needle)));
}

/**
 * A sortable table with a search box; `sort.column` is a column label (null: the first column).
 * @param {{id: string, columns: string[], rows: any[][], caption: string, view: Record<string, any>,
 *   update: (change: Record<string, any>) => void, nullColumn?: string}} props
 */
export function SortableTable({ id, columns, rows, caption, view, update, nullColumn }) {
  const scope = useBlock();
  const search = typeof view.search === 'string' ? view.search : '';
  const sort = view.sort && typeof view.sort === 'object' ? view.sort : null;
  const index = sort ? (sort.column === null && nullColumn !== undefined ? 0 : columns.indexOf(sort.column)) : -1;
  const shown = index >= 0 ? sortRows(searchRows(rows, search), index, sort.direction) : searchRows(rows, search);
  const searchId = `${scope.idPrefix}-${id}-search`;
  const toggle = (/** @type {number} */ i) => {
    const column = i === 0 && nullColumn !== undefined ? null : columns[i];
    const direction = sort && index === i && sort.direction === 'asc' ? 'desc' : 'asc';
    update({ sort: { column, direction }, selection: [] });
  };
  return html`<div class="a-table">
    <div class="a-table-tools">
      <label for=${searchId}>Search</label>
      <input id=${searchId} type="search" value=${search} maxlength="200"
        onInput=${(/** @type {any} */ e) => update({ search: e.currentTarget.value, selection: [] })} />
      <span class="hint" aria-live="polite">${shown.length} of ${rows.length} rows</span>
    </div>
    <div class="table-wrap" tabindex="0" role="region" aria-label=${caption}>
      <table>
        <caption class="visually-hidden">${caption}</caption>
        <thead><tr>${columns.map((label, i) => html`<th key=${i} scope="col"
            aria-sort=${index === i ? (sort.direction === 'asc' ? 'ascending' : 'descending') : undefined}>
          <button type="button" class="sort-button" onClick=${() => toggle(i)}>${label}
            <span aria-hidden="true">${index === i ? (sort.direction === 'asc' ? ' ▲' : ' ▼') : ''}</span></button></th>`)}</tr></thead>
        <tbody>${shown.map((row, r) => html`<tr key=${r}>${row.map((cell, c) => html`<td key=${c}>${cell === null ? '—' : displayText(cell)}</td>`)}</tr>`)}</tbody>
      </table>
    </div>
  </div>`;
}

/** @param {{id: string, props: Record<string, any>}} props */
export function Table({ id, props }) {
  const [view, update] = useNodeState(id);
  return html`<div class="a-table-block">
    ${props.title ? html`<strong class="a-title">${props.title}</strong>` : null}
    <${SortableTable} id=${id} columns=${props.columns} rows=${props.rows} caption=${props.title || 'Table'}
      view=${view} update=${(/** @type {any} */ change) => update({ selection: [], ...change })} />
    ${props.source ? html`<p class="a-source">Source: ${props.source}</p>` : null}
  </div>`;
}
