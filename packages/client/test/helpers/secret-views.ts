/**
 * Where a leaked key could show: every way it could be written in echoed text that the client promises
 * to remove, and every rendering of an error (or client) a program or a person may see, causes included.
 */
import { inspect } from 'node:util';
import { expect } from 'vitest';
import { AdServiceError } from '../../src/index.ts';

/** The key, percent-encoded and JSON-escaped. */
export function forms(key: string): string[] {
  return [key, encodeURIComponent(key), JSON.stringify(key).slice(1, -1)];
}

/** Every rendering of a value: inspect, JSON, and for an error its message, stack, detail and causes. */
export function renderings(value: unknown): string[] {
  const views = [
    inspect(value, { depth: Number.POSITIVE_INFINITY, showHidden: true, getters: true }),
    JSON.stringify(value) ?? '',
  ];
  if (value instanceof Error) {
    views.push(value.message, value.stack ?? '', String(value));
    if (value instanceof AdServiceError) views.push(value.detail);
    for (let cause = value.cause, depth = 0; cause !== undefined && depth < 6; depth++) {
      views.push(inspect(cause, { depth: Number.POSITIVE_INFINITY, showHidden: true }), String(cause));
      if (cause instanceof Error) views.push(cause.message, cause.stack ?? '');
      cause = cause instanceof Error ? cause.cause : undefined;
    }
  }
  return views;
}

/** Fails if any form of `key` shows in any rendering of `value`. */
export function expectNowhere(key: string, value: unknown): void {
  for (const view of renderings(value)) for (const form of forms(key)) expect(view).not.toContain(form);
}
