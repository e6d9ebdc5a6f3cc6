/**
 * answer-view-state@1 in the page (seed 004 "A. 保存交互状态"): a final block's view state is
 * read from the gateway once, edited locally, and saved 500 ms after the last change with
 * `expected_revision` (a compare-and-set).  Local edits made before the first read finishes
 * win over the stored value of the same element.  A 409 replaces the local state with the
 * stored one and says so; a 413 (or a state over 32 KiB, refused before sending) keeps the
 * edits on the page and says they are not saved.  A token that may not write view state (a
 * viewer's: 403) or no longer valid (401) leaves the view editable on the page, unsaved, and says so.
 */

import { useEffect, useRef, useState } from '../../ui.js';
import { utf8Bytes } from '../../actions.js';

export const MAX_STATE_BYTES = 32768;
export const SAVE_DELAY_MS = 500;

/**
 * @typedef {{
 *   get: (messageId: string, blockId: string) => Promise<Record<string, any>>,
 *   put: (messageId: string, blockId: string, body: Record<string, any>) => Promise<Record<string, any>>,
 *   newRequestId?: () => string,
 * }} ViewStates
 * @typedef {'idle' | 'loading' | 'saving' | 'saved' | 'unsaved' | 'conflict' | 'too_large' | 'error' | 'readonly'
 *   | 'refused'} SaveStatus
 */

/**
 * @param {ViewStates | null} store @param {string} messageId @param {string} blockId
 * @returns {{nodes: Record<string, any>, setNode: (id: string, value: any) => void, status: SaveStatus, version: number}}
 */
export function useViewState(store, messageId, blockId) {
  const [nodes, setNodes] = useState(/** @type {Record<string, any>} */ ({}));
  const [status, setStatus] = useState(/** @type {SaveStatus} */ (store ? 'loading' : 'idle'));
  const [version, setVersion] = useState(0);
  const meta = useRef({ revision: /** @type {number | null} */ (null), digest: '', dirty: new Set(), timer: 0, nodes: {},
    denied: /** @type {SaveStatus | null} */ (null) });
  meta.current.nodes = nodes;

  const save = async () => {
    const m = meta.current;
    if (!store || m.revision === null || m.denied || !m.dirty.size) return;
    const body = { nodes: m.nodes, expected_revision: m.revision, request_id: store.newRequestId?.() ?? crypto.randomUUID(), schema_digest: m.digest };
    if (utf8Bytes(JSON.stringify(m.nodes)) > MAX_STATE_BYTES) { setStatus('too_large'); return; }
    const sent = new Set(m.dirty);
    setStatus('saving');
    try {
      const reply = await store.put(messageId, blockId, body);
      m.revision = reply.revision;
      for (const id of sent) if (m.nodes[id] === body.nodes[id]) m.dirty.delete(id);
      setStatus(m.dirty.size ? 'unsaved' : 'saved');
    } catch (error) {
      const problem = /** @type {any} */ (error);
      if (problem?.status === 409 && problem.body && typeof problem.body.revision === 'number') {
        m.revision = problem.body.revision;
        m.digest = typeof problem.body.schema_digest === 'string' ? problem.body.schema_digest : m.digest;
        m.dirty.clear();
        setNodes(problem.body.nodes && typeof problem.body.nodes === 'object' ? problem.body.nodes : {});
        setVersion((v) => v + 1);
        setStatus('conflict');
      } else {
        m.denied = denial(problem);
        setStatus(m.denied ?? (problem?.status === 413 ? 'too_large' : 'error'));
      }
    }
  };

  useEffect(() => {
    if (!store) return undefined;
    let live = true;
    store.get(messageId, blockId).then((reply) => {
      if (!live) return;
      const m = meta.current;
      m.revision = typeof reply.revision === 'number' ? reply.revision : 0;
      m.digest = typeof reply.schema_digest === 'string' ? reply.schema_digest : '';
      const stored = reply.nodes && typeof reply.nodes === 'object' ? reply.nodes : {};
      setNodes((local) => ({ ...stored, ...Object.fromEntries([...m.dirty].map((id) => [id, local[id]])) }));
      setStatus(m.dirty.size ? 'unsaved' : 'saved');
      if (m.dirty.size) m.timer = window.setTimeout(save, SAVE_DELAY_MS);
    }, (/** @type {any} */ problem) => {
      if (!live) return;
      meta.current.denied = denial(problem);
      setStatus(meta.current.denied ?? 'error');
    });
    return () => { live = false; window.clearTimeout(meta.current.timer); };
  }, [store, messageId, blockId]);

  const setNode = (/** @type {string} */ id, /** @type {any} */ value) => {
    const m = meta.current;
    m.dirty.add(id);
    setNodes((current) => ({ ...current, [id]: value }));
    if (!store || m.denied) return;
    setStatus(m.revision === null ? 'loading' : 'unsaved');
    window.clearTimeout(m.timer);
    if (m.revision !== null) m.timer = window.setTimeout(save, SAVE_DELAY_MS);
  };

  return { nodes, setNode, status, version };
}

/** The status of a refusal no retry can change (403: a viewer's token; 401: a token no longer valid). */
function denial(/** @type {any} */ problem) {
  if (problem?.status === 403) return /** @type {SaveStatus} */ ('readonly');
  return problem?.status === 401 ? /** @type {SaveStatus} */ ('refused') : null;
}

export const STATUS_TEXT = {
  idle: '', loading: 'Loading your saved view…', saving: 'Saving…', saved: 'Saved', unsaved: 'Not saved yet',
  conflict: 'This view was changed elsewhere: the saved version was loaded and replaces your changes.',
  too_large: 'Not saved: the view state is larger than 32 KiB. Your changes stay on this page only.',
  error: 'Not saved: the host could not be reached. Your changes stay on this page.',
  readonly: 'This link may only view: changes to this view are not saved.',
  refused: 'Not saved: the access token of this link was refused (it may have expired).',
};
