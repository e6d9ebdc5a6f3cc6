/**
 * The seed's safe Markdown subset, parsed into plain data (seed 000 §5 "Markdown 的实际边界").
 *
 * Output elements are only `p strong em del code pre blockquote ul ol li hr br h1–h6`, as the
 * reference client's react-markdown with `skipHtml`, `allowedElements` and `unwrapDisallowed`:
 * raw HTML (blocks and inline tags) is dropped, a link keeps its text and loses its URL, an
 * image disappears (it has no children to unwrap), a link reference definition produces
 * nothing.  The parser is a line-based subset of CommonMark (+ GFM `~~del~~`): nothing it
 * returns is markup, every leaf is a string the renderer turns into a text node.  Nesting of
 * quotes and lists is bounded (deeper lines stay paragraph text), as is the nesting of emphasis
 * and links (deeper ones stay text), so hostile input cannot recurse without limit; and no
 * opener scans the text again for its closer (`InlineScan`), so parsing stays near-linear.
 * Entity and numeric character references (`&amp;`, `&#35;`, `&#x22;`) in text are the
 * characters they name, which are text (never a delimiter or a tag); in code they stay as written.
 */

/**
 * @typedef {{type: 'text', text: string} | {type: 'br'} | {type: 'code', text: string}
 *   | {type: 'strong' | 'em' | 'del', children: Inline[]}} Inline
 * @typedef {{type: 'p', children: Inline[]} | {type: 'h', level: number, children: Inline[]}
 *   | {type: 'pre', text: string} | {type: 'hr'} | {type: 'blockquote', children: Block[]}
 *   | {type: 'ul', items: Block[][]} | {type: 'ol', start: number, items: Block[][]}} Block
 */

import { ENTITIES } from './entities.js';

export const MAX_NESTING = 8;
const MAX_INLINE_DEPTH = 16;

// A line's rest is `[\s\S]*`, not `.*`: `.` stops at U+2028 and U+2029, which CommonMark reads as
// plain characters, and a `(.*)$` that stopped there backtracked over the whole line before it:
// quadratic in a line of 50,000 blanks or backticks (2 s in Node).
const FENCE = /^ {0,3}(`{3,}|~{3,})([\s\S]*)$/;
const ATX_OPEN = /^ {0,3}(#{1,6})(?=[ \t]|$)/;
const HR = /^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const QUOTE = /^ {0,3}> ?([\s\S]*)$/;
const LIST = /^( {0,3})([-+*]|\d{1,9}[.)])([ \t]+|$)([\s\S]*)$/;
// CommonMark's HTML blocks (react-markdown's skipHtml drops them whole), by their start conditions:
// 1 a raw tag, to its closing tag; 2 a comment, to `-->`; 3 a processing instruction, to `?>`;
// 4 a declaration, to `>`; 5 CDATA, to `]]>`; 6 a block-level tag, to a blank line; 7 any other
// complete tag alone on its line, to a blank line.  Only 1-6 interrupt a paragraph: a line that
// merely starts with an inline tag (`<b>Note</b>: ...`) is text, its tags dropped (`rawHtml`).
const BLOCK_TAGS = 'address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog'
  + '|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li'
  + '|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th'
  + '|thead|title|tr|track|ul';
const RAW_BLOCK = /^ {0,3}<(script|pre|style|textarea)(?:[\s>]|$)/i;
const HTML_ENDS = /** @type {const} */ ([[/^ {0,3}<!--/, /-->/], [/^ {0,3}<\?/, /\?>/], [/^ {0,3}<![A-Za-z]/, />/],
  [/^ {0,3}<!\[CDATA\[/, /\]\]>/]]);
const HTML_BLOCK_TAG = new RegExp(`^ {0,3}</?(?:${BLOCK_TAGS})(?:[ \\t>]|/>|$)`, 'i');
const HTML_LONE_TAG = /^ {0,3}(?:<[A-Za-z][A-Za-z0-9-]*(?:[ \t]+[A-Za-z_:][\w.:-]*(?:[ \t]*=[ \t]*(?:[^\s"'=<>`]+|'[^'\n]*'|"[^"\n]*"))?)*[ \t]*\/?>|<\/[A-Za-z][A-Za-z0-9-]*[ \t]*>)[ \t]*$/;
const DEFINITION = /^ {0,3}\[[^\]]+\]:[ \t]*\S+/;
const INDENTED = /^(?: {4}|\t)/;

