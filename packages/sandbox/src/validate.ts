/**
 * Request validation. `/v1` bodies are parsed with the client's zod request schemas (`@postback/client`),
 * so the sandbox accepts exactly what the client sends. The one exception is the s2s confirmation, the
 * benchmark's hot path, which has a property-tested hand-written twin (`v1/confirm-body.ts`). The field
 * readers below serve the control API. Every failure is a 400 whose detail starts with the field path.
 */
import { badField } from './problem.ts';

/** The part of a zod schema the sandbox uses (structural, so the sandbox need not import zod). */
export interface RequestSchema<T> {
  safeParse(input: unknown):
    | { success: true; data: T }
    | {
        success: false;
        error: {
          issues: ReadonlyArray<{ code: string; path: PropertyKey[]; message: string; keys?: string[] }>;
        };
      };
}

/**
 * Parses `input` with a client request schema, or throws a 400 naming the first bad field
 * (`creatives.0.landing_url: must be an absolute http or https URL`; unknown keys by their own path).
 *
 * @example
 * ```ts
 * const body = parseWith(conversionConfirmSchema, ctx.body);
 * ```
 */
export function parseWith<T>(schema: RequestSchema<T>, input: unknown, prefix = ''): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue === undefined) throw badField(prefix || 'body', 'is invalid');
  const path = [prefix, ...issue.path.map(String)].filter((p) => p !== '');
  if (issue.code === 'unrecognized_keys' && issue.keys !== undefined && issue.keys.length > 0) {
    throw badField([...path, issue.keys[0]].join('.'), 'is not a known field');
  }
  throw badField(path.join('.') || 'body', issue.message);
}

/** A parsed JSON object body. */
export type Body = Record<string, unknown>;

/** Longest string the sandbox accepts in any field (the spec gives no size bounds: our choice). */
export const MAX_STRING_LENGTH = 2048;

/** A required (or optional, then `undefined`) non-empty string of at most `max` characters. */
export function readString(body: Body, field: string, path = field, max = MAX_STRING_LENGTH): string {
  const value = body[field];
  if (typeof value !== 'string' || value.length === 0) throw badField(path, 'must be a non-empty string');
  if (value.length > max) throw badField(path, `must be at most ${max} characters`);
  return value;
}

/** Money: a non-negative safe integer of micros (never a float, never a string). */
export function readMicros(body: Body, field: string, path = field): number {
  const value = body[field];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw badField(path, 'must be a non-negative integer of micros');
  }
  return value;
}

/** One of a fixed set of string values, or the default when absent. */
export function readEnum<T extends string>(body: Body, field: string, values: readonly T[], fallback?: T): T {
  const value = body[field];
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
    throw badField(field, `must be one of ${values.join(', ')}`);
  }
  return value as T;
}

/** A required query parameter. */
export function readQuery(query: URLSearchParams, name: string): string {
  const value = query.get(name);
  if (value === null || value === '') throw badField(name, 'query parameter is required');
  return value;
}
