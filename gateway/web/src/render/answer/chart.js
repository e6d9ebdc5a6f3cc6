/**
 * The answer Chart: line, bar or data-table view of series over categories, with series
 * shown or hidden, a category range, and a selected point with its detail (seed 004).  All of
 * it is view state; the chart is SVG elements, missing values (null) break the line and draw
 * no bar, never a zero.  Keyboard: focus the plot, arrows move the point, Home/End jump,
 * Enter opens the detail, Escape closes it and keeps the focus on the plot.
 */

import { html, useRef } from '../../ui.js';
import { displayText } from '../../format.js';
import { useBlock, useNodeState } from './context.js';
import { SortableTable } from './table.js';

const WIDTH = 520;
const HEIGHT = 220;
const PAD = { top: 12, right: 12, bottom: 30, left: 44 };
const VIEWS = [['line', 'Line'], ['bar', 'Bar'], ['table', 'Table']];

/** @param {{id: string, props: Record<string, any>}} props */
export function Chart({ id, props }) {
  const scope = useBlock();
  const [view, update] = useNodeState(id);
  const plot = useRef(/** @type {SVGSVGElement | null} */ (null));
  const categories = /** @type {string[]} */ (props.categories);
  const kind = view.view ?? props.view ?? 'line';
  const hidden = new Set(Array.isArray(view.hidden_series) ? view.hidden_series : []);
  const series = props.series.filter((/** @type {any} */ s) => !hidden.has(s.name));
  const start = view.range ? Math.max(0, categories.indexOf(view.range.start)) : 0;
  const endIndex = view.range ? categories.indexOf(view.range.end) : -1;
  const end = endIndex >= start ? endIndex : categories.length - 1;
  const point = view.selected_point ?? null;
  const tabsId = `${scope.idPrefix}-${id}`;

  const select = (/** @type {any} */ next, /** @type {boolean} */ open) => update({ selected_point: next, detail_open: Boolean(next) && open });
  const onKey = (/** @type {KeyboardEvent} */ event) => {
    if (!series.length) return;
    const sIndex = Math.max(0, series.findIndex((/** @type {any} */ s) => s.name === point?.series));
    let cIndex = point ? categories.indexOf(point.category) : start - 1;
    let s = sIndex;
    const keys = { ArrowRight: () => { cIndex = Math.min(end, cIndex + 1); }, ArrowLeft: () => { cIndex = Math.max(start, cIndex - 1); },
      ArrowUp: () => { s = Math.max(0, s - 1); }, ArrowDown: () => { s = Math.min(series.length - 1, s + 1); },
      Home: () => { cIndex = start; }, End: () => { cIndex = end; } };
    if (event.key in keys) {
      event.preventDefault();
      keys[/** @type {keyof typeof keys} */ (event.key)]();
      // seed 004: the detail appears on a click, or on Enter, the arrow keys, Home or End in the focused plot
      select({ series: series[s].name, category: categories[Math.max(start, cIndex)] }, true);
    } else if (event.key === 'Enter') {
      event.preventDefault();
      // with no point selected yet, Enter selects the range's first point, as Home does
      if (point) update({ detail_open: true }); else select({ series: series[0].name, category: categories[start] }, true);
    } else if (event.key === 'Escape' && view.detail_open) {
      event.preventDefault();
      update({ detail_open: false });
    }
  };

  return html`<figure class="a-chart">
    <figcaption><strong>${props.title}</strong></figcaption>
    <div class="a-chart-tools">
      <div role="group" aria-label="Chart view" class="segmented">
        ${VIEWS.map(([value, label]) => html`<button key=${value} type="button" aria-pressed=${kind === value ? 'true' : 'false'}
          onClick=${() => update({ view: value })}>${label}</button>`)}
      </div>
      <div role="group" aria-label="Series" class="legend">
        ${props.series.map((/** @type {any} */ s, /** @type {number} */ i) => html`<button key=${s.name} type="button"
          class=${`legend-item series-${i % 6}`} aria-pressed=${hidden.has(s.name) ? 'false' : 'true'}
          onClick=${() => toggleSeries(update, hidden, s.name, props.series, view.table)}>${s.name}</button>`)}
      </div>
      ${kind === 'table' ? null : html`<${RangePicker} id=${tabsId} categories=${categories} start=${start} end=${end}
        onChange=${(/** @type {number} */ a, /** @type {number} */ b) => update({ range: { start: categories[a], end: categories[b] }, selected_point: null, detail_open: false })} />`}
    </div>
    ${kind === 'table'
      ? html`<${SortableTable} id=${id} columns=${['Category', ...props.series.map((/** @type {any} */ s) => s.name)]}
          rows=${categories.map((c, i) => [c, ...props.series.map((/** @type {any} */ s) => s.values[i])])}
          caption=${props.title} view=${view.table ?? {}} nullColumn="Category"
          update=${(/** @type {any} */ change) => update({ table: { ...(view.table ?? {}), ...change, selection: [] } })} />`
      : html`<svg ref=${plot} class="a-plot" viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" tabindex="0"
          aria-label=${`${props.title}: ${kind} chart, ${series.length} series, ${end - start + 1} categories. Use the arrow keys to read the points.`}
          onKeyDown=${onKey}>
          ${plotMarks(kind, series, props.series, categories.slice(start, end + 1), start, point, select)}
        </svg>`}
    ${kind !== 'table' && point && view.detail_open ? html`<${Detail} props=${props} point=${point}
        onClose=${() => { update({ detail_open: false }); plot.current?.focus(); }} />` : null}
    ${props.source ? html`<p class="a-source">Source: ${props.source}</p>` : null}
  </figure>`;
}