/**
 * The blocks of a Markdown text.
 * @param {string} text
 * @returns {Block[]}
 */
export function parseMarkdown(text) {
  return blocks(String(text).replace(/\r\n?/g, '\n').split('\n'), 0);
}

/** @param {string[]} lines @param {number} depth @returns {Block[]} */
function blocks(lines, depth) {
  /** @type {Block[]} */
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i++; continue; }
    const step = fence(lines, i, out) || htmlBlock(lines, i) || atx(line, out) || hr(line, out)
      || indented(lines, i, out) || (depth < MAX_NESTING && (quote(lines, i, out, depth) || list(lines, i, out, depth)))
      || (DEFINITION.test(line) ? 1 : 0) || paragraph(lines, i, out, depth);
    i += step;
  }
  return out;
}

/** @param {string[]} lines @param {number} i @param {Block[]} out */
function fence(lines, i, out) {
  const open = FENCE.exec(lines[i]);
  if (!open || (open[1][0] === '`' && open[2].includes('`'))) return 0;
  const mark = open[1];
  const body = [];
  let j = i + 1;
  for (; j < lines.length; j++) {
    const close = FENCE.exec(lines[j]);
    if (close && close[1][0] === mark[0] && close[1].length >= mark.length && !close[2].trim()) { j++; break; }
    body.push(lines[j]);
  }
  out.push({ type: 'pre', text: body.join('\n') });
  return j - i;
}

/** An HTML block is skipped whole (react-markdown's skipHtml): to its end condition (kinds 1-5, its
 * line included) or to a blank line (6 and 7). */
function htmlBlock(/** @type {string[]} */ lines, /** @type {number} */ i) {
  const line = lines[i];
  const end = htmlBlockEnd(line);
  let j = i;
  if (end) {
    while (j < lines.length && !end.test(lines[j])) j++;
    return Math.min(j + 1, lines.length) - i;
  }
  if (!HTML_BLOCK_TAG.test(line) && !HTML_LONE_TAG.test(line)) return 0;
  while (j < lines.length && lines[j].trim()) j++;
  return j - i;
}

/** The end mark of an HTML block of kinds 1-5 the line starts, or null. @param {string} line @returns {RegExp | null} */
function htmlBlockEnd(line) {
  const raw = RAW_BLOCK.exec(line);
  return raw ? new RegExp(`</${raw[1]}>`, 'i') : HTML_ENDS.find(([start]) => start.test(line))?.[1] ?? null;
}

/** Whether a line starts an HTML block that may interrupt a paragraph (kinds 1-6). @param {string} line */
function interruptsWithHtml(line) {
  return htmlBlockEnd(line) !== null || HTML_BLOCK_TAG.test(line);
}

/**
 * An ATX heading's level and text: the opening `#`s, then blanks or the line's end; the text without
 * its blanks and an optional closing run of `#`s after a blank.  Read by hand, in one pass: a regex
 * with a lazy text before `(?:[ \t]+#+)?[ \t]*$` retried the line's end at every blank of a long run
 * (quadratic: 2 s for 50,000 blanks).
 * @param {string} line @returns {{level: number, text: string} | null}
 */
export function atxHeading(line) {
  const open = ATX_OPEN.exec(line);
  if (!open) return null;
  let start = open[0].length;
  while (start < line.length && isBlank(line[start])) start++;
  let end = trimmedEnd(line, start);
  let hashes = end;
  while (hashes > start && line[hashes - 1] === '#') hashes--;
  if (hashes < end && (hashes === start || isBlank(line[hashes - 1]))) {
    end = trimmedEnd(line, start, hashes);
  }
  return { level: open[1].length, text: line.slice(start, end) };
}

