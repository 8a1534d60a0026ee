/**
 * Job factories and state transitions, written once as pure functions so every store (memory, SQLite,
 * Postgres, SQS) applies the same rules and only has to persist the result. A store that speaks SQL may
 * express a transition as an UPDATE instead, but must produce the same fields as these functions.
 */

import {
  DEFAULT_WINDOW_POLICY,
  deadlineOf,
  type EpochMs,
  refundDeadlineOf,
  type WindowPolicy,
} from '../policy.ts';
import type {
  ConfirmInput,
  ConfirmJob,
  FailResult,
  Job,
  JobState,
  RefundInput,
  RefundJob,
  RefundOutcome,
  RetryResult,
} from './types.ts';
import { JobValidationError, validateConfirmInput, validateRefundInput } from './validation.ts';

/**
 * Longest `lastError` kept on a job. Reasons come from the service's `detail`; a cap keeps a misbehaving
 * server from bloating every row.
 * @defaultValue 1000
 */
export const MAX_REASON_LENGTH = 1000;

/** What a factory needs besides the input: the clock, the windows, and the id the store assigns. */
export interface JobContext {
  now: EpochMs;
  /** Store-assigned unique id for the new job. */
  id: string;
  /** @defaultValue {@link DEFAULT_WINDOW_POLICY} */
  policy?: WindowPolicy;
  /** @defaultValue `DEFAULT_MAX_CLOCK_SKEW_MS` */
  maxClockSkewMs?: number;
}

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
    clickToken: checked.click.token,
    valueMicros: checked.valueMicros,
    clickedAt: checked.click.clickedAt,
  };
}

/** What the store found for the order when a refund is requested. */
export interface RefundContext extends JobContext {
  /** The order's confirm job in this outbox, if any. */
  confirm: ConfirmJob | null;
  /** The order's refund job in this outbox, if any. */
  refund: RefundJob | null;
}

/**
 * Whether the service may have charged this confirmation: it was delivered, or one of its requests may
 * have reached the service without a clear answer ({@link ConfirmJob.maybeAppliedAt}).
 *
 * @example
 * ```ts
 * if (!mayHaveCharged(confirm)) console.log('nothing to reverse');
 * ```
 */
export function mayHaveCharged(confirm: ConfirmJob): boolean {
  return confirm.state === 'delivered' || confirm.maybeAppliedAt !== null;
}

/**
 * Decides what a refund request does, given the order's jobs, and returns the outcome to persist:
 * - `duplicate`: a refund job exists and nothing about it changes; write nothing.
 * - `updated`: the existing refund had no campaign and the caller gives one; UPDATE the refund to the
 *   returned job (a dead one is `pending` again, due now, attempts reset).
 * - `cancelled`: the confirm was `pending` or `dead` and none of its requests may have reached the service;
 *   UPDATE the confirm to the returned job.
 * - `not-charged`: the confirm ended `expired` or `cancelled` and none of its requests may have reached the
 *   service; write nothing.
 * - `enqueued`: INSERT the returned refund job. It waits (deadline null) while the confirm is `pending` or
 *   `inflight`; after a confirm that was delivered, or may have been applied, it takes the confirm's
 *   campaign and the return-window deadline (see {@link refundAfterConfirm}).
 *
 * Throws {@link JobValidationError} (`campaignId`) when no campaign is given and none can be known.
 *
 * @example
 * ```ts
 * const outcome = planRefund(input, { now, id: newId(), policy, confirm, refund });
 * if (outcome.outcome === 'enqueued') await db.insert(outcome.job);
 * if (outcome.outcome === 'cancelled' || outcome.outcome === 'updated') await db.update(outcome.job);
 * ```
 */
export function planRefund(input: unknown, context: RefundContext): RefundOutcome {
  const checked: RefundInput = validateRefundInput(input);
  const { confirm, refund, now } = context;
  const policy = context.policy ?? DEFAULT_WINDOW_POLICY;
  if (confirm !== null && confirm.orderId !== checked.orderId)
    throw new Error('planRefund: confirm of another order');
  if (refund !== null) return supplyCampaign(refund, checked.campaignId, now);

  if (confirm !== null && confirm.maybeAppliedAt === null) {
    switch (confirm.state) {
      case 'pending':
      case 'dead':
        return {
          outcome: 'cancelled',
          job: {
            ...confirm,
            state: 'cancelled',
            updatedAt: now,
            lease: null,
            lastError:
              confirm.state === 'dead' ? confirm.lastError : 'cancelled by a refund before it was sent',
          },
        };
      case 'expired':
      case 'cancelled':
        return { outcome: 'not-charged', job: confirm };
      case 'inflight':
      case 'delivered':
        break;
    }
  }
  if (confirm?.state === 'cancelled') return { outcome: 'not-charged', job: confirm };

  const base: RefundJob = {
    kind: 'refund',
    id: context.id,
    orderId: checked.orderId,
    state: 'pending',
    attempts: 0,
    createdAt: now,
    updatedAt: now,
    nextAttemptAt: now,
    deadline: null,
    lastError: null,
    lease: null,
    deliveredAt: null,
    campaignId: checked.campaignId ?? null,
    maybeAppliedAt: null,
  };

  if (confirm === null) {
    if (checked.campaignId === undefined) {
      throw new JobValidationError(
        'campaignId',
        'is required: this outbox holds no confirmation for the order, so the campaign cannot be known',
      );
    }
    // The confirmation happened elsewhere, at some time before now: now + return window is the latest
    // its window can end, so we bound by it and let the service refuse a reversal that is too late.
    return { outcome: 'enqueued', job: { ...base, deadline: refundDeadlineOf(now, policy) } };
  }
  // Pending or inflight: the refund waits for the confirm's outcome (its deadline stays null); ended
  // delivered or maybe applied: it follows the confirm now.
  return { outcome: 'enqueued', job: refundAfterConfirm(base, confirm, policy) };
}

