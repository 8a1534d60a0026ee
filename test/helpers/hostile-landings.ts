/**
 * Hostile landings: requests that reach the click-capture middleware with something in what it reads —
 * the token's escapes and characters, repeated parameters, the target's shape, the `Host`, the click
 * cookie — each with what the app behind it must show. Sent with `sendRaw` and read with `parseAnswer`
 * (`hostile-requests.ts`).
 */
import { requestLine } from './hostile-requests.ts';

/** What the app behind the capture middleware must show for a hostile landing. */
export type LandingExpectation =
  /** The page (200) with the click `token`, and the click cookie set. */
  | { click: string }
  /** The page (200) without a click and no click cookie. */
  | 'no-click'
  /** A 4xx from the server or framework (the target or `Host` never reached the app), or the page with `token`. */
  | { clickOrRefused: string }
  /** A 4xx, or the page with or without the click: the framework decides (only the rule holds). */
  | 'any';

/** One hostile landing: a request that reaches the capture middleware with a token or cookie in it. */
export interface HostileLanding {
  name: string;
  raw: string;
  /** Landings keep the connection open until the answer, as a browser does (see `sendRaw`). */
  leave: 'open';
  expect: LandingExpectation;
  /** At least this many reports to `onInvalid` (what was ignored is told). @defaultValue 1 for `no-click`, else 0 */
  minReports?: number;
  /** At most this many reports to `onInvalid` (a request must not flood the log). @defaultValue 1 */
  maxReports?: number;
}

/** What {@link hostileLandings} aims at: the app's path, the token's parameter and a valid token. */
export interface LandingTarget {
  path: string;
  param: string;
  token: string;
  /** The click cookie's name. */
  cookieName: string;
  /** The most values of the token parameter (or click cookies) one request may get reported. */
  maxReports: number;
}

/**
 * Landings that are malformed or hostile in what the capture middleware reads — the token's escapes and
 * characters, repeated parameters, the target's shape, the `Host`, the click cookie — each with what the
 * app must show: a malformed token is ignored (the page without a click) and reported; a valid one is
 * taken wherever the request's other parts are odd, unless the server refuses the request first.
 *
 * @example
 * ```ts
 * hostileLandings({ path: '/', param: 'click_token', token: TOKEN, cookieName: 'postback_click', maxReports: 4 });
 * ```
 */
export function hostileLandings({
  path,
  param,
  token,
  cookieName,
  maxReports,
}: LandingTarget): HostileLanding[] {
  const h = 'Host: localhost';
  const close = 'Connection: close';
  const get = (query: string, headers: string[] = [h]) =>
    requestLine('GET', `${path}?${query}`, [...headers, close]);
  const land = (query: string) => get(`${param}=${query}`);
  const forged = `${'A'.repeat(52)}.${token}`;
  const landings: Omit<HostileLanding, 'leave'>[] = [
    { name: 'token with %ZZ', raw: land(`${token}%ZZ`), expect: 'no-click' },
    { name: 'token ending in %', raw: land(`${token}%`), expect: 'no-click' },
    { name: 'token with %E0%A4 (cut UTF-8)', raw: land(`${token}%E0%A4`), expect: 'no-click' },
    {
      name: 'token with an escaped lone surrogate %ED%A0%80',
      raw: land(`${token}%ED%A0%80`),
      expect: 'no-click',
    },
    { name: 'token with %uD83D', raw: land(`${token}%uD83D`), expect: 'no-click' },
    { name: 'token with an escaped emoji', raw: land(`${token}%F0%9F%98%80`), expect: 'no-click' },
    {
      name: 'token with raw UTF-8 bytes',
      raw: Buffer.from(land(`${token}é`)).toString('latin1'),
      expect: 'any',
    },
    { name: 'token with a +', raw: land(`${token}+x`), expect: 'no-click' },
    { name: 'token with %00', raw: land(`${token}%00`), expect: 'no-click' },
    { name: 'empty token', raw: land(''), expect: 'no-click' },
    { name: 'token of 300 characters', raw: land('t'.repeat(300)), expect: 'no-click' },
    {
      // The reported value is cut at 256 UTF-16 units: after the `x`, that cut falls inside a pair.
      name: 'token of x and 300 emoji',
      raw: land(`x${'%F0%9F%98%80'.repeat(300)}`),
      expect: 'no-click',
    },
    { name: 'an unexpanded {click_token} macro', raw: land('{click_token}'), expect: 'no-click' },
    {
      name: 'token parameter twice, both valid',
      raw: get(`${param}=${token}&${param}=${token}x`),
      expect: { click: token },
    },
    {
      name: 'token parameter twice, the first invalid',
      raw: get(`${param}=bad&${param}=${token}`),
      expect: { click: token },
    },
    {
      name: '1,000 invalid values of the token parameter',
      raw: get(Array.from({ length: 1_000 }, () => `${param}=x`).join('&')),
      expect: 'no-click',
      maxReports,
    },
    {
      // Parameter names are unreserved characters, never escaped: `click%5Ftoken` is another name.
      name: 'the parameter name escaped',
      raw: get(`${param.replace('_', '%5F')}=${token}`),
      expect: 'no-click',
      minReports: 0,
    },
    { name: 'a fragment after the token', raw: land(`${token}#frag`), expect: { clickOrRefused: token } },
    {
      name: 'target //[ with a token',
      raw: requestLine('GET', `//[?${param}=${token}`, [h, close]),
      expect: { clickOrRefused: token },
    },
    {
      name: 'absolute-form target with a token',
      raw: requestLine('GET', `http://evil.example${path}?${param}=${token}`, [h, close]),
      expect: { clickOrRefused: token },
    },
    {
      name: 'target with a backslash and a token',
      raw: requestLine('GET', `/\\evil.example/?${param}=${token}`, [h, close]),
      expect: { clickOrRefused: token },
    },
    {
      name: 'Host [ with a token',
      raw: get(`${param}=${token}`, ['Host: [']),
      expect: { clickOrRefused: token },
    },
    {
      name: 'Host x:99999999 with a token',
      raw: get(`${param}=${token}`, ['Host: x:99999999']),
      expect: { clickOrRefused: token },
    },
    {
      name: 'HEAD landing',
      raw: requestLine('HEAD', `${path}?${param}=${token}`, [h, close]),
      expect: 'any',
    },
    {
      name: 'POST landing with a body cut off',
      raw: requestLine('POST', `${path}?${param}=${token}`, [h, close, 'Content-Length: 100'], '0123'),
      expect: 'any',
    },
    { name: 'click cookie of junk', raw: get('a=1', [h, `Cookie: ${cookieName}=%ZZ`]), expect: 'no-click' },
    {
      name: 'click cookie forged',
      raw: get('a=1', [h, `Cookie: ${cookieName}=${forged}`]),
      expect: 'no-click',
    },
    {
      name: '120 forged click cookies',
      raw: get('a=1', [
        h,
        `Cookie: ${Array.from({ length: 120 }, () => `${cookieName}=${forged}`).join('; ')}`,
      ]),
      expect: 'no-click',
      maxReports,
    },
    {
      // Next's proxy hands the click to the routes in this header; anywhere else it means nothing.
      name: 'a forged x-postback-click header',
      raw: get('a=1', [h, `X-Postback-Click: ${forged}`]),
      expect: 'no-click',
      minReports: 0,
    },
  ];
  return landings.map((landing) => ({ ...landing, leave: 'open' }));
}
