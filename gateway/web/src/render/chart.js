/**
 * SVG charts built as elements (never markup): bar and line over 1–200 points, positive and
 * negative values around a zero line (seed 000 §5).  Each point's value is resolved at the
 * current state; the numbers are also listed in a visually hidden table for screen readers (in
 * a hidden div: a table itself cannot be made 1px wide, and a long label would widen the page).
 */

import { html } from '../ui.js';
import { displayText } from '../format.js';
import { domId, useScope } from './scope.js';

const WIDTH = 480;
const HEIGHT = 200;
const PAD = { top: 12, right: 8, bottom: 28, left: 8 };

/**
 * The y-scale of a set of values that always includes zero.
 * @param {number[]} values
 */
export function scale(values) {
  const low = Math.min(0, ...values);
  const high = Math.max(0, ...values);
  const span = high - low || 1;
  const inner = HEIGHT - PAD.top - PAD.bottom;
  return (/** @type {number} */ v) => PAD.top + ((high - v) / span) * inner;
}

/**
 * A point's label under its tick: at most 14 characters, else 13 and an ellipsis.  Counted and
 * cut by code points, so an emoji is never split into a lone surrogate (shown as U+FFFD).
 * @param {string} label
 */
export function tickLabel(label) {
  const chars = Array.from(label);
  return chars.length > 14 ? `${chars.slice(0, 13).join('')}…` : label;
}

/** @param {{node: Record<string, any>}} props */
export function Chart({ node }) {
  const scope = useScope();
  const { kind, data, label } = node.props;
  /** @type {{id: string, label: string, value: number}[]} */
  const points = data.map((/** @type {any} */ point) => {
    const value = scope.resolve(point.value);
    if (typeof value !== 'number') throw new TypeError('chart value is not a number');
    return { id: point.id, label: point.label, value };
  });
  const y = scale(points.map((p) => p.value));
  const step = (WIDTH - PAD.left - PAD.right) / points.length;
  const x = (/** @type {number} */ i) => PAD.left + step * (i + 0.5);
  const zero = y(0);
  const title = label || 'Chart';
  const titleId = domId(scope, node.id, '-title');
  const marks = kind === 'bar'
    ? points.map((p, i) => html`<rect key=${p.id} class=${p.value < 0 ? 'bar negative' : 'bar'}
        x=${x(i) - step * 0.35} width=${step * 0.7} y=${Math.min(y(p.value), zero)} height=${Math.max(Math.abs(y(p.value) - zero), 1)}>
        <title>${p.label}: ${displayText(p.value)}</title></rect>`)
    : [html`<polyline key="line" class="line" points=${points.map((p, i) => `${x(i)},${y(p.value)}`).join(' ')} />`,
      ...points.map((p, i) => html`<circle key=${p.id} class="dot" cx=${x(i)} cy=${y(p.value)} r="3">
        <title>${p.label}: ${displayText(p.value)}</title></circle>`)];
  const labelEvery = Math.ceil(points.length / 12);
  return html`<figure class="chart">
    <figcaption id=${titleId}>${title}</figcaption>
    <svg viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby=${titleId} focusable="false">
      <line class="axis" x1=${PAD.left} x2=${WIDTH - PAD.right} y1=${zero} y2=${zero} />
      ${marks}
      ${points.map((p, i) => (i % labelEvery ? null : html`<text key=${`t-${p.id}`} class="tick" x=${x(i)} y=${HEIGHT - 8}
        text-anchor="middle">${tickLabel(p.label)}</text>`))}
    </svg>
    <div class="visually-hidden"><table>
      <caption>${title}</caption>
      <tbody>${points.map((p) => html`<tr key=${p.id}><th scope="row">${p.label}</th><td>${displayText(p.value)}</td></tr>`)}</tbody>
    </table></div>
  </figure>`;
}
