/**
 * Evidence items with a category filter and expandable summaries, and the FollowUpForm whose
 * drafts are view state (seed 004: the form starts empty, the user submits it as a message).
 */

import { html, useState } from '../../ui.js';
import { parseNumber } from '../inputs.js';
import { useBlock, useNodeState } from './context.js';

/** @param {{id: string, props: Record<string, any>}} props */
export function Evidence({ id, props }) {
  const scope = useBlock();
  const [view, update] = useNodeState(id);
  const categories = [...new Set(props.items.map((/** @type {any} */ item) => item.category).filter(Boolean))];
  const category = categories.includes(view.category) ? view.category : null;
  const expanded = new Set(Array.isArray(view.expanded) ? view.expanded : []);
  const items = props.items.filter((/** @type {any} */ item) => category === null || item.category === category);
  const filterId = `${scope.idPrefix}-${id}-category`;
  const toggle = (/** @type {string} */ itemId) => {
    const next = new Set(expanded);
    if (next.has(itemId)) next.delete(itemId); else next.add(itemId);
    update({ expanded: [...next] });
  };
  return html`<div class="a-evidence">
    ${props.title ? html`<strong class="a-title">${props.title}</strong>` : null}
    ${categories.length ? html`<div class="field inline"><label for=${filterId}>Category</label>
      <select id=${filterId} value=${category ?? ''} onChange=${(/** @type {any} */ e) => update({ category: e.currentTarget.value || null })}>
        <option value="">All</option>
        ${categories.map((c) => html`<option key=${c} value=${c}>${c}</option>`)}
      </select></div>` : null}
    <ul class="a-evidence-list">
      ${items.map((/** @type {any} */ item, /** @type {number} */ i) => {
        const open = expanded.has(item.id);
        const bodyId = `${scope.idPrefix}-${id}-item-${i}`;
        return html`<li key=${item.id} class="a-evidence-item">
          <button type="button" class="disclosure" aria-expanded=${open ? 'true' : 'false'} aria-controls=${bodyId}
            onClick=${() => toggle(item.id)}>${item.source}${item.recorded_at ? ` · ${item.recorded_at}` : ''}</button>
          ${item.category ? html`<span class="badge tone-neutral">${item.category}</span>` : null}
          <div id=${bodyId} class="a-evidence-body" hidden=${!open}><p>${item.summary}</p><p class="hint">Record ${item.id}</p></div>
        </li>`;
      })}
    </ul>
  </div>`;
}

/**
 * The form's drafts live in view state; submitting hands the text to the page (a user
 * message), never to the network on its own; a required field left empty is reported next
 * to it.
 * @param {{id: string, props: Record<string, any>}} props
 */
export function FollowUpForm({ id, props }) {
  const scope = useBlock();
  const [view, update] = useNodeState(id);
  const drafts = view.drafts && typeof view.drafts === 'object' ? view.drafts : {};
  const [errors, setErrors] = useState(/** @type {Record<string, string>} */ ({}));
  const [status, setStatus] = useState(/** @type {string | null} */ (null));
  const [sending, setSending] = useState(false);
  // a number field's text as typed ("1.0", "2.50"), shown while it stands for the draft's number
  const [typed, setTyped] = useState(/** @type {Record<string, string>} */ ({}));
  const set = (/** @type {string} */ name, /** @type {unknown} */ value) => {
    setStatus(null);  // a changed field clears the last send's feedback and its own error
    if (errors[name]) setErrors(({ [name]: _, ...rest }) => rest);
    update({ drafts: { ...drafts, [name]: value } });
  };
  const numberText = (/** @type {string} */ name) => {
    const value = drafts[name] ?? null;
    const text = typed[name];
    if (text !== undefined && parseNumber(text) === value) return text;
    return value === null ? '' : String(value);
  };
  const submit = async (/** @type {Event} */ event) => {
    event.preventDefault();
    if (sending) return;  // seed 004: "表单提交中阻止重复发送"
    const missing = Object.fromEntries(props.fields.filter((/** @type {any} */ f) => f.required && (drafts[f.name] ?? '') === '')
      .map((/** @type {any} */ f) => [f.name, 'this field is required']));
    setErrors(missing);
    if (Object.keys(missing).length) return;
    const text = props.fields.filter((/** @type {any} */ f) => (drafts[f.name] ?? '') !== '')
      .map((/** @type {any} */ f) => `${f.label}: ${drafts[f.name]}`).join('\n');
    if (!scope.onFollowUp) { setStatus('Sending is not available on this page; your draft is kept.'); return; }
    setStatus('Sending…');
    setSending(true);
    try {
      await scope.onFollowUp(text);
      setStatus('Sent as your next message.');
    } catch {
      setStatus('Sending failed; your draft is kept.');
    } finally {
      setSending(false);
    }
  };
  return html`<form class="a-form" novalidate onSubmit=${submit}>
    <strong class="a-title">${props.title}</strong>
    ${props.description ? html`<p>${props.description}</p>` : null}
    ${props.fields.map((/** @type {any} */ field) => {
      const fieldId = `${scope.idPrefix}-${id}-${field.name}`;
      const value = drafts[field.name] ?? '';
      const error = errors[field.name];
      const common = { id: fieldId, required: field.required === true, 'aria-invalid': error ? 'true' : undefined,
        'aria-describedby': error ? `${fieldId}-error` : undefined };
      const onText = (/** @type {any} */ e) => set(field.name, e.currentTarget.value);
      let control;
      if (field.type === 'textarea') control = html`<textarea ...${common} value=${value} placeholder=${field.placeholder} maxlength="4096" onInput=${onText}></textarea>`;
      else if (field.type === 'select') control = html`<select ...${common} value=${value} onChange=${onText}>
        <option value="">Choose…</option>${(field.options ?? []).map((/** @type {string} */ o) => html`<option key=${o} value=${o}>${o}</option>`)}</select>`;
      else if (field.type === 'number') control = html`<input ...${common} type="number" step="any" value=${numberText(field.name)}
        onInput=${(/** @type {any} */ e) => {
          const t = e.currentTarget.value;
          setTyped((all) => ({ ...all, [field.name]: t }));
          set(field.name, parseNumber(t));
        }} />`;
      else control = html`<input ...${common} type=${field.type === 'date' ? 'date' : 'text'} value=${value} placeholder=${field.placeholder} maxlength="4096" onInput=${onText} />`;
      return html`<div key=${field.name} class="field">
        <label for=${fieldId}>${field.label}${field.required ? html` <span aria-hidden="true">*</span>` : null}</label>
        ${control}
        ${error ? html`<span class="field-error" id=${`${fieldId}-error`}>${error}</span>` : null}
      </div>`;
    })}
    <div class="form-actions"><button type="submit" class="button primary" disabled=${sending}
      aria-disabled=${sending ? 'true' : undefined}>Send</button>
      ${status ? html`<span class="hint" role="status">${status}</span>` : null}</div>
  </form>`;
}
