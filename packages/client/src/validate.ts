/**
 * Turns zod failures into the client's typed errors: every problem gets a dotted field path
 * (`creatives.0.landing_url`), and an unknown key is reported at its own path, not its parent's.
 */
import type * as z from 'zod';
import { RequestValidationError } from './errors.ts';
import { CLIENT_OWN_HEADERS, HEADER_NAME_PATTERN, HEADER_VALUE_PATTERN } from './headers.ts';

/** Field path and message of every issue, in the order zod found them. */
export function issuesOf(error: z.ZodError, prefix = ''): Array<{ field: string; message: string }> {
  const out: Array<{ field: string; message: string }> = [];
  for (const issue of error.issues) {
    const base = [prefix, ...issue.path.map(String)].filter((p) => p !== '');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        out.push({ field: [...base, key].join('.'), message: 'is not a known field' });
    } else {
      out.push({ field: base.join('.') || '(body)', message: issue.message });
    }
  }
  return out;
}

/**
 * Parses a request with `schema`, or throws {@link RequestValidationError} naming the first bad field.
 *
 * @param prefix - path prefix for parameters that are not part of a body, e.g. `site_id`
 * @example
 * ```ts
 * const body = parseRequest(conversionConfirmSchema, input);
 * ```
 */
export function parseRequest<S extends z.ZodType>(schema: S, input: unknown, prefix = ''): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = issuesOf(result.error, prefix);
  const first = issues[0] ?? { field: prefix || '(body)', message: 'is invalid' };
  throw new RequestValidationError(first.field, first.message, issues);
}

/** What an API key may hold: printable ASCII, no whitespace or control characters (it goes into a header). */
export const API_KEY_PATTERN = /^[\x21-\x7e]+$/;

/**
 * Checks a per-request `apiKey` (see `CallOptions`): a non-empty string of printable ASCII without
 * whitespace or control characters. The error names the field and never holds the value.
 *
 * @throws RequestValidationError with `field: 'apiKey'`
 * @example
 * ```ts
 * checkCallApiKey('pbsk_live_1'); // 'pbsk_live_1'
 * checkCallApiKey('pbsk live'); // throws RequestValidationError (field 'apiKey')
 * ```
 */
export function checkCallApiKey(value: unknown): string {
  if (typeof value !== 'string') throw new RequestValidationError('apiKey', 'must be a string');
  if (value.length === 0) throw new RequestValidationError('apiKey', 'must not be empty');
  if (!API_KEY_PATTERN.test(value)) {
    throw new RequestValidationError(
      'apiKey',
      'must be printable ASCII without spaces or control characters',
    );
  }
  return value;
}

/**
 * Checks a call's extra `headers` (e.g. a trace context: `traceparent`, `tracestate`) and returns them with
 * lower-case names: each name a token that is not one the client sets itself (`authorization`, `accept`,
 * `user-agent`, `content-type`, …), each value printable ASCII.
 *
 * @throws RequestValidationError naming `headers` (and the header, never its value)
 * @example
 * ```ts
 * checkCallHeaders({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
 * ```
 */
export function checkCallHeaders(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new RequestValidationError('headers', 'must be an object of header names to values');
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) {
    if (!HEADER_NAME_PATTERN.test(name))
      throw new RequestValidationError('headers', 'holds an invalid header name');
    const lower = name.toLowerCase();
    if (CLIENT_OWN_HEADERS.has(lower))
      throw new RequestValidationError(`headers.${lower}`, 'is set by the client and cannot be replaced');
    if (typeof v !== 'string' || !HEADER_VALUE_PATTERN.test(v))
      throw new RequestValidationError(`headers.${lower}`, 'must be a string of printable ASCII');
    out[lower] = v;
  }
  return out;
}
