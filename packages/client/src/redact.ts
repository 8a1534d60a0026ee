/**
 * Removes the API key from text before it enters an error. A service or proxy may echo what it received
 * (`422 {"detail":"key pbsk_… is not allowed"}`); the client knows its own key, so it scrubs the key itself
 * — literally, percent-encoded (either hex case, any mix of encoded and plain characters) and JSON-escaped
 * — plus anything shaped like `Bearer <token>`, whatever its token. Imports nothing: safe on any runtime.
 */

/** What a removed secret is replaced with. */
export const REDACTED = '[redacted]';

const BEARER = /\b(Bearer)(\s+|%20|\+)(?!\[redacted\])[^\s"'`<>,;)\]}\\]+/gi;

function hex(code: number): string {
  return code.toString(16).padStart(2, '0');
}

/** One character of the key in every form it may take in echoed text. */
function charPattern(char: string): string {
  const code = char.charCodeAt(0);
  const forms = [char.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&'), `%${hex(code)}`];
  if (code < 0x80) forms.push(`\\\\u00${hex(code)}`);
  if (char === '"' || char === '\\' || char === '/') forms.push(`\\\\\\${char}`);
  return `(?:${forms.join('|')})`;
}

/** The regex matching `key` in its literal, percent-encoded and JSON-escaped forms. */
function keyPattern(key: string): RegExp {
  // Every character may be written plainly, as %XX or as \u00XX, and a JSON string escapes `"`, `\`
  // (and some encoders `/`): one pattern covers each form and any mix of them. Case-insensitive because
  // percent-encoding hex comes in either case; over-matching a secret costs nothing.
  return new RegExp([...key].map(charPattern).join(''), 'gi');
}

/**
 * A function that removes `keys` (and any `Bearer <token>`) from a text, built once for repeated use.
 * Empty keys are ignored.
 *
 * @param keys - the secret, or several
 * @example
 * ```ts
 * const redact = createRedactor(process.env.AD_API_KEY!);
 * logger.warn(redact(err.message));
 * ```
 */
export function createRedactor(keys: string | readonly string[]): (text: string) => string {
  const patterns = (typeof keys === 'string' ? [keys] : keys)
    .filter((key) => key.length > 0)
    // Longest first, so a key that contains another is removed whole.
    .sort((a, b) => b.length - a.length)
    .map(keyPattern);
  return (text: string) => {
    let out = String(text);
    for (const pattern of patterns) out = out.replace(pattern, REDACTED);
    return out.replace(BEARER, `$1$2${REDACTED}`);
  };
}

/**
 * Removes the API key `key` from `text`: the key as is, percent-encoded (`%2F` or `%2f`, partly or
 * wholly) and JSON-escaped (`\"`, `\\`, `\/`, `\u00XX`), and any `Bearer <token>` whatever the token,
 * each replaced with `[redacted]`. The client applies it to every text from the service that enters one
 * of its errors; use it on anything else that may carry the key (logs, stored failure reasons).
 *
 * @param text - the text to clean
 * @param key - the secret (or several); an empty key removes only `Bearer <token>` shapes
 * @returns the text without the key
 * @example
 * ```ts
 * redactKey('key pbsk_abc is not allowed (Bearer pbsk_abc)', 'pbsk_abc');
 * // 'key [redacted] is not allowed (Bearer [redacted])'
 * ```
 */
export function redactKey(text: string, key: string | readonly string[]): string {
  return createRedactor(key)(text);
}
