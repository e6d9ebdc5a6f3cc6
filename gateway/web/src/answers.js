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
// The block structure of core/answer/_markers.py, rule for rule (its docstring says what is read):
// lines are matched with their tabs expanded to stops of 4 and their `\r`s stripped.
const MARKER = new RegExp(`^\\[\\[ui:(${IDENTIFIER})\\]\\] *$`);
const FENCE = /^(`{3,}|~{3,})([\s\S]*)$/; // [\s\S]: Python's `.` (a line holds no \n) also takes U+2028
const CLOSING = /^(`{3,}|~{3,}) *$/;
const ITEM = /(?:[-+*]|([0-9]{1,9})[.)])/y; // sticky: matched at `lastIndex`, never on a copy of the rest
const HEADING_OR_BREAK = /(?:#{1,6}(?: |$)|(?:\* *){3,}$|(?:- *){3,}$|(?:_ *){3,}$)/y;
const SETEXT = /^(?:=+|-+) *$/;
const QUOTE = 0; // a container's width: a block quote; a list item's is its content offset (> 0)
const RESERVED = new Set(['__proto__', 'prototype', 'constructor']);

/** @param {string} line @returns {string} Python's `line.expandtabs(4)` */
function expandTabs(line) {
  if (!line.includes('\t')) return line;
  let out = '';
  let column = 0;
  for (const char of line) {
    if (char === '\t') {
      const width = 4 - (column % 4);
      out += ' '.repeat(width);
      column += width;
    } else {
      out += char;
      column = char === '\r' ? 0 : column + 1;
    }
  }
  return out;
}

// Runs stripped from a text's ends by hand, as Python's `rstrip` and `strip` do: a regex `[...]+$`
// is tried from every character of a long run and failed on each (quadratic: 4 s for 100,000).
/** @param {string} text @param {string} chars @returns {string} `text` without its trailing `chars` */
function withoutEnd(text, chars) {
  let end = text.length;
  while (end > 0 && chars.includes(text[end - 1])) end -= 1;
  return end === text.length ? text : text.slice(0, end);
}

/** @param {string} text @param {string} chars @returns {string} `text` without its leading and trailing `chars` */
function withoutEnds(text, chars) {
  let start = 0;
  while (start < text.length && chars.includes(text[start])) start += 1;
  return withoutEnd(text.slice(start), chars);
}

/** @param {string} text @param {number} at @returns {number} the spaces at `at` */
function spacesAt(text, at) {
  let end = at;
  while (text[end] === ' ') end += 1;
  return end - at;
}

/** @param {string} text @returns {string | null} the fence `text` opens */
function fenceOf(text) {
  const match = FENCE.exec(text);
  if (!match || (match[1][0] === '`' && match[2].includes('`'))) return null;
  return match[1];
}

/**
 * One line (tabs expanded, `\r`s stripped) read by positions (core/answer/_markers.py's `_Line`):
 * where each thematic-break character's trailing run starts is found once a line, so a break is
 * looked for only where the rest of the line can be one, however deep its items nest.
 */
class Line {
  /** @param {string} columns */
  constructor(columns) {
    this.columns = columns;
    /** @type {Map<string, number>} */
    this.runs = new Map();
  }

  /** @param {number} at @returns {boolean} a heading's start or a thematic break at `at` */
  breaks(at) {
    const columns = this.columns;
    const char = at < columns.length ? columns[at] : '';
    if (char === '*' || char === '-' || char === '_') {
      let run = this.runs.get(char);
      if (run === undefined) {
        run = withoutEnd(columns, `${char} `).length;
        this.runs.set(char, run);
      }
      if (run > at) return false;
    }
    HEADING_OR_BREAK.lastIndex = at;
    return HEADING_OR_BREAK.test(columns);
  }

  /** @param {number} at @returns {{width: number, orderedFrom: string | undefined, hasText: boolean} | null} */
  item(at) {
    const columns = this.columns;
    ITEM.lastIndex = at;
    const match = ITEM.exec(columns);
    if (!match || this.breaks(at)) return null;
    const end = at + match[0].length;
    const spaces = spacesAt(columns, end);
    if (end + spaces === columns.length) return { width: end - at + 1, orderedFrom: match[1], hasText: false };
    if (spaces === 0) return null;
    return { width: end - at + (spaces >= 5 ? 1 : spaces), orderedFrom: match[1], hasText: true };
  }

  /** @param {number} at @returns {boolean} a block of its own where no paragraph is the container */
  startsBlock(at) {
    const spaces = spacesAt(this.columns, at);
    if (spaces > 3) return false;
    const start = at + spaces;
    return this.columns.startsWith('>', start) || this.item(start) !== null
      || fenceOf(this.columns.slice(start)) !== null || this.breaks(start);
  }
}

/** @param {string} text @returns {string | null} the id of the marker `text` is */
function markerOf(text) {
  const match = MARKER.exec(text);
  return match && !RESERVED.has(match[1]) ? match[1] : null;
}

class BlockScan {
  constructor() {
    /** @type {number[]} */
    this.containers = [];
    /** @type {number[]} the positions of the block quotes in `containers`, in order */
    this.quotes = [];
    /** @type {string | null} the fence of an open fenced code block (in every open container) */
    this.fence = null;
    this.paragraph = false;
    /** @type {number | null} */
    this.emptyItem = null;
  }

  /** @param {string} columns @returns {string | null} */
  marker(columns) {
    const [at, matched] = this.continued(columns);
    if (this.fence !== null) {
      if (matched === this.containers.length) {
        const closing = CLOSING.exec(columns.slice(at + Math.min(spacesAt(columns, at), 3)));
        if (closing && closing[1][0] === this.fence[0] && closing[1].length >= this.fence.length) {
          this.fence = null;
        }
        return null;
      }
      this.fence = null;
    }
    if (at + spacesAt(columns, at) === columns.length) {
      this.close(matched);
      this.paragraph = false;
      return null;
    }
    this.emptyItem = null;
    const line = new Line(columns);
    if (this.paragraph && matched < this.containers.length && !line.startsBlock(at)) {
      const spaces = spacesAt(columns, at);
      return this.quotes.length || spaces > 3 ? null : markerOf(columns.slice(at + spaces));
    }
    const continuing = this.paragraph && matched === this.containers.length;
    this.close(matched);
    return this.blocks(line, at, continuing);
  }

  /** @param {number} width */
  open(width) {
    if (width === QUOTE) this.quotes.push(this.containers.length);
    this.containers.push(width);
  }

  /** @param {number} matched close the containers from depth `matched` on */
  close(matched) {
    this.containers.length = matched;
    let quotes = this.quotes.length;
    while (quotes > 0 && this.quotes[quotes - 1] >= matched) quotes -= 1;
    this.quotes.length = quotes;
  }

  /** @param {string} columns @returns {[number, number]} each run of spaces counted once */
  continued(columns) {
    let at = 0;
    let end = spacesAt(columns, 0);
    for (let matched = 0; matched < this.containers.length; matched += 1) {
      const width = this.containers[matched];
      if (width === QUOTE) {
        if (end - at > 3 || columns[end] !== '>') return [at, matched];
        at = end + 1;
        if (columns[at] === ' ') at += 1;
        end = at + spacesAt(columns, at);
      } else if (end === columns.length) {
        return this.blankRest(columns, at, matched);
      } else if (end - at >= width) {
        at += width;
      } else {
        return [at, matched];
      }
    }
    return [at, this.containers.length];
  }

  /**
   * A line blank from `at` on, at the list item of depth `matched`: it continues every list item
   * up to the next block quote or the item opened empty, in one step.
   * @param {string} columns @param {number} at @param {number} matched @returns {[number, number]}
   */
  blankRest(columns, at, matched) {
    // A line reaches depth `matched` past every quote before it with a `>` of its own: this search
    // is bounded by the line's length.
    const next = this.quotes.find((position) => position >= matched);
    let stop = next === undefined ? this.containers.length : next;
    if (this.emptyItem !== null && matched <= this.emptyItem && this.emptyItem < stop) stop = this.emptyItem;
    return stop === matched ? [at, matched] : [columns.length, stop];
  }

  /** @param {Line} line @param {number} at @param {boolean} continuing @returns {string | null} */
  blocks(line, at, continuing) {
    const columns = line.columns;
    let spaces;
    for (;;) {
      spaces = spacesAt(columns, at);
      if (spaces >= 4) {
        this.paragraph = continuing;
        return null;
      }
      if (columns[at + spaces] === '>') {
        this.open(QUOTE);
        at += spaces + 1;
        if (columns[at] === ' ') at += 1;
        continuing = false;
        continue;
      }
      const item = line.item(at + spaces);
      if (!item || (continuing && !(item.hasText && (item.orderedFrom === undefined || item.orderedFrom === '1')))) {
        break;
      }
      this.open(spaces + item.width);
      at += spaces + item.width;
      continuing = false;
      if (!item.hasText) this.emptyItem = this.containers.length - 1;
    }
    return this.leaf(line, at + spaces, continuing);
  }

  /** @param {Line} line @param {number} at @param {boolean} continuing @returns {string | null} */
  leaf(line, at, continuing) {
    const text = line.columns.slice(at);
    if (!text) {
      this.paragraph = false;
      return null;
    }
    const fence = fenceOf(text);
    if (fence !== null) {
      this.fence = fence;
      this.paragraph = false;
      return null;
    }
    if (line.breaks(at) || (continuing && SETEXT.test(text))) {
      this.paragraph = false;
      return null;
    }
    this.paragraph = true;
    return this.quotes.length ? null : markerOf(text);
  }
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
  const structure = new BlockScan();
  for (const line of answer.split('\n')) {
    const found = structure.marker(withoutEnd(expandTabs(line), '\r'));
    if (found === null) {
      run.push(line);
      continue;
    }
    if (run.length) { pieces.push(run.join('\n')); run = []; }
    pieces.push({ marker: found });
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
      const text = withoutEnds(piece, '\r\n');
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
