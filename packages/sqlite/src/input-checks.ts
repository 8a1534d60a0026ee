/**
 * The SQLite outbox's checks of a call's arguments, run synchronously before anything joins a batch: a
 * bad argument rejects that call alone.
 */
import { type AccountPause, type AttemptRecord, appendAttempt, type WorkerBeat } from '@postback/core';
import { type AttemptValues, rowIdOf } from './job-rows.ts';
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

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isStringOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';

/**
 * The attempt of a `complete`, `retry` or `fail`, checked and kept as core's `appendAttempt` keeps it
 * (only the record's fields, the detail cut and its control characters escaped), as the values the write
 * appends; null when none is given.
 */
export function attemptValues(attempt: unknown): AttemptValues | null {
  if (attempt === undefined) return null;
  const a = attempt as Partial<Record<keyof AttemptRecord, unknown>> | null;
  if (typeof a !== 'object' || a === null)
    throw new TypeError('attempt must be an attempt record when given');
  checkEpoch(a.startedAt, 'attempt.startedAt');
  if (typeof a.durationMs !== 'number' || !Number.isFinite(a.durationMs) || a.durationMs < 0) {
    throw new RangeError(`attempt.durationMs must be a non-negative number, got ${String(a.durationMs)}`);
  }
  if (typeof a.outcome !== 'string') throw new TypeError('attempt.outcome must be a string');
  if (
    a.status !== null &&
    !(Number.isInteger(a.status) && (a.status as number) >= 100 && (a.status as number) <= 599)
  ) {
    throw new RangeError(`attempt.status must be an HTTP status or null, got ${String(a.status)}`);
  }
  if (!isStringOrNull(a.detail)) throw new TypeError('attempt.detail must be a string or null');
  const record: AttemptRecord = {
    startedAt: a.startedAt as number,
    durationMs: a.durationMs,
    outcome: a.outcome,
    status: a.status as number | null,
    detail: a.detail,
  };
  const [kept] = appendAttempt([], record);
  return { json: JSON.stringify(kept), status: record.status };
}

/** A worker's heart-beat, checked field by field; returns only the beat's fields, as plain data. */
export function checkBeat(beat: unknown): WorkerBeat {
  const b = beat as Partial<Record<keyof WorkerBeat, unknown>> | null;
  if (typeof b !== 'object' || b === null) throw new TypeError('beat must be a worker heart-beat');
  if (typeof b.workerId !== 'string' || b.workerId === '')
    throw new TypeError('beat.workerId must be a non-empty string');
  checkEpoch(b.at, 'beat.at');
  if (typeof b.state !== 'string') throw new TypeError('beat.state must be a string');
  if (b.pausedUntil !== null) checkEpoch(b.pausedUntil, 'beat.pausedUntil');
  if (!isStringOrNull(b.pauseReason)) throw new TypeError('beat.pauseReason must be a string or null');
  if (typeof b.version !== 'string') throw new TypeError('beat.version must be a string');
  if (!isStringOrNull(b.host)) throw new TypeError('beat.host must be a string or null');
  if (b.pid !== null && !isCount(b.pid))
    throw new TypeError('beat.pid must be a non-negative integer or null');
  const pausedAccounts = checkPausedAccounts(b.pausedAccounts);
  return {
    workerId: b.workerId,
    at: b.at as number,
    state: b.state,
    pausedUntil: b.pausedUntil as number | null,
    pauseReason: b.pauseReason,
    version: b.version,
    host: b.host,
    pid: b.pid as number | null,
    pausedAccounts,
  };
}

/**
 * A beat's paused accounts, checked, as plain data with only the pause's fields. Absent (a worker of a
 * version before accounts) is none.
 */
function checkPausedAccounts(value: unknown): AccountPause[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError('beat.pausedAccounts must be an array');
  return value.map((pause: Partial<Record<keyof AccountPause, unknown>> | null, i) => {
    const field = `beat.pausedAccounts[${i}]`;
    if (typeof pause !== 'object' || pause === null) throw new TypeError(`${field} must be an account pause`);
    if (!isStringOrNull(pause.account)) throw new TypeError(`${field}.account must be a string or null`);
    checkEpoch(pause.since, `${field}.since`);
    checkEpoch(pause.until, `${field}.until`);
    if (typeof pause.reason !== 'string') throw new TypeError(`${field}.reason must be a string`);
    if (pause.status !== null && !(Number.isInteger(pause.status) && (pause.status as number) >= 100)) {
      throw new TypeError(`${field}.status must be an HTTP status or null`);
    }
    return {
      account: pause.account,
      since: pause.since as number,
      until: pause.until as number,
      reason: pause.reason,
      status: pause.status as number | null,
    };
  });
}

/** Throws a RangeError naming `field` unless `value` is a non-negative safe integer (a duration). */
export function checkDuration(value: unknown, field: string): void {
  if (!isCount(value)) {
    throw new RangeError(`${field} must be a non-negative integer of milliseconds, got ${String(value)}`);
  }
}
