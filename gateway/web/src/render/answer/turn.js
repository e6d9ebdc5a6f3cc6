/**
 * One answer turn.  While it is generated its blocks show in publication order; once the
 * final answer arrives, the answer's Markdown is shown with its final blocks mounted at their
 * markers (a marker in code stays text, an unavailable one says so without revealing
 * anything) and the process blocks fold into "Processing steps".  Only mounted final blocks
 * read and save view state.
 */

import { html } from '../../ui.js';
import { answerParts, blocksOf } from '../../answers.js';
import { MarkdownText } from '../markdown.js';
import { BlockView } from './block.js';
import { STATUS_TEXT, useViewState } from './viewstate.js';

const STATEFUL = new Set(['Chart', 'Table', 'FollowUpForm', 'Evidence']);

/**
 * @param {{messageId: string, block: Record<string, any>, viewStates: any, onLocate?: any, onFollowUp?: any}} props
 */
function FinalBlock({ messageId, block, viewStates, onLocate, onFollowUp }) {
  // only blocks with a stateful element (Chart, Table, FollowUpForm, Evidence) read or write view state
  const elements = block?.spec?.elements && typeof block.spec.elements === 'object' ? Object.values(block.spec.elements) : [];
  const stateful = elements.some((element) => STATEFUL.has(/** @type {any} */ (element)?.type));
  const { nodes, setNode, status, version } = useViewState(stateful ? viewStates : null, messageId, String(block.block_id));
  const text = STATUS_TEXT[status];
  return html`<div class="a-final-block">
    <${BlockView} block=${block} nodes=${nodes} setNode=${setNode} version=${version} onLocate=${onLocate} onFollowUp=${onFollowUp} />
    ${text ? html`<p class=${`view-state status-${status}`} role="status">${text}</p>` : null}
  </div>`;
}

/**
 * @param {{turn: import('../../answers.js').Turn, viewStates?: any, onLocate?: any, onFollowUp?: any}} props
 */
export function AnswerTurn({ turn, viewStates = null, onLocate, onFollowUp }) {
  const blocks = blocksOf(turn);
  if (!turn.final) {
    return html`<article class="answer" data-message=${turn.messageId} aria-busy="true" aria-label="Answer in progress">
      ${[...blocks.values()].map((block) => html`<${BlockView} key=${block.block_id} block=${block} />`)}
    </article>`;
  }
  const parts = answerParts(turn.final, blocks);
  const mounted = new Set(parts.filter((p) => p.type === 'block').map((p) => p.block_id));
  const process = [...blocks.values()].filter((block) => !mounted.has(block.block_id));
  return html`<article class="answer final" data-message=${turn.messageId} aria-label="Answer">
    ${parts.map((part, i) => {
      if (part.type === 'text') return html`<${MarkdownText} key=${`t${i}`} text=${part.text} className="markdown answer-text" />`;
      if (part.type === 'unavailable') return html`<div key=${`u${part.block_id}`} class="a-fallback" role="note">This content is unavailable.</div>`;
      return html`<${FinalBlock} key=${`b${part.block_id}`} messageId=${turn.messageId} block=${part.block}
        viewStates=${viewStates} onLocate=${onLocate} onFollowUp=${onFollowUp} />`;
    })}
    ${process.length ? html`<details class="process">
      <summary>Processing steps (${process.length})</summary>
      ${process.map((block) => html`<${BlockView} key=${block.block_id} block=${block} />`)}
    </details>` : null}
  </article>`;
}
