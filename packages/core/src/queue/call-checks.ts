/**
 * The checked store contract: what each `Outbox` call may be given, written once. Every store (memory,
 * SQLite, Postgres, SQS) runs a call's arguments through these before it touches anything, so a bad
 * argument is refused the same way everywhere — a `TypeError` (wrong shape) or `RangeError` (wrong value)
 * naming the field; an order an app names is checked as `validation.ts` checks it, a `JobValidationError`
 * — and a store only persists what comes out: plain data holding only the contract's fields.
 */
import type { EpochMs } from '../policy.ts';
import { accountKey, DEFAULT_URGENT_WITHIN_MS } from './accounts.ts';
import type { ReleaseHeldOptions } from './held-types.ts';
import type { AttemptRecord, Job } from './job-types.ts';
import { keptAttempt } from './operator-rules.ts';
import {
  type AccountPause,
  type ClaimOptions,
  type CompleteResult,
  DEFAULT_LIST_DEAD_LIMIT,
  type FailResult,
  type ListDeadOptions,
  MAX_LIST_DEAD_LIMIT,
  type RetryResult,
  type WorkerBeat,
} from './outbox-types.ts';
import { CAMPAIGN_ID_PATTERN, validateAccount, validateOrderId } from './validation.ts';

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isStringOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
const isStatus = (v: unknown): v is number =>
  Number.isInteger(v) && (v as number) >= 100 && (v as number) <= 599;

/**
 * Checks the order `getByOrder` names as `confirm` checks it (a `JobValidationError` naming `orderId` or
 * `account`), so a name no store could hold (a lone surrogate, which UTF-8 turns into U+FFFD) never
 * reads another order's jobs.
 */
export function checkOrderLookup(
  orderId: unknown,
  account: unknown,
): { orderId: string; account: string | null } {
  return { orderId: validateOrderId(orderId), account: validateAccount(account) };
}

/**
 * Checks a time: a non-negative safe integer of epoch milliseconds. Throws a RangeError naming `field`.
 *
 * @example
 * ```ts
 * checkEpoch(Date.now(), 'now');
 * ```
 */
export function checkEpoch(value: unknown, field: string): EpochMs {
  if (!isCount(value)) {
    throw new RangeError(
      `${field} must be a non-negative integer of epoch milliseconds, got ${String(value)}`,
    );
  }
  return value;
}

