/**
 * Job factories and state transitions, written once as pure functions so every store (memory, SQLite,
 * Postgres, SQS) applies the same rules and only has to persist the result (the refund rules are in
 * `refund-rules.ts`). A store that speaks SQL may
 * express a transition as an UPDATE instead, but must produce the same fields as these functions.
 */

import { DEFAULT_WINDOW_POLICY, deadlineOf, type EpochMs } from '../policy.ts';
import type { ConfirmJob, Job, JobContext, JobState } from './job-types.ts';
import type { ConfirmInput, FailResult, RetryResult } from './outbox-types.ts';
import { blocksRefund } from './refund-rules.ts';
import { validateConfirmInput } from './validation.ts';

/**
 * Longest `lastError` kept on a job. Reasons come from the service's `detail`; a cap keeps a misbehaving
 * server from bloating every row.
 * @defaultValue 1000
 */
export const MAX_REASON_LENGTH = 1000;

/**
 * Cuts a reason to {@link MAX_REASON_LENGTH} characters.
 *
 * @example
 * ```ts
 * truncateReason(err.detail); // at most MAX_REASON_LENGTH characters
 * ```
 */
export function truncateReason(reason: string): string {
  return reason.length <= MAX_REASON_LENGTH ? reason : `${reason.slice(0, MAX_REASON_LENGTH - 1)}…`;
}

/**
 * A fresh, unguessable lease token (Web Crypto, so it works on the edge).
 *
 * @example
 * ```ts
 * const claimed = claimJob(job, { now, leaseMs: 60_000, token: newLeaseToken() });
 * ```
 */
export function newLeaseToken(): string {
  return crypto.randomUUID();
}

/**
 * Validates a confirmation request and builds its `pending` job, due now, with its deadline
 * (click time + confirmation window − safety margin). A click already past its deadline is still stored:
 * the Dispatcher turns it `expired` without sending, so operators see it.
 *
 * @example
 * ```ts
 * const job = newConfirmJob(input, { now: Date.now(), id: 'job_1', policy });
 * await db.insert(job);
 * ```
 */
export function newConfirmJob(input: unknown, context: JobContext): ConfirmJob {
  const checked: ConfirmInput = validateConfirmInput(input, {
    now: context.now,
    ...(context.maxClockSkewMs === undefined ? {} : { maxClockSkewMs: context.maxClockSkewMs }),
  });
  const policy = context.policy ?? DEFAULT_WINDOW_POLICY;
  return {
    kind: 'confirm',
    id: context.id,
    orderId: checked.orderId,
    account: checked.account ?? null,
    state: 'pending',
    attempts: 0,
    createdAt: context.now,
    updatedAt: context.now,
    nextAttemptAt: context.now,
    deadline: deadlineOf(checked.click.clickedAt, policy),
    lastError: null,
    lease: null,
    deliveredAt: null,
    campaignId: null,
    maybeAppliedAt: null,
    heldAt: null,
    heldCampaignId: null,
    clickToken: checked.click.token,
    valueMicros: checked.valueMicros,
    clickedAt: checked.click.clickedAt,
  };
}

/**
 * Whether `claim` may take the job at `now`: `pending` and due, or `inflight` with a lease that ran out;
 * a refund additionally needs a deadline and no `pending`/`inflight` confirm of the same order.
 *
 * @example
 * ```ts
 * const due = jobs.filter((job) => isClaimable(job, now, confirmOf(job.orderId)));
 * ```
 */
export function isClaimable(job: Job, now: EpochMs, confirmOfOrder: ConfirmJob | null): boolean {
  const due =
    (job.state === 'pending' && job.nextAttemptAt <= now) ||
    (job.state === 'inflight' && job.lease !== null && job.lease.expiresAt <= now);
  if (!due) return false;
  if (job.kind === 'refund') return job.deadline !== null && !blocksRefund(confirmOfOrder);
  return true;
}

/**
 * The job as claimed: `inflight` with a fresh lease, one more attempt counted. Retaking an `inflight` job
 * whose lease ran out marks it maybe applied (`maybeAppliedAt`, if unset, becomes its `updatedAt`): the
 * worker that held it may have sent it before it died.
 *
 * @example
 * ```ts
 * const claimed = claimJob(job, { now, leaseMs: 60_000, token: newLeaseToken() });
 * ```
 */
