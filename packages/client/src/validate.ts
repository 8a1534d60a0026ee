/**
 * Turns zod failures into the client's typed errors: every problem gets a dotted field path
 * (`creatives.0.landing_url`), and an unknown key is reported at its own path, not its parent's.
 */
import type * as z from 'zod';
import { RequestValidationError } from './errors.ts';

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