/** Checks a positive safe integer (a limit, a lease); throws a RangeError naming `field`. */
export function checkPositiveInt(value: unknown, field: string): number {
  if (!isCount(value) || value === 0) {
    throw new RangeError(`${field} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

/** Checks a duration: a non-negative safe integer of milliseconds; throws a RangeError naming `field`. */
export function checkDuration(value: unknown, field: string): number {
  if (!isCount(value)) {
    throw new RangeError(`${field} must be a non-negative integer of milliseconds, got ${String(value)}`);
  }
  return value;
}

/** {@link ClaimOptions} checked, with their defaults, as the claim runs them. */
export interface CheckedClaim {
  now: EpochMs;
  limit: number;
  leaseMs: number;
  urgentWithinMs: number;
  /** The `accountKey`s of `excludeAccounts`, each once. */
  excludeKeys: string[];
}

/**
 * Checks `claim`'s options and fills their defaults.
 *
 * @example
 * ```ts
 * checkClaim({ now, limit: 16, leaseMs: 30_000, excludeAccounts: [null] }).excludeKeys; // ['']
 * ```
 */
export function checkClaim(options: ClaimOptions): CheckedClaim {
  const given = (options ?? {}) as Partial<ClaimOptions>;
  const exclude: unknown = given.excludeAccounts ?? [];
  if (!Array.isArray(exclude) || !exclude.every(isStringOrNull)) {
    throw new TypeError('excludeAccounts must be an array of accounts (strings, or null for none)');
  }
  return {
    now: checkEpoch(given.now, 'now'),
    limit: checkPositiveInt(given.limit, 'limit'),
    leaseMs: checkPositiveInt(given.leaseMs, 'leaseMs'),
    urgentWithinMs: checkDuration(given.urgentWithinMs ?? DEFAULT_URGENT_WITHIN_MS, 'urgentWithinMs'),
    excludeKeys: [...new Set(exclude.map(accountKey))],
  };
}

/**
 * Checks that a transition is given a job as `claim` returned it (an id and a lease, null when the job
 * is not held); anything else is refused before any write. Returns the job.
 */
export function checkClaimedJob(job: unknown, field = 'job'): Job {
  const candidate = job as { id?: unknown; lease?: { token?: unknown } | null } | null;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.id !== 'string' ||
    candidate.lease === undefined
  ) {
    throw new TypeError(`${field} must be a job as returned by claim()`);
  }
  if (candidate.lease !== null && typeof candidate.lease?.token !== 'string') {
    throw new TypeError(`${field}.lease.token must be a string`);
  }
  return job as Job;
}

/** A flag of a result: absent or a boolean (a TypeError naming `field` otherwise). */
function checkFlag(value: unknown, field: string): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new TypeError(`${field} must be a boolean when given, got ${typeof value}`);
  }
  return value;
}

/**
 * The attempt a transition records, checked and kept as the history keeps it (only the record's fields,
 * the outcome and detail escaped, the detail cut; see `keptAttempt`); null when none is given.
 */
export function checkAttempt(attempt: unknown): AttemptRecord | null {
  if (attempt === undefined || attempt === null) return null;
  const a = attempt as Partial<Record<keyof AttemptRecord, unknown>>;
  if (typeof a !== 'object') throw new TypeError('attempt must be an attempt record when given');
  checkEpoch(a.startedAt, 'attempt.startedAt');
  if (typeof a.durationMs !== 'number' || !Number.isFinite(a.durationMs) || a.durationMs < 0) {
    throw new RangeError(`attempt.durationMs must be a non-negative number, got ${String(a.durationMs)}`);
  }
  if (typeof a.outcome !== 'string') throw new TypeError('attempt.outcome must be a string');
  if (a.status !== null && !isStatus(a.status)) {
    throw new RangeError(`attempt.status must be an HTTP status or null, got ${String(a.status)}`);
  }
  if (!isStringOrNull(a.detail)) throw new TypeError('attempt.detail must be a string or null');
  return keptAttempt({
    startedAt: a.startedAt as number,
    durationMs: a.durationMs,
    outcome: a.outcome,
    status: a.status as number | null,
    detail: a.detail,
  });
}

/** A transition checked: the job as claimed, the result's fields only, and its attempt (or null). */
export interface CheckedTransition<R> {
  job: Job;
  result: R;
  attempt: AttemptRecord | null;
}

/** Checks `complete`'s arguments. */
export function checkComplete(job: unknown, result: CompleteResult): CheckedTransition<CompleteResult> {
  const held = checkClaimedJob(job);
  const now = checkEpoch(result?.now, 'now');
  const campaignId = result.campaignId;
  if (campaignId !== undefined && !isStringOrNull(campaignId)) {
    throw new TypeError('campaignId must be a string or null when given');
  }
  return {
    job: held,
    result: campaignId === undefined ? { now } : { now, campaignId },
    attempt: checkAttempt(result.attempt),
  };
}

/** A campaign id as a hold or a release names it: `cmp_…` or null (a TypeError/RangeError naming `field`). */
function checkHeldCampaign(value: unknown, field: string): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') throw new TypeError(`${field} must be a campaign id string or null`);
  if (!CAMPAIGN_ID_PATTERN.test(value)) {
    throw new RangeError(`${field} must be a campaign id (cmp_…) or null, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** A retry's `hold`: absent, or `{ campaignId }` (a campaign id or null). */
function checkHold(value: unknown): RetryResult['hold'] {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null)
    throw new TypeError('hold must be { campaignId } when given');
  return { campaignId: checkHeldCampaign((value as { campaignId?: unknown }).campaignId, 'hold.campaignId') };
}

/**
 * Checks `retry`'s arguments (`maybeApplied` kept only when true). A `hold` is refused (TypeError) by a
 * store that cannot hold jobs (`holds: false`).
 */
export function checkRetry(
  job: unknown,
  result: RetryResult,
  options: { holds: boolean } = { holds: true },
): CheckedTransition<RetryResult> {
  const held = checkClaimedJob(job);
  const now = checkEpoch(result?.now, 'now');
  const countAttempt = checkFlag(result.countAttempt, 'countAttempt');
  const hold = checkHold(result.hold);
  if (hold !== undefined && !options.holds) throw new TypeError('hold is not supported by this outbox');
  return {
    job: held,
    result: {
      now,
      nextAttemptAt: checkEpoch(result.nextAttemptAt, 'nextAttemptAt'),
      error: String(result.error),
      ...(countAttempt === undefined ? {} : { countAttempt }),
      ...(checkFlag(result.maybeApplied, 'maybeApplied') === true ? { maybeApplied: true } : {}),
      ...(hold === undefined ? {} : { hold }),
    },
    attempt: checkAttempt(result.attempt),
  };
}

/**
 * Checks `releaseHeld`'s options: `now`, and `account` and `campaignId` when given (`account` as an order's
 * account is checked, a `JobValidationError`; `campaignId` a `cmp_…` id or null). Returns only those fields.
 */
export function checkReleaseHeld(options: ReleaseHeldOptions): ReleaseHeldOptions {
  const given = (options ?? {}) as Partial<Record<keyof ReleaseHeldOptions, unknown>>;
  const now = checkEpoch(given.now, 'now');
  return {
    now,
    ...(given.account === undefined ? {} : { account: validateAccount(given.account) }),
    ...(given.campaignId === undefined
      ? {}
      : { campaignId: checkHeldCampaign(given.campaignId, 'campaignId') }),
  };
}

/** Checks `fail`'s arguments (`maybeApplied` and `neverApplied` kept only when true). */
export function checkFail(job: unknown, result: FailResult): CheckedTransition<FailResult> {
  const held = checkClaimedJob(job);
  const now = checkEpoch(result?.now, 'now');
  if (result.state !== 'dead' && result.state !== 'expired' && result.state !== 'unmatched') {
    throw new RangeError(`state must be 'dead', 'expired' or 'unmatched', got ${String(result.state)}`);
  }
  if (result.state === 'unmatched' && held.kind !== 'refund') {
    throw new RangeError(`state 'unmatched' is for refund jobs only, got a ${held.kind} job`);
  }
  return {
    job: held,
    result: {
      now,
      state: result.state,
      reason: String(result.reason),
      ...(checkFlag(result.maybeApplied, 'maybeApplied') === true ? { maybeApplied: true } : {}),
      ...(checkFlag(result.neverApplied, 'neverApplied') === true ? { neverApplied: true } : {}),
    },
    attempt: checkAttempt(result.attempt),
  };
}

/** Checks `release`'s arguments: an array of claimed jobs and a time. */
export function checkRelease(jobs: unknown, now: unknown): { jobs: Job[]; now: EpochMs } {
  if (!Array.isArray(jobs)) throw new TypeError('jobs must be an array of claimed jobs');
  return { jobs: jobs.map((job, i) => checkClaimedJob(job, `jobs[${i}]`)), now: checkEpoch(now, 'now') };
}

/** Checks `extendLease`'s arguments. */
export function checkExtendLease(
  job: unknown,
  options: { now: EpochMs; leaseMs: number },
): { job: Job; now: EpochMs; leaseMs: number } {
  return {
    job: checkClaimedJob(job),
    now: checkEpoch(options?.now, 'now'),
    leaseMs: checkPositiveInt(options.leaseMs, 'leaseMs'),
  };
}

/** Checks a list of job ids: an array of strings (a TypeError otherwise). Returns a copy. */
function checkIds(ids: unknown): string[] {
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
    throw new TypeError('ids must be an array of job id strings');
  }
  return [...ids];
}

/** Checks `replay`'s selection: the ids to replay, or null for every dead job. */
export function checkReplay(selection: unknown, now: unknown): { ids: string[] | null; now: EpochMs } {
  const checkedNow = checkEpoch(now, 'now');
  const given = (selection ?? {}) as { ids?: unknown; all?: unknown };
  if ('ids' in given) return { ids: checkIds(given.ids), now: checkedNow };
  if (given.all !== true) throw new TypeError('replay takes { ids: [...] } or { all: true }');
  return { ids: null, now: checkedNow };
}

/** Checks `purgeDead`'s options: the ids to delete, or null for every dead job. */
export function checkPurge(options: { ids?: readonly string[] } | undefined): string[] | null {
  return options?.ids === undefined ? null : checkIds(options.ids);
}

/** Checks `listDead`'s options and fills their defaults (a larger limit is cut to {@link MAX_LIST_DEAD_LIMIT}). */
export function checkListDead(options: ListDeadOptions = {}): { limit: number; after: string | undefined } {
  const limit = checkPositiveInt(options.limit ?? DEFAULT_LIST_DEAD_LIMIT, 'limit');
  if (options.after !== undefined && typeof options.after !== 'string') {
    throw new TypeError('after must be the id of a job of this outbox');
  }
  return { limit: Math.min(limit, MAX_LIST_DEAD_LIMIT), after: options.after };
}

/** Checks `workers`' options; returns the time from which beats count. */
export function checkWorkersQuery(options: { now: EpochMs; sinceMs: number }): EpochMs {
  const now = checkEpoch(options?.now, 'now');
  return now - checkDuration(options.sinceMs, 'sinceMs');
}

/** Largest process id a beat may carry (what a 32-bit signed column holds). @defaultValue 2_147_483_647 */
const MAX_PID = 2_147_483_647;

/** Checks a worker's heart-beat field by field; returns only the beat's fields, as plain data. */
export function checkBeat(beat: unknown): WorkerBeat {
  const b = beat as Partial<Record<keyof WorkerBeat, unknown>> | null;
  if (typeof b !== 'object' || b === null) throw new TypeError('beat must be a worker heart-beat');
  if (typeof b.workerId !== 'string' || b.workerId === '')
    throw new TypeError('beat.workerId must be a non-empty string');
  const at = checkEpoch(b.at, 'beat.at');
  if (typeof b.state !== 'string') throw new TypeError('beat.state must be a string');
  const pausedUntil = b.pausedUntil === null ? null : checkEpoch(b.pausedUntil, 'beat.pausedUntil');
  if (!isStringOrNull(b.pauseReason)) throw new TypeError('beat.pauseReason must be a string or null');
  if (typeof b.version !== 'string') throw new TypeError('beat.version must be a string');
  if (!isStringOrNull(b.host)) throw new TypeError('beat.host must be a string or null');
  if (b.pid !== null && !(isCount(b.pid) && b.pid <= MAX_PID))
    throw new TypeError('beat.pid must be a non-negative integer or null');
  return {
    workerId: b.workerId,
    at,
    state: b.state,
    pausedUntil,
    pauseReason: b.pauseReason,
    version: b.version,
    host: b.host,
    pid: b.pid,
    pausedAccounts: checkPausedAccounts(b.pausedAccounts),
  };
}

/** A beat's paused accounts, checked, with only the pause's fields. Absent (a worker before accounts): none. */
function checkPausedAccounts(value: unknown): AccountPause[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError('beat.pausedAccounts must be an array');
  return value.map((pause: Partial<Record<keyof AccountPause, unknown>> | null, i) => {
    const field = `beat.pausedAccounts[${i}]`;
    if (typeof pause !== 'object' || pause === null) throw new TypeError(`${field} must be an account pause`);
    if (!isStringOrNull(pause.account)) throw new TypeError(`${field}.account must be a string or null`);
    const since = checkEpoch(pause.since, `${field}.since`);
    const until = checkEpoch(pause.until, `${field}.until`);
    if (typeof pause.reason !== 'string') throw new TypeError(`${field}.reason must be a string`);
    if (pause.status !== null && !isStatus(pause.status)) {
      throw new TypeError(`${field}.status must be an HTTP status or null`);
    }
    return { account: pause.account, since, until, reason: pause.reason, status: pause.status };
  });
}
