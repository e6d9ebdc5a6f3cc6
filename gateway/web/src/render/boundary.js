/**
 * The per-node error boundary (seed 000 §8: render errors are caught at node boundaries and a
 * node recovers after the local state changes).
 *
 * A node whose value cannot be computed (an ExpressionError: a denominator typed to 0) or
 * whose rendering fails shows one error box in its place; its siblings and ancestors keep
 * rendering.  The box names the failure by our own message for the error's code, never by
 * model or user text, and is cleared when the state or the node itself changes, so the next
 * edit that makes the value computable again brings the node back.
 */

import { Component, html } from '../ui.js';
import { UIError } from '../errors.js';
import { documentProblem } from '../conformance.js';

/** The text of a failure: our own messages only (an error of ours, else a fixed text). */
export function failureText(/** @type {unknown} */ error) {
  if (error instanceof UIError) return error.message;
  return 'this part could not be displayed';
}

export class NodeBoundary extends Component {
  /** @param {unknown} error */
  static getDerivedStateFromError(error) {
    return { error, version: undefined, node: undefined };
  }

  /** @param {any} props @param {any} state */
  static getDerivedStateFromProps(props, state) {
    if (!state.error) return null;
    if (state.version === undefined) return { version: props.version, node: props.node };
    if (state.version !== props.version || state.node !== props.node) return { error: null, version: undefined, node: undefined };
    return null;
  }

  constructor(/** @type {any} */ props) {
    super(props);
    this.state = { error: null, version: undefined, node: undefined };
  }

  componentDidCatch() {
    // the error is shown by the box; nothing is logged, the console stays clean for real faults
  }

  render() {
    const { error } = /** @type {any} */ (this.state);
    const { node, children } = /** @type {any} */ (this.props);
    if (!error) return children;
    return html`<div class="node-error" role="alert" data-node=${node.id}>
      <strong>Could not display this part.</strong> <span>${failureText(error)}</span>
    </div>`;
  }
}

/**
 * One document's boundary (seed 000 §1 and §10: the Client validates each document again, and an
 * unknown version is shown as an error).  The host validated every document it sends, so this
 * is the second line: a document that does not conform to the protocol's schema or repeats a
 * component id (`conformance.js`), that is not the shape the views read, or whose rendering
 * fails outside any node's boundary, is one error box in its place, and the session's other
 * interfaces keep updating.  A new document (the next frame) is tried again.
 */
export class DocumentBoundary extends Component {
  /** @param {unknown} error */
  static getDerivedStateFromError(error) {
    return { error };
  }

  /** @param {any} props @param {any} state */
  static getDerivedStateFromProps(props, state) {
    return state.document === props.document ? null : { error: null, document: props.document };
  }

  constructor(/** @type {any} */ props) {
    super(props);
    this.state = { error: null, document: props.document };
  }

  componentDidCatch() {
    // shown by the box, as NodeBoundary
  }

  render() {
    const { error } = /** @type {any} */ (this.state);
    const { document, children } = /** @type {any} */ (this.props);
    const problem = error ? 'it could not be rendered' : documentProblem(document);
    if (!problem) return children;
    return html`<div class="document-error" role="alert">
      <strong>This interface cannot be displayed:</strong> <span>${problem}.</span>
    </div>`;
  }
}
