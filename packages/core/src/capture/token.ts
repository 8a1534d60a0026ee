/**
 * The click token in the landing URL: which characters a token may have, how it is found in a query
 * string (cheaply ruled out first, since most requests carry none), and how a landing URL is cleaned of
 * it for the optional redirect.
 *
 * The sandbox issues `[A-Za-z0-9_-]{24,48}`. We accept a broader safe set: the RFC 3986 "unreserved"
 * characters `A–Z a–z 0–9 - . _ ~` (they pass through URLs and logs unescaped), 16 to 256 of them by
 * default. That admits other networks' ids (hex, base64url, dotted) and rejects junk such as `undefined`,
 * an unexpanded `{click_token}` macro, or a value mangled by a `+`/space.
 */

/**
 * The query parameter that carries the click token when none is configured (the spec leaves the name open).
 * @defaultValue `'click_token'`
 */
export const DEFAULT_CLICK_PARAM = 'click_token';

/**
 * Shortest token accepted.
 * @defaultValue 16
 */
export const DEFAULT_TOKEN_MIN_LENGTH = 16;

/**
 * Longest token accepted (keeps the signed cookie far below the 4 KiB cookie limit).
 * @defaultValue 256
 */
export const DEFAULT_TOKEN_MAX_LENGTH = 256;

/** Characters a click token may contain: RFC 3986 unreserved. */
export const TOKEN_CHARACTERS = /^[A-Za-z0-9._~-]*$/;

// The same set as a table by character code, for the landing path (a loop instead of a RegExp run).
const ALLOWED = new Uint8Array(128);
for (let code = 0; code < 128; code++) {
  ALLOWED[code] = TOKEN_CHARACTERS.test(String.fromCharCode(code)) ? 1 : 0;
}

/** Whether every character of `token` is in {@link TOKEN_CHARACTERS}. */
export function hasTokenCharacters(token: string): boolean {
  for (let i = 0; i < token.length; i++) {
    const code = token.charCodeAt(i);
    if (code >= 128 || ALLOWED[code] === 0) return false;
  }
  return true;
}

// Longer than any allowed maximum: refuse before scanning it.
const MAX_SCAN_LENGTH = 4096;

/** Why a token was refused. */
export type TokenProblem = 'too-short' | 'too-long' | 'characters';

/** Length bounds of a token. */
export interface TokenRules {
  tokenMinLength: number;
  tokenMaxLength: number;
}

/**
 * Checks a token against the length bounds and the allowed characters.
 *
 * @returns null when the token is acceptable, else the problem.
 * @example
 * ```ts
 * checkClickToken('abc', { tokenMinLength: 16, tokenMaxLength: 256 }); // 'too-short'
 * ```
 */
export function checkClickToken(token: string, rules: TokenRules): TokenProblem | null {
  // Characters first: it names the usual culprit (an unexpanded `{click_token}` macro) better than length.
  if (token.length > MAX_SCAN_LENGTH) return 'too-long';
  if (!hasTokenCharacters(token)) return 'characters';
  if (token.length < rules.tokenMinLength) return 'too-short';
  return token.length > rules.tokenMaxLength ? 'too-long' : null;
}

/** One value of a token parameter found in a URL. */
export interface FoundToken {
  param: string;
  value: string;
}

const AMPERSAND = 0x26;
const EQUALS = 0x3d;
const HASH = 0x23;
const PERCENT = 0x25;
const PLUS = 0x2b;

/** The query part of a URL (absolute or origin-form), without `?` and fragment; '' when none. */
function queryOf(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return '';
  const hash = url.indexOf('#', q);
  return hash < 0 ? url.slice(q + 1) : url.slice(q + 1, hash);
}

/** Decodes a query value as `URLSearchParams` would (`+` is a space, bad escapes kept as they are). */
function decodeValue(raw: string): string {
  return new URLSearchParams(`v=${raw}`).get('v') ?? '';
}

/**
 * Values of the given parameters in the URL's query, in the order of `params` (then of appearance), at
 * most `limit` of them. A parameter is recognised by its name as written: names are RFC 3986 unreserved
 * characters (the options allow no other), which a URL never needs to escape, so `click%5Ftoken` is not
 * `click_token`. Values are decoded as `URLSearchParams` decodes them, which never throws on malformed
 * escapes; a value without `%` or `+` (every valid token) is taken as it is.
 *
 * @example
 * ```ts
 * findTokens('/land?click_token=abc&x=1', ['click_token']); // [{ param: 'click_token', value: 'abc' }]
 * ```
 */
