/**
 * Reads a request's target and `Host` without a URL parser that throws: what a client sends is checked
 * against RFC 9112/3986 by hand (an origin-form `/path?query`, or an absolute-form `http://host/path`),
 * and anything else is a refusal the handler answers with a 400, never an exception. The path is kept
 * as sent (no decoding): routes are compared to it literally.
 */

/** Characters of a path segment besides `%XX` escapes (RFC 3986 `pchar`). */
const PCHAR = "A-Za-z0-9\\-._~!$&'()*+,;=:@";
const PATH = new RegExp(`^/(?:[${PCHAR}/]|%[0-9A-Fa-f]{2})*$`);
const QUERY = new RegExp(`^(?:[${PCHAR}/?]|%[0-9A-Fa-f]{2})*$`);
/** A registered name or IPv4 address (no escapes: hosts we serve never need them). */
const REG_NAME = /^[A-Za-z0-9\-._~]{1,253}$/;
/** An IPv6 literal, loosely: hex digits, colons and dots between brackets, at least one colon. */
const IP_LITERAL = /^\[[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*\]$/;
const MAX_PORT = 65_535;

/**
 * The path of a request target (`/metrics` of `/metrics?x=1` or of `http://host:9464/metrics`), or null
 * when the target is not an origin-form or an http(s) absolute-form target: a bad character, a bad `%`
 * escape, a bad authority, `*`, an authority-form (`host:port`).
 *
 * @example
 * ```ts
 * targetPath('/metrics?name[]=x'); // null: `[` is not allowed in a query
 * targetPath('http://127.0.0.1:9464/metrics'); // '/metrics'
 * targetPath('//['); // null
 * ```
 */
export function targetPath(target: string): string | null {
  let rest = target;
  const absolute = /^https?:\/\//i.exec(rest);
  if (absolute !== null) {
    rest = rest.slice(absolute[0].length);
    const end = rest.search(/[/?]/);
    const authority = end === -1 ? rest : rest.slice(0, end);
    if (!isHostValue(authority)) return null;
    rest = end === -1 ? '/' : rest.slice(end);
    if (rest.startsWith('?')) rest = `/${rest}`;
  }
  const q = rest.indexOf('?');
  const path = q === -1 ? rest : rest.slice(0, q);
  if (!PATH.test(path)) return null;
  if (q !== -1 && !QUERY.test(rest.slice(q + 1))) return null;
  return path;
}

/**
 * Whether `value` is a well-formed `Host` (RFC 9110 `uri-host [ ":" port ]`): a name or IPv4 address of
 * at most 253 characters or a bracketed IPv6 literal, and a port of at most 65535. No user info, no
 * spaces, not empty.
 *
 * @example
 * ```ts
 * isHostValue('127.0.0.1:9464'); // true
 * isHostValue('a b'); // false
 * isHostValue('x:99999999'); // false
 * ```
 */
export function isHostValue(value: string): boolean {
  const bracket = value.startsWith('[') ? value.indexOf(']') : -1;
  const colon = value.indexOf(':', bracket === -1 ? 0 : bracket);
  const host = colon === -1 ? value : value.slice(0, colon);
  const port = colon === -1 ? '' : value.slice(colon + 1);
  if (!(REG_NAME.test(host) || IP_LITERAL.test(host))) return false;
  return port === '' || (/^\d{1,5}$/.test(port) && Number(port) <= MAX_PORT);
}
