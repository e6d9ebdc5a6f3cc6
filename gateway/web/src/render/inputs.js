/**
 * The controls: Input, NumberInput, Select, Slider, Checkbox and Button (seed 000 §5, §6).
 *
 * A control writes its field through `scope.setField`, which runs the shared state checks
 * (state.js); a rejected value keeps the state and leaves the text the user typed in the
 * control with the reason next to it, so nothing typed is lost and the field still holds its
 * last valid value.  Every control has a visible label bound with `for`/`id`.
 */

import { html, useState } from '../ui.js';
import { displayText } from '../format.js';
import { domId, useScope } from './scope.js';

/** @typedef {{node: Record<string, any>}} NodeProps */

/**
 * The label, the control and its error line, with the ids that tie them together.
 * @param {{id: string, label: string, error: string | null, children: any, className?: string}} props
 */
function Field({ id, label, error, children, className = 'field' }) {
  return html`<div class=${className}>
    <label for=${id}>${label}</label>
    ${children}
    ${error ? html`<span class="field-error" id=${`${id}-error`} role="alert">${error}</span>` : null}
  </div>`;
}

/**
 * Text the user typed (null when the control shows the state): refused text, shown with its error
 * until the state changes in any way (a reset, another control, an action result: the state's
 * `version`), and then never again; or a number's accepted text ("1.50"), shown while it stands
 * for the field's value.
 * @param {unknown} value the field's current value @param {number} version the state's version
 * @returns {readonly [{text: string, error: string | null, base: unknown, version: number} | null,
 *   (draft: {text: string, error: string | null, base: unknown, version: number} | null) => void]}
 */
function useDraft(value, version) {
  const [draft, setDraft] = useState(/** @type {{text: string, error: string | null, base: unknown, version: number} | null} */ (null));
  const current = draft && (draft.error ? draft.version === version : draft.base === value) ? draft : null;
  return /** @type {const} */ ([current, setDraft]);
}

/** @param {NodeProps} props */
export function Input({ node }) {
  const scope = useScope();
  const { bind, label, placeholder } = node.props;
  const value = /** @type {string} */ (scope.state[bind]);
  const [draft, setDraft] = useDraft(value, scope.version);
  const id = domId(scope, node.id);
  const onInput = (/** @type {any} */ event) => {
    const text = event.currentTarget.value;
    const error = scope.setField(bind, text);
    setDraft(error ? { text, error, base: value, version: scope.version } : null);
  };
  return html`<${Field} id=${id} label=${label} error=${draft?.error ?? null}>
    <input id=${id} type="text" value=${draft ? draft.text : value} placeholder=${placeholder || undefined}
      aria-invalid=${draft ? 'true' : undefined} aria-describedby=${draft ? `${id}-error` : undefined}
      onInput=${onInput} />
  </${Field}>`;
}

/** A number typed as text: empty, partial ("1e", "-") or not finite is no number. */
export function parseNumber(/** @type {string} */ text) {
  if (!text.trim()) return null;
  const number = Number(text);
  return Number.isFinite(number) ? number : null;
}

/** @param {NodeProps} props */
export function NumberInput({ node }) {
  const scope = useScope();
  const { bind, label } = node.props;
  const field = scope.document.state[bind];
  const value = /** @type {number} */ (scope.state[bind]);
  const [draft, setDraft] = useDraft(value, scope.version);
  const id = domId(scope, node.id);
  const onInput = (/** @type {any} */ event) => {
    const text = event.currentTarget.value;
    const number = parseNumber(text);
    const error = number === null ? 'enter a number' : scope.setField(bind, number);
    // keep the typed text while it stands for the stored number ("1.50" stays "1.50")
    setDraft({ text, error, base: error ? value : number, version: scope.version });
  };
  const shown = draft && (draft.error || parseNumber(draft.text) === value) ? draft.text : String(value);
  return html`<${Field} id=${id} label=${label} error=${draft?.error ?? null}>
    <input id=${id} type="number" inputmode="decimal" value=${shown} step=${field.step ?? 'any'}
      min=${field.min ?? undefined} max=${field.max ?? undefined}
      aria-invalid=${draft?.error ? 'true' : undefined} aria-describedby=${draft?.error ? `${id}-error` : undefined}
      onInput=${onInput} />
  </${Field}>`;
}

/** @param {NodeProps} props */
export function Select({ node }) {
  const scope = useScope();
  const { bind, label, options } = node.props;
  const id = domId(scope, node.id);
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const onChange = (/** @type {any} */ event) => setError(scope.setField(bind, event.currentTarget.value));
  return html`<${Field} id=${id} label=${label} error=${error}>
    <select id=${id} value=${scope.state[bind]} onChange=${onChange}>
      ${options.map((/** @type {any} */ option) => html`<option key=${option.value} value=${option.value}>${option.label}</option>`)}
    </select>
  </${Field}>`;
}

/** A Slider's range is its field's (core requires min < max there). @param {NodeProps} props */
export function Slider({ node }) {
  const scope = useScope();
  const { bind, label } = node.props;
  const field = scope.document.state[bind];
  const value = /** @type {number} */ (scope.state[bind]);
  const id = domId(scope, node.id);
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const onInput = (/** @type {any} */ event) => setError(scope.setField(bind, Number(event.currentTarget.value)));
  return html`<${Field} id=${id} label=${label} error=${error} className="field slider">
    <div class="slider-row">
      <input id=${id} type="range" min=${field.min} max=${field.max} step=${field.step ?? 'any'} value=${value}
        aria-valuetext=${displayText(value)} onInput=${onInput} />
      <output for=${id} class="slider-value">${displayText(value)}</output>
    </div>
  </${Field}>`;
}

/** @param {NodeProps} props */
export function Checkbox({ node }) {
  const scope = useScope();
  const { bind, label } = node.props;
  const id = domId(scope, node.id);
  const onChange = (/** @type {any} */ event) => scope.setField(bind, event.currentTarget.checked);
  return html`<div class="field checkbox">
    <input id=${id} type="checkbox" checked=${scope.state[bind] === true} onChange=${onChange} />
    <label for=${id}>${label}</label>
  </div>`;
}

/**
 * A click dispatches the declared action: `set`/`reset` locally at once, `invoke` through the
 * host only once the UI is complete (seed 000 §12).
 * @param {NodeProps} props
 */
export function Button({ node }) {
  const scope = useScope();
  const { action, label, variant } = node.props;
  const external = action.type === 'invoke';
  const disabled = (external && !scope.externalEnabled) || scope.busy.has(node.id);
  const hintId = domId(scope, node.id, '-hint');
  const onClick = () => { if (!disabled) scope.runAction(action, label, node.id); };
  return html`<div class="button-wrap">
    <button type="button" class=${`button ${variant ?? 'secondary'}`} disabled=${disabled}
      aria-describedby=${external && !scope.externalEnabled ? hintId : undefined} onClick=${onClick}>${label}</button>
    ${external && !scope.externalEnabled ? html`<span class="hint" id=${hintId}>${scope.externalReason}</span>` : null}
  </div>`;
}
