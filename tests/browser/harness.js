/**
 * Test-only page: mounts the Client's views and feeds them documents, frames, receipts and
 * answers directly (no gateway).  The host and the view-state store are in-memory fakes whose
 * requests the tests read back; everything is reached through `window.harness`.
 */

import { html, render } from '/app/static/src/ui.js';
import { DocumentView } from '/app/static/src/render/document.js';
import { SessionView } from '/app/static/src/render/session.js';
import { SessionStore } from '/app/static/src/store.js';
import { parseMarkdown } from '/app/static/src/markdown.js';
import { scanMarkers } from '/app/static/src/answers.js';
import { blockProblem } from '/app/static/src/answer/catalog.js';

const app = /** @type {HTMLElement} */ (document.getElementById('app'));
const errors = [];
window.addEventListener('error', (event) => errors.push(String(event.message)));
window.addEventListener('unhandledrejection', (event) => errors.push(String(event.reason)));

let counter = 0;
const requests = [];
const decisions = [];

/** A fake host: every reserve is answered with a queued (tool) or accepted (agent) receipt. */
const host = {
  newRequestId: () => `req-${++counter}`,
  async reserve(request) {
    requests.push(request);
    const agent = request.actionId === window.harness.agentAction;
    return receiptOf(request, `op-${counter}`, agent ? 'accepted' : window.harness.firstStatus);
  },
  async confirm(operationId, approve) {
    decisions.push({ operationId, approve });
    const op = store.snapshot().operations.get(operationId);
    return { ...op.timeline[op.timeline.length - 1], status: approve ? 'queued' : 'cancelled', updatedAt: Date.now() };
  },
  async cancel(operationId) {
    decisions.push({ operationId, cancel: true });
    const op = store.snapshot().operations.get(operationId);
    return { ...op.timeline[op.timeline.length - 1], status: 'cancelled', updatedAt: Date.now() };
  },
};

function receiptOf(request, operationId, status) {
  const now = Date.now();
  return { operationId, requestId: request.requestId, documentRef: request.documentRef, actionId: request.actionId,
    status, parameterHash: 'a'.repeat(64), createdAt: now, updatedAt: now };
}

/** A fake view-state store with the gateway's CAS semantics. */
const viewServer = { records: new Map(), puts: [], gets: 0, failNext: null, failGets: 0, putDelayMs: 0, migrateNext: null };
const viewStates = {
  newRequestId: () => `vs-${++counter}`,
  async get(messageId, blockId) {
    viewServer.gets++;
    if (viewServer.failGets > 0) { viewServer.failGets--; throw { status: 0, code: 'network' }; }
    const record = viewServer.records.get(`${messageId}/${blockId}`) ?? { revision: 0, nodes: {} };
    return { revision: record.revision, schema_digest: 'd'.repeat(64), nodes: record.nodes, migrated: record.migrated === true };
  },
  async put(messageId, blockId, body) {
    viewServer.puts.push({ messageId, blockId, body });
    if (viewServer.putDelayMs) await new Promise((resolve) => setTimeout(resolve, viewServer.putDelayMs));
    const key = `${messageId}/${blockId}`;
    const record = viewServer.records.get(key) ?? { revision: 0, nodes: {} };
    if (viewServer.failNext === 413) { viewServer.failNext = null; throw { status: 413, code: 'too_large' }; }
    if (viewServer.failNext === 503) { viewServer.failNext = null; throw { status: 503, code: 'unavailable' }; }
    if (body.expected_revision !== record.revision) {
      throw { status: 409, code: 'conflict', body: { revision: record.revision, schema_digest: 'd'.repeat(64), nodes: record.nodes, migrated: false } };
    }
    const migrated = viewServer.migrateNext;  // the host migrated the nodes (the client saw another block)
    viewServer.migrateNext = null;
    const next = { revision: record.revision + 1, nodes: migrated ?? body.nodes };
    viewServer.records.set(key, next);
    return migrated ? { revision: next.revision, schema_digest: 'e'.repeat(64), migrated: true, nodes: migrated }
      : { revision: next.revision, schema_digest: 'd'.repeat(64), migrated: false };
  },
};

let store = new SessionStore();

window.harness = {
  errors, requests, decisions, viewServer, firstStatus: 'queued', agentAction: null,
  /** Plain documents, each complete (or with `status`), no host unless `withHost`. */
  documents(docs, { status = 'complete', withHost = false } = {}) {
    render(null, app);
    render(html`${docs.map((doc, i) => html`<${DocumentView} key=${i} document=${doc} status=${status}
      host=${withHost ? host : null} documentRef=${withHost ? { sourceCallId: 'call-1', uiId: doc.id, generation: 0, revision: 0 } : null} />`)}`, app);
  },
  /** A session view over a fresh store with the fake host and view-state store. */
  session({ connection } = {}) {
    store = new SessionStore();
    render(null, app);
    render(html`<${SessionView} store=${store} host=${host} viewStates=${viewStates} connection=${connection} />`, app);
  },
  frame: (frame) => store.frame(frame),
  receipt: (receipt) => store.receipt(receipt),
  answer: (event) => store.answer(event),
  resync: (body) => store.resync(body),
  operations: () => [...store.snapshot().operations.values()],
  parseMarkdown,
  scanMarkers,
  blockProblem,
  ready: true,
};

/** True when rendering a vnode with raw HTML is refused by the guard in ui.js. */
window.harness.rawHtmlRefused = () => {
  const box = document.createElement('div');
  try {
    render(html`<div dangerouslySetInnerHTML=${{ __html: '<b>x</b>' }}></div>`, box);
    return box.querySelector('b') === null && false;
  } catch (error) {
    return error instanceof TypeError && box.querySelector('b') === null;
  }
};
