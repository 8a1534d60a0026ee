/**
 * Reading our cookie out of a raw `Cookie` header and writing the `Set-Cookie` value. Hand-rolled rather
 * than a general cookie parser: we need one name, and a request without it must cost one `indexOf`.
 */
import type { CaptureRequest } from './hooks.ts';

/**
 * The values the `Cookie` header holds for `name`, in order, at most `limit` of them (browsers send
 * several when paths or domains differ).
 *
 * @example
 * ```ts
 * cookieValues('a=1; postback_click=xyz', 'postback_click'); // ['xyz']
 * ```
 */
export function cookieValues(header: string, name: string, limit = Number.POSITIVE_INFINITY): string[] {
  const values: string[] = [];
  for (const part of header.split(';')) {
    if (values.length >= limit) break;
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    values.push(part.slice(eq + 1).trim());
  }
  return values;
}

/** Attributes of the click cookie that come from options. */
export interface CookieAttributes {
  cookieName: string;
  cookieDomain: string | undefined;
  secure: boolean;
}

/**
 * The `Set-Cookie` header value: first-party, `HttpOnly`, `SameSite=Lax` (sent on the top-level
 * navigation back from a payment page), `Path=/`, `Secure` unless switched off for plain-http development.
 *
 * @example
 * ```ts
 * serializeCookie('v', 604_800, { cookieName: 'postback_click', cookieDomain: undefined, secure: true });
 * // 'postback_click=v; Max-Age=604800; Path=/; HttpOnly; Secure; SameSite=Lax'
 * ```
 */
export function serializeCookie(value: string, maxAgeSeconds: number, attributes: CookieAttributes): string {
  let cookie = `${attributes.cookieName}=${value}; Max-Age=${maxAgeSeconds}; Path=/`;
  if (attributes.cookieDomain !== undefined) cookie += `; Domain=${attributes.cookieDomain}`;
  cookie += '; HttpOnly';
  if (attributes.secure) cookie += '; Secure';
  return `${cookie}; SameSite=Lax`;
}

/** What {@link appendSetCookie} needs of a response: Node's `http.ServerResponse` fits as it is. */
export interface SetCookieTarget {
  getHeader(name: string): number | string | readonly string[] | undefined;
  setHeader(name: string, value: string | readonly string[]): unknown;
}

/**
 * Adds a `Set-Cookie` header value to a Node-style response, keeping any the app set before. The Express
 * and Koa adapters use it (Koa's `ctx.append` does the same through several more layers per landing).
 *
 * @example
 * ```ts
 * appendSetCookie(res, outcome.setCookie); // res.getHeader('set-cookie') → [...earlier, value]
 * ```
 */
export function appendSetCookie(response: SetCookieTarget, value: string): void {
  const previous = response.getHeader('set-cookie');
  response.setHeader(
    'set-cookie',
    previous === undefined
      ? value
      : [...(Array.isArray(previous) ? previous : [previous]).map(String), value],
  );
}

/** The request's `Cookie` header: `cookie` when the adapter gave it, else from `headers` (joined when a list). */
export function cookieHeaderOf(request: CaptureRequest): string | undefined {
  if (request.cookie !== undefined) return request.cookie ?? undefined;
  const headers = request.headers as { get?: unknown; cookie?: unknown };
  const raw =
    typeof headers.get === 'function'
      ? (headers.get as (name: string) => unknown).call(headers, 'cookie')
      : headers.cookie;
  if (typeof raw === 'string') return raw;
  return Array.isArray(raw) ? raw.join('; ') : undefined;
}
