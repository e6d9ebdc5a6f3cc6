/**
 * The page: `/app/` (an index) and `/app/s/{session}` (the session viewer).
 *
 * The token comes from the URL fragment (`#token=...`, never sent to the server in a URL); it
 * is moved to this tab's sessionStorage and the fragment is removed from the address bar, so
 * a reload keeps working and the token is not left in the visible URL or the history.
 */

import { html, render, useEffect, useMemo, useState } from './ui.js';
import { createApi } from './api.js';
import { connectEvents } from './events.js';
import { SessionView } from './render/session.js';
import { SessionStore } from './store.js';

const SESSION_PATH = /^\/app\/s\/([^/]+)\/?$/;

/** @param {string} session */
function takeToken(session) {
  const key = `iui-token:${session}`;
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  const token = fragment.get('token');
  if (token) {
    sessionStorage.setItem(key, token);
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
    return token;
  }
  return sessionStorage.getItem(key);
}

/** @param {{session: string, token: string}} props */
function SessionPage({ session, token }) {
  const store = useMemo(() => new SessionStore(), []);
  const api = useMemo(() => createApi({ session, token }), [session, token]);
  const [connection, setConnection] = useState('connecting');
  useEffect(() => {
    const events = connectEvents({ api, store, onStatus: setConnection });
    return () => events.close();
  }, [api, store]);
  const host = useMemo(() => ({ reserve: api.reserve, confirm: api.confirm, cancel: api.cancel }), [api]);
  return html`<h1>Session ${session}</h1>
    <${SessionView} store=${store} host=${host} viewStates=${api.viewStates} connection=${connection}
      locale=${document.documentElement.lang || undefined} />`;
}

function Index() {
  const [session, setSession] = useState('');
  const [token, setToken] = useState('');
  const open = (/** @type {Event} */ event) => {
    event.preventDefault();
    if (session.trim()) window.location.assign(`/app/s/${encodeURIComponent(session.trim())}#token=${encodeURIComponent(token.trim())}`);
  };
  return html`<h1>Intelligent UI</h1>
    <p>Open a session to follow its interfaces and answers live.</p>
    <form class="column gap-sm index-form" onSubmit=${open}>
      <div class="field"><label for="session-id">Session id</label>
        <input id="session-id" type="text" value=${session} onInput=${(/** @type {any} */ e) => setSession(e.currentTarget.value)} /></div>
      <div class="field"><label for="session-token">Access token</label>
        <input id="session-token" type="text" autocomplete="off" value=${token} onInput=${(/** @type {any} */ e) => setToken(e.currentTarget.value)} /></div>
      <div><button type="submit" class="button primary">Open</button></div>
    </form>`;
}

function main() {
  const root = /** @type {HTMLElement} */ (document.getElementById('app'));
  const match = SESSION_PATH.exec(window.location.pathname);
  if (!match) { render(html`<${Index} />`, root); return; }
  let session;
  try { session = decodeURIComponent(match[1]); } catch { session = ''; }
  const token = session ? takeToken(session) : null;
  if (!session || !token) {
    render(html`<h1>Intelligent UI</h1><p>This link has no access token. Open the session from a link that carries one.</p>`, root);
    return;
  }
  render(html`<${SessionPage} session=${session} token=${token} />`, root);
}

main();
