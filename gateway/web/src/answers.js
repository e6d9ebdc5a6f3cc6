/**
 * Answer turns of seed 004: published blocks, the final answer, and the final answer's parts
 * with blocks mounted at their `[[ui:block_id]]` marker lines.
 *
 * The marker scan and `answerParts` are the page's copies of core/answer/_markers.py and
 * `answer_parts` (core/answer/final.py): a marker is a line of its own (≤ 3 leading spaces,
 * trailing blanks), literal inside fenced code, indented code and block quotes; a repeated
 * marker mounts once; a marker whose block is missing, unlisted or a process block is
 * `unavailable`; an old answer without markers is followed by its listed blocks.
 */

import { isObject } from './expression.js';

/**
 * @typedef {{block: Record<string, any>, version: number}} Published
 * @typedef {{messageId: string, blocks: Map<string, Published>, final: {answer: string, ui_block_ids: string[]} | null}} Turn
 * @typedef {{type: 'text', text: string} | {type: 'block', block_id: string, block: Record<string, any>}
 *   | {type: 'unavailable', block_id: string}} Part
 */

const IDENTIFIER = '[A-Za-z][A-Za-z0-9_-]{0,63}';
const MARKER = new RegExp(`^ {0,3}\\[\\[ui:(${IDENTIFIER})\\]\\][ \\t]*\\r?$`);
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*?)\r?$/;
const RESERVED = new Set(['__proto__', 'prototype', 'constructor']);

/** @param {string} line @returns {string | null} the fence a line opens */
function opens(line) {
  const match = FENCE.exec(line);
  if (!match || (match[1][0] === '`' && match[2].includes('`'))) return null;
  return match[1];
}

/** @param {string} line @param {string} fence */
function closes(line, fence) {
  const match = FENCE.exec(line);
  return Boolean(match && match[1][0] === fence[0] && match[1].length >= fence.length && !match[2].trim());
}

/**
 * The answer as text runs and markers, in order.
 * @param {string} answer
 * @returns {(string | {marker: string})[]}
 */
export function scanMarkers(answer) {
  /** @type {(string | {marker: string})[]} */
  const pieces = [];
  let run = [];
  let fence = /** @type {string | null} */ (null);
  for (const line of answer.split('\n')) {
    const marker = fence === null ? MARKER.exec(line) : null;
    if (marker && !RESERVED.has(marker[1])) {
      if (run.length) { pieces.push(run.join('\n')); run = []; }
      pieces.push({ marker: marker[1] });
      continue;
    }
    run.push(line);
    if (fence === null) fence = opens(line);
    else if (closes(line, fence)) fence = null;
  }
  if (run.length) pieces.push(run.join('\n'));
  return pieces;
}

/**
 * The ordered parts of a final answer (core's `answer_parts`).
 * @param {{answer: string, ui_block_ids: string[]}} final
 * @param {Map<string, Record<string, any>>} blocks the turn's blocks by id
 * @returns {Part[]}
 */
export function answerParts(final, blocks) {
  const allowed = new Set(final.ui_block_ids);
  let pieces = scanMarkers(final.answer);
  if (!pieces.some((piece) => typeof piece !== 'string')) pieces = [...pieces, ...final.ui_block_ids.map((id) => ({ marker: id }))];
  /** @type {Part[]} */
  const parts = [];
  const mounted = new Set();
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      const text = piece.replace(/^[\r\n]+|[\r\n]+$/g, '');
      if (text.trim()) parts.push({ type: 'text', text });
    } else if (!mounted.has(piece.marker)) {
      mounted.add(piece.marker);
      const block = allowed.has(piece.marker) ? blocks.get(piece.marker) : undefined;
      const mountable = block !== undefined && (block.phase ?? 'final') === 'final';
      parts.push(mountable ? { type: 'block', block_id: piece.marker, block } : { type: 'unavailable', block_id: piece.marker });
    }
  }
  return parts;
}

/**
 * The turns after one answer event; the same Map when it changes nothing.  A turn with a
 * final answer is closed: its blocks never change again.
 * @param {Map<string, Turn>} turns
 * @param {unknown} event
 * @returns {Map<string, Turn>}
 */
export function applyAnswerEvent(turns, event) {
  if (!isObject(event) || typeof event.message_id !== 'string') return turns;
  const turn = turns.get(event.message_id) ?? { messageId: event.message_id, blocks: new Map(), final: null };
  let next = turn;
  if (event.type === 'block' && isObject(event.block) && !turn.final) {
    const id = String(event.block.block_id);
    const version = typeof event.version === 'number' ? event.version : 0;
    const known = turn.blocks.get(id);
    if (known && known.version >= version) return turns;
    const blocks = new Map(turn.blocks);
    blocks.set(id, { block: event.block, version });
    next = { ...turn, blocks };
  } else if (event.type === 'final_answer' && !turn.final && typeof event.answer === 'string' && Array.isArray(event.ui_block_ids)) {
    next = { ...turn, final: { answer: event.answer, ui_block_ids: event.ui_block_ids.filter((id) => typeof id === 'string') } };
  }
  if (next === turn && turns.has(turn.messageId)) return turns;
  const result = new Map(turns);
  result.set(turn.messageId, next);
  return result;
}

/** The turn's blocks as a Map of block id → block. @param {Turn} turn */
export function blocksOf(turn) {
  return new Map([...turn.blocks].map(([id, published]) => [id, published.block]));
}