/** @param {string} char */
function isBlank(char) {
  return char === ' ' || char === '\t';
}

/**
 * @param {string} text @param {number} from @param {number} to
 * @returns {number} where the blanks that end `text` up to `to` start (not before `from`)
 */
function trimmedEnd(text, from = 0, to = text.length) {
  let end = to;
  while (end > from && isBlank(text[end - 1])) end--;
  return end;
}

/** @param {string} line @param {Block[]} out */
function atx(line, out) {
  const heading = atxHeading(line);
  if (!heading) return 0;
  out.push({ type: 'h', level: heading.level, children: parseInline(heading.text) });
  return 1;
}

/** @param {string} line @param {Block[]} out */
function hr(line, out) {
  if (!HR.test(line)) return 0;
  out.push({ type: 'hr' });
  return 1;
}

/** @param {string[]} lines @param {number} i @param {Block[]} out */
function indented(lines, i, out) {
  if (!INDENTED.test(lines[i])) return 0;
  const body = [];
  let j = i;
  while (j < lines.length && (INDENTED.test(lines[j]) || !lines[j].trim())) body.push(lines[j++].replace(INDENTED, ''));
  while (body.length && !body[body.length - 1].trim()) { body.pop(); }
  out.push({ type: 'pre', text: body.join('\n') });
  return j - i;
}

/** @param {string[]} lines @param {number} i @param {Block[]} out @param {number} depth */
function quote(lines, i, out, depth) {
  if (!QUOTE.test(lines[i])) return 0;
  const inner = [];
  let j = i;
  for (; j < lines.length; j++) {
    const match = QUOTE.exec(lines[j]);
    if (match) inner.push(match[1]);
    else if (lines[j].trim() && inner.length && inner[inner.length - 1].trim() && !startsBlock(lines[j])) inner.push(lines[j]);
    else break;
  }
  out.push({ type: 'blockquote', children: blocks(inner, depth + 1) });
  return j - i;
}

/** @param {string[]} lines @param {number} i @param {Block[]} out @param {number} depth */
function list(lines, i, out, depth) {
  const first = LIST.exec(lines[i]);
  if (!first || HR.test(lines[i])) return 0;
  const ordered = /\d/.test(first[2]);
  const delimiter = first[2].slice(-1);
  /** @type {string[][]} */
  const items = [];
  let j = i;
  let current = /** @type {string[] | null} */ (null);
  let width = 0;
  let blank = false;
  for (; j < lines.length; j++) {
    const line = lines[j];
    const marker = LIST.exec(line);
    const sameKind = marker && /\d/.test(marker[2]) === ordered && marker[2].slice(-1) === delimiter && !HR.test(line);
    if (sameKind && marker[1].length < width) {
      width = marker[1].length + marker[2].length + Math.max(1, Math.min(marker[3].length, 4));
      current = [marker[4]];
      items.push(current);
      blank = false;
    } else if (current === null && sameKind && marker) {
      width = marker[1].length + marker[2].length + Math.max(1, Math.min(marker[3].length, 4));
      current = [marker[4]];
      items.push(current);
    } else if (!line.trim()) {
      blank = true;
      current?.push('');
    } else if (current && indentOf(line) >= width) {
      current.push(line.slice(width));
      blank = false;
    } else if (current && !blank && !startsBlock(line)) {
      current.push(line.trim()); // a lazy continuation line of the item's paragraph
    } else {
      break;
    }
  }
  while (j > i && !lines[j - 1].trim()) j--;
  const parsed = items.map((item) => blocks(item, depth + 1));
  out.push(ordered ? { type: 'ol', start: Number.parseInt(first[2], 10), items: parsed } : { type: 'ul', items: parsed });
  return Math.max(1, j - i);
}

