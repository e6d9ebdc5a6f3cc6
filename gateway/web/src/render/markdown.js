/**
 * Rendering the parsed Markdown subset (../markdown.js) to vnodes: a fixed tag per block and
 * inline type, every leaf a text node.
 */

import { html, h, useMemo } from '../ui.js';
import { parseMarkdown } from '../markdown.js';

const INLINE_TAGS = { strong: 'strong', em: 'em', del: 'del' };
const HEADINGS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'];

/** @param {import('../markdown.js').Inline[]} inlines @returns {any[]} */
function inline(inlines) {
  return inlines.map((item) => {
    if (item.type === 'text') return item.text;
    if (item.type === 'br') return h('br', null);
    if (item.type === 'code') return h('code', null, item.text);
    return h(INLINE_TAGS[item.type], null, inline(item.children));
  });
}

/** @param {import('../markdown.js').Block[]} blocks @returns {any[]} */
function blockNodes(blocks) {
  return blocks.map((block) => {
    switch (block.type) {
      case 'p': return h('p', null, inline(block.children));
      case 'h': return h(HEADINGS[block.level - 1], null, inline(block.children));
      case 'pre': return h('pre', null, h('code', null, block.text));
      case 'hr': return h('hr', null);
      case 'blockquote': return h('blockquote', null, blockNodes(block.children));
      case 'ul': return h('ul', null, block.items.map((item) => h('li', null, blockNodes(item))));
      default: return h('ol', block.start !== 1 ? { start: block.start } : null, block.items.map((item) => h('li', null, blockNodes(item))));
    }
  });
}

/** Markdown text as inert elements of the seed's allow-list. */
export function MarkdownText(/** @type {{text: string, className?: string}} */ { text, className = 'markdown' }) {
  // Parsed once per text: a keystroke re-renders every node, and a 16 KiB text is not free.
  const blocks = useMemo(() => parseMarkdown(text), [text]);
  return html`<div class=${className}>${blockNodes(blocks)}</div>`;
}