export function claimJob<J extends Job>(
  job: J,
  options: { now: EpochMs; leaseMs: number; token: string },
): J {
  return {
    ...job,
    state: 'inflight',
    attempts: job.attempts + 1,
    updatedAt: options.now,
    lease: { token: options.token, expiresAt: options.now + options.leaseMs },
    maybeAppliedAt: job.maybeAppliedAt ?? (job.state === 'inflight' ? job.updatedAt : null),
  };
}

/** `maybeAppliedAt` after an attempt recorded at `now`: the first time a request may have been applied. */
function appliedSince(stored: Job, maybeApplied: boolean | undefined, now: EpochMs): EpochMs | null {
  return stored.maybeAppliedAt ?? (maybeApplied === true ? now : null);
}

/**
 * Whether `claimed` (the job as a worker holds it) still owns the stored job: the stored job is
 * `inflight` with the same lease token. Every transition checks this first (fencing).
 *
 * @example
 * ```ts
 * if (!holdsLease(stored, claimed)) return false; // fenced: another worker owns it now
 * ```
 */
export function holdsLease(stored: Job, claimed: Pick<Job, 'lease'>): boolean {
  return (
    stored.state === 'inflight' &&
    stored.lease !== null &&
    claimed.lease !== null &&
    stored.lease.token === claimed.lease.token
  );
}

/**
 * `delivered`; a confirm records the campaign the service attributed it to.
 *
 * @example
 * ```ts
 * await db.update(completeJob(stored, { now, campaignId: 'cmp_42' }));
 * ```
 */
export function completeJob<J extends Job>(
  stored: J,
  result: { now: EpochMs; campaignId?: string | null },
): J {
  return {
    ...stored,
    state: 'delivered',
    updatedAt: result.now,
    deliveredAt: result.now,
    lease: null,
    lastError: null,
    campaignId: stored.kind === 'confirm' ? (result.campaignId ?? stored.campaignId) : stored.campaignId,
    heldAt: null,
    heldCampaignId: null,
  };
}

/**
 * Back to `pending` until `nextAttemptAt`; `countAttempt: false` gives back the attempt counted at claim;
 * `maybeApplied: true` sets `maybeAppliedAt` (if unset) to `now`.
 *
 * @example
 * ```ts
 * await db.update(retryJob(stored, { now, nextAttemptAt: now + 30_000, error: 'HTTP 503' }));
 * ```
 */
export function retryJob<J extends Job>(stored: J, result: RetryResult): J {
  const { hold } = result;
  const uncounted = result.countAttempt === false || hold !== undefined;
  return {
    ...stored,
    maybeAppliedAt: appliedSince(stored, result.maybeApplied, result.now),
    state: 'pending',
    attempts: uncounted ? Math.max(0, stored.attempts - 1) : stored.attempts,
    updatedAt: result.now,
    nextAttemptAt: result.nextAttemptAt,
    lastError: truncateReason(result.error),
    lease: null,
    heldAt: hold === undefined ? null : (stored.heldAt ?? result.now),
    heldCampaignId: hold === undefined ? null : hold.campaignId,
  };
}

/**
 * Whether a job is held for a campaign problem (see `RetryResult.hold`) and still open.
 *
 * @example
 * ```ts
 * const held = jobs.filter(isHeldJob).length;
 * ```
 */
export function isHeldJob(job: Pick<Job, 'state' | 'heldAt'>): boolean {
  return job.heldAt !== null && (job.state === 'pending' || job.state === 'inflight');
}

/**
 * Whether `Outbox.releaseHeld` with `options` releases the job: held, `pending`, of the account and
 * campaign asked for (each absent: any). `account` is compared as stored (`accountKey`: '' for none).
 */
export function isReleasable(
  job: Pick<Job, 'state' | 'heldAt' | 'account' | 'heldCampaignId'>,
  options: { account?: string | null; campaignId?: string | null },
): boolean {
  if (job.state !== 'pending' || job.heldAt === null) return false;
  if (options.account !== undefined && options.account !== job.account) return false;
  return options.campaignId === undefined || options.campaignId === job.heldCampaignId;
}