/** @param {string} line */
function indentOf(line) {
  let columns = 0;
  for (const char of line) {
    if (char === ' ') columns++;
    else if (char === '\t') columns += 4 - (columns % 4);
    else break;
  }
  return columns;
}

/** @param {string} line */
function startsBlock(line) {
  return FENCE.test(line) || ATX_OPEN.test(line) || HR.test(line) || QUOTE.test(line) || LIST.test(line)
    || interruptsWithHtml(line);
}

/** @param {string[]} lines @param {number} i @param {Block[]} out @param {number} depth */
function paragraph(lines, i, out, depth) {
  const body = [lines[i]];
  let j = i + 1;
  for (; j < lines.length; j++) {
    const line = lines[j];
    const setext = SETEXT.exec(line);
    if (setext) {
      out.push({ type: 'h', level: setext[1][0] === '=' ? 1 : 2, children: parseInline(body.join('\n').trim()) });
      return j + 1 - i;
    }
    if (!line.trim() || (startsBlock(line) && !(depth >= MAX_NESTING && (QUOTE.test(line) || LIST.test(line))))) break;
    body.push(line);
  }
  const text = body.map((l) => l.replace(/^[ \t]+/, '')).join('\n');
  out.push({ type: 'p', children: parseInline(text.slice(0, trimmedEnd(text))) }); // by hand: `/[ \t]+$/` was quadratic
  return j - i;
}

// ------------------------------------------------------------------ inline