/** An existing refund: a campaign given for one that has none is stored (and a dead one sent again). */
function supplyCampaign(refund: RefundJob, campaignId: string | undefined, now: EpochMs): RefundOutcome {
  const waiting = refund.state === 'pending' || refund.state === 'dead';
  if (campaignId === undefined || refund.campaignId !== null || !waiting)
    return { outcome: 'duplicate', job: refund };
  const job: RefundJob = { ...refund, campaignId, updatedAt: now };
  if (refund.state === 'dead') {
    Object.assign(job, { state: 'pending', attempts: 0, nextAttemptAt: now, lastError: null, lease: null });
  }
  return { outcome: 'updated', job };
}

/**
 * The order's `pending` refund after its confirm changed state. While the confirm is `pending` or
 * `inflight` the refund is unchanged (it waits). Then:
 * - delivered: the refund takes the confirm's campaign (unless the caller gave one) and the return-window
 *   deadline counted from the delivery;
 * - ended `dead` or `expired` after a request that may have reached the service
 *   ({@link ConfirmJob.maybeAppliedAt}): the same, counted from that time (a refund with no campaign known
 *   dead-letters, naming what to supply, and `updated` by a refund that gives one);
 * - ended `dead`, `expired` or `cancelled` with nothing that may have reached the service: `cancelled`.
 * Returns the refund unchanged when it is not pending.
 *
 * @example
 * ```ts
 * if (refund) await db.update(refundAfterConfirm(refund, confirm, policy));
 * ```
 */
export function refundAfterConfirm(
  refund: RefundJob,
  confirm: ConfirmJob,
  policy: WindowPolicy = DEFAULT_WINDOW_POLICY,
): RefundJob {
  if (refund.state !== 'pending' || confirm.state === 'pending' || confirm.state === 'inflight')
    return refund;
  const chargedAt =
    confirm.state === 'delivered' ? (confirm.deliveredAt ?? confirm.updatedAt) : confirm.maybeAppliedAt;
  if (chargedAt === null) {
    return {
      ...refund,
      state: 'cancelled',
      updatedAt: Math.max(refund.updatedAt, confirm.updatedAt),
      lastError: `cancelled: the confirmation ended ${confirm.state} without being accepted, so nothing was charged`,
    };
  }
  if (refund.deadline !== null) return refund;
  return {
    ...refund,
    campaignId: refund.campaignId ?? confirm.campaignId,
    deadline: refundDeadlineOf(chargedAt, policy),
    updatedAt: Math.max(refund.updatedAt, confirm.updatedAt),
  };
}

/**
 * Whether a confirm in this state keeps its order's refund from being claimed.
 *
 * @example
 * ```ts
 * blocksRefund(confirm); // true while the confirm is pending or inflight
 * ```
 */
export function blocksRefund(confirm: ConfirmJob | null): boolean {
  return confirm !== null && (confirm.state === 'pending' || confirm.state === 'inflight');
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
  return {
    ...stored,
    maybeAppliedAt: appliedSince(stored, result.maybeApplied, result.now),
    state: 'pending',
    attempts: result.countAttempt === false ? Math.max(0, stored.attempts - 1) : stored.attempts,
    updatedAt: result.now,
    nextAttemptAt: result.nextAttemptAt,
    lastError: truncateReason(result.error),
    lease: null,
  };
}

/**
 * `dead` (replayable) or `expired` (final), with its reason; `maybeApplied` as in {@link retryJob}.
 *
 * @example
 * ```ts
 * await db.update(failJob(stored, { now, state: 'dead', reason: 'HTTP 422: unknown click token' }));
 * ```
 */
export function failJob<J extends Job>(stored: J, result: FailResult): J {
  return {
    ...stored,
    maybeAppliedAt: appliedSince(stored, result.maybeApplied, result.now),
    state: result.state,
    updatedAt: result.now,
    lastError: truncateReason(result.reason),
    lease: null,
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
  return state === 'delivered' || state === 'expired' || state === 'cancelled';
}
