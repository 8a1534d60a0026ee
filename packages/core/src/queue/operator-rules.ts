/**
 * The operator-view rules every store applies the same way: how an attempt is kept (bounded history, cut
 * details, escaped control characters), how a job filter is checked and matched, which jobs are urgent
 * first, which final jobs retention may delete, which open jobs are at risk, and the stats. SQL stores translate
 * these to queries; their conformance tests hold them to the same answers as the functions here.
 */

import { escapeControls } from '../escape-controls.ts';
import type { EpochMs } from '../policy.ts';
import { accountKey } from './accounts.ts';
import type { HeldProblem } from './held-types.ts';
import {
  ATTEMPT_DETAIL_MAX_CHARS,
  ATTEMPT_HISTORY_LIMIT,
  type AttemptRecord,
  JOB_STATES,
  type Job,
  type JobState,
} from './job-types.ts';
import { isFinalState, isHeldJob } from './jobs.ts';
import { DEFAULT_LEDGER_RETENTION_MS } from './ledger-types.ts';
import {
  DEFAULT_AT_RISK_WITHIN_MS,
  DEFAULT_LIST_JOBS_LIMIT,
  type JobFilter,
  MAX_LIST_JOBS_LIMIT,
  type OutboxStats,
  type PruneOptions,
  type StateCounts,
  type StatsOptions,
} from './outbox-types.ts';
import { JobValidationError, validateAccount, validateOrderId } from './validation.ts';

/** Cuts a detail to {@link ATTEMPT_DETAIL_MAX_CHARS} with an ellipsis and escapes control characters. */
export function attemptDetail(detail: string | null): string | null {
  if (detail === null) return null;
  const escaped = escapeControls(detail);
  return escaped.length <= ATTEMPT_DETAIL_MAX_CHARS
    ? escaped
    : `${escaped.slice(0, ATTEMPT_DETAIL_MAX_CHARS - 1)}…`;
}

/**
 * An attempt as a history keeps it: only the record's fields, its outcome's control characters escaped,
 * its detail cut and escaped (see {@link attemptDetail}).
 */
export function keptAttempt(attempt: AttemptRecord): AttemptRecord {
  const { startedAt, durationMs, outcome, status, detail } = attempt;
  return { startedAt, durationMs, outcome: escapeControls(outcome), status, detail: attemptDetail(detail) };
}

/**
 * The history after one more attempt: the new one appended as {@link keptAttempt} keeps it, the oldest
 * dropped beyond {@link ATTEMPT_HISTORY_LIMIT}. Returns a new array.
 */
export function appendAttempt(history: readonly AttemptRecord[], attempt: AttemptRecord): AttemptRecord[] {
  const next = [...history, keptAttempt(attempt)];
  return next.length > ATTEMPT_HISTORY_LIMIT ? next.slice(next.length - ATTEMPT_HISTORY_LIMIT) : next;
}

/** A {@link JobFilter} checked, with its defaults: what stores query with. */
export interface ResolvedJobFilter {
  states: readonly JobState[] | null;
  kind: Job['kind'] | null;
  orderId: string | null;
  /** The account's `accountKey` (`""`: jobs without one), or null for every account. */
  accountKey: string | null;
  reason: RegExp | null;
  status: number | null;
  deadlineBefore: EpochMs | null;
  updatedBefore: EpochMs | null;
  limit: number;
  offset: number;
}

const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

/**
 * Checks a {@link JobFilter} and fills its defaults. Throws {@link JobValidationError} naming the field
 * (`filter.limit`, `filter.states[1]`, …) for anything malformed.
 */
export function resolveJobFilter(filter: JobFilter = {}): ResolvedJobFilter {
  if (typeof filter !== 'object' || filter === null) {
    throw new JobValidationError('filter', 'must be an object');
  }
  const states = filter.states === undefined || filter.states.length === 0 ? null : [...filter.states];
  states?.forEach((state, i) => {
    if (!JOB_STATES.includes(state)) {
      throw new JobValidationError(`filter.states[${i}]`, `must be one of ${JOB_STATES.join(', ')}`);
    }
  });
  if (filter.kind !== undefined && filter.kind !== 'confirm' && filter.kind !== 'refund') {
    throw new JobValidationError('filter.kind', 'must be "confirm" or "refund"');
  }
  const orderId = filter.orderId === undefined ? null : validateOrderId(filter.orderId, 'filter.orderId');
  const account =
    filter.account === undefined ? undefined : validateAccount(filter.account, 'filter.account');
  if (filter.reason !== undefined && !(filter.reason instanceof RegExp)) {
    throw new JobValidationError('filter.reason', 'must be a RegExp');
  }
  if (
    filter.status !== undefined &&
    !(Number.isInteger(filter.status) && filter.status >= 100 && filter.status <= 599)
  ) {
    throw new JobValidationError('filter.status', 'must be an HTTP status (100-599)');
  }
  for (const key of ['deadlineBefore', 'updatedBefore'] as const) {
    if (filter[key] !== undefined && !isTime(filter[key])) {
      throw new JobValidationError(`filter.${key}`, 'must be epoch milliseconds (a safe integer)');
    }
  }
  const limit = filter.limit ?? DEFAULT_LIST_JOBS_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_JOBS_LIMIT) {
    throw new JobValidationError('filter.limit', `must be an integer from 1 to ${MAX_LIST_JOBS_LIMIT}`);
  }
  const offset = filter.offset ?? 0;
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new JobValidationError('filter.offset', 'must be a non-negative integer');
  }
  // A RegExp with the g or y flag keeps state between test() calls: matching must not depend on order.
  const reason =
    filter.reason === undefined
      ? null
      : new RegExp(filter.reason.source, filter.reason.flags.replace(/[gy]/g, ''));
  return {
    states,
    kind: filter.kind ?? null,
    orderId,
    accountKey: account === undefined ? null : accountKey(account),
    reason,
    status: filter.status ?? null,
    deadlineBefore: filter.deadlineBefore ?? null,
    updatedBefore: filter.updatedBefore ?? null,
    limit,
    offset,
  };
}

