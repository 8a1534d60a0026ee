/**
 * Talking to the dashboard's JSON API, and what the page knows of its access: the token the operator
 * pasted (in memory only: never a cookie, never storage, never a URL; a reload forgets it), whether the
 * server takes actions at all, whether reads need the token, how often to refresh.
 */

export const state = {
  /** The token the operator pasted, or null. */
  token: null,
  /** The server was started with a token: replay and purge are possible at all. */
  writable: false,
  /** Reads need the token too (a dashboard reachable beyond loopback). */
  tokenForReads: false,
  /** How often the page redraws itself (0: never). */
  refreshMs: 0,
};

/** An answer other than 2xx. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** A request to `api/<path>`, with the token when there is one; the answer's JSON, or an ApiError. */
export async function api(path, init = {}) {
  const headers = { ...(init.headers ?? {}) };
  if (state.token !== null) headers.authorization = `Bearer ${state.token}`;
  const response = await fetch(`api/${path}`, { cache: 'no-store', credentials: 'omit', ...init, headers });
  const body = await response.json().catch(() => ({}));
  if (!response.ok)
    throw new ApiError(response.status, body.error ?? `the server answered ${response.status}`);
  return body;
}

/** A POST the server accepts only with the token: a custom header, JSON, and no cookie. */
export const mutate = (path, body) =>
  api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** Whether replay and purge buttons are shown. */
export const canAct = () => state.writable && state.token !== null;
