/**
 * The seed's safe Markdown subset, parsed into plain data (seed 000 §5 "Markdown 的实际边界").
 *
 * Output elements are only `p strong em del code pre blockquote ul ol li hr br h1–h6`, as the
 * reference client's react-markdown with `skipHtml`, `allowedElements` and `unwrapDisallowed`:
 * raw HTML (blocks and inline tags) is dropped, a link keeps its text and loses its URL, an
 * image disappears (it has no children to unwrap), a link reference definition produces
 * nothing.  The parser is a line-based subset of CommonMark (+ GFM `~~del~~`): nothing it
 * returns is markup, every leaf is a string the renderer turns into a text node.  Nesting of
 * quotes and lists is bounded (deeper lines stay paragraph text), so hostile input cannot
 * recurse without limit.
 */

/**
 * @typedef {{type: 'text', text: string} | {type: 'br'} | {type: 'code', text: string}
 *   | {type: 'strong' | 'em' | 'del', children: Inline[]}} Inline
 * @typedef {{type: 'p', children: Inline[]} | {type: 'h', level: number, children: Inline[]}
 *   | {type: 'pre', text: string} | {type: 'hr'} | {type: 'blockquote', children: Block[]}
 *   | {type: 'ul', items: Block[][]} | {type: 'ol', start: number, items: Block[][]}} Block
 */

export const MAX_NESTING = 8;
const MAX_INLINE_DEPTH = 16;

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST = /^( {0,3})([-+*]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
const HTML_BLOCK = /^ {0,3}<(?:[A-Za-z][A-Za-z0-9-]*(?:[\s/>]|$)|\/[A-Za-z][A-Za-z0-9-]*\s*>|!--|\?|![A-Z])/;
const RAW_BLOCK = /^ {0,3}<(script|pre|style|textarea)(?:[\s>]|$)/i;
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

/** Raw HTML is skipped whole (react-markdown's skipHtml): until a blank line or its closing tag. */
function htmlBlock(/** @type {string[]} */ lines, /** @type {number} */ i) {
  if (!HTML_BLOCK.test(lines[i])) return 0;
  const raw = RAW_BLOCK.exec(lines[i]);
  const comment = /^ {0,3}<!--/.test(lines[i]);
  let j = i;
  if (raw || comment) {
    const end = raw ? new RegExp(`</${raw[1]}>`, 'i') : /-->/;
    while (j < lines.length && !end.test(lines[j])) j++;
    return Math.min(j + 1, lines.length) - i;
  }
  while (j < lines.length && lines[j].trim()) j++;
  return j - i;
}

/** @param {string} line @param {Block[]} out */
function atx(line, out) {
  const match = ATX.exec(line);
  if (!match) return 0;
  out.push({ type: 'h', level: match[1].length, children: parseInline(match[2] || '') });
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
  return FENCE.test(line) || ATX.test(line) || HR.test(line) || QUOTE.test(line) || LIST.test(line) || HTML_BLOCK.test(line);
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
  out.push({ type: 'p', children: parseInline(body.map((l) => l.replace(/^[ \t]+/, '')).join('\n').replace(/[ \t]+$/, '')) });
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
  /** @type {Inline[]} */
  const out = [];
  let buffer = '';
  const flush = () => { if (buffer) out.push({ type: 'text', text: buffer }); buffer = ''; };
  let i = 0;
  while (i < text.length) {
    const char = text[i];
    if (char === '\\' && i + 1 < text.length && PUNCTUATION.test(text[i + 1])) { buffer += text[i + 1]; i += 2; continue; }
    if (char === '\\' && text[i + 1] === '\n') { flush(); out.push({ type: 'br' }); i += 2; continue; }
    if (char === '\n') {
      const hard = / {2,}$/.test(buffer);
      buffer = buffer.replace(/ +$/, '');
      if (hard) { flush(); out.push({ type: 'br' }); } else buffer += '\n';
      i++;
      continue;
    }
    const step = codeSpan(text, i, out, flush) || image(text, i) || link(text, i, out, flush, depth)
      || rawHtml(text, i) || emphasis(text, i, out, flush, depth);
    if (step) { i += step; continue; }
    buffer += char;
    i++;
  }
  flush();
  return out;
}

/** @param {string} text @param {number} i @param {Inline[]} out @param {() => void} flush */
function codeSpan(text, i, out, flush) {
  if (text[i] !== '`') return 0;
  const run = /^`+/.exec(text.slice(i))[0];
  const close = text.indexOf(run, i + run.length);
  if (close < 0 || text[close + run.length] === '`') return 0;
  flush();
  let body = text.slice(i + run.length, close).replace(/\n/g, ' ');
  if (body.length > 2 && body[0] === ' ' && body[body.length - 1] === ' ' && body.trim()) body = body.slice(1, -1);
  out.push({ type: 'code', text: body });
  return close + run.length - i;
}

/** The end of a `[...]` label starting at `open`, or -1 (nested brackets balanced). */
function labelEnd(/** @type {string} */ text, /** @type {number} */ open) {
  let level = 0;
  for (let j = open; j < text.length; j++) {
    if (text[j] === '\\') { j++; continue; }
    if (text[j] === '[') level++;
    else if (text[j] === ']' && --level === 0) return j;
  }
  return -1;
}

/** `(destination "title")` after a label: its length, or 0. */
function destination(/** @type {string} */ text, /** @type {number} */ at) {
  if (text[at] !== '(') return 0;
  let level = 0;
  for (let j = at; j < text.length; j++) {
    if (text[j] === '\\') { j++; continue; }
    if (text[j] === '(') level++;
    else if (text[j] === ')' && --level === 0) return j + 1 - at;
    else if (text[j] === '\n' && text[j + 1] === '\n') return 0;
  }
  return 0;
}

/** An image is dropped whole: no element, no alt text, nothing loaded. */
function image(/** @type {string} */ text, /** @type {number} */ i) {
  if (text[i] !== '!' || text[i + 1] !== '[') return 0;
  const end = labelEnd(text, i + 1);
  const dest = end < 0 ? 0 : destination(text, end + 1);
  return dest ? end + 1 + dest - i : 0;
}

/** @param {string} text @param {number} i @param {Inline[]} out @param {() => void} flush @param {number} depth */
function link(text, i, out, flush, depth) {
  if (text[i] === '<') {
    const auto = /^<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*|[^\s<>@]+@[^\s<>]+)>/.exec(text.slice(i));
    if (!auto) return 0;
    flush();
    out.push({ type: 'text', text: auto[1] }); // the link's text is its address, shown as inert text
    return auto[0].length;
  }
  if (text[i] !== '[') return 0;
  const end = labelEnd(text, i);
  const dest = end < 0 ? 0 : destination(text, end + 1);
  if (!dest) return 0;
  flush();
  out.push(...parseInline(text.slice(i + 1, end), depth + 1)); // unwrapped: the text stays, the URL goes
  return end + 1 + dest - i;
}

