/**
 * The forwarded click: how the proxy hands a click captured on a landing to the route handlers of the
 * very same request. A `Set-Cookie` on the proxy's response is not visible to that request's handlers,
 * so the proxy also puts the SIGNED cookie value in a request header. The handlers verify it exactly like
 * the cookie (same HMAC, window and token rules), so a client that sends the header itself gains nothing
 * it could not get by sending a cookie: without the secret it cannot make a value that verifies.
 */

/**
 * Request header carrying the signed click cookie value from the proxy to the route handlers.
 * @defaultValue `'x-postback-click'`
 */
export const POSTBACK_CLICK_HEADER = 'x-postback-click';

// A cookie value is base64url, a dot and a token (see core's cookie codec): RFC 3986 unreserved characters
// only. Anything else could smuggle `;` or another cookie into the merged header, so it is dropped before
// verification.
const SIGNED_VALUE = /^[A-Za-z0-9._~-]{1,1024}$/;

/**
 * The signed value in a `Set-Cookie` header value made by core (`name=value; Max-Age=…`).
 *
 * @example
 * ```ts
 * signedValueOf('postback_click=AgGa…; Max-Age=604800; Path=/'); // 'AgGa…'
 * ```
 */
export function signedValueOf(setCookie: string): string {
  const end = setCookie.indexOf(';');
  const pair = end < 0 ? setCookie : setCookie.slice(0, end);
  return pair.slice(pair.indexOf('=') + 1);
}

/**
 * The `Cookie` header the route side verifies: the forwarded value first (it is the newest click, and the
 * first of our cookies that verifies wins), then the request's own cookies. Malformed forwarded values
 * are left out.
 *
 * @example
 * ```ts
 * mergedCookieHeader('AgGa…', 'theme=dark', 'postback_click'); // 'postback_click=AgGa…; theme=dark'
 * ```
 */
export function mergedCookieHeader(
  forwarded: string | null | undefined,
  cookie: string | null | undefined,
  cookieName: string,
): string | undefined {
  const own = cookie ?? undefined;
  if (forwarded === null || forwarded === undefined || !SIGNED_VALUE.test(forwarded)) return own;
  return own === undefined || own === ''
    ? `${cookieName}=${forwarded}`
    : `${cookieName}=${forwarded}; ${own}`;
}
