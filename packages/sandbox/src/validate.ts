/**
 * Field readers for request bodies and queries. Hand-written rather than zod: they run on the hot path
 * of `POST /v1/conversions/s2s`, and each failure is a 400 whose detail starts with the field path.
 */
import { badField } from './problem.ts';

/** A parsed JSON object body. */
export type Body = Record<string, unknown>;

/** Longest string the sandbox accepts in any field (the spec gives no size bounds: our choice). */
export const MAX_STRING_LENGTH = 2048;

/** The body must be a JSON object. */
export function asObject(value: unknown, field = 'body'): Body {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw badField(field, 'must be a JSON object');
  return value as Body;
}

/** A required (or optional, then `undefined`) non-empty string of at most `max` characters. */
export function readString(body: Body, field: string, path = field, max = MAX_STRING_LENGTH): string {
  const value = body[field];
  if (typeof value !== 'string' || value.length === 0) throw badField(path, 'must be a non-empty string');
  if (value.length > max) throw badField(path, `must be at most ${max} characters`);
  return value;
}

export function readOptionalString(
  body: Body,
  field: string,
  path = field,
  max = MAX_STRING_LENGTH,
): string | undefined {
  return body[field] === undefined ? undefined : readString(body, field, path, max);
}

/** Money: a non-negative safe integer of micros (never a float, never a string). */
export function readMicros(body: Body, field: string, path = field): number {
  const value = body[field];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw badField(path, 'must be a non-negative integer of micros');
  }
  return value;
}

export function readOptionalMicros(body: Body, field: string, path = field): number | null {
  const value = body[field];
  return value === undefined || value === null ? null : readMicros(body, field, path);
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

/** An optional array of non-empty strings (default empty). */
export function readStringArray(body: Body, field: string): string[] {
  const value = body[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw badField(field, 'must be an array of strings');
  return value.map((item, i) => {
    if (typeof item !== 'string' || item.length === 0 || item.length > 200) {
      throw badField(`${field}.${i}`, 'must be a non-empty string of at most 200 characters');
    }
    return item;
  });
}

/** An absolute http(s) URL. */
export function readHttpUrl(body: Body, field: string, path: string): string {
  const value = readString(body, field, path);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badField(path, 'must be an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw badField(path, 'must be an http or https URL');
  return value;
}

/** A required query parameter. */
export function readQuery(query: URLSearchParams, name: string): string {
  const value = query.get(name);
  if (value === null || value === '') throw badField(name, 'query parameter is required');
  return value;
}
