/**
 * The refund rules, as pure functions every store applies: what a refund request does given the order's
 * jobs (`planRefund`), what the order's waiting refund becomes when its confirmation ends
 * (`refundAfterConfirm`), and when a confirmation holds its refund back (`blocksRefund`).
 */
import { DEFAULT_WINDOW_POLICY, type EpochMs, refundDeadlineOf, type WindowPolicy } from '../policy.ts';
import { cancelUnsentConfirm } from './cancel-rule.ts';
import type { ConfirmJob, JobContext, RefundJob } from './job-types.ts';
import type { RefundInput, RefundOutcome } from './outbox-types.ts';
import { isShadowRecorded } from './shadow-mark.ts';
import { JobValidationError, validateRefundInput } from './validation.ts';

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
 * - `cancelled`: the confirm was `pending`, `dead` or recorded in shadow mode, and none of its requests may
 *   have reached the service; UPDATE the confirm to the returned job.
 * - `not-charged`: the confirm ended `expired` or `cancelled` and none of its requests may have reached the
 *   service; write nothing.
 * - `window-closed`: a return window is configured and closed before `now`, counted from the charge of a
 *   confirm that ended delivered (or may have been applied); write nothing: nothing will be sent.
 * - `enqueued`: INSERT the returned refund job. It waits (deadline null) while the confirm is `pending` or
 *   `inflight`; after a confirm that was delivered, or may have been applied, it takes the confirm's
 *   campaign and the refund deadline (see {@link refundAfterConfirm}).
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
  const account = checked.account ?? null;
  if (confirm !== null && (confirm.orderId !== checked.orderId || confirm.account !== account))
    throw new Error('planRefund: confirm of another order');
  if (refund !== null && (refund.orderId !== checked.orderId || refund.account !== account))
    throw new Error('planRefund: refund of another order');
  if (refund !== null) return supplyCampaign(refund, checked.campaignId, now);

  // Recorded in shadow mode, never sent: cancelled like a pending one, so ending shadow mode cannot send it.
  if (confirm !== null && confirm.maybeAppliedAt === null && isShadowRecorded(confirm)) {
    const lastError = 'cancelled by a refund while it was recorded in shadow mode; never sent';
    return { outcome: 'cancelled', job: { ...confirm, updatedAt: now, lastError } };
  }
  if (confirm !== null && confirm.maybeAppliedAt === null) {
    switch (confirm.state) {
      case 'pending':
      case 'dead':
        return {
          outcome: 'cancelled',
          job: cancelUnsentConfirm(confirm, now, 'cancelled by a refund: never charged'),
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
    account,
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
    campaignFrom: checked.campaignId === undefined ? null : 'caller',
    maybeAppliedAt: null,
    heldAt: null,
    heldCampaignId: null,
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
  // Only a configured window ends a reversal without a request; the charge time must be known.
  const chargedAt = chargeOf(confirm);
  if (policy.returnWindowMs !== null && chargedAt !== null && refundDeadlineOf(chargedAt, policy) < now)
    return { outcome: 'window-closed', job: confirm };
  // Pending or inflight: the refund waits for the confirm's outcome (its deadline stays null); ended
  // delivered or maybe applied: it follows the confirm now.
  return { outcome: 'enqueued', job: refundAfterConfirm(base, confirm, policy) };
}

/** An existing refund: a campaign given for one that has none is stored (and a dead one sent again). */
function supplyCampaign(refund: RefundJob, campaignId: string | undefined, now: EpochMs): RefundOutcome {
  const waiting = refund.state === 'pending' || refund.state === 'dead';
  if (campaignId === undefined || refund.campaignId !== null || !waiting)
    return { outcome: 'duplicate', job: refund };
  const job: RefundJob = { ...refund, campaignId, campaignFrom: 'caller', updatedAt: now };
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
  const chargedAt = chargeOf(confirm);
  if (chargedAt === null) {
    return {
      ...refund,
      state: 'cancelled',
      updatedAt: Math.max(refund.updatedAt, confirm.updatedAt),
      lastError: `cancelled: the confirmation ended ${confirm.state} without being accepted, so nothing was charged`,
    };
  }
  if (refund.deadline !== null) return refund;
  const fromAnswer = refund.campaignId === null && confirm.campaignId !== null;
  return {
    ...refund,
    campaignId: refund.campaignId ?? confirm.campaignId,
    campaignFrom: fromAnswer ? 'answer' : refund.campaignFrom,
    deadline: refundDeadlineOf(chargedAt, policy),
    updatedAt: Math.max(refund.updatedAt, confirm.updatedAt),
  };
}

/**
 * When a confirm that has ended was (or may have been) charged: its delivery, or the first request that
 * may have been applied; null while it is `pending` or `inflight` (it may yet be charged later) and for
 * one never charged.
 */
function chargeOf(confirm: ConfirmJob): EpochMs | null {
  if (confirm.state === 'pending' || confirm.state === 'inflight') return null;
  return confirm.state === 'delivered' ? (confirm.deliveredAt ?? confirm.updatedAt) : confirm.maybeAppliedAt;
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
