/**
 * The session's event stream with tickets and exact resume (the gateway contract).
 *
 * Every (re)connection asks for a new one-use ticket and passes the last cursor it applied;
 * the browser's own EventSource reconnect is never used (it would reuse a spent ticket).
 * Each event's id is a cursor `v1.<epoch>.<frame>.<receipt>.<answer>`: an event at or before
 * the last applied cursor (every log position ≤ the last one, same epoch) is dropped, so a
 * resumed stream applies nothing twice.  `resync` replaces the whole view, except a
 * `slow_reader` resync, which carries no snapshot: the page just reconnects from its cursor.
 * A ticket refused with 401 or 403 (an expired token) stops the page; a 404 (no such session
 * yet, or not this token's) is asked again every few seconds.  The stream is asked for its
 * heartbeats as events (`heartbeat=event`: a comment never reaches the page), the first naming
 * their interval: a stream that brought nothing for STALL_BEATS intervals is taken for stalled
 * (a proxy that stopped forwarding, a half-open connection) and opened again from the cursor.
 *
 * Every event applied is announced as an `iui:applied` event on `window` (`detail`: its kind
 * and id), after it changed the view: the end-to-end tests count them to see each applied once.
 */

/** Reconnection delays in ms (the contract's `retry: 3000` is the longest). */
export const BACKOFF = [250, 1000, 3000];
/** Heartbeat intervals a stream may stay silent for, plus a second, before it is reopened. */
export const STALL_BEATS = 3;
/** The gateway's default interval, until a stream names its own (IUI_GATEWAY_HEARTBEAT_S ≤ 300). */
const DEFAULT_EVERY_S = 15;

/** @param {string} id @returns {{epoch: string, logs: number[][]} | null} */
function parseCursor(id) {
  const parts = id.split('.');
  if (parts.length !== 5 || parts[0] !== 'v1') return null;
  const logs = parts.slice(2).map((entry) => entry.split('-').map(Number));
  if (logs.some((log) => log.length !== 2 || log.some((n) => !Number.isSafeInteger(n) || n < 0))) return null;
  return { epoch: parts[1], logs };
}

/**
 * True when cursor `id` is after `last` (some log advanced); another epoch counts as after.
 * @param {string} id @param {string | null} last
 */
export function isAfter(id, last) {
  if (!last) return true;
  const a = parseCursor(id);
  const b = parseCursor(last);
  if (!a || !b || a.epoch !== b.epoch) return true;
  return a.logs.some(([ms, seq], i) => ms > b.logs[i][0] || (ms === b.logs[i][0] && seq > b.logs[i][1]));
}

/**
 * @param {{api: ReturnType<typeof import('./api.js').createApi>, store: import('./store.js').SessionStore,
 *   onStatus: (status: string) => void, EventSourceImpl?: typeof EventSource}} options
 */
export function connectEvents({ api, store, onStatus, EventSourceImpl = EventSource }) {
  let last = /** @type {string | null} */ (null);
  let source = /** @type {EventSource | null} */ (null);
  let attempt = 0;
  let timer = 0;
  let watchdog = 0;
  let every = DEFAULT_EVERY_S;
  let closed = false;

  // Any event (a heartbeat included) proves the stream alive; silence past the bound reopens it.
  const watch = (/** @type {EventSource} */ es) => {
    window.clearTimeout(watchdog);
    watchdog = window.setTimeout(() => { if (source === es) reconnect(); }, (STALL_BEATS * every + 1) * 1000);
  };

  const handlers = {
    frame: (/** @type {any} */ data) => store.frame(data),
    receipt: (/** @type {any} */ data) => store.receipt(data),
    answer: (/** @type {any} */ data) => store.answer(data),
  };

  const reconnect = () => {
    window.clearTimeout(watchdog);
    source?.close();
    source = null;
    if (closed) return;
    onStatus('reconnecting');
    window.clearTimeout(timer);
    timer = window.setTimeout(open, BACKOFF[Math.min(attempt++, BACKOFF.length - 1)]);
  };

  // A session is created by its agent's first call: until then (or for a session of another
  // identity, which the gateway answers alike) the page asks again at the longest delay.
  const waitForSession = () => {
    onStatus('missing');
    window.clearTimeout(timer);
    timer = window.setTimeout(open, BACKOFF[BACKOFF.length - 1]);
  };

  const onEvent = (/** @type {string} */ kind, /** @type {MessageEvent} */ event) => {
    const id = event.lastEventId;
    let data;
    try { data = JSON.parse(event.data); } catch { return; }
    if (kind === 'resync') {
      if (data && data.reason === 'slow_reader') { reconnect(); return; }
      store.resync(data ?? {});
    } else if (id && !isAfter(id, last)) {
      return; // already applied before a reconnection
    } else {
      /** @type {any} */ (handlers)[kind](data);
    }
    if (id) last = id;
    window.dispatchEvent(new CustomEvent('iui:applied', { detail: { kind, id } }));
  };

  async function open() {
    if (closed) return;
    onStatus(attempt ? 'reconnecting' : 'connecting');
    let ticket;
    try {
      ticket = await api.ticket();
    } catch (error) {
      const status = /** @type {any} */ (error)?.status;
      if (status === 401 || status === 403) { onStatus('refused'); return; } // a new link is needed: asking again cannot help
      if (status === 404) { waitForSession(); return; }
      reconnect();
      return;
    }
    if (closed) return;
    const es = new EventSourceImpl(api.eventsUrl(ticket, last));
    source = es;
    es.onopen = () => { attempt = 0; onStatus('live'); watch(es); };
    es.onerror = () => { if (source === es) reconnect(); };
    for (const kind of ['frame', 'receipt', 'answer', 'resync']) {
      es.addEventListener(kind, (event) => { if (source === es) watch(es); onEvent(kind, /** @type {MessageEvent} */ (event)); });
    }
    es.addEventListener('heartbeat', (event) => {
      let named;
      try { named = JSON.parse(/** @type {MessageEvent} */ (event).data)?.every_s; } catch { named = null; }
      if (typeof named === 'number' && named > 0 && named <= 300) every = named;
      if (source === es) watch(es);
    });
  }

  open();
  return {
    /** The last cursor applied. */
    cursor: () => last,
    close() { closed = true; window.clearTimeout(timer); window.clearTimeout(watchdog); source?.close(); onStatus('closed'); },
  };
}