const PUNCTUATION = /[!-/:-@[-`{-~]/;

/**
 * The inline content of a block: text, code spans, breaks, emphasis; links lose their URL,
 * images and raw HTML vanish.
 * @param {string} text
 * @param {number} [depth]
 * @returns {Inline[]}
 */
export function parseInline(text, depth = 0) {
  const scan = new InlineScan(text);
  /** @type {Inline[]} */
  const out = [];
  let buffer = '';
  // Spaces not yet in the buffer: a line end drops them or makes them a hard break, without
  // searching a long buffer's end at every line (quadratic over a 16 KiB paragraph).
  let spaces = 0;
  const add = (/** @type {string} */ more) => { if (spaces) buffer += ' '.repeat(spaces); spaces = 0; buffer += more; };
  const flush = () => { add(''); if (buffer) out.push({ type: 'text', text: buffer }); buffer = ''; };
  let i = 0;
  while (i < text.length) {
    const char = text[i];
    if (char === '\\' && i + 1 < text.length && PUNCTUATION.test(text[i + 1])) { add(text[i + 1]); i += 2; continue; }
    if (char === '\\' && text[i + 1] === '\n') { flush(); out.push({ type: 'br' }); i += 2; continue; }
    if (char === '\n') {
      const hard = spaces >= 2;
      spaces = 0;
      if (hard) { flush(); out.push({ type: 'br' }); } else add('\n');
      i++;
      continue;
    }
    if (char === '&') {
      const reference = characterReference(text, i);
      if (reference) { add(reference.text); i += reference.length; continue; }
    }
    const step = codeSpan(scan, i, out, flush) || image(scan, i) || link(scan, i, out, flush, depth)
      || rawHtml(scan, i) || emphasis(scan, i, out, flush, depth);
    if (step) { i += step; continue; }
    if (char === ' ') spaces++;
    else add(char);
    i++;
  }
  flush();
  return out;
}

/**
 * Where the openers of one inline text close, each table built once on first use, so that an
 * opener never rescans the text to its end: a document's Markdown may be 16 KiB of openers
 * without closers (`*a *a *a …`, `[[[…`), and rescanning made parsing quadratic (seconds).
 * Every answer is the one the straightforward forward scan from the opener would give.
 */
class InlineScan {
  /** @param {string} text */
  constructor(text) {
    this.text = text;
    /** @type {Int32Array | null} the length of the code span opening at each position, 0 for none */
    this.spans = null;
    /** @type {Uint8Array | null} 1 where the escape-aware walk from the start lands (not escaped) */
    this.walk = null;
    /** @type {Map<string, Int32Array>} per delimiter kind: each position's first closer on its walk */
    this.closers = new Map();
    /** @type {Map<string, Int32Array>} per bracket kind: each opener's balanced closer */
    this.brackets = new Map();
    /** @type {Int32Array | null} the first blank line (`\n\n`) on the walk at or after each position */
    this.blanks = null;
    this.comment = { from: Infinity, at: -1 };
  }

  /** The length of the code span opening at `i` (its backtick run to the end of a run as long), or 0. */
  span(/** @type {number} */ i) {
    if (!this.spans) this.spans = codeSpans(this.text);
    return this.spans[i];
  }

  /** Where the scan for a closer goes after `j`: past an escaped character or a code span. */
  next(/** @type {number} */ j) {
    if (this.text[j] === '\\') return j + 2;
    return j + ((this.text[j] === '`' && this.span(j)) || 1);
  }

  /**
   * The first closing run of `size` × `char` at or after `from`, or -1.  Every scan follows
   * the same steps from a position on, so each position's answer is kept (and shared by all
   * positions on the way to it): each position is stepped over once per delimiter kind.
   * @param {string} char @param {number} size @param {number} from
   */
  closer(char, size, from) {
    const key = char + size;
    let table = this.closers.get(key);
    if (!table) this.closers.set(key, (table = new Int32Array(this.text.length + 1).fill(-2)));
    const path = [];
    let found = -1;
    for (let j = from; j < this.text.length; j = this.next(j)) {
      if (table[j] !== -2) { found = table[j]; break; }
      path.push(j);
      if (closes(this.text, j, char, size)) { found = j; break; }
    }
    for (const j of path) table[j] = found;
    return found;
  }

  /**
   * The balanced `close` of the `open` at `at` (nested pairs skipped, escaped characters
   * ignored, as a forward scan counting the level would find it), or -1.
   * @param {string} open @param {string} close @param {number} at
   */
  match(open, close, at) {
    let table = this.brackets.get(open);
    if (!table) this.brackets.set(open, (table = matches(this.text, this.landed(), open, close)));
    return table[at];
  }

  /** Which positions the escape-aware walk from the start lands on. */
  landed() {
    if (!this.walk) {
      this.walk = new Uint8Array(this.text.length);
      for (let j = 0; j < this.text.length; j += this.text[j] === '\\' ? 2 : 1) this.walk[j] = 1;
    }
    return this.walk;
  }

  /** The first blank line (`\n\n`) a scan from `from` meets, or the text's length. */
  blank(/** @type {number} */ from) {
    if (!this.blanks) {
      const { text } = this;
      const walk = this.landed();
      this.blanks = new Int32Array(text.length + 1).fill(text.length);
      for (let j = text.length - 1; j >= 0; j--) {
        this.blanks[j] = walk[j] && text[j] === '\n' && text[j + 1] === '\n' ? j : this.blanks[j + 1];
      }
    }
    return this.blanks[Math.min(from, this.text.length)];
  }

  /** The first `-->` at or after `from`, or -1 (asked at increasing positions: one search). */
  commentEnd(/** @type {number} */ from) {
    const { comment } = this;
    if (from < comment.from || (comment.at >= 0 && comment.at < from)) {
      comment.from = from;
      comment.at = this.text.indexOf('-->', from);
    }
    return comment.at;
  }
}

/** Whether a run of `size` × `char` at `j` closes emphasis (right-flanking, not intra-word `_`). */
function closes(/** @type {string} */ text, /** @type {number} */ j, /** @type {string} */ char, /** @type {number} */ size) {
  for (let k = 0; k < size; k++) if (text[j + k] !== char) return false;
  if (/\s/.test(text[j - 1]) || text[j + size] === char) return false;
  return char !== '_' || !/[A-Za-z0-9]/.test(text[j + size] || '');
}

/**
 * The code span length from each position: from `j` inside a run of backticks, the rest of the
 * run (`k` backticks) opens; it closes at the next run as long or longer, but only if exactly
 * as long.  Each run finds those next runs by hopping over shorter ones, in linear time.
 * @param {string} text
 */
function codeSpans(text) {
  const spans = new Int32Array(text.length);
  /** @type {number[]} */
  const starts = [];
  /** @type {number[]} */
  const lengths = [];
  for (let j = text.indexOf('`'); j >= 0; j = text.indexOf('`', j)) {
    const start = j;
    while (text[j] === '`') j++;
    starts.push(start);
    lengths.push(j - start);
  }
  const runs = starts.length;
  const longer = new Int32Array(runs).fill(runs); // the next run longer than each run
  const stack = [];
  for (let r = runs - 1; r >= 0; r--) {
    while (stack.length && lengths[stack[stack.length - 1]] <= lengths[r]) stack.pop();
    if (stack.length) longer[r] = stack[stack.length - 1];
    stack.push(r);
  }
  for (let r = 0; r < runs; r++) {
    const end = starts[r] + lengths[r];
    let c = r + 1; // the first later run at least k long, for k = 1, 2, …
    for (let k = 1; k <= lengths[r]; k++) {
      while (c < runs && lengths[c] < k) c = longer[c];
      if (c < runs && lengths[c] === k) spans[end - k] = starts[c] + k - (end - k);
    }
  }
  return spans;
}

/**
 * For each `open` at a position, its balanced `close` or -1.  A forward scan from an opener
 * lands on the opener, then on the walk from the start (`walk`); it closes where the depth
 * counted along that walk first returns below the opener's level, found for all openers by
 * one pass from the end remembering the nearest closer at each depth.
 * @param {string} text @param {Uint8Array} walk @param {string} open @param {string} close
 */
function matches(text, walk, open, close) {
  const n = text.length;
  const before = new Int32Array(n); // the depth along the walk before each position
  let depth = 0;
  for (let j = 0; j < n; j++) {
    before[j] = depth;
    if (walk[j] && text[j] === open) depth++;
    else if (walk[j] && text[j] === close) depth--;
  }
  const ends = new Int32Array(n).fill(-1);
  const nearest = new Int32Array(2 * n + 3).fill(-1); // by depth + n + 1: the nearest closer leaving it
  for (let j = n - 1; j >= 0; j--) {
    if (text[j] === open) ends[j] = nearest[before[j] + walk[j] + n + 1]; // an escaped opener is off the walk
    else if (walk[j] && text[j] === close) nearest[before[j] + n + 1] = j;
  }
  return ends;
}

/** @param {InlineScan} scan @param {number} i @param {Inline[]} out @param {() => void} flush */
function codeSpan(scan, i, out, flush) {
  const { text } = scan;
  if (text[i] !== '`') return 0;
  const length = scan.span(i);
  if (!length) return 0;
  let run = 0;
  while (text[i + run] === '`') run++;
  flush();
  let body = text.slice(i + run, i + length - run).replace(/\n/g, ' ');
  if (body.length > 2 && body[0] === ' ' && body[body.length - 1] === ' ' && body.trim()) body = body.slice(1, -1);
  out.push({ type: 'code', text: body });
  return length;
}

/** `(destination "title")` after a label: its length, or 0 (none closes before a blank line). */
function destination(/** @type {InlineScan} */ scan, /** @type {number} */ at) {
  if (scan.text[at] !== '(') return 0;
  const end = scan.match('(', ')', at);
  return end < 0 || scan.blank(at + 1) < end ? 0 : end + 1 - at;
}

/** An image is dropped whole: no element, no alt text, nothing loaded. */
function image(/** @type {InlineScan} */ scan, /** @type {number} */ i) {
  if (scan.text[i] !== '!' || scan.text[i + 1] !== '[') return 0;
  const end = scan.match('[', ']', i + 1);
  const dest = end < 0 ? 0 : destination(scan, end + 1);
  return dest ? end + 1 + dest - i : 0;
}

/**
 * A link is unwrapped: its text stays, its URL goes.  Past the nesting bound it stays text, as
 * emphasis does, so that `[[[…](u)](u)](u)` cannot recurse thousands of calls deep.
 * @param {InlineScan} scan @param {number} i @param {Inline[]} out @param {() => void} flush @param {number} depth
 */
function link(scan, i, out, flush, depth) {
  const { text } = scan;
  if (text[i] === '<') {
    const auto = /^<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*|[^\s<>@]+@[^\s<>]+)>/.exec(text.slice(i));
    if (!auto) return 0;
    flush();
    out.push({ type: 'text', text: auto[1] }); // the link's text is its address, shown as inert text
    return auto[0].length;
  }
  if (text[i] !== '[' || depth >= MAX_INLINE_DEPTH) return 0;
  const end = scan.match('[', ']', i);
  const dest = end < 0 ? 0 : destination(scan, end + 1);
  if (!dest) return 0;
  flush();
  out.push(...parseInline(text.slice(i + 1, end), depth + 1));
  return end + 1 + dest - i;
}

const REFERENCE = /&(?:#[xX]([0-9A-Fa-f]{1,6})|#([0-9]{1,7})|([A-Za-z][A-Za-z0-9]{1,31}));/y;

/**
 * The characters of the entity or numeric character reference at `i` and its length, or null
 * (CommonMark 6.2: an HTML5 name; a code point of 1–7 decimal or 1–6 hex digits, U+FFFD for 0, a
 * surrogate or one past U+10FFFF).  A sticky match: nothing beyond the reference is read.
 * @param {string} text @param {number} i @returns {{text: string, length: number} | null}
 */
function characterReference(text, i) {
  REFERENCE.lastIndex = i;
  const match = REFERENCE.exec(text);
  if (!match) return null;
  if (match[3] !== undefined) {
    const named = ENTITIES.get(match[3]);
    return named === undefined ? null : { text: named, length: match[0].length };
  }
  const code = match[1] !== undefined ? parseInt(match[1], 16) : parseInt(match[2], 10);
  const valid = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
  return { text: valid ? String.fromCodePoint(code) : '\ufffd', length: match[0].length };
}

const TAG = /^(?:<[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?)*\s*\/?>|<\/[A-Za-z][A-Za-z0-9-]*\s*>)/;

/** Inline raw HTML (a tag, a closing tag, a comment) is dropped; the text around it stays. */
function rawHtml(/** @type {InlineScan} */ scan, /** @type {number} */ i) {
  const { text } = scan;
  if (text[i] !== '<') return 0;
  if (text.startsWith('<!--', i)) {
    const end = scan.commentEnd(i + 4); // one search for all the `<!--` before it, not one each
    return end < 0 ? 0 : end + 3 - i;
  }
  const match = TAG.exec(text.slice(i));
  return match ? match[0].length : 0;
}

/** @param {InlineScan} scan @param {number} i @param {Inline[]} out @param {() => void} flush @param {number} depth */
function emphasis(scan, i, out, flush, depth) {
  const { text } = scan;
  const char = text[i];
  if ((char !== '*' && char !== '_' && char !== '~') || depth >= MAX_INLINE_DEPTH) return 0;
  const size = char === '~' || text[i + 1] === char ? 2 : 1;
  if (char === '~' && (text[i + 1] !== '~' || text[i + 2] === '~')) return 0; // only `~~` strikes through
  const after = text[i + size];
  if (!after || /\s/.test(after)) return 0; // a left-flanking run opens
  if (char === '_' && i > 0 && /[A-Za-z0-9]/.test(text[i - 1])) return 0; // intra-word underscores are text
  const j = scan.closer(char, size, i + size + 1);
  if (j < 0) return 0;
  flush();
  const type = char === '~' ? 'del' : size === 2 ? 'strong' : 'em';
  out.push({ type, children: parseInline(text.slice(i + size, j), depth + 1) });
  return j + size - i;
}
