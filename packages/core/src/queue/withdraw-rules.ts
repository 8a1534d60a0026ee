/**
 * Withdrawing an order's confirmation (the shopper withdrew consent after the order), as a pure rule every
 * store applies inside one transaction: a confirmation none of whose requests may have reached the service
 * is cancelled and never sent; one that may have reached it is left alone and said to be so (the service
 * may have charged it: it is never recorded "never charged"). A withdrawal sends nothing: reversing a
 * charge is a refund's job.
 */
import type { EpochMs } from '../policy.ts';
import { checkOrderLookup } from './call-checks.ts';
import { cancelUnsentConfirm } from './cancel-rule.ts';
import type { ConfirmJob } from './job-types.ts';
import type { WithdrawInput, WithdrawOutcome } from './outbox-types.ts';
import { isShadowRecorded } from './shadow-mark.ts';
import { JobValidationError } from './validation.ts';

/**
 * Checks what `Outbox.withdraw` is given. Throws `JobValidationError` naming the field.
 *
 * @example
 * ```ts
 * const { orderId, account } = checkWithdraw({ orderId: 'A-1001' }); // account: null
 * ```
 */
export function checkWithdraw(input: unknown): { orderId: string; account: string | null } {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new JobValidationError('input', 'must be an object { orderId, account? }');
  const { orderId, account } = input as Partial<WithdrawInput>;
  return checkOrderLookup(orderId, account ?? null);
}

/**
 * What withdrawing the order whose confirm job is `confirm` (null: none in this outbox) does at `now`:
 * - `cancelled`: it was `pending`, `dead` or recorded in shadow mode, and none of its requests may have reached the service; the
 *   returned job (`cancelled`) is what to persist, and the order's waiting refund follows it
 *   (`refundAfterConfirm`: cancelled too).
 * - `may-have-charged`: it was delivered, is being sent (`inflight`), or one of its requests may have
 *   reached the service (`maybeAppliedAt`); nothing is written.
 * - `not-charged`: it already ended `expired` or `cancelled` with nothing that may have reached the
 *   service; nothing is written.
 * - `not-found`: no confirmation of this order here.
 *
 * @example
 * ```ts
 * const outcome = planWithdraw(confirm, now);
 * if (outcome.outcome === 'cancelled') await db.update(outcome.job);
 * ```
 */
export function planWithdraw(confirm: ConfirmJob | null, now: EpochMs): WithdrawOutcome {
  if (confirm === null) return { outcome: 'not-found', job: null };
  if (confirm.maybeAppliedAt !== null) return { outcome: 'may-have-charged', job: confirm };
  // Recorded in shadow mode, never sent: cancelled like a pending one, so ending shadow mode cannot send it.
  if (isShadowRecorded(confirm)) {
    const lastError = 'cancelled: consent was withdrawn while it was recorded in shadow mode; never sent';
    return {
      outcome: 'cancelled',
      job: { ...confirm, updatedAt: Math.max(confirm.updatedAt, now), lastError },
    };
  }
  switch (confirm.state) {
    case 'pending':
    case 'dead':
      return {
        outcome: 'cancelled',
        job: cancelUnsentConfirm(confirm, now, 'cancelled: consent was withdrawn before it was charged'),
      };
    case 'expired':
    case 'cancelled':
      return { outcome: 'not-charged', job: confirm };
    case 'inflight':
    case 'delivered':
    // A refund's state only; were a confirm ever in it, the safe answer writes nothing.
    case 'unmatched':
      return { outcome: 'may-have-charged', job: confirm };
  }
}
