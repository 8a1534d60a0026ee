/**
 * Text that reaches a terminal, a log line or a page as one harmless line: control characters and the
 * marks that move or reorder what is displayed are written as escapes. Used wherever a reason, a detail
 * or an operator's view shows text that came from outside (the service's answers, stored jobs).
 */

/**
 * Characters that must not reach a terminal or a log line as they are: C0 controls (newline, ESC, ...),
 * DEL, C1 controls (CSI U+009B, ...), the Unicode line and paragraph separators, and the bidirectional
 * marks, embeddings, overrides and isolates that reorder what is displayed.
 */
const UNPRINTABLE = /[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/**
 * Writes control characters (C0, DEL, C1), line and paragraph separators and bidirectional marks as
 * `\u{…}` escapes, so a reason is one line that cannot move a terminal's cursor or forge a row.
 * Backslashes are left as they are, so escaping twice changes nothing.
 *
 * @example
 * ```ts
 * escapeControls('bad\nrow'); // "bad\\u{a}row"
 * ```
 */
export function escapeControls(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`);
}
