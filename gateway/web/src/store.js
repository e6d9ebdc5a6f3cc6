/**
 * The page's view of one session: stream UIs, operations with their receipt timelines, and
 * answer turns, in the order they first appeared.  Events are applied as they come; `resync`
 * replaces everything with the server's snapshot (the event stream's contract).  Listeners are
 * told after every change; the renderer reads `snapshot()`.
 */

import { isObject } from './expression.js';
import { TERMINAL } from './actions.js';
import { applyFrame, viewKey } from './stream.js';
import { applyAnswerEvent } from './answers.js';

/**
 * @typedef {import('./stream.js').StreamView} StreamView
 * @typedef {import('./answers.js').Turn} Turn
 * @typedef {{operationId: string, requestId: string, actionId: string, documentRef: Record<string, any>,
 *   timeline: Record<string, any>[]}} Operation
 * @typedef {{views: Map<string, StreamView>, operations: Map<string, Operation>, turns: Map<string, Turn>,
 *   order: {kind: 'ui' | 'answer', key: string}[]}} Snapshot
 */

/** @returns {Snapshot} */
function empty() {
  return { views: new Map(), operations: new Map(), turns: new Map(), order: [] };
}

export class SessionStore {
  constructor() {
    /** @type {Snapshot} */
    this.data = empty();
    /** @type {Set<() => void>} */
    this.listeners = new Set();
  }

  /** The current data (replaced, never mutated, on each change). */
  snapshot() {
    return this.data;
  }

  /** @param {() => void} listener @returns {() => void} unsubscribe */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** @param {Snapshot} data */
  set(data) {
    if (data === this.data) return;
    this.data = data;
    for (const listener of [...this.listeners]) listener();
  }

  /** One frame event. @param {unknown} frame */
  frame(frame) {
    this.set(withFrame(this.data, frame));
  }

  /** One receipt (from the event stream or a request's reply). @param {unknown} receipt */
  receipt(receipt) {
    this.set(withReceipt(this.data, receipt));
  }

  /** One answer event. @param {unknown} event */
  answer(event) {
    this.set(withAnswer(this.data, event));
  }

  /**
   * Replace the whole view with the server's current state (the `resync` event).
   * @param {{frames?: unknown[], receipts?: unknown[], answers?: unknown[]}} body
   */
  resync(body) {
    let data = empty();
    for (const frame of Array.isArray(body.frames) ? body.frames : []) data = withFrame(data, frame);
    const operations = new Map(); // one Map for all the receipts: a copy per receipt was quadratic
    for (const receipt of Array.isArray(body.receipts) ? body.receipts : []) addReceipt(operations, receipt);
    data = { ...data, operations };
    for (const event of Array.isArray(body.answers) ? body.answers : []) data = withAnswer(data, event);
    this.set({ ...data, order: keptOrder(this.data.order, data.order) });
  }
}

/**
 * A resync's order: what the page showed keeps its place (the snapshot lists UIs before answers, and
 * nothing says how they interleaved), what is new follows in the snapshot's order.
 * @param {Snapshot['order']} before @param {Snapshot['order']} after @returns {Snapshot['order']}
 */
function keptOrder(before, after) {
  const id = (/** @type {{kind: string, key: string}} */ entry) => `${entry.kind}:${entry.key}`;
  const present = new Set(after.map(id));
  const kept = before.filter((entry) => present.has(id(entry)));
  const known = new Set(kept.map(id));
  return [...kept, ...after.filter((entry) => !known.has(id(entry)))];
}

/** @param {Snapshot} data @param {any} frame @returns {Snapshot} */
function withFrame(data, frame) {
  const views = applyFrame(data.views, frame);
  if (views === data.views) return data;
  const key = viewKey(frame);
  const order = data.views.has(key) ? data.order : [...data.order, { kind: /** @type {const} */ ('ui'), key }];
  return { ...data, views, order };
}

/**
 * A receipt joins its operation's timeline once per status; a terminal status is final.
 * @param {Snapshot} data @param {any} receipt @returns {Snapshot}
 */
function withReceipt(data, receipt) {
  const operation = joined(data.operations, receipt);
  return operation ? { ...data, operations: new Map(data.operations).set(operation.operationId, operation) } : data;
}

/** `withReceipt` on a Map of the caller's (a resync's, filled once). @param {Map<string, Operation>} operations @param {any} receipt */
function addReceipt(operations, receipt) {
  const operation = joined(operations, receipt);
  if (operation) operations.set(operation.operationId, operation);
}

/**
 * The receipt's operation with the receipt joined to its timeline, or null when it changes nothing.
 * @param {Map<string, Operation>} operations @param {any} receipt @returns {Operation | null}
 */
function joined(operations, receipt) {
  if (!isObject(receipt) || typeof receipt.operationId !== 'string' || typeof receipt.status !== 'string') return null;
  const previous = operations.get(receipt.operationId);
  const timeline = previous ? previous.timeline : [];
  const last = timeline[timeline.length - 1];
  if (timeline.some((r) => r.status === receipt.status) || (last && TERMINAL.has(last.status))) return null;
  return {
    operationId: receipt.operationId, requestId: String(receipt.requestId), actionId: String(receipt.actionId),
    documentRef: isObject(receipt.documentRef) ? receipt.documentRef : {}, timeline: [...timeline, receipt],
  };
}

/** @param {Snapshot} data @param {any} event @returns {Snapshot} */
function withAnswer(data, event) {
  const turns = applyAnswerEvent(data.turns, event);
  if (turns === data.turns) return data;
  const key = String(event.message_id);
  const order = data.turns.has(key) ? data.order : [...data.order, { kind: /** @type {const} */ ('answer'), key }];
  return { ...data, turns, order };
}

/**
 * The operations of one stream view (its source, UI and generation), oldest first.
 * @param {Snapshot} data @param {StreamView} view @returns {Operation[]}
 */
export function operationsOf(data, view) {
  return [...data.operations.values()].filter((op) => op.documentRef.sourceCallId === view.sourceCallId
    && op.documentRef.uiId === view.uiId && op.documentRef.generation === view.generation);
}
