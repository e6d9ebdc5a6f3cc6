/**
 * The operations of one UI: a receipt timeline per operation, approve/deny while it awaits
 * confirmation, cancel while it may still be cancelled (seed 000 §11).
 *
 * Receipts are shown as the host sent them; an operation not clicked in this mount (from the
 * history, another tab or the agent) may still be approved, denied or cancelled here, but its
 * result is never applied to the state.  An agent callback ends at `accepted`: the follow-up
 * request was taken, nothing more.
 */

import { html, useState } from '../ui.js';
import { CANCELLABLE } from '../actions.js';
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

/**
 * @param {{operations: import('./document.js').Operation[], host: any, onReceipt?: (r: any) => void,
 *   onError: (text: string) => void, clicked: Map<string, any>}} props
 */
export function Operations({ operations, host, onReceipt, onError, clicked }) {
  const [pending, setPending] = useState(/** @type {string | null} */ (null));
  const act = async (/** @type {string} */ operationId, /** @type {() => Promise<any>} */ call, /** @type {string} */ what) => {
    setPending(operationId);
    try {
      onReceipt?.(await call());
    } catch (error) {
      const code = /** @type {any} */ (error)?.code;
      onError(`${what} failed${typeof code === 'string' && /^[a-z_]{1,64}$/.test(code) ? ` (${code})` : ''}.`);
    } finally {
      setPending(null);
    }
  };
  return html`<section class="operations" aria-label="Operations">
    <h3>Operations</h3>
    <ol class="operation-list">
      ${operations.map((operation) => {
        const last = operation.timeline[operation.timeline.length - 1];
        const mine = clicked.has(operation.requestId);
        const busy = pending === operation.operationId || !host;
        return html`<li key=${operation.operationId} class="operation" data-operation=${operation.operationId}
            data-status=${last.status}>
          <div class="operation-head">
            <span class="operation-action">${operation.actionId}</span>
            <span class=${`badge tone-${TONES[last.status] ?? 'neutral'}`}>${STATUS_TEXT[last.status] ?? 'Unknown status'}</span>
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
