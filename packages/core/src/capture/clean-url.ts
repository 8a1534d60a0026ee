/**
 * The Location of the clean-URL redirect, built in this one place for every adapter (Express, Koa,
 * Next, the Fetch wrapper). It must never leave the shop's own origin, whatever the request target:
 * `//evil.example/`, `/\evil.example/`, `///evil.example/x` or an absolute-form target
 * (`GET http://evil.example/x HTTP/1.1`) would otherwise become a redirect to another site.
 *
 * The rule: the Location is always an origin-relative path — exactly one `/`, never followed by `/` or
 * `\` — made of the request's path and its query without the token parameter(s). A browser resolves it
 * against the URL it asked for, so the host never comes from the request target or a `Host` header.
 */
import { stripParams } from './token.ts';

// Characters left as they are: printable ASCII except those a URL parser treats specially or a header
// must not carry. `\` is a path separator to browsers (for http and https) and is escaped everywhere.
// Tab, CR and LF are removed by URL parsers (so `/\t/x` would read as `//x`), and controls, space,
// `"`, `<`, `>`, `` ` ``, `{`, `}`, `|`, `^` and non-ASCII are escaped as UTF-8, as a browser would.
const KEEP = new Uint8Array(128);
for (let code = 0x21; code < 0x7f; code++) KEEP[code] = 1;
for (const c of '\\"<>`{}|^') KEEP[c.charCodeAt(0)] = 0;

/** `text` with every character outside {@link KEEP} percent-encoded (lone surrogates as U+FFFD). */
function escapeUnsafe(text: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 128 && KEEP[code] === 1) continue;
    out += text.slice(from, i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += encodeURIComponent(text.slice(i, i + 2));
        i++;
        from = i + 1;
        continue;
      }
    }
    out += code >= 0xd800 && code <= 0xdfff ? '%EF%BF%BD' : encodeURIComponent(text[i] as string);
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

// `scheme:` at the start: an absolute-form target (RFC 9112 §3.2.2) or a Fetch `Request.url`.
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** The path, query and fragment of `url`: an absolute URL loses its scheme and authority. */
function pathAndQuery(url: string): string {
  const scheme = SCHEME.exec(url);
  if (scheme === null) return url;
  let rest = url.slice(scheme[0].length);
  // The authority runs to the first `/`, `\` (a separator for http and https), `?` or `#`.
  if (/^[/\\]{2}/.test(rest)) {
    const end = rest.slice(2).search(/[/\\?#]/);
    rest = end < 0 ? '' : rest.slice(2 + end);
  }
  return rest;
}

/**
 * The clean-URL redirect's Location for a landing request: the request's path and query without the
 * token parameter(s), as a path on the shop's own origin. Other parameters keep their spelling; the
 * path of an absolute URL is kept and its scheme and host dropped; characters a browser would not take
 * literally (`\`, controls, spaces, non-ASCII…) are percent-encoded; a run of leading slashes becomes
 * one. The result starts with exactly one `/`, never followed by `/` or `\`, and holds only printable
 * ASCII, so it is a valid header value and resolves to the origin the browser asked.
 *
 * @param url the request target (origin-form path, absolute-form URL, or a Fetch `Request.url`).
 * @param params the token parameter names to remove.
 * @example
 * ```ts
 * cleanUrlLocation('/shoes?size=42&click_token=tok_abc', ['click_token']); // '/shoes?size=42'
 * cleanUrlLocation('//evil.example/?click_token=tok_abc', ['click_token']); // '/evil.example/'
 * cleanUrlLocation('http://evil.example/x?click_token=tok_abc', ['click_token']); // '/x'
 * ```
 */
export function cleanUrlLocation(url: string, params: readonly string[]): string {
  const target = pathAndQuery(url);
  const hash = target.indexOf('#');
  const beforeHash = hash < 0 ? target : target.slice(0, hash);
  const fragment = hash < 0 ? '' : target.slice(hash);
  const q = beforeHash.indexOf('?');
  const path = q < 0 ? beforeHash : beforeHash.slice(0, q);
  // stripParams on the query alone (behind a placeholder path), so nothing of the path can be taken for it.
  const query = q < 0 ? '' : stripParams(`/${beforeHash.slice(q)}`, params).slice(1);
  const escaped = escapeUnsafe(path).replace(/^\/+/, '');
  return `/${escaped}${escapeUnsafe(query)}${escapeUnsafe(fragment)}`;
}