/**
 * A held job released at `now` (`Outbox.releaseHeld`, which counts every job it matched): due now (or as
 * it was, if that is sooner), `updatedAt` now; its
 * held fields stay until its next outcome, so operators still see it held until it is delivered.
 *
 * @example
 * ```ts
 * await db.update(releaseHeldJob(stored, now));
 * ```
 */
export function releaseHeldJob<J extends Job>(stored: J, now: EpochMs): J {
  return { ...stored, nextAttemptAt: Math.min(stored.nextAttemptAt, now), updatedAt: now };
}

/**
 * `dead` (replayable), `expired` or `unmatched` (final), with its reason; `maybeApplied` as in {@link retryJob};
 * `neverApplied` clears `maybeAppliedAt` (the service showed no request of it was applied).
 *
 * @example
 * ```ts
 * await db.update(failJob(stored, { now, state: 'dead', reason: 'HTTP 422: unknown click token' }));
 * ```
 */
export function failJob<J extends Job>(stored: J, result: FailResult): J {
  return {
    ...stored,
    maybeAppliedAt:
      result.neverApplied === true ? null : appliedSince(stored, result.maybeApplied, result.now),
    state: result.state,
    updatedAt: result.now,
    lastError: truncateReason(result.reason),
    lease: null,
    heldAt: null,
    heldCampaignId: null,
  };
}

/**
 * Given back at shutdown: `pending`, due now, the attempt not counted.
 *
 * @example
 * ```ts
 * for (const job of claimed) await db.update(releaseJob(job, now));
 * ```
 */
export function releaseJob<J extends Job>(stored: J, now: EpochMs): J {
  return {
    ...stored,
    state: 'pending',
    attempts: Math.max(0, stored.attempts - 1),
    updatedAt: now,
    nextAttemptAt: now,
    lease: null,
  };
}

/**
 * The same lease, valid for `leaseMs` from `now`.
 *
 * @example
 * ```ts
 * await db.update(extendJobLease(stored, { now, leaseMs: 60_000 }));
 * ```
 */
export function extendJobLease<J extends Job>(stored: J, options: { now: EpochMs; leaseMs: number }): J {
  if (stored.lease === null) return stored;
  return {
    ...stored,
    updatedAt: options.now,
    lease: { token: stored.lease.token, expiresAt: options.now + options.leaseMs },
  };
}

/**
 * What `replay` does to one dead job:
 * - its deadline has passed → `expired`;
 * - a confirm whose order has a refund → `cancelled` (the customer returned the order while the confirm
 *   was dead; sending it now would charge a sale nobody will reverse);
 * - otherwise → `pending`, due now, attempts reset.
 * Returns the job unchanged when it is not `dead`.
 *
 * @example
 * ```ts
 * await db.update(replayJob(stored, { now, orderHasRefund: refund !== null }));
 * ```
 */
export function replayJob<J extends Job>(stored: J, options: { now: EpochMs; orderHasRefund: boolean }): J {
  if (stored.state !== 'dead') return stored;
  const { now } = options;
  if (stored.deadline !== null && stored.deadline < now) {
    return {
      ...stored,
      state: 'expired',
      updatedAt: now,
      lastError: truncateReason(`deadline passed before replay; was: ${stored.lastError ?? 'dead'}`),
    };
  }
  if (stored.kind === 'confirm' && options.orderHasRefund) {
    return {
      ...stored,
      state: 'cancelled',
      updatedAt: now,
      lastError: 'cancelled at replay: the order was refunded meanwhile',
    };
  }
  return { ...stored, state: 'pending', attempts: 0, updatedAt: now, nextAttemptAt: now, lease: null };
}

/**
 * Whether a state is final (nothing will ever change it). `dead` is not: it can be replayed.
 *
 * @example
 * ```ts
 * isFinalState('dead'); // false: a dead job can be replayed
 * ```
 */
export function isFinalState(state: JobState): boolean {
  return state === 'delivered' || state === 'expired' || state === 'cancelled' || state === 'unmatched';
}
