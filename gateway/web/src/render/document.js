/**
 * One rendered document: its local state, the scope its nodes read, its notices and its
 * host operations (seed 000 §6, §10–§12).
 *
 * The local state is the page's own (edits, `set`/`reset`, action results) and is kept apart
 * from the network revision: a new frame of the same generation replaces the document and
 * keeps the state (a generation freezes the state declarations); a new generation is a new
 * contract and is mounted afresh by the caller.  External actions run only when the UI is
 * complete.  A click snapshots the state; its `succeeded` result is applied only if the
 * state is still equal to that snapshot, else the whole resultMap is skipped with a notice.
 */

import { html, useEffect, useMemo, useRef, useState } from '../ui.js';
import { ActionError, UIError } from '../errors.js';
import { applyActionResult, reserveRequest, sameState } from '../actions.js';
import { dispatchLocalAction, initialState, updateState, valueResolver } from '../state.js';
import { NodeView } from './node.js';
import { Operations } from './operations.js';
import { ScopeContext } from './scope.js';

let serial = 0;

/**
 * @typedef {{
 *   reserve: (request: Record<string, any>) => Promise<Record<string, any>>,
 *   confirm: (operationId: string, approve: boolean) => Promise<Record<string, any>>,
 *   cancel: (operationId: string) => Promise<Record<string, any>>,
 *   newRequestId?: () => string,
 * }} Host
 * @typedef {{operationId: string, requestId: string, actionId: string, timeline: Record<string, any>[]}} Operation
 * @typedef {{id: number, kind: string, prefix: string, label: string | null, text: string}} Notice
 */

const REASONS = {
  streaming: 'Available once this interface has finished loading.',
  cancel: 'This interface was cancelled; its actions are disabled.',
  error: 'This interface stopped with an error; its actions are disabled.',
  offline: 'Actions need a connection to the host.',
};

/** The text of a failed action: our messages for our errors, the problem code for the host's. */
function actionFailure(/** @type {unknown} */ error) {
  if (error instanceof UIError) return error.message;
  const code = /** @type {any} */ (error)?.code;
  if (code === 'forbidden') return 'this link may only view';
  if (code === 'unauthorized') return 'the access token of this link was refused (it may have expired)';
  return typeof code === 'string' && /^[a-z_]{1,64}$/.test(code) ? `the host refused it (${code})` : 'the request failed';
}

/**
 * @param {{
 *   document: Record<string, any>, status?: string, refused?: boolean, documentRef?: Record<string, any> | null,
 *   host?: Host | null, operations?: Operation[], onReceipt?: (receipt: Record<string, any>) => void,
 *   locale?: string,
 * }} props
 */
