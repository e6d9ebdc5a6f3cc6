/**
 * The session viewer: the connection state, then every stream UI and answer turn in the
 * order they first appeared.  A stream UI is keyed by its source, UI and generation: frames
 * of one generation update the mounted view (local state kept), a new generation mounts anew.
 */

import { html, memo, sameProps, useCallback, useEffect, useState } from '../ui.js';
import { operationsOf } from '../store.js';
import { documentRef } from '../stream.js';
import { AnswerTurn } from './answer/turn.js';
import { DocumentBoundary } from './boundary.js';
import { DocumentView } from './document.js';

const CONNECTION_TEXT = {
  connecting: 'Connecting…', live: 'Live', reconnecting: 'Connection lost: reconnecting…',
  offline: 'Offline', closed: 'Disconnected', missing: 'No such session, or not yours (yet): waiting for it…',
  refused: 'The access token of this link was refused (it may have expired): open the session from a new link.',
};

/** Re-render on every change of the store. @param {import('../store.js').SessionStore} store */
export function useStore(store) {
  const [data, setData] = useState(store.snapshot());
  useEffect(() => {
    setData(store.snapshot());
    return store.subscribe(() => setData(store.snapshot()));
  }, [store]);
  return data;
}

/**
 * @param {{store: import('../store.js').SessionStore, host?: any, viewStates?: any, connection?: string,
 *   locale?: string, onLocate?: any, onFollowUp?: any}} props
 */
export function SessionView({ store, host = null, viewStates = null, connection, locale, onLocate, onFollowUp }) {
  const data = useStore(store);
  const onReceipt = useCallback((/** @type {any} */ receipt) => store.receipt(receipt), [store]);
  return html`<div class="session">
    ${connection ? html`<div class=${`connection ${connection}`} role="status">${CONNECTION_TEXT[connection] ?? ''}</div>` : null}
    ${data.order.length === 0 ? html`<p class="empty">Nothing to show yet.</p>` : null}
    ${data.order.map((entry) => {
      if (entry.kind === 'answer') {
        const turn = data.turns.get(entry.key);
        return turn ? html`<${Turn} key=${`a:${entry.key}`} turn=${turn} viewStates=${viewStates} onLocate=${onLocate} onFollowUp=${onFollowUp} />` : null;
      }
      const view = data.views.get(entry.key);
      if (!view) return null;
      return html`<${StreamUI} key=${`u:${view.key}#${view.generation}`} view=${view} host=${host}
        operations=${operationsOf(data, view)} onReceipt=${onReceipt} locale=${locale} />`;
    })}
  </div>`;
}

// Every event of the session re-renders this list: a view or a turn it did not change is not rendered
// again (re-rendering every document, its Tables' cells included, cost a receipt event 50-230 ms in a
// session of 4-16 large UIs).
const Turn = memo(AnswerTurn);

/** One stream UI: rendered again for a new frame of it, a change of its operations or of the page's host. */
const StreamUI = memo(
  (/** @type {{view: any, host: any, operations: any[], onReceipt: any, locale?: string}} */ { view, host, operations, onReceipt, locale }) =>
    html`<${DocumentBoundary} document=${view.document}>
      <${DocumentView} document=${view.document} status=${view.status} refused=${view.refused} documentRef=${documentRef(view)}
        host=${host} operations=${operations} onReceipt=${onReceipt} locale=${locale} />
    </${DocumentBoundary}>`,
  (a, b) => sameProps({ ...a, operations: null }, { ...b, operations: null }) && sameItems(a.operations, b.operations));

/** Whether two lists hold the same items (by identity), in order. @param {any[]} a @param {any[]} b */
function sameItems(a, b) {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