/**
 * Whether `job` passes `filter` (all but paging). `lastStatus` is the HTTP status of the job's last
 * recorded attempt (null when none, or when it had no answer).
 */
export function matchesJobFilter(job: Job, filter: ResolvedJobFilter, lastStatus: number | null): boolean {
  if (filter.states !== null && !filter.states.includes(job.state)) return false;
  if (filter.kind !== null && job.kind !== filter.kind) return false;
  if (filter.orderId !== null && job.orderId !== filter.orderId) return false;
  if (filter.accountKey !== null && accountKey(job.account) !== filter.accountKey) return false;
  if (filter.reason !== null && (job.lastError === null || !filter.reason.test(job.lastError))) return false;
  if (filter.status !== null && lastStatus !== filter.status) return false;
  if (filter.deadlineBefore !== null && (job.deadline === null || job.deadline > filter.deadlineBefore)) {
    return false;
  }
  if (filter.updatedBefore !== null && job.updatedAt > filter.updatedBefore) return false;
  return true;
}

/** Most urgent first: by deadline (none last), then creation time, then id. For `Array.prototype.sort`. */
export function byUrgency(a: Job, b: Job): number {
  const da = a.deadline ?? Number.POSITIVE_INFINITY;
  const db = b.deadline ?? Number.POSITIVE_INFINITY;
  if (da !== db) return da < db ? -1 : 1;
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Whether a job is open: still to be sent by a worker (`pending` or `inflight`). */
export function isOpenJob(job: Pick<Job, 'state'>): boolean {
  return job.state === 'pending' || job.state === 'inflight';
}

/** Whether an open job's deadline is within `withinMs` of `now` (a passed deadline is at risk too). */
export function isAtRisk(job: Pick<Job, 'state' | 'deadline'>, now: EpochMs, withinMs: number): boolean {
  return isOpenJob(job) && job.deadline !== null && job.deadline <= now + withinMs;
}

/**
 * When a final job may be pruned: `olderThanMs` after its last change, never before its own deadline
 * (past it, a job enqueued again for the same order could never be sent, so forgetting this one cannot
 * lead to a second charge or a second reversal), and for a confirmation that was (or may have been)
 * charged, not before its return window has closed, so a refund still finds it and its campaign. Null
 * for a job that is never pruned (`pending`, `inflight`, `dead`).
 */
export function prunableAt(
  job: Pick<Job, 'kind' | 'state' | 'updatedAt' | 'deadline' | 'deliveredAt' | 'maybeAppliedAt'>,
  options: Pick<PruneOptions, 'olderThanMs' | 'returnWindowMs'>,
): EpochMs | null {
  if (!isFinalState(job.state)) return null;
  const byAge = Math.max(job.updatedAt + options.olderThanMs, job.deadline ?? 0);
  if (job.kind !== 'confirm') return byAge;
  const charged = [job.deliveredAt, job.maybeAppliedAt].filter((t): t is number => t !== null);
  if (charged.length === 0) return byAge;
  return Math.max(byAge, Math.min(...charged) + options.returnWindowMs);
}

/** Checks {@link PruneOptions}; throws {@link JobValidationError} naming the field. */
export function validatePruneOptions(options: PruneOptions): PruneOptions & { ledgerRetentionMs: number } {
  if (!isTime(options.now)) throw new JobValidationError('prune.now', 'must be epoch milliseconds');
  for (const key of ['olderThanMs', 'returnWindowMs'] as const) {
    if (!Number.isSafeInteger(options[key]) || options[key] < 0) {
      throw new JobValidationError(`prune.${key}`, 'must be a non-negative integer of milliseconds');
    }
  }
  const ledgerRetentionMs = options.ledgerRetentionMs ?? DEFAULT_LEDGER_RETENTION_MS;
  if (!Number.isSafeInteger(ledgerRetentionMs) || ledgerRetentionMs < 0)
    throw new JobValidationError('prune.ledgerRetentionMs', 'must be a non-negative integer of milliseconds');
  return { ...options, ledgerRetentionMs };
}

/** {@link StatsOptions} checked, with their defaults. */
export interface ResolvedStatsOptions {
  atRiskWithinMs: number;
  deadlineBucketsMs: readonly number[];
}

/** Checks {@link StatsOptions} and fills their defaults; throws {@link JobValidationError} naming the field. */
export function resolveStatsOptions(options: StatsOptions = {}): ResolvedStatsOptions {
  const atRiskWithinMs = options.atRiskWithinMs ?? DEFAULT_AT_RISK_WITHIN_MS;
  if (!Number.isSafeInteger(atRiskWithinMs) || atRiskWithinMs < 0) {
    throw new JobValidationError('stats.atRiskWithinMs', 'must be a non-negative integer of milliseconds');
  }
  const bounds = options.deadlineBucketsMs ?? [];
  bounds.forEach((bound, i) => {
    if (!Number.isSafeInteger(bound) || bound < 0 || (i > 0 && bound <= (bounds[i - 1] as number))) {
      throw new JobValidationError(
        `stats.deadlineBucketsMs[${i}]`,
        'must be non-negative integers of milliseconds in ascending order',
      );
    }
  });
  return { atRiskWithinMs, deadlineBucketsMs: bounds };
}

/** Adds an open job's deadline to cumulative buckets (in place); `counts[i]` counts deadlines ≤ now + bounds[i]. */
export function countDeadline(
  counts: number[],
  bounds: readonly number[],
  now: EpochMs,
  deadline: EpochMs,
): void {
  bounds.forEach((bound, i) => {
    if (deadline <= now + bound) counts[i] = (counts[i] ?? 0) + 1;
  });
}

/**
 * The stats of a set of jobs at `now`, as `Outbox.stats` answers them: counts by state, the oldest pending
 * job, the open job with the nearest deadline, the open jobs at risk and the deadline buckets. A store
 * that holds its jobs in memory calls it; SQL stores compute the same figures in their queries.
 */
export function statsOf(jobs: Iterable<Job>, now: EpochMs, options: ResolvedStatsOptions): OutboxStats {
  const { atRiskWithinMs, deadlineBucketsMs } = options;
  const counts = Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as StateCounts;
  const buckets = deadlineBucketsMs.map(() => 0);
  let atRisk = 0;
  let oldestPendingAt: EpochMs | null = null;
  let nearestDeadline: OutboxStats['nearestDeadline'] = null;
  const held: Job[] = [];
  for (const job of jobs) {
    counts[job.state] += 1;
    if (isHeldJob(job)) held.push(job);
    if (job.state === 'pending' && (oldestPendingAt === null || job.createdAt < oldestPendingAt))
      oldestPendingAt = job.createdAt;
    if (!isOpenJob(job) || job.deadline === null) continue;
    if (nearestDeadline === null || job.deadline < nearestDeadline.deadline)
      nearestDeadline = { id: job.id, orderId: job.orderId, kind: job.kind, deadline: job.deadline };
    if (isAtRisk(job, now, atRiskWithinMs)) atRisk += 1;
    countDeadline(buckets, deadlineBucketsMs, now, job.deadline);
  }
  return {
    counts,
    oldestPendingAt,
    nearestDeadline,
    atRisk: { count: atRisk, withinMs: atRiskWithinMs },
    deadlineBuckets: deadlineBucketsMs.map((withinMs, i) => ({ withinMs, count: buckets[i] ?? 0 })),
    held: heldProblemsOf(held),
  };
}

/**
 * The held open jobs (`isHeldJob`) as `stats().held` reports them: one {@link HeldProblem} per account
 * and held campaign, the oldest hold first (then by account and campaign). `reason` is the `lastError` of
 * the job held first. SQL stores group the same way in their queries.
 */
export function heldProblemsOf(jobs: Iterable<Job>): HeldProblem[] {
  const problems = new Map<string, HeldProblem>();
  for (const job of jobs) {
    if (!isHeldJob(job) || job.heldAt === null) continue;
    const key = `${accountKey(job.account)}\u0001${job.heldCampaignId ?? ''}`;
    const value = job.kind === 'confirm' ? job.valueMicros : 0;
    const problem = problems.get(key);
    if (problem === undefined) {
      problems.set(key, {
        account: job.account,
        campaignId: job.heldCampaignId,
        count: 1,
        valueMicros: value,
        reason: job.lastError ?? '',
        since: job.heldAt,
        earliestDeadline: job.deadline,
      });
      continue;
    }
    problem.count += 1;
    problem.valueMicros += value;
    if (
      job.deadline !== null &&
      (problem.earliestDeadline === null || job.deadline < problem.earliestDeadline)
    )
      problem.earliestDeadline = job.deadline;
    if (job.heldAt < problem.since) {
      problem.since = job.heldAt;
      problem.reason = job.lastError ?? '';
    }
  }
  return [...problems.values()].sort(byHeldSince);
}

/** Held problems oldest first, then by account ('' first) and campaign (unknown first). */
export function byHeldSince(a: HeldProblem, b: HeldProblem): number {
  const key = (p: HeldProblem) => `${accountKey(p.account)}\u0001${p.campaignId ?? ''}`;
  return a.since - b.since || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
}
