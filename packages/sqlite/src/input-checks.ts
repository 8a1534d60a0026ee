/**
 * The SQLite outbox's checks of a call's arguments, run synchronously before anything joins a batch: a
 * bad argument rejects that call alone.
 */
import { rowIdOf } from './job-rows.ts';
import type { HeldJob } from './outbox-operations.ts';

/** Throws a RangeError naming `field` unless `value` is a non-negative integer of epoch milliseconds. */
export function checkEpoch(value: unknown, field: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(
      `${field} must be a non-negative integer of epoch milliseconds, got ${String(value)}`,
    );
  }
}

/** Throws a RangeError naming `field` unless `value` is a positive safe integer. */
export function checkPositiveInt(value: unknown, field: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`${field} must be a positive integer, got ${String(value)}`);
  }
}

/**
 * A transition must be given the job as `claim` returned it; anything else is refused before any write.
 * Returns what the transition needs of it (id and lease), as plain data.
 */
export function heldJob(job: unknown, field = 'job'): HeldJob {
  const candidate = job as { id?: unknown; lease?: unknown } | null;
  const lease = candidate?.lease as { token?: unknown; expiresAt?: unknown } | null | undefined;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.id !== 'string' ||
    lease === undefined
  ) {
    throw new TypeError(`${field} must be a job as returned by claim()`);
  }
  if (lease === null) return { id: candidate.id, lease: null };
  if (typeof lease.token !== 'string') throw new TypeError(`${field}.lease.token must be a string`);
  return { id: candidate.id, lease: { token: lease.token, expiresAt: Number(lease.expiresAt) } };
}

/** `maybeApplied` of a retry or fail: absent or a boolean; answers whether it is `true`. */
export function checkMaybeApplied(value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new TypeError(`maybeApplied must be a boolean when given, got ${typeof value}`);
  }
  return value === true;
}

/** Throws a TypeError unless `ids` is an array of job id strings. */
export function checkIds(ids: unknown): void {
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
    throw new TypeError('ids must be an array of job id strings');
  }
}

/** The row id after which `listDead` pages (0 from the start); a TypeError for an id not of this outbox. */
export function listDeadCursor(after: string | undefined): number {
  if (after === undefined) return 0;
  const id = rowIdOf(after);
  if (id === null) {
    throw new TypeError(`after must be the id of a job of this outbox, got ${JSON.stringify(after)}`);
  }
  return id;
}