/** Inline raw HTML (a tag, a closing tag, a comment) is dropped; the text around it stays. */
function rawHtml(/** @type {string} */ text, /** @type {number} */ i) {
  if (text[i] !== '<') return 0;
  const match = /^(?:<[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?)*\s*\/?>|<\/[A-Za-z][A-Za-z0-9-]*\s*>|<!--[\s\S]*?-->)/.exec(text.slice(i));
  return match ? match[0].length : 0;
}

/** @param {string} text @param {number} i @param {Inline[]} out @param {() => void} flush @param {number} depth */
function emphasis(text, i, out, flush, depth) {
  const char = text[i];
  if ((char !== '*' && char !== '_' && char !== '~') || depth >= MAX_INLINE_DEPTH) return 0;
  const run = new RegExp(`^\\${char}+`).exec(text.slice(i))[0];
  const size = char === '~' ? 2 : Math.min(run.length, 2);
  if (char === '~' && run.length !== 2) return 0;
  const after = text[i + size];
  if (!after || /\s/.test(after)) return 0; // a left-flanking run opens
  if (char === '_' && i > 0 && /[A-Za-z0-9]/.test(text[i - 1])) return 0; // intra-word underscores are text
  const delimiter = char.repeat(size);
  for (let j = i + size + 1; j <= text.length - size; j++) {
    if (text[j] === '\\') { j++; continue; }
    if (text[j] === '`') { const skip = codeSpan(text, j, [], () => {}); if (skip) { j += skip - 1; continue; } }
    if (text.startsWith(delimiter, j) && !/\s/.test(text[j - 1]) && text[j + size] !== char) {
      if (char === '_' && /[A-Za-z0-9]/.test(text[j + size] || '')) continue;
      flush();
      const type = char === '~' ? 'del' : size === 2 ? 'strong' : 'em';
      out.push({ type, children: parseInline(text.slice(i + size, j), depth + 1) });
      return j + size - i;
    }
  }
  return 0;
}
