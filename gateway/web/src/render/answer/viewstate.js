/**
 * answer-view-state@1 in the page (seed 004 "A. 保存交互状态"): a final block's view state is
 * read from the gateway once, edited locally, and saved 500 ms after the last change with
 * `expected_revision` (a compare-and-set), one save at a time (a change made while a save is
 * in flight is saved after it, under the revision it returned).  Local edits made before the
 * first read finishes win over the stored value of the same element ("用户刚输入的内容优先于迟到的
 * 恢复结果").  Edits made while the answer is generated, and in process blocks, live in the turn's
 * memory only (`BlockMemory`): a process block never reads or writes remote state, and a block
 * that becomes final merges them into the stored state it reads.
 *
 * A 409 keeps the local edits on the page, unsaved, and offers the choice the seed asks for
 * ("前端保留未保存草稿并提供重载或重新保存"): save them again over the other window's state, or
 * reload the stored state, which names the elements whose changes it replaces.  A failed read or
 * save keeps the edits and offers a retry; a 413 (or a state over 32 KiB, refused before sending)
 * keeps them and says they are not saved.  A token that may not write view state (a viewer's:
 * 403) or no longer valid (401) leaves the view editable on the page, unsaved, and says so.
 *
 * A state the host migrated (it was saved for another version of the block: `migrated` in a read's
 * reply, or in a save's, whose `nodes` are then what was written) is shown as migrated, and the
 * block says so: seed 004's table clears what no longer fits ("无法匹配时清除选择并提示": a selection
 * that cannot be matched is cleared, and the user told).
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
 * @typedef {'idle' | 'loading' | 'saving' | 'saved' | 'unsaved' | 'conflict' | 'too_large' | 'error' | 'read_error'
 *   | 'readonly' | 'refused'} SaveStatus
 * @typedef {{nodes: Record<string, any>, dirty: Set<string>}} BlockMemory  what a block's edits are while it lives
 *   in the page (kept by its turn, so a block that moves from the generated list to its marker keeps them)
 * @typedef {{revision: number, digest: string, nodes: Record<string, any>}} Stored  the other window's state of a 409
 */

/** A block's memory before its first edit. @returns {BlockMemory} */
export function newMemory() {
  return { nodes: {}, dirty: new Set() };
}

/**
 * @param {ViewStates | null} store null: the edits stay in `memory` (a block being generated, a process block)
 * @param {string} messageId @param {string} blockId @param {BlockMemory} [memory] the turn's (default: its own)
 * @returns {{nodes: Record<string, any>, setNode: (id: string, value: any) => void, status: SaveStatus,
 *   version: number, dirty: string[], migrated: boolean, saveAgain: () => void, reload: () => void, retry: () => void}}
 */
