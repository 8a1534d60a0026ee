/**
 * A shopper for a shop's own tests: a cookie jar over `fetch` that speaks plain HTTP to the shop's URL,
 * so it works whatever the shop is built with. It keeps the cookies the shop sets (the click cookie of
 * the landing) and sends them back, and follows the shop's own redirects (a clean-URL redirect after a
 * landing), keeping the cookies set on the way.
 */

/** The most redirects one request follows. */
const MAX_REDIRECTS = 5;

/**
 * A visitor of the shop, with the cookies it was given.
 * @example
 * ```ts
 * const res = await shopper.post('/orders', { order_id: 'o-1', total_micros: 25_000_000 });
 * ```
 */
export interface Shopper {
  /** The shop's base URL every path is resolved against. */
  readonly appUrl: string;
  /** The `Cookie` header the shopper sends now (`name=value; ...`); empty without cookies. */
  cookie(): string;
  /**
   * A request to `path` on the shop with the shopper's cookies; redirects on the shop's origin are
   * followed (cookies kept). A string body without a `content-type` is sent as `application/json`.
   */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** `POST path` with `body` as JSON. */
  post(path: string, body?: unknown): Promise<Response>;
}

/** Reads `Set-Cookie` headers into the jar: `name=value` kept, an expired or emptied cookie removed. */
function keepCookies(jar: Map<string, string>, response: Response): void {
  for (const line of response.headers.getSetCookie()) {
    const [pair = '', ...attributes] = line.split(';');
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const expired = attributes.some((a) => {
      const [key = '', val = ''] = a.split('=').map((s) => s.trim());
      if (key.toLowerCase() === 'max-age') return Number(val) <= 0;
      if (key.toLowerCase() === 'expires') return Date.parse(val) < Date.now();
      return false;
    });
    if (expired || value === '') jar.delete(name);
    else jar.set(name, value);
  }
}

/**
 * Creates a shopper of the shop at `appUrl` with an empty cookie jar.
 *
 * @example
 * ```ts
 * const shopper = createShopper('http://127.0.0.1:3000');
 * await shopper.fetch('/?click_token=abc');
 * ```
 */
export function createShopper(appUrl: string): Shopper {
  const base = new URL(appUrl);
  const jar = new Map<string, string>();
  const cookie = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
  const shopperFetch = async (path: string, init: RequestInit = {}): Promise<Response> => {
    let url = new URL(path, base);
    let request = init;
    for (let hop = 0; ; hop++) {
      const headers = new Headers(request.headers);
      if (jar.size > 0) headers.set('cookie', cookie());
      if (typeof request.body === 'string' && !headers.has('content-type'))
        headers.set('content-type', 'application/json');
      const response = await fetch(url, { ...request, headers, redirect: 'manual' });
      keepCookies(jar, response);
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || location === null || hop === MAX_REDIRECTS)
        return response;
      const next = new URL(location, url);
      if (next.origin !== base.origin) return response;
      await response.body?.cancel();
      url = next;
      // 303, and 301/302 after a POST, continue as a GET without a body (what browsers do).
      const keepMethod = response.status === 307 || response.status === 308;
      if (!keepMethod) request = { ...request, method: 'GET', body: null };
    }
  };
  return {
    appUrl: base.href,
    cookie,
    fetch: shopperFetch,
    post: (path, body) =>
      shopperFetch(path, { method: 'POST', ...(body === undefined ? {} : { body: JSON.stringify(body) }) }),
  };
}
