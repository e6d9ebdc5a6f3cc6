/**
 * The static answer-ui@1 elements: Stack, Section, Text, Result, Metric and MapLocation
 * (seed 004).  A Result's status is shown with a small icon and a word; it is never a receipt.
 */

import { html, useState } from '../../ui.js';
import { displayText } from '../../format.js';
import { useBlock } from './context.js';

/** @typedef {{id: string, props: Record<string, any>, children?: any}} ElementProps */

/** @param {ElementProps} props */
export function Stack({ props, children }) {
  const classes = ['a-stack', `gap-${props.gap ?? 'medium'}`, `intent-${props.intent ?? 'response'}`, `density-${props.density ?? 'comfortable'}`];
  if (props.columns) classes.push(`cols-${props.columns}`);
  return html`<div class=${classes.join(' ')}>${children}</div>`;
}

/** @param {ElementProps} props */
export function Section({ id, props, children }) {
  const scope = useBlock();
  const titleId = `${scope.idPrefix}-${id}-title`;
  return html`<section class=${`a-section role-${props.role ?? 'analysis'}`} aria-labelledby=${props.title ? titleId : undefined}>
    ${props.title ? html`<h4 id=${titleId}>${props.title}</h4>` : null}
    ${children}
  </section>`;
}

/** @param {ElementProps} props */
export function Text({ props }) {
  return html`<div class=${`a-text tone-${props.tone ?? 'neutral'}`}>
    ${props.title ? html`<strong class="a-text-title">${props.title}</strong>` : null}
    <p>${props.text}</p>
  </div>`;
}

const STATUS = { success: ['✓', 'Success'], partial: ['◐', 'Partial'], unconfirmed: ['?', 'Unconfirmed'], error: ['✕', 'Error'] };

/** @param {ElementProps} props */
export function Result({ props }) {
  const [icon, word] = STATUS[/** @type {keyof STATUS} */ (props.status)];
  return html`<div class=${`a-result status-${props.status}`}>
    <div class="a-result-head"><span class="a-result-icon" aria-hidden="true">${icon}</span>
      <strong>${props.title}</strong> <span class="a-result-status">${word}</span></div>
    <p>${props.summary}</p>
    ${props.source ? html`<p class="a-source">Source: ${props.source}</p>` : null}
  </div>`;
}

/** The raw value with its unit and source, as given. @param {ElementProps} props */
export function Metric({ props }) {
  return html`<div class="a-metric">
    <span class="a-metric-label">${props.label}</span>
    <span class="a-metric-value">${displayText(props.value)}${props.unit ? html` <span class="a-unit">${props.unit}</span>` : null}</span>
    ${props.source ? html`<span class="a-source">Source: ${props.source}</span>` : null}
  </div>`;
}

/**
 * A feature named by layer and id; locating goes through the host's map controller when the
 * page has one, else the button says it is not available here.
 * @param {ElementProps} props
 */
export function MapLocation({ props }) {
  const scope = useBlock();
  const [state, setState] = useState(/** @type {string | null} */ (null));
  const locate = async () => {
    if (!scope.onLocate) { setState('No map is available on this page.'); return; }
    setState('Locating…');
    try {
      setState(await scope.onLocate(props.layer, props.feature_id));
    } catch {
      setState('Locating failed; try again.');
    }
  };
  return html`<div class="a-map">
    ${props.title ? html`<strong>${props.title}</strong>` : null}
    <span class="a-map-feature">${props.layer} · ${props.feature_id}</span>
    <button type="button" class="button secondary" onClick=${locate}>${props.label || 'Locate on the map'}</button>
    ${state ? html`<span class="hint" role="status">${state}</span>` : null}
  </div>`;
}
