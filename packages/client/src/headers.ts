/**
 * The header rules of a request, in one place: which headers the client sets itself (a call, or a trace
 * the Dispatcher adds, never replaces them) and what a well-formed extra header is. The client refuses a
 * call breaking them (`checkCallHeaders`); core's Dispatcher drops a trace header breaking them.
 */

/**
 * Headers the client (or the transport under it) sets itself on every request: no call may replace them.
 * Lower case.
 */
export const CLIENT_OWN_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'accept',
  'user-agent',
  'content-type',
  'content-length',
  'host',
  'connection',
  'transfer-encoding',
]);

/** A header name as HTTP allows it (RFC 9110 token). */
export const HEADER_NAME_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A header value the client sends: printable ASCII only (no control characters, no line breaks). */
export const HEADER_VALUE_PATTERN = /^[\x20-\x7e]*$/;
