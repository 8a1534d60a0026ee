/**
 * What the operator's view takes from callers, checked before it reaches SQL: the attempt a transition
 * records (kept as core's `appendAttempt` keeps it) and a worker's heart-beat.
 */
import { type AccountPause, type AttemptRecord, appendAttempt, type WorkerBeat } from '@postback/core';

/** An attempt as a transition appends it: the jsonb text of the record, and its HTTP status. */
export interface AttemptValues {
  json: string;
  status: number | null;
}

const isEpoch = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const isStringOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
// jsonb cannot hold U+0000; core's attemptDetail already escapes control characters of a detail.
const withoutNul = (text: string) => text.replaceAll('\u0000', '\\u{0}');

/**
 * The attempt of a `complete`, `retry` or `fail`, checked and kept as core's `appendAttempt` keeps it
 * (the record's fields only, the detail cut and its control characters escaped); null when none is given.
 *
 * @example
 * ```ts
 * attemptValues({ startedAt: 1, durationMs: 120, outcome: 'transient', status: 503, detail: '503' });
 * // { json: '{"startedAt":1,...}', status: 503 }
 * ```
 */
export function attemptValues(attempt: unknown): AttemptValues | null {
  if (attempt === undefined || attempt === null) return null;
  const a = attempt as Partial<Record<keyof AttemptRecord, unknown>>;
  if (typeof a !== 'object') throw new TypeError('attempt must be an attempt record when given');
  if (!isEpoch(a.startedAt))
    throw new RangeError(`attempt.startedAt must be epoch milliseconds, got ${String(a.startedAt)}`);
  if (typeof a.durationMs !== 'number' || !Number.isFinite(a.durationMs) || a.durationMs < 0)
    throw new RangeError(`attempt.durationMs must be a non-negative number, got ${String(a.durationMs)}`);
  if (typeof a.outcome !== 'string') throw new TypeError('attempt.outcome must be a string');
  if (
    a.status !== null &&
    !(Number.isInteger(a.status) && Number(a.status) >= 100 && Number(a.status) <= 599)
  )
    throw new RangeError(`attempt.status must be an HTTP status or null, got ${String(a.status)}`);
  if (!isStringOrNull(a.detail)) throw new TypeError('attempt.detail must be a string or null');
  const [kept] = appendAttempt([], {
    startedAt: a.startedAt,
    durationMs: a.durationMs,
    outcome: withoutNul(a.outcome),
    status: a.status as number | null,
    detail: a.detail,
  });
  return { json: JSON.stringify(kept), status: a.status as number | null };
}

/**
 * A worker's heart-beat checked field by field, as the values of the `beat` statement.
 *
 * @example
 * ```ts
 * await pool.query(sql.beat, beatValues(beat));
 * ```
 */
export function beatValues(beat: unknown): unknown[] {
  const b = beat as Partial<Record<keyof WorkerBeat, unknown>> | null;
  if (typeof b !== 'object' || b === null) throw new TypeError('beat must be a worker heart-beat');
  if (typeof b.workerId !== 'string' || b.workerId === '')
    throw new TypeError('beat.workerId must be a non-empty string');
  if (!isEpoch(b.at)) throw new RangeError(`beat.at must be epoch milliseconds, got ${String(b.at)}`);
  if (typeof b.state !== 'string') throw new TypeError('beat.state must be a string');
  if (b.pausedUntil !== null && !isEpoch(b.pausedUntil))
    throw new RangeError('beat.pausedUntil must be epoch milliseconds or null');
  if (!isStringOrNull(b.pauseReason)) throw new TypeError('beat.pauseReason must be a string or null');
  if (typeof b.version !== 'string') throw new TypeError('beat.version must be a string');
  if (!isStringOrNull(b.host)) throw new TypeError('beat.host must be a string or null');
  if (b.pid !== null && !(Number.isInteger(b.pid) && Number(b.pid) >= 0 && Number(b.pid) <= 2_147_483_647))
    throw new TypeError('beat.pid must be a non-negative integer or null');
  const text = (v: string | null) => (v === null ? null : withoutNul(v));
  return [
    withoutNul(b.workerId),
    b.at,
    withoutNul(b.state),
    b.pausedUntil,
    text(b.pauseReason),
    withoutNul(b.version),
    text(b.host),
    b.pid,
    pausedAccountsJson(b.pausedAccounts),
  ];
}

/** A beat's `pausedAccounts` checked, as the jsonb text stored in `workers.paused_accounts`. */
function pausedAccountsJson(paused: unknown): string {
  if (paused === undefined) return '[]';
  if (!Array.isArray(paused)) throw new TypeError('beat.pausedAccounts must be an array');
  const kept: AccountPause[] = paused.map((p: Partial<Record<keyof AccountPause, unknown>>, i) => {
    if (typeof p !== 'object' || p === null)
      throw new TypeError(`beat.pausedAccounts[${i}] must be an object`);
    if (!isStringOrNull(p.account))
      throw new TypeError(`beat.pausedAccounts[${i}].account must be a string or null`);
    if (!isEpoch(p.since) || !isEpoch(p.until))
      throw new RangeError(`beat.pausedAccounts[${i}].since and until must be epoch milliseconds`);
    if (typeof p.reason !== 'string')
      throw new TypeError(`beat.pausedAccounts[${i}].reason must be a string`);
    if (p.status !== null && !Number.isInteger(p.status))
      throw new TypeError(`beat.pausedAccounts[${i}].status must be an HTTP status or null`);
    return {
      account: p.account === null ? null : withoutNul(p.account),
      since: p.since,
      until: p.until,
      reason: withoutNul(p.reason),
      status: p.status as number | null,
    };
  });
  return JSON.stringify(kept);
}

/**
 * A beat as stored, back as core's {@link WorkerBeat}.
 *
 * @example
 * ```ts
 * const seen = (await pool.query(sql.workers, [since])).rows.map(rowToBeat);
 * ```
 */
export function rowToBeat(row: Record<string, unknown>): WorkerBeat {
  const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    workerId: String(row.worker_id),
    at: Number(row.at),
    state: String(row.state),
    pausedUntil: numOrNull(row.paused_until),
    pauseReason: (row.pause_reason as string | null) ?? null,
    version: String(row.version),
    host: (row.host as string | null) ?? null,
    pid: numOrNull(row.pid),
    pausedAccounts: pausedAccountsOf(row.paused_accounts),
  };
}

/** `workers.paused_accounts` back as the beat's pauses (NULL, from a beat before migration 4: none). */
function pausedAccountsOf(stored: unknown): AccountPause[] {
  if (stored === null || stored === undefined) return [];
  // pg parses jsonb; other drivers behind a Queryable may hand back its text.
  return (typeof stored === 'string' ? JSON.parse(stored) : stored) as AccountPause[];
}
