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
 *
 * A frame that would replace a valid view is refused, and the view kept, marked `refused` until a
 * frame is accepted (seed 000 §12: "拒绝候选，保留最后有效快照", the last valid snapshot stays), when
 * its envelope breaks the checkpoint's rules ("snapshot 类型的 baseRevision 必须为 null；增删改必须满足
 * revision = baseRevision + 1；complete/cancel/error 必须保留 revision = baseRevision"), when it
 * does not continue its generation ("连续帧仍要求正确 baseRevision，结构版本不能倒退，文档变化必须递增
 * revision"), when it changes what a generation freezes ("同一 generation 冻结文档 ID、版本、mode、
 * state 定义、derived、actions、根 ID/类型，以及所有 Select 对状态施加的选项值集合。已有节点 ID
 * 不能换成另一种组件类型"), or when its document is not one this page can show
 * (`documentProblem`).  A first frame has no valid view to keep: it is shown, and a document the
 * page cannot show is its error box.
 */

import { hasOwn, isObject } from './expression.js';
import { documentProblem } from './conformance.js';

/**
 * @typedef {{
 *   key: string, sourceCallId: string, uiId: string, generation: number, seq: number, revision: number,
 *   status: 'streaming' | 'complete' | 'cancel' | 'error', document: Record<string, any>, message: string | null,
 *   refused: boolean,
 * }} StreamView
 */

const TERMINAL = new Map([['complete', 'complete'], ['cancel', 'cancel'], ['error', 'error']]);
const CHANGES = new Set(['add', 'update', 'remove']);
const PROTOCOL = 'dsh.intelligent-ui.stream';
const ENVELOPE_VERSION = '1.0';

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
  const sameGeneration = previous !== undefined && previous.generation === frame.generation;
  const document = sameGeneration ? shareDocument(previous.document, frame.snapshot) : frame.snapshot;
  if (previous && documentProblem(previous.document) === null && !replaces(previous, frame, document, sameGeneration)) {
    return previous.refused ? views : new Map(views).set(key, { ...previous, refused: true });
  }
  const view = {
    key, sourceCallId: frame.sourceCallId, uiId: frame.uiId, generation: frame.generation, seq: frame.seq,
    revision: frame.revision, status: /** @type {StreamView['status']} */ (TERMINAL.get(frame.type) ?? 'streaming'),
    document, message: typeof frame.message === 'string' ? frame.message : null, refused: false,
  };
  const next = new Map(views);
  next.set(key, view);
  return next;
}

/**
 * Whether an accepted frame may replace a valid view: its envelope holds, it continues its
 * generation, keeps what the generation froze, and its document is one the page can show.
 * @param {StreamView} previous @param {Record<string, any>} frame @param {Record<string, any>} document
 * @param {boolean} sameGeneration
 */
function replaces(previous, frame, document, sameGeneration) {
  if (!validEnvelope(frame) || documentProblem(document) !== null) return false; // (then its shape is a document's)
  return !sameGeneration || (continues(previous, frame, document) && keepsContract(previous.document, document));
}

/** The checkpoint envelope's own rules (seed 000 §12). @param {Record<string, any>} frame */
export function validEnvelope(frame) {
  const { generation, seq, revision, baseRevision, type } = frame;
  if (frame.protocol !== PROTOCOL || frame.version !== ENVELOPE_VERSION || typeof frame.sourceCallId !== 'string'
      || !within(generation, 1, 1_000_000_000) || !within(seq, 1, 256) || !within(revision, 0, 256) || seq <= revision) {
    return false;
  }
  if (type === 'snapshot') return baseRevision === null;
  if (CHANGES.has(type)) return Number.isInteger(baseRevision) && revision === baseRevision + 1;
  return TERMINAL.has(type) && revision === baseRevision;
}

/** @param {unknown} value @param {number} low @param {number} high */
function within(value, low, high) {
  return Number.isInteger(value) && /** @type {number} */ (value) >= low && /** @type {number} */ (value) <= high;
}

/**
 * A later frame of the view's generation continues it: no second snapshot, the revision never
 * back, the next frame based on the revision shown (a gap of frames may skip revisions: each frame
 * is whole), and a frame that keeps the revision (a terminal one) keeps the document.
 * @param {StreamView} previous @param {Record<string, any>} frame @param {Record<string, any>} document
 */
function continues(previous, frame, document) {
  if (frame.type === 'snapshot' || frame.revision < previous.revision) return false;
  if (frame.seq === previous.seq + 1 && frame.baseRevision !== previous.revision) return false;
  return frame.revision > previous.revision || document === previous.document;
}

/**
 * What a generation freezes (seed 000 §12): the document's id, version, mode, state, derived
 * values, actions, the root's id and type, each node id's component type, and the option values
 * every Select gives its state field.
 * @param {Record<string, any>} before @param {Record<string, any>} after
 */
export function keepsContract(before, after) {
  if (before === after) return true;
  if (before.id !== after.id || before.version !== after.version || before.mode !== after.mode
      || !jsonEqual(before.state, after.state) || !jsonEqual(before.derived, after.derived)
      || !jsonEqual(before.actions, after.actions)
      || before.root.id !== after.root.id || before.root.type !== after.root.type) {
    return false;
  }
  const old = contractOf(before.root);
  const now = contractOf(after.root);
  for (const [id, type] of now.types) {
    if (old.types.has(id) && old.types.get(id) !== type) return false;
  }
  return old.domains.size === now.domains.size
    && [...now.domains].every(([field, values]) => old.domains.get(field) === values);
}

/**
 * Each node id's type, and each Select-bound state field's option values (sorted, as one text),
 * of a tree.
 * @param {any} root @returns {{types: Map<string, string>, domains: Map<string, string>}}
 */
function contractOf(root) {
  const types = new Map();
  /** @type {Map<string, string>} */
  const domains = new Map();
  const stack = [root];
  while (stack.length) {
    const node = stack.pop();
    if (!isObject(node)) continue;
    types.set(node.id, node.type);
    if (node.type === 'Select' && isObject(node.props) && typeof node.props.bind === 'string'
        && Array.isArray(node.props.options)) {
      const values = node.props.options.map((option) => JSON.stringify(isObject(option) ? option.value : null)).sort();
      domains.set(node.props.bind, values.join('\u0000'));
    }
    if (Array.isArray(node.children)) stack.push(...node.children);
  }
  return { types, domains };
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
