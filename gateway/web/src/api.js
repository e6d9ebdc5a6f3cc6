/**
 * The gateway's HTTP API as the page uses it (the gateway contract): JSON requests with the
 * bearer token, problems (RFC 9457) turned into `ApiError` with the runtime's `code`.
 *
 * A reserve carries its requestId as the `Idempotency-Key` and is sent once more with the
 * same key after a network failure, so a retry can only ever find the same operation.
 */

/** A refused or failed request: `status` (0 for a network failure), `code`, the problem `body`. */
export class ApiError extends Error {
  /** @param {number} status @param {string} code @param {Record<string, any>} body */
  constructor(status, code, body) {
    super(`request failed (${code})`);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

const CODE = /^[a-z_]{1,64}$/;

/**
 * @param {{session: string, token: string, fetch?: typeof fetch}} options
 */
export function createApi({ session, token, fetch: fetcher = window.fetch.bind(window) }) {
  const base = `/v1/sessions/${encodeURIComponent(session)}`;

  /** @param {string} method @param {string} path @param {unknown} [body] @param {Record<string, string>} [headers] */
  async function request(method, path, body, headers = {}) {
    let response;
    try {
      response = await fetcher(path, {
        method, credentials: 'omit', cache: 'no-store',
        headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new ApiError(0, 'network', {});
    }
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      const code = typeof data.code === 'string' && CODE.test(data.code) ? data.code : `http_${response.status}`;
      throw new ApiError(response.status, code, data && typeof data === 'object' ? data : {});
    }
    return data;
  }

  /** @param {string} method @param {string} path @param {unknown} body @param {Record<string, string>} headers */
  async function retried(method, path, body, headers) {
    try {
      return await request(method, path, body, headers);
    } catch (error) {
      if (error instanceof ApiError && error.status === 0) return request(method, path, body, headers);
      throw error;
    }
  }

  const op = (/** @type {string} */ id) => `${base}/operations/${encodeURIComponent(id)}`;
  const block = (/** @type {string} */ m, /** @type {string} */ b) => `${base}/messages/${encodeURIComponent(m)}/blocks/${encodeURIComponent(b)}/state`;

  return {
    /** A one-use ticket for the event stream. */
    ticket: async () => /** @type {string} */ ((await request('POST', `${base}/tickets`, {})).ticket),
    /** The event stream URL for a ticket, resuming after `lastEventId`. */
    eventsUrl(/** @type {string} */ ticket, /** @type {string | null} */ lastEventId) {
      const query = new URLSearchParams({ ticket, heartbeat: 'event' }); // heartbeats the page can see (events.js)
      if (lastEventId) query.set('last_event_id', lastEventId);
      return `${base}/events?${query}`;
    },
    /** Reserve an operation; resolves to its first receipt. @param {Record<string, any>} r */
    reserve: async (r) => (await retried('POST', `${base}/operations`, { documentRef: r.documentRef, actionId: r.actionId, values: r.values },
      { 'Idempotency-Key': r.requestId })).receipt,
    confirm: async (/** @type {string} */ id, /** @type {boolean} */ approve) => (await request('POST', `${op(id)}/confirm`, { approve })).receipt,
    cancel: async (/** @type {string} */ id) => (await request('POST', `${op(id)}/cancel`, {})).receipt,
    operation: async (/** @type {string} */ id) => (await request('GET', op(id))).receipt,
    viewStates: {
      get: (/** @type {string} */ m, /** @type {string} */ b) => request('GET', block(m, b)),
      put: (/** @type {string} */ m, /** @type {string} */ b, /** @type {Record<string, any>} */ body) => retried('PUT', block(m, b), body, {}),
    },
  };
}
