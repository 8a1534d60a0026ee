/**
 * Request validation, written from the ad service's public REST API and nothing else: the sandbox does
 * not import `@postback/client`, so it shares none of the client's guesses and can serve as an
 * independent oracle. Bodies are strict (an unknown field is a 400); every failure is a 400 whose detail
 * starts with the field path (`creatives.0.landing_url: must be an absolute http or https URL`).
 * The s2s confirmation, the benchmark's hot path, has its own parser (`v1/confirm-body.ts`).
 */
import { badField } from './problem.ts';

/** A parsed JSON object body. */
export type Body = Record<string, unknown>;

/** Longest string the sandbox accepts in any field (the spec gives no size bounds: our choice). */
export const MAX_STRING_LENGTH = 2048;

/** Campaign ids have the form `cmp_<id>` (spec, "Resources"). */
export const CAMPAIGN_ID_PATTERN = /^cmp_[A-Za-z0-9_-]+$/;

function at(path: string, field: string): string {
  return path === '' ? field : `${path}.${field}`;
}

/**
 * Refuses any field of `body` not in `known` (a typo is reported, never ignored).
 *
 * @example
 * ```ts
 * onlyFields(ctx.body, ['campaign_id']);
 * ```
 */
export function onlyFields(body: Body, known: readonly string[], path = ''): void {
  for (const key in body) {
    if (!known.includes(key)) throw badField(at(path, key), 'is not a known field');
  }
}

/** `value` as a JSON object, or a 400 naming `path`. */
export function readObject(value: unknown, path: string): Body {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw badField(path, 'must be an object');
  return value as Body;
}

/** A required non-empty string of at most `max` characters. */
export function readString(body: Body, field: string, path = field, max = MAX_STRING_LENGTH): string {
  const value = body[field];
  if (typeof value !== 'string') throw badField(path, 'must be a string');
  if (value.length === 0) throw badField(path, 'must not be empty');
  if (value.length > max) throw badField(path, `must be at most ${max} characters`);
  return value;
}

/** Money: a non-negative safe integer of micros (never a float, never a string). */
export function readMicros(body: Body, field: string, path = field): number {
  const value = body[field];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw badField(path, 'must be a non-negative safe integer of micros (never a float or a string)');
  }
  return value;
}

/** Optional money that may also be `null` (a campaign without a cash budget). */
export function optionalMicros(body: Body, field: string): number | null | undefined {
  const value = body[field];
  if (value === undefined || value === null) return value;
  return readMicros(body, field);
}

/** One of a fixed set of string values; `fallback` (if given) when absent. */
export function readEnum<T extends string>(
  body: Body,
  field: string,
  values: readonly T[],
  fallback?: T,
  path = field,
): T {
  const value = body[field];
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
    throw badField(path, `must be one of ${values.join(', ')}`);
  }
  return value as T;
}

/** An optional array of non-empty strings (`[]` when absent). */
export function readStringList(body: Body, field: string): string[] {
  const value = body[field];
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw badField(field, 'must be an array of strings');
  return value.map((_, i) => readString(value as unknown as Body, String(i), `${field}.${i}`));
}

/** An absolute `http:` or `https:` URL. */
export function readHttpUrl(body: Body, field: string, path = field): string {
  const value = readString(body, field, path);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badField(path, 'must be an absolute http or https URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '')
    throw badField(path, 'must be an absolute http or https URL');
  return value;
}

/** A campaign id of the form `cmp_<id>`. */
export function readCampaignId(body: Body, field = 'campaign_id', path = field): string {
  const value = body[field];
  if (typeof value !== 'string' || value.length > MAX_STRING_LENGTH || !CAMPAIGN_ID_PATTERN.test(value))
    throw badField(path, 'must be a campaign id of the form cmp_<id>');
  return value;
}

/** A required query parameter. */
export function readQuery(query: URLSearchParams, name: string): string {
  const value = query.get(name);
  if (value === null || value === '') throw badField(name, 'query parameter is required');
  return value;
}
