/**
 * The page's view layer: Preact and htm from the vendored files, and one guard.
 *
 * Every component of the Client is written with `html` tagged templates (no build step, no
 * JSX).  Model and user text only ever becomes text nodes or attribute values set through
 * the DOM; the guard below makes Preact's one raw-HTML path (`dangerouslySetInnerHTML`)
 * unreachable: a vnode carrying it throws before anything is written.
 */

import { Component, Fragment, createContext, h, options, render } from '../vendor/preact.mjs';
import {
  useCallback, useContext, useEffect, useLayoutEffect, useMemo, useReducer, useRef, useState,
} from '../vendor/hooks.mjs';
import htm from '../vendor/htm.mjs';

const previousVnode = options.vnode;
options.vnode = (vnode) => {
  const props = /** @type {any} */ (vnode).props;
  if (props && typeof props === 'object' && Object.prototype.hasOwnProperty.call(props, 'dangerouslySetInnerHTML')) {
    throw new TypeError('raw HTML is never rendered');
  }
  if (previousVnode) previousVnode(vnode);
};

/** `html\`<p>${text}</p>\`` builds vnodes; interpolations are values, never markup. */
export const html = htm.bind(h);

/** Whether two props objects hold the same values (by identity), key by key. */
export function sameProps(/** @type {Record<string, any>} */ a, /** @type {Record<string, any>} */ b) {
  for (const key in a) if (a[key] !== b[key]) return false;
  for (const key in b) if (!(key in a)) return false;
  return true;
}

/**
 * `component`, rendered again only when `same(previous props, next props)` is false (the vendored
 * Preact has no `memo`: this is preact/compat's, as a class with `shouldComponentUpdate`).  A
 * context it reads still re-renders it when the context changes.
 * @template P @param {(props: P) => any} component @param {(a: any, b: any) => boolean} [same]
 */
export function memo(component, same = sameProps) {
  class Memo extends Component {
    /** @param {any} next */
    shouldComponentUpdate(next) { return !same(this.props, next); }
    /** @param {any} props */
    render(props) { return h(/** @type {any} */ (component), props); }
  }
  return /** @type {any} */ (Memo);
}

export {
  Component, Fragment, createContext, h, render,
  useCallback, useContext, useEffect, useLayoutEffect, useMemo, useReducer, useRef, useState,
};
