/**
 * Components that show values: Text, Heading, Markdown, Badge, Result, Progress, Loading and
 * Error (seed 000 §5).  Values are resolved at the current local state; a failure throws to
 * the node's boundary.
 */

import { html, h, memo } from '../ui.js';
import { displayText, formatNumber } from '../format.js';
import { MarkdownText } from './markdown.js';
import { domId, useScope } from './scope.js';

/** @typedef {{node: Record<string, any>}} NodeProps */

/** @param {NodeProps} props */
export function Text({ node }) {
  const scope = useScope();
  return html`<p class="text">${displayText(scope.resolve(node.props.text))}</p>`;
}

/** @param {NodeProps} props */
export function Heading({ node }) {
  const scope = useScope();
  return h(`h${node.props.level ?? 2}`, { class: 'heading' }, displayText(scope.resolve(node.props.text)));
}

/** Markdown takes a literal string only (no expressions): rendered again only for another node. */
export const Markdown = memo((/** @type {NodeProps} */ { node }) => html`<${MarkdownText} text=${node.props.text} />`);

/** @param {NodeProps} props */
export function Badge({ node }) {
  const scope = useScope();
  return html`<span class=${`badge tone-${node.props.tone ?? 'neutral'}`}>${displayText(scope.resolve(node.props.text))}</span>`;
}

/** @param {NodeProps} props */
export function Result({ node }) {
  const scope = useScope();
  const { label, format } = node.props;
  const value = scope.resolve(node.props.value);
  const text = format ? formatNumber(value, format, scope.locale) : displayText(value);
  return html`<div class="result">
    ${label ? html`<span class="result-label">${label}</span>` : null}
    <output class="result-value">${text}</output>
  </div>`;
}

/**
 * The bar shows the value clamped to [0, max]; the state and the shown number are untouched
 * (seed 000 §5: display clamping only).
 * @param {NodeProps} props
 */
export function Progress({ node }) {
  const scope = useScope();
  const max = node.props.max ?? 100;
  const value = scope.resolve(node.props.value);
  if (typeof value !== 'number') throw new TypeError('progress value is not a number');
  const shown = Math.min(Math.max(value, 0), max);
  const labelId = domId(scope, node.id, '-label');
  const label = node.props.label || 'Progress';
  return html`<div class="progress">
    <span class="progress-label" id=${labelId}>${label}</span>
    <progress max=${max} value=${shown} aria-labelledby=${labelId}></progress>
    <span class="progress-value">${displayText(value)} / ${displayText(max)}</span>
  </div>`;
}

/** Shows a loading indicator; it starts no work of its own. @param {NodeProps} props */
export function Loading({ node }) {
  return html`<div class="loading" role="status"><span class="spinner" aria-hidden="true"></span>
    <span>${node.props.label || 'Loading…'}</span></div>`;
}

/** Shows an error message; it changes no state and runs no action. @param {NodeProps} props */
export function ErrorMessage({ node }) {
  const scope = useScope();
  return html`<div class="error-message" role="note">${displayText(scope.resolve(node.props.message))}</div>`;
}
