/**
 * The mark of a job recorded in shadow mode, apart from the rest of shadow mode's rules
 * (`shadow-rules.ts`) so the refund and withdrawal rules can read it without an import cycle.
 */
import type { Job } from './job-types.ts';

/**
 * The `lastError` of a job recorded in shadow mode (state `cancelled`): the one mark of "recorded, not
 * sent, waiting for the end of shadow mode". Any other outcome (a refund, a withdrawal, the end of shadow
 * mode) replaces it. Stores keep it in rows and in SQL index predicates: it never changes.
 */
export const SHADOW_RECORDED_REASON = 'shadow mode: recorded as it would be sent; not sent';

/**
 * How the `lastError` of a recorded job that the end of shadow mode dropped begins (state `cancelled`):
 * the pixel billed it, so it was never sent.
 */
export const SHADOW_DROPPED_PREFIX = 'shadow end: not sent';

/**
 * Whether a job is one the end of shadow mode dropped (recorded, then never sent: the pixel billed it).
 *
 * @example
 * ```ts
 * const dropped = jobs.filter(isShadowDropped).length;
 * ```
 */
export function isShadowDropped(job: Pick<Job, 'state' | 'lastError'>): boolean {
  return job.state === 'cancelled' && (job.lastError?.startsWith(SHADOW_DROPPED_PREFIX) ?? false);
}

/**
 * Whether a job is recorded in shadow mode and waits for the decision of `shadow end`.
 *
 * @example
 * ```ts
 * const recorded = (await outbox.listJobs({ states: ['cancelled'] })).filter(isShadowRecorded);
 * ```
 */
export function isShadowRecorded(job: Pick<Job, 'state' | 'lastError'>): boolean {
  return job.state === 'cancelled' && job.lastError === SHADOW_RECORDED_REASON;
}
