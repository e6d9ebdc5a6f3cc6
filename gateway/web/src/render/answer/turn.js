/**
 * One answer turn.  While it is generated its blocks show in publication order; once the
 * final answer arrives, the answer's Markdown is shown with its final blocks mounted at their
 * markers (a marker in code stays text, an unavailable one says so without revealing
 * anything) and the process blocks fold into "Processing steps".  Every block's controls work
 * on the page; only mounted final blocks read and save view state, and a block keeps what was
 * edited in it while the answer was generated (seed 004: "尚未完成的编辑先留在内存，最终答复完成后
 * 读取远端并合并本地变更").  A final answer with a table, a chart or a follow-up form, or a long
 * one, has an expand entry, and with two titled components or more a table of contents
 * (`answer/navigation.js`, seed 004).
 */

import { html, useRef, useState } from '../../ui.js';
import { answerParts, blocksOf } from '../../answers.js';
import { answerNavigation, elementDomId } from '../../answer/navigation.js';
import { MarkdownText } from '../markdown.js';
import { BlockView } from './block.js';
import { MIGRATED_TEXT, STATUS_TEXT, newMemory, useViewState } from './viewstate.js';

const STATEFUL = new Set(['Chart', 'Table', 'FollowUpForm', 'Evidence']);

/** What a reload would replace: the edited elements, by type and id (text, never markup). */
function edited(/** @type {Record<string, any>} */ block, /** @type {string[]} */ ids) {
  const elements = block?.spec?.elements ?? {};
  return ids.map((id) => `${elements[id]?.type ?? 'Element'} “${id}”`).join(', ');
}

/**
 * One block of a turn, with its view state: saved when `persist` (a final block mounted at its
 * marker), else kept in the turn's memory only (a block being generated, a process block).  The
 * same instance serves a block from generation to its marker (same key, same parent).
 * @param {{messageId: string, block: Record<string, any>, persist: boolean, memory: import('./viewstate.js').BlockMemory,
 *   viewStates: any, onLocate?: any, onFollowUp?: any}} props
 */
function TurnBlock({ messageId, block, persist, memory, viewStates, onLocate, onFollowUp }) {
  // only blocks with a stateful element (Chart, Table, FollowUpForm, Evidence) read or write view state
  const elements = block?.spec?.elements && typeof block.spec.elements === 'object' ? Object.values(block.spec.elements) : [];
  const stateful = elements.some((element) => STATEFUL.has(/** @type {any} */ (element)?.type));
  const view = useViewState(persist && stateful ? viewStates : null, messageId, String(block.block_id), memory);
  const text = STATUS_TEXT[view.status];
  const conflict = view.status === 'conflict';
  const retry = view.status === 'error' || view.status === 'read_error';
  return html`<div class=${persist ? 'a-final-block' : 'a-turn-block'}>
    <${BlockView} block=${block} nodes=${view.nodes} setNode=${view.setNode} version=${view.version} onLocate=${onLocate}
      onFollowUp=${onFollowUp} messageId=${messageId} />
    ${text ? html`<div class=${`view-state status-${view.status}`} role="status">
      <p>${text}</p>
      ${conflict ? html`<p>Reloading replaces your changes to: ${edited(block, view.dirty)}.</p>
        <div class="button-wrap">
          <button type="button" class="button primary view-save-again" onClick=${view.saveAgain}>Keep my changes and save them</button>
          <button type="button" class="button secondary view-reload" onClick=${view.reload}>Reload the saved version</button>
        </div>` : null}
      ${retry ? html`<button type="button" class="button secondary view-retry" onClick=${view.retry}>Retry</button>` : null}
    </div>` : null}
    ${view.migrated ? html`<p class="view-state view-migrated" role="status">${MIGRATED_TEXT}</p>` : null}
  </div>`;
}

/**
 * @param {{turn: import('../../answers.js').Turn, viewStates?: any, onLocate?: any, onFollowUp?: any}} props
 */
export function AnswerTurn({ turn, viewStates = null, onLocate, onFollowUp }) {
  const memories = useRef(/** @type {Map<string, import('./viewstate.js').BlockMemory>} */ (new Map()));
  const [expanded, setExpanded] = useState(false);
  const memory = (/** @type {any} */ id) => {
    const key = String(id);
    let found = memories.current.get(key);
    if (!found) memories.current.set(key, found = newMemory());
    return found;
  };
  const blocks = blocksOf(turn);
  const block = (/** @type {Record<string, any>} */ b, /** @type {boolean} */ persist) => html`<${TurnBlock}
    key=${`b${b.block_id}`} messageId=${turn.messageId} block=${b} persist=${persist} memory=${memory(b.block_id)}
    viewStates=${viewStates} onLocate=${onLocate} onFollowUp=${onFollowUp} />`;
  if (!turn.final) {
    return html`<article class="answer" data-message=${turn.messageId} aria-busy="true" aria-label="Answer in progress">${
      [...blocks.values()].map((b) => block(b, false))}</article>`;
  }
  const parts = answerParts(turn.final, blocks);
  const mounted = new Set(parts.filter((p) => p.type === 'block').map((p) => p.block_id));
  const process = [...blocks.values()].filter((b) => !mounted.has(b.block_id));
  // One list of children, as while generated: a block keeps its instance (and its DOM) when it moves
  // from the generated list to its marker (Preact matches it by key among the same parent's children).
  const children = parts.map((part, i) => {
    if (part.type === 'text') return html`<${MarkdownText} key=${`t${i}`} text=${part.text} className="markdown answer-text" />`;
    if (part.type === 'unavailable') return html`<div key=${`u${part.block_id}`} class="a-fallback" role="note">This content is unavailable.</div>`;
    return block(part.block, true);
  });
  if (process.length) {
    children.push(html`<details class="process" key="process">
      <summary>Processing steps (${process.length})</summary>
      ${process.map((b) => block(b, false))}
    </details>`);
  }
  const { entries, expandable } = answerNavigation(parts.flatMap((p) => (p.type === 'block' ? [p.block] : [])),
    parts.reduce((sum, p) => sum + (p.type === 'text' ? p.text.length : 0), 0));
  // the tools and the table of contents are keyed children of the same article as the blocks: a block
  // keeps its instance when it moves to its marker (a wrapper component would remount every one)
  if (entries.length) children.unshift(html`<nav class="a-toc" key="toc" aria-label="In this answer"><ol>
    ${entries.map((entry) => html`<li key=${`${entry.blockId}/${entry.elementId}`}>
      <a href=${`#${elementDomId(turn.messageId, entry.blockId, entry.elementId)}`}>${entry.label}</a></li>`)}
  </ol></nav>`);
  if (expandable) children.unshift(html`<div class="a-answer-tools" key="tools">
    <button type="button" class="link-button a-expand" aria-pressed=${expanded ? 'true' : 'false'}
      onClick=${() => setExpanded(!expanded)}>Expand answer</button>
  </div>`);
  // expanded: the answer fills the window (the page's own reading view; Escape or the button ends it)
  const onKeyDown = (/** @type {KeyboardEvent} */ event) => {
    if (expanded && event.key === 'Escape') { event.preventDefault(); setExpanded(false); }
  };
  return html`<article class=${`answer final${expanded ? ' expanded' : ''}`} data-message=${turn.messageId}
    aria-label="Answer" onKeyDown=${onKeyDown}>${children}</article>`;
}