export function DocumentView({ document, status = 'complete', refused = false, documentRef = null, host = null, operations = [], onReceipt, locale }) {
  const [local, setLocal] = useState(() => ({ state: initialState(document), version: 0 }));
  const [notices, setNotices] = useState(/** @type {Notice[]} */ ([]));
  const [busy, setBusy] = useState(/** @type {ReadonlySet<string>} */ (new Set()));
  const idPrefix = useMemo(() => `ui${++serial}`, []);
  const clicks = useRef(new Map());
  const noticeList = useRef(/** @type {HTMLDivElement | null} */ (null));
  const latest = useRef(local);
  latest.current = local;

  // a control's label is the model's text: it is quoted apart (<bdi>), so a right-to-left override in
  // it cannot turn the rest of our sentence around
  const notify = (/** @type {string} */ kind, /** @type {string} */ text, /** @type {string | null} */ label = null,
    prefix = '') => setNotices((list) => [...list.slice(-4), { id: ++serial, kind, prefix, label, text }]);
  // a new version for every new state, and for every local action that ran even if it left the state
  // as it was (a reset of initial values): text typed over the state before it is stale (inputs.js)
  const commit = (/** @type {any} */ state, ran = false) =>
    setLocal((old) => (old.state === state && !ran ? old : { state, version: old.version + 1 }));

  const complete = status === 'complete';
  const externalEnabled = complete && host !== null && documentRef !== null;
  const externalReason = !complete ? REASONS[status === 'streaming' ? 'streaming' : status] ?? REASONS.streaming : REASONS.offline;

  const invoke = async (/** @type {string} */ actionId, /** @type {string} */ label, /** @type {string} */ nodeId) => {
    if (!externalEnabled || !host || !documentRef) return;
    const snapshot = latest.current.state;
    const requestId = host.newRequestId ? host.newRequestId() : crypto.randomUUID();
    let request;
    try {
      request = reserveRequest(documentRef, requestId, actionId, snapshot);
    } catch (error) {
      notify('error', ` was not sent: ${actionFailure(error)}`, label);
      return;
    }
    clicks.current.set(requestId, { snapshot, actionId, label, handled: false });
    setBusy((set) => new Set([...set, nodeId]));
    try {
      const receipt = await host.reserve(request);
      onReceipt?.(receipt);
    } catch (error) {
      clicks.current.delete(requestId);
      notify('error', ` was not accepted: ${actionFailure(error)}`, label);
    } finally {
      setBusy((set) => new Set([...set].filter((id) => id !== nodeId)));
    }
  };

  const scope = useMemo(() => {
    const { state, version } = local;
    let resolve;
    try {
      resolve = valueResolver(document, state);
    } catch (error) {
      const failure = error;
      resolve = () => { throw failure; };
    }
    return {
      document, state, version, resolve, idPrefix, locale, busy, externalEnabled, externalReason,
      setField: (/** @type {string} */ key, /** @type {unknown} */ value) => {
        try {
          commit(updateState(document, latest.current.state, key, value));
          return null;
        } catch (error) {
          return error instanceof UIError ? error.message : 'the value was not accepted';
        }
      },
      runAction: (/** @type {any} */ action, /** @type {string} */ label, /** @type {string} */ nodeId) => {
        if (action.type === 'invoke') { invoke(action.actionId, label, nodeId); return; }
        try {
          commit(dispatchLocalAction(document, latest.current.state, action), true);
        } catch (error) {
          notify('error', ` could not run: ${error instanceof UIError ? error.message : 'unexpected failure'}`, label);
        }
      },
    };
  }, [document, local, busy, externalEnabled, externalReason, locale]);

  useEffect(() => {
    for (const operation of operations) {
      const click = clicks.current.get(operation.requestId);
      const last = operation.timeline[operation.timeline.length - 1];
      if (!click || click.handled || !last || last.status !== 'succeeded') continue;
      click.handled = true; // a result is applied at most once, and only for a click of this mount
      const current = latest.current.state;
      if (!sameState(current, click.snapshot)) {
        notify('conflict', ' succeeded, but you changed the values since the click: your values were kept and its result was not applied.', click.label);
        continue;
      }
      try {
        commit(applyActionResult(document, current, click.actionId, last.result ?? {}));
      } catch (error) {
        notify('error', ` could not be applied: ${error instanceof ActionError ? error.message : 'invalid result'}`, click.label, 'The result of ');
      }
    }
  }, [operations]);

  const titleId = `${idPrefix}-title`;
  return html`<article class="document" aria-labelledby=${titleId} aria-busy=${status === 'streaming' ? 'true' : undefined}
      data-status=${status}>
    <header class="document-header">
      <h2 id=${titleId}>${document.title}</h2>
      ${status === 'streaming' ? html`<div class="loading stream-loading" role="status"><span class="spinner" aria-hidden="true"></span>
        <span>Still generating…</span></div>` : null}
      ${status === 'cancel' ? html`<div class="badge tone-warning" role="status">Cancelled</div>` : null}
      ${status === 'error' ? html`<div class="badge tone-danger" role="status">Stopped with an error</div>` : null}
      ${refused ? html`<div class="badge tone-warning refused-update" role="status">An update could not be shown: this is the last valid version</div>` : null}
    </header>
    <div class="generated" role="group" aria-label="Generated by the assistant">
      <${ScopeContext.Provider} value=${scope}>
        <${NodeView} node=${document.root} />
      </${ScopeContext.Provider}>
    </div>
    <div class="notices" aria-live="polite" tabindex="-1" ref=${noticeList}>
      ${notices.map((notice) => html`<div key=${notice.id} class=${`notice ${notice.kind}`}>
        <span>${notice.prefix}${notice.label === null ? null : html`“<bdi>${notice.label}</bdi>”`}${notice.text}</span>
        <button type="button" class="link-button" onClick=${() => {
          setNotices((list) => list.filter((n) => n !== notice));
          noticeList.current?.focus(); // its button goes with it: the keyboard stays with the notices
        }}>Dismiss</button>
      </div>`)}
    </div>
    ${operations.length ? html`<${Operations} operations=${operations} document=${document} host=${host} onReceipt=${onReceipt}
      onError=${(/** @type {string} */ text) => notify('error', text)} clicked=${clicks.current} />` : null}
  </article>`;
}
