/**
 * The one cancel step of a confirmation never charged, shared by a refund (`planRefund`) and a consent
 * withdrawal (`planWithdraw`): the job they persist, so both write the same thing.
 */
import type { EpochMs } from '../policy.ts';
import type { ConfirmJob } from './job-types.ts';

/**
 * `confirm` (`pending`, or `dead` with nothing that may have reached the service) as `cancelled` at `now`
 * (never before its last change): never sent again, its lease dropped, `lastError` saying why (`reason`;
 * the attempt history, where a store keeps one, still says why a dead one had died).
 *
 * @example
 * ```ts
 * await db.update(cancelUnsentConfirm(confirm, now, 'cancelled: consent was withdrawn'));
 * ```
 */
export function cancelUnsentConfirm(confirm: ConfirmJob, now: EpochMs, reason: string): ConfirmJob {
  return {
    ...confirm,
    state: 'cancelled',
    updatedAt: Math.max(confirm.updatedAt, now),
    lease: null,
    lastError: reason,
  };
}
