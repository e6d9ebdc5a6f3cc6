/**
 * Frames of the component stream grouped into views, one per uiId, showing its latest generation
 * (seed 000 §12: an older generation does not overwrite the current view).  Each generation is
 * opened by its own call, so a view keyed by (sourceCallId, uiId) kept every generation an agent
 * opened, shown with its actions that the host refuses as stale, until a resync (which sends
 * each UI's latest frame) dropped them: 256 generations of a 200 KB document held 53 MB.
 *
 * Every frame carries a full snapshot, so a view is simply the newest acceptable frame: an
 * older generation, a seq at or before the one shown (a duplicate or a late frame) and
 * anything after a terminal frame of the same generation are dropped.  The accepted snapshot
 * shares every subtree that did not change with the one before, by node id, so an unchanged
 * branch keeps its object identity and the renderer neither re-renders nor remounts it.
 */

import { hasOwn, isObject } from './expression.js';

/**
 * @typedef {{
 *   key: string, sourceCallId: string, uiId: string, generation: number, seq: number, revision: number,
 *   status: 'streaming' | 'complete' | 'cancel' | 'error', document: Record<string, any>, message: string | null,
 * }} StreamView
 */

const TERMINAL = new Map([['complete', 'complete'], ['cancel', 'cancel'], ['error', 'error']]);

/** The view a frame belongs to: its UI's. @param {Record<string, any>} frame */
export function viewKey(frame) {
  return String(frame.uiId);
}

/**
 * The views after one frame: the same Map when the frame is dropped, else a new one.
 * @param {Map<string, StreamView>} views
 * @param {Record<string, any>} frame
 * @returns {Map<string, StreamView>}
 */
export function applyFrame(views, frame) {
  if (!isObject(frame) || !isObject(frame.snapshot)) return views;
  const key = viewKey(frame);
  const previous = views.get(key);
  if (previous && !accepts(previous, frame)) return views;
  const sameGeneration = previous && previous.generation === frame.generation;
  const view = {
    key, sourceCallId: frame.sourceCallId, uiId: frame.uiId, generation: frame.generation, seq: frame.seq,
    revision: frame.revision, status: /** @type {StreamView['status']} */ (TERMINAL.get(frame.type) ?? 'streaming'),
    document: sameGeneration ? shareDocument(previous.document, frame.snapshot) : frame.snapshot,
    message: typeof frame.message === 'string' ? frame.message : null,
  };
  const next = new Map(views);
  next.set(key, view);
  return next;
}

/** @param {StreamView} previous @param {Record<string, any>} frame */
function accepts(previous, frame) {
  if (frame.generation !== previous.generation) return frame.generation > previous.generation;
  return frame.sourceCallId === previous.sourceCallId && previous.status === 'streaming' && frame.seq > previous.seq;
}

/** The documentRef an action of this view refers to (seed 000 §11). @param {StreamView} view */
export function documentRef(view) {
  return { sourceCallId: view.sourceCallId, uiId: view.uiId, generation: view.generation, revision: view.revision };
}

/**
 * `next` with every subtree equal to one of `previous` (same id, type, props and children)
 * replaced by that subtree's old object.
 * @param {Record<string, any>} previous
 * @param {Record<string, any>} next
 */
export function shareDocument(previous, next) {
  /** @type {Map<string, any>} */
  const old = new Map();
  const stack = [previous.root];
  while (stack.length) {
    const node = stack.pop();
    if (!isObject(node)) continue;
    old.set(node.id, node);
    if (Array.isArray(node.children)) stack.push(...node.children);
  }
  const root = shareNode(old, next.root, 0);
  return root === previous.root && jsonEqual(withoutRoot(previous), withoutRoot(next)) ? previous : { ...next, root };
}

/** @param {Record<string, any>} document */
function withoutRoot(document) {
  const { root, ...rest } = document;
  return rest;
}

/** @param {Map<string, any>} old @param {any} node @param {number} depth @returns {any} */
function shareNode(old, node, depth) {
  if (!isObject(node) || depth > 32) return node;
  const children = Array.isArray(node.children) ? node.children.map((child) => shareNode(old, child, depth + 1)) : undefined;
  const before = typeof node.id === 'string' ? old.get(node.id) : undefined;
  if (before && before.type === node.type && jsonEqual(before.props, node.props) && sameList(before.children, children)) {
    return before;
  }
  return children ? { ...node, children } : node;
}

/** @param {unknown[] | undefined} a @param {unknown[] | undefined} b */
function sameList(a, b) {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((item, i) => item === b[i]);
}

/**
 * Deep equality of decoded JSON.
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => hasOwn(b, key) && jsonEqual(a[key], b[key]));
}