export function useViewState(store, messageId, blockId, memory) {
  const own = useRef(/** @type {BlockMemory | null} */ (null));
  if (!memory) memory = own.current ?? (own.current = newMemory());
  const [nodes, setNodes] = useState(/** @type {Record<string, any>} */ (memory.nodes));
  const [status, setStatus] = useState(/** @type {SaveStatus} */ (store ? 'loading' : 'idle'));
  const [version, setVersion] = useState(0);
  const [migrated, setMigrated] = useState(false);
  const meta = useRef({
    revision: /** @type {number | null} */ (null), digest: '', timer: 0, reading: false, saving: false, again: false,
    denied: /** @type {SaveStatus | null} */ (null), conflict: /** @type {Stored | null} */ (null), store, live: true,
  });
  const m = meta.current;
  m.store = store;

  const show = (/** @type {Record<string, any>} */ next) => {
    memory.nodes = next;
    setNodes(next);
  };

  /** `stored` with the fields edited here and not yet saved over it (they win: a reply may come after them). */
  const withLocalEdits = (/** @type {Record<string, any>} */ stored) =>
    ({ ...stored, ...Object.fromEntries([...memory.dirty].map((id) => [id, memory.nodes[id]])) });

  const schedule = (/** @type {number} */ delay) => {
    window.clearTimeout(m.timer);
    m.timer = window.setTimeout(save, delay);
  };

  const save = async () => {
    if (!m.store || !m.live || m.revision === null || m.denied || m.conflict || !memory.dirty.size) return;
    if (m.saving) { m.again = true; return; }  // one save at a time: this change goes after it
    const body = { nodes: memory.nodes, expected_revision: m.revision, schema_digest: m.digest,
      request_id: m.store.newRequestId?.() ?? crypto.randomUUID() };
    if (utf8Bytes(JSON.stringify(body.nodes)) > MAX_STATE_BYTES) { setStatus('too_large'); return; }
    const sent = new Set(memory.dirty);
    m.saving = true;
    m.again = false;
    setStatus('saving');
    try {
      const reply = await m.store.put(messageId, blockId, body);
      m.revision = reply.revision;
      for (const id of sent) if (memory.nodes[id] === body.nodes[id]) memory.dirty.delete(id);
      if (reply.migrated === true && reply.nodes && typeof reply.nodes === 'object') {
        // written for the block's current version: what was written, and the edits made since
        if (typeof reply.schema_digest === 'string') m.digest = reply.schema_digest;
        show(withLocalEdits(reply.nodes));
        setVersion((v) => v + 1);
        setMigrated(true);
      }
      setStatus(memory.dirty.size ? 'unsaved' : 'saved');
    } catch (error) {
      failed(/** @type {any} */ (error));
    } finally {
      m.saving = false;
    }
    if (m.again && m.live) schedule(0);  // a change came while it was in flight
  };

  const failed = (/** @type {any} */ problem) => {
    if (problem?.status === 409 && problem.body && typeof problem.body.revision === 'number') {
      const stored = /** @type {Stored} */ ({
        revision: problem.body.revision,
        digest: typeof problem.body.schema_digest === 'string' ? problem.body.schema_digest : m.digest,
        nodes: problem.body.nodes && typeof problem.body.nodes === 'object' ? problem.body.nodes : {},
      });
      m.conflict = stored;
      setStatus('conflict');  // the edits stay, unsaved, until the user chooses
      return;
    }
    m.denied = denial(problem);
    setStatus(m.denied ?? (problem?.status === 413 ? 'too_large' : 'error'));
  };

  const read = () => {
    if (!m.store || m.reading) return;
    const reading = m.store;
    m.reading = true;
    setStatus('loading');
    reading.get(messageId, blockId).then((reply) => {
      m.reading = false;
      if (!m.live || m.store !== reading) return;
      m.revision = typeof reply.revision === 'number' ? reply.revision : 0;
      m.digest = typeof reply.schema_digest === 'string' ? reply.schema_digest : '';
      const stored = reply.nodes && typeof reply.nodes === 'object' ? reply.nodes : {};
      if (reply.migrated === true) setMigrated(true);
      show(withLocalEdits(stored));
      setStatus(memory.dirty.size ? 'unsaved' : 'saved');
      if (memory.dirty.size) schedule(SAVE_DELAY_MS);
    }, (/** @type {any} */ problem) => {
      m.reading = false;
      if (!m.live || m.store !== reading) return;
      m.denied = denial(problem);
      setStatus(m.denied ?? 'read_error');
    });
  };

  useEffect(() => {
    m.live = true;
    if (store) read();
    return () => { m.live = false; window.clearTimeout(m.timer); };
  }, [store, messageId, blockId]);

  const setNode = (/** @type {string} */ id, /** @type {any} */ value) => {
    memory.dirty.add(id);
    show({ ...memory.nodes, [id]: value });
    if (!m.store || m.denied || m.conflict) return;  // kept here; a conflict waits for the user's choice
    if (m.revision === null) {
      if (!m.reading) read();  // a failed first read is tried again by the next edit
      return;
    }
    setStatus('unsaved');
    schedule(SAVE_DELAY_MS);
  };

  /** End a conflict as the user chose: the other window's revision is the one to write over. @returns {Stored | null} */
  const resolved = () => {
    const stored = m.conflict;
    if (!stored) return null;
    m.conflict = null;
    m.revision = stored.revision;
    m.digest = stored.digest;
    return stored;
  };

  /** Save the edits over the state another window saved (the user chose to keep them). */
  const saveAgain = () => {
    if (!resolved()) return;
    for (const id of Object.keys(memory.nodes)) memory.dirty.add(id);
    schedule(0);
  };

  /** Replace the edits with the state another window saved (the user chose to reload it). */
  const reload = () => {
    const stored = resolved();
    if (!stored) return;
    memory.dirty.clear();
    show(stored.nodes);
    setVersion((v) => v + 1);
    setStatus('saved');
  };

  /** Try again what failed: the first read, or the save. */
  const retry = () => {
    if (m.revision === null) read();
    else schedule(0);
  };

  return { nodes, setNode, status, version, dirty: [...memory.dirty], migrated, saveAgain, reload, retry };
}

/** The status of a refusal no retry can change (403: a viewer's token; 401: a token no longer valid). */
function denial(/** @type {any} */ problem) {
  if (problem?.status === 403) return /** @type {SaveStatus} */ ('readonly');
  return problem?.status === 401 ? /** @type {SaveStatus} */ ('refused') : null;
}

/** What the block says of a state the host migrated to its current version. */
export const MIGRATED_TEXT = 'Your saved view was made for an earlier version of this answer: '
  + 'what still fits was kept, and what no longer fits (a selection, a sort, a draft) was cleared.';

export const STATUS_TEXT = {
  idle: '', loading: 'Loading your saved view…', saving: 'Saving…', saved: 'Saved', unsaved: 'Not saved yet',
  conflict: 'Not saved: this view was changed in another window. Your changes are kept on this page.',
  too_large: 'Not saved: the view state is larger than 32 KiB. Your changes stay on this page only.',
  error: 'Not saved: the host could not be reached. Your changes stay on this page.',
  read_error: 'Not saved: your saved view could not be read. Your changes stay on this page.',
  readonly: 'This link may only view: changes to this view are not saved.',
  refused: 'Not saved: the access token of this link was refused (it may have expired).',
};