export function findTokens(
  url: string,
  params: readonly string[],
  limit = Number.POSITIVE_INFINITY,
): FoundToken[] {
  const query = queryOf(url);
  if (query === '') return [];
  const found: FoundToken[] = [];
  for (const param of params) {
    let start = 0;
    while (start <= query.length && found.length < limit) {
      let end = query.indexOf('&', start);
      if (end < 0) end = query.length;
      // `param=` or a bare `param` (an empty value) at the start of this pair.
      const after = start + param.length;
      if (query.startsWith(param, start) && (after === end || query.charCodeAt(after) === EQUALS)) {
        const raw = after === end ? '' : query.slice(after + 1, end);
        found.push({ param, value: raw.includes('%') || raw.includes('+') ? decodeValue(raw) : raw });
      }
      start = end + 1;
    }
  }
  return found;
}

/**
 * The landing's token in one pass over the query, for the URL every landing has: the first `param=` pair
 * holds a valid token, and nothing before it is escaped. Returns the token exactly when
 * {@link findTokens} would list it first among `param`'s values and {@link checkClickToken} would accept
 * it (so no earlier value would have been reported invalid), else undefined: the caller then takes the
 * general path. It builds no intermediate strings or arrays, only the token.
 *
 * @param at where `param=` first occurs in `url` (the caller has searched for it already), or -1.
 * @example
 * ```ts
 * const url = '/land?utm=x&click_token=tok_0123456789abcdef';
 * findLandingToken(url, 'click_token', url.indexOf('click_token='), RULES); // 'tok_0123456789abcdef'
 * ```
 */
export function findLandingToken(
  url: string,
  param: string,
  at: number,
  rules: TokenRules,
): string | undefined {
  const q = url.indexOf('?');
  // Not in the query (none, or `param=` first occurs in the path): the general path looks further.
  if (q < 0 || at <= q) return undefined;
  // The pairs before: an escaped one could decode to the parameter's name, `#` ends the query, and a bare
  // `param` (no `=`) is an empty value the general path would report.
  let pairStart = q + 1;
  for (let i = pairStart; i < at; i++) {
    const code = url.charCodeAt(i);
    if (code === PERCENT || code === PLUS || code === HASH) return undefined;
    if (code === AMPERSAND) {
      if (i - pairStart === param.length && url.startsWith(param, pairStart)) return undefined;
      pairStart = i + 1;
    }
  }
  // Inside another pair's name or value (`x=aclick_token=`): not this parameter.
  if (pairStart !== at) return undefined;
  // The value, up to the next pair or the fragment: every character allowed (which excludes `%` and `+`,
  // so it needs no decoding), its length within bounds.
  const start = at + param.length + 1;
  let end = start;
  for (; end < url.length; end++) {
    const code = url.charCodeAt(end);
    if (code === AMPERSAND || code === HASH) break;
    if (code >= 128 || ALLOWED[code] === 0) return undefined;
  }
  const length = end - start;
  return length >= rules.tokenMinLength && length <= rules.tokenMaxLength ? url.slice(start, end) : undefined;
}

/**
 * The URL with every occurrence of `params` removed from its query. Other parameters keep their exact
 * original spelling (no re-encoding), and a query left empty loses its `?`.
 *
 * @example
 * ```ts
 * stripParams('/land?a=1&click_token=abc#top', ['click_token']); // '/land?a=1#top'
 * ```
 */
export function stripParams(url: string, params: readonly string[]): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const hash = url.indexOf('#', q);
  const end = hash < 0 ? url.length : hash;
  const kept = url
    .slice(q + 1, end)
    .split('&')
    .filter((pair) => {
      if (pair === '') return false;
      const name = new URLSearchParams(pair).keys().next().value;
      return name === undefined || !params.includes(name);
    });
  return url.slice(0, q) + (kept.length > 0 ? `?${kept.join('&')}` : '') + url.slice(end);
}

/**
 * `text` as a report may carry it: cut to `max` UTF-16 units without splitting a surrogate pair, and any
 * lone surrogate (from an app's own request URL) replaced by U+FFFD, so what `onInvalid` gets is
 * well-formed Unicode whatever the request held.
 *
 * @example
 * ```ts
 * reportedValue(`x${'😀'.repeat(200)}`, 256).length; // 255: the cut falls inside a pair, which is dropped
 * ```
 */
export function reportedValue(text: string, max: number): string {
  let cut = text.length > max ? text.slice(0, max) : text;
  const last = cut.charCodeAt(cut.length - 1);
  if (cut.length < text.length && last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return cut.toWellFormed();
}
