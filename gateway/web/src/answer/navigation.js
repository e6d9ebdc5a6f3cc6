/**
 * A final answer's navigation and expand entry (seed 004): "短回答不显示内容导航；含表格、图表、补充
 * 表单或达到长内容标准、且包含至少两种可导航组件的回答才提供目录" (a short answer has no navigation;
 * one with a table, a chart or a follow-up form, or of long content, and with at least two
 * navigable components, gets a table of contents) and "包含表格、图表、补充表单或长正文的回答提供展开
 * 入口" (such an answer has an expand entry).
 *
 * Only blocks the page mounts count (one it cannot shows its fallback text).  Navigable components
 * are those the page titles: a titled Section, a Result, a Table, a Chart,
 * an Evidence list, a FollowUpForm and a titled MapLocation, in the order the answer shows them
 * (its blocks at their markers, each block's elements depth first).  "Long" is the page's choice
 * (the seed names no figure): `LONG_TEXT` characters of the answer's own text.
 */

import { blockProblem } from './catalog.js';

export const LONG_TEXT = 2000;
const RICH = new Set(['Table', 'Chart', 'FollowUpForm']);
const NAVIGABLE = new Map([['Section', false], ['Result', true], ['Table', true], ['Chart', true],
  ['Evidence', true], ['FollowUpForm', true], ['MapLocation', false]]); // type -> navigable without a title

/** @typedef {{blockId: string, elementId: string, label: string}} Entry */

/**
 * The entries of an answer's table of contents (none when it gets none) and whether it gets an
 * expand entry.
 * @param {Array<Record<string, any>>} blocks the blocks the answer mounts, in their order
 * @param {number} textLength the answer text's length, markers left out
 * @returns {{entries: Entry[], expandable: boolean}}
 */
export function answerNavigation(blocks, textLength) {
  /** @type {Entry[]} */
  const entries = [];
  let rich = false;
  for (const block of blocks) {
    // a block the page cannot mount shows its fallback text: none of its elements is on the page;
    // a block it can mount is a tree (each element reached once, from the root) of checked props
    if (blockProblem(block) !== null) continue;
    const elements = block.spec.elements;
    const stack = [block.spec.root];
    while (stack.length) {
      const id = stack.pop();
      const element = elements[id];
      rich = rich || RICH.has(element.type);
      const title = typeof element.props?.title === 'string' ? element.props.title : '';
      if (NAVIGABLE.has(element.type) && (title || NAVIGABLE.get(element.type))) {
        entries.push({ blockId: String(block.block_id), elementId: id, label: title || element.type });
      }
      stack.push(...[...(element.children ?? [])].reverse());
    }
  }
  const qualifies = rich || textLength >= LONG_TEXT;
  return { entries: qualifies && entries.length >= 2 ? entries : [], expandable: qualifies };
}

/**
 * The DOM id of an element of an answer's block: its message, block and element ids, each kept to
 * the characters an id and a URL fragment take as they are (any other is `_`, its code point, `_`),
 * joined by `.`, which no escaped part holds: two elements never share an id.
 * @param {string} messageId @param {string} blockId @param {string} elementId
 */
export function elementDomId(messageId, blockId, elementId) {
  const safe = (/** @type {string} */ text) => String(text).replace(/[^A-Za-z0-9-]/gu, (c) => `_${c.codePointAt(0)?.toString(16)}_`);
  return `a.${safe(messageId)}.${safe(blockId)}.${safe(elementId)}`;
}