/**
 * Show or hide one series; the data table's sort is cleared with it (seed 004: "切换序列时清理排序").
 * @param {(c: any) => void} update @param {Set<string>} hidden @param {string} name @param {any[]} all
 * @param {Record<string, any> | undefined} table the data table's view
 */
function toggleSeries(update, hidden, name, all, table) {
  const next = new Set(hidden);
  if (next.has(name)) next.delete(name); else next.add(name);
  const { sort, ...unsorted } = table ?? {};
  update({ hidden_series: all.map((s) => s.name).filter((n) => next.has(n)), selected_point: null, detail_open: false,
    ...(sort === undefined ? {} : { table: { ...unsorted, selection: [] } }) });
}

/** @param {{id: string, categories: string[], start: number, end: number, onChange: (a: number, b: number) => void}} props */
function RangePicker({ id, categories, start, end, onChange }) {
  if (categories.length < 2) return null;
  const options = categories.map((c, i) => html`<option key=${i} value=${i}>${c}</option>`);
  return html`<div class="range">
    <label for=${`${id}-from`}>From</label>
    <select id=${`${id}-from`} value=${start} onChange=${(/** @type {any} */ e) => onChange(Number(e.currentTarget.value), Math.max(end, Number(e.currentTarget.value)))}>${options}</select>
    <label for=${`${id}-to`}>To</label>
    <select id=${`${id}-to`} value=${end} onChange=${(/** @type {any} */ e) => onChange(Math.min(start, Number(e.currentTarget.value)), Number(e.currentTarget.value))}>${options}</select>
  </div>`;
}

/**
 * @param {string} kind @param {any[]} series the shown series @param {any[]} all every series (colours stay per series)
 * @param {string[]} labels the categories in range @param {number} offset index of the first one
 * @param {any} point @param {(p: any, open: boolean) => void} select
 */
function plotMarks(kind, series, all, labels, offset, point, select) {
  const values = series.flatMap((s) => s.values.slice(offset, offset + labels.length)).filter((v) => typeof v === 'number');
  const low = Math.min(0, ...values);
  const high = Math.max(0, ...values);
  const span = high - low || 1;
  const y = (/** @type {number} */ v) => PAD.top + ((high - v) / span) * (HEIGHT - PAD.top - PAD.bottom);
  const band = (WIDTH - PAD.left - PAD.right) / labels.length;
  const x = (/** @type {number} */ i) => PAD.left + band * (i + 0.5);
  const zero = y(0);
  const colour = (/** @type {any} */ s) => `series-${all.indexOf(s) % 6}`;
  const marks = [];
  series.forEach((s, k) => {
    const own = s.values.slice(offset, offset + labels.length);
    if (kind === 'line') {
      let run = [];
      const runs = [];
      own.forEach((v, i) => { if (typeof v === 'number') run.push(`${x(i)},${y(v)}`); else if (run.length) { runs.push(run); run = []; } });
      if (run.length) runs.push(run);
      runs.forEach((r, j) => marks.push(html`<polyline key=${`l${k}-${j}`} class=${`line ${colour(s)}`} points=${r.join(' ')} />`));
    }
    own.forEach((v, i) => {
      if (typeof v !== 'number') return;
      const selected = point && point.series === s.name && point.category === labels[i];
      const onClick = () => select({ series: s.name, category: labels[i] }, true);
      const title = html`<title>${s.name}, ${labels[i]}: ${displayText(v)}</title>`;
      if (kind === 'bar') {
        const width = (band * 0.8) / series.length;
        marks.push(html`<rect key=${`b${k}-${i}`} class=${`bar ${colour(s)}${selected ? ' selected' : ''}`}
          x=${x(i) - band * 0.4 + width * k} width=${width} y=${Math.min(y(v), zero)} height=${Math.max(Math.abs(y(v) - zero), 1)}
          onClick=${onClick}>${title}</rect>`);
      } else {
        marks.push(html`<circle key=${`p${k}-${i}`} class=${`dot ${colour(s)}${selected ? ' selected' : ''}`} cx=${x(i)} cy=${y(v)}
          r=${selected ? 6 : 3.5} onClick=${onClick}>${title}</circle>`);
      }
    });
  });
  const every = Math.ceil(labels.length / 10);
  return [
    html`<line key="axis" class="axis" x1=${PAD.left} x2=${WIDTH - PAD.right} y1=${zero} y2=${zero} />`,
    html`<text key="hi" class="tick" x=${PAD.left - 4} y=${PAD.top + 4} text-anchor="end">${displayText(high)}</text>`,
    html`<text key="lo" class="tick" x=${PAD.left - 4} y=${HEIGHT - PAD.bottom} text-anchor="end">${displayText(low)}</text>`,
    ...marks,
    ...labels.map((label, i) => (i % every ? null : html`<text key=${`c${i}`} class="tick" x=${x(i)} y=${HEIGHT - 10} text-anchor="middle">${label.length > 12 ? `${label.slice(0, 11)}…` : label}</text>`)),
  ];
}

/** @param {{props: Record<string, any>, point: any, onClose: () => void}} props */
function Detail({ props, point, onClose }) {
  const s = props.series.find((/** @type {any} */ item) => item.name === point.series);
  const i = props.categories.indexOf(point.category);
  if (!s || i < 0) return null;
  const value = s.values[i];
  return html`<div class="a-detail" role="region" aria-label="Point detail" aria-live="polite">
    <dl><dt>Series</dt><dd>${s.name}</dd><dt>Category</dt><dd>${point.category}</dd>
      <dt>Value</dt><dd>${value === null ? 'no reading' : displayText(value)}</dd>
      ${props.source ? html`<dt>Source</dt><dd>${props.source}</dd>` : null}</dl>
    <button type="button" class="link-button" onClick=${onClose}>Close detail</button>
  </div>`;
}
