/**
 * Visibility timeouts: how a lease and a retry's backoff become SQS visibility. SQS caps a message's total
 * visibility at 12 hours from the moment it was received and rejects (does not trim) a longer request, so
 * every value here is cut to what is left of those 12 hours, minus a second of slack for clock skew.
 */
import type { EpochMs } from '@postback/core';

/** SQS's maximum visibility timeout, in seconds (12 hours). */
export const SQS_MAX_VISIBILITY_SECONDS = 43_200;

/** The visibility SQS still allows for a message received at `receivedAt`, in whole seconds (≥ 0). */
export function remainingVisibilitySeconds(now: EpochMs, receivedAt: EpochMs): number {
  const elapsed = Math.ceil(Math.max(0, now - receivedAt) / 1000);
  return Math.max(0, SQS_MAX_VISIBILITY_SECONDS - elapsed - 1);
}

/**
 * The visibility timeout that makes a message come back at a retry's `nextAttemptAt`, capped by the job's
 * deadline (it must come back in time to be expired) and by what is left of SQS's 12 hours.
 *
 * @example
 * ```ts
 * retryVisibilitySeconds({ now, nextAttemptAt: now + 90_000, deadline, receivedAt: now }); // 90
 * ```
 */
export function retryVisibilitySeconds(input: {
  now: EpochMs;
  nextAttemptAt: EpochMs;
  deadline: EpochMs | null;
  receivedAt: EpochMs;
}): number {
  const due = input.deadline === null ? input.nextAttemptAt : Math.min(input.nextAttemptAt, input.deadline);
  const wanted = Math.ceil(Math.max(0, due - input.now) / 1000);
  return Math.min(wanted, remainingVisibilitySeconds(input.now, input.receivedAt));
}

/**
 * The visibility timeout of a lease of `leaseMs` (rounded up to whole seconds, at least 1), capped by what
 * is left of SQS's 12 hours.
 *
 * @example
 * ```ts
 * leaseVisibilitySeconds(30_000, now, receivedAt); // 30
 * ```
 */
export function leaseVisibilitySeconds(leaseMs: number, now: EpochMs, receivedAt: EpochMs): number {
  const wanted = Math.max(1, Math.ceil(leaseMs / 1000));
  return Math.min(wanted, remainingVisibilitySeconds(now, receivedAt));
}
