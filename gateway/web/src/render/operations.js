/**
 * The operations of one UI: a receipt timeline per operation, approve/deny while it awaits
 * confirmation, cancel while it may still be cancelled (seed 000 §11).
 *
 * Receipts are shown as the host sent them; an operation not clicked in this mount (from the
 * history, another tab or the agent) may still be approved, denied or cancelled here, but its
 * result is never applied to the state.  An agent callback ends at `accepted`: the follow-up
 * request was taken, nothing more.
 *
 * These are the host's controls, drawn outside the generated interface (document.js) and
 * naming what an approval runs by the capability of the stored document's action: the action's
 * key is the model's word (it may call a write `preview_readonly`), the capability the host's.
 * A decision moves the focus to the operation's status, since its buttons go away.
 */

import { html, useRef, useState } from '../ui.js';
import { CANCELLABLE } from '../actions.js';
import { hasOwn, isObject } from '../expression.js';
import { displayText } from '../format.js';

const STATUS_TEXT = {
  queued: 'Queued', awaiting_confirmation: 'Awaiting your confirmation', running: 'Running',
  succeeded: 'Succeeded', failed: 'Failed', cancelled: 'Cancelled', unknown: 'Outcome unknown',
  accepted: 'Accepted (the assistant will follow up)',
};
const TONES = { succeeded: 'success', accepted: 'success', failed: 'danger', unknown: 'warning', cancelled: 'neutral' };

/** @param {number} ms */
function time(ms) {
  return typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toLocaleTimeString() : '';
}

/** What an operation runs, by its stored action: a capability of the host's catalog, or the assistant. */
function target(/** @type {Record<string, any>} */ document, /** @type {string} */ actionId) {
  const actions = document.actions;
  const action = isObject(actions) && hasOwn(actions, actionId) ? actions[actionId] : null;
  if (action?.kind === 'tool' && typeof action.capabilityId === 'string') {
    return html`<span class="operation-target">runs the host capability <code>${action.capabilityId}</code></span>`;
  }
  if (action?.kind === 'agent') return html`<span class="operation-target">asks the assistant to follow up</span>`;
  return null;
}

/**
 * @param {{operations: import('./document.js').Operation[], document: Record<string, any>, host: any,
 *   onReceipt?: (r: any) => void, onError: (text: string) => void, clicked: Map<string, any>}} props
 */
export function Operations({ operations, document, host, onReceipt, onError, clicked }) {
  const [pending, setPending] = useState(/** @type {string | null} */ (null));
  const list = useRef(/** @type {HTMLOListElement | null} */ (null));
  const act = async (/** @type {string} */ operationId, /** @type {() => Promise<any>} */ call, /** @type {string} */ what) => {
    setPending(operationId);
    try {
      onReceipt?.(await call());
    } catch (error) {
      const code = /** @type {any} */ (error)?.code;
      onError(`${what} failed${typeof code === 'string' && /^[a-z_]{1,64}$/.test(code) ? ` (${code})` : ''}.`);
    } finally {
      setPending(null);
      // the buttons of a decided operation are gone: keep the keyboard at its status, not on <body>
      const status = [...(list.current?.querySelectorAll('.operation') ?? [])]
        .find((item) => item.getAttribute('data-operation') === operationId)?.querySelector('.operation-status');
      if (status instanceof HTMLElement) status.focus();
    }
  };
  return html`<section class="operations host-controls" aria-label="Operations (from the host)">
    <h3>Operations <span class="host-mark">from the host</span></h3>
    <ol class="operation-list" ref=${list}>
      ${operations.map((operation) => {
        const last = operation.timeline[operation.timeline.length - 1];
        const mine = clicked.has(operation.requestId);
        const busy = pending === operation.operationId || !host;
        return html`<li key=${operation.operationId} class="operation" data-operation=${operation.operationId}
            data-status=${last.status}>
          <div class="operation-head">
            <span class="operation-action">${operation.actionId}</span>
            ${target(document, operation.actionId)}
            <span class=${`badge operation-status tone-${TONES[last.status] ?? 'neutral'}`} tabindex="-1">${STATUS_TEXT[last.status] ?? 'Unknown status'}</span>
            ${mine ? null : html`<span class="hint">not requested from this page: its result is not applied here</span>`}
          </div>
          <ol class="timeline" aria-label="Receipt timeline">
            ${operation.timeline.map((receipt, i) => html`<li key=${i}>
              <span class="timeline-status">${STATUS_TEXT[receipt.status] ?? 'Unknown status'}</span>
              <span class="timeline-time">${time(receipt.updatedAt)}</span>
              ${typeof receipt.message === 'string' ? html`<span class="timeline-message">${receipt.message}</span>` : null}
            </li>`)}
          </ol>
          ${last.status === 'succeeded' && last.result && typeof last.result === 'object' ? html`<dl class="operation-result">
            ${Object.entries(last.result).map(([key, value]) => html`<div key=${key}><dt>${key}</dt><dd>${displayText(/** @type {any} */ (value))}</dd></div>`)}
          </dl>` : null}
          <div class="operation-buttons">
            ${last.status === 'awaiting_confirmation' ? html`
              <button type="button" class="button primary" disabled=${busy}
                onClick=${() => act(operation.operationId, () => host.confirm(operation.operationId, true), 'Approving')}>Approve</button>
              <button type="button" class="button secondary" disabled=${busy}
                onClick=${() => act(operation.operationId, () => host.confirm(operation.operationId, false), 'Denying')}>Deny</button>` : null}
            ${CANCELLABLE.has(last.status) ? html`<button type="button" class="button secondary" disabled=${busy}
                onClick=${() => act(operation.operationId, () => host.cancel(operation.operationId), 'Cancelling')}>Cancel</button>` : null}
          </div>
        </li>`;
      })}
    </ol>
  </section>`;
}
