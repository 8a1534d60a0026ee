/**
 * Reading a request's target and `Host` without a URL parser that throws, for the HTTP faces of tools
 * (metrics, the dashboard): what a client sends is checked against RFC 9112/3986 by hand (an origin-form
 * `/path?query`, or an absolute-form `http://host/path`), and anything else is a refusal the handler
 * answers with a 400, never an exception. Nothing is decoded: the path and query are kept as sent.
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

/** A request target read apart, as sent (nothing decoded). */
export interface RequestTarget {
  /** The path: `/metrics` of `/metrics?x=1` or of `http://host:9464/metrics` (`/` when it has none). */
  path: string;
  /** The query with its `?` (`?x=1`), or `''` when the target has none. */
  search: string;
}

/**
 * The path and query of a request target, or null when the target is not an origin-form or an http(s)
 * absolute-form target: a character RFC 3986 does not allow there, a bad `%` escape (in the path or the
 * query), a bad authority, `*`, an authority-form (`host:port`). A well-formed target may still be one no
 * route serves (`//a:b`, `/x/../y`, `/%00`): what a surface serves is its router's call.
 *
 * @example
 * ```ts
 * parseRequestTarget('/metrics?name[]=x'); // null: `[` is not allowed in a query
 * parseRequestTarget('http://127.0.0.1:9464/metrics'); // { path: '/metrics', search: '' }
 * parseRequestTarget('/api/jobs?q=%ZZ'); // null: a bad escape
 * parseRequestTarget('//['); // null
 * ```
 */
export function parseRequestTarget(target: string): RequestTarget | null {
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
  return { path, search: q === -1 ? '' : rest.slice(q) };
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
