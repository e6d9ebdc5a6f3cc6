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

export {
  Component, Fragment, createContext, h, render,
  useCallback, useContext, useEffect, useLayoutEffect, useMemo, useReducer, useRef, useState,
};
