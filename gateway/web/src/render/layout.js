/**
 * The five layouts (seed 000 §5): Row, Column, Grid, Card and Form.  Their children arrive
 * already rendered (keyed by node id) from the node dispatcher.
 */

import { html } from '../ui.js';
import { domId, useScope } from './scope.js';

/** @typedef {{node: Record<string, any>, children?: any}} NodeProps */

const gap = (/** @type {Record<string, any>} */ props) => `gap-${props.gap ?? 'md'}`;

/** @param {NodeProps} props */
export function Row({ node, children }) {
  return html`<div class=${`row ${gap(node.props)}`}>${children}</div>`;
}

/** @param {NodeProps} props */
export function Column({ node, children }) {
  return html`<div class=${`column ${gap(node.props)}`}>${children}</div>`;
}

/** @param {NodeProps} props */
export function Grid({ node, children }) {
  return html`<div class=${`grid cols-${node.props.columns ?? 2} ${gap(node.props)}`}>${children}</div>`;
}

/** @param {NodeProps} props */
export function Card({ node, children }) {
  const scope = useScope();
  const title = node.props.title;
  const titleId = domId(scope, node.id, '-title');
  return html`<section class="card" aria-labelledby=${title ? titleId : undefined}>
    ${title ? html`<h3 class="card-title" id=${titleId}>${title}</h3>` : null}
    <div class=${`column ${gap(node.props)}`}>${children}</div>
  </section>`;
}

/**
 * A Form updates shared state live (it is not a buffer); submitting only dispatches its one
 * declared action, never the browser's navigation (seed 000 §6).
 * @param {NodeProps} props
 */
export function Form({ node, children }) {
  const scope = useScope();
  const { action, submitLabel } = node.props;
  const external = action.type === 'invoke';
  const disabled = (external && !scope.externalEnabled) || scope.busy.has(node.id);
  const onSubmit = (/** @type {Event} */ event) => {
    event.preventDefault();
    if (!disabled) scope.runAction(action, submitLabel, node.id);
  };
  const hintId = domId(scope, node.id, '-hint');
  return html`<form class=${`form column ${gap(node.props)}`} novalidate onSubmit=${onSubmit}>
    ${children}
    <div class="form-actions">
      <button type="submit" class="button primary" disabled=${disabled}
        aria-describedby=${external && !scope.externalEnabled ? hintId : undefined}>${submitLabel}</button>
      ${external && !scope.externalEnabled ? html`<span class="hint" id=${hintId}>${scope.externalReason}</span>` : null}
    </div>
  </form>`;
}
