/**
 * Clock skew between the host that stamped a job (the capture host: its click time and creation time)
 * and this worker. A deadline is the click time plus the window less the safety margin, counted on the
 * capture host's clock: if that clock runs ahead, the deadline lies as far past the service's real window
 * end, and the worker would keep sending after the window closed. The worker sees skew only as a stamp
 * in its own future: it then moves that job's deadline back by what it sees (never later), for this
 * delivery, and warns once per job.
 *
 * The limit: a stamp shows skew only while it is still in the worker's future, and a SQL store claims a
 * new job only once the worker's clock has passed its creation stamp (it is due "now" on the stamping
 * host's clock): there the worker sees only what the click time reveals (the outbox lets it lie at most
 * 5 minutes past the creation), and a fast enqueuing host shows as a delay before the first send. SQS
 * hands a message over at once, so the whole skew shows. What is seen is remembered by this worker only
 * (nothing is stored): the warning is what lets an operator fix the clock.
 */
import type { EpochMs } from '../../policy.ts';
import type { Job } from '../job-types.ts';
import type { Emit } from './events.ts';

/**
 * How far ahead of the worker's clock a job's stamps may be before it is read as skew (hosts kept by NTP
 * agree to well within it; a job created a moment ago on another host must not warn).
 * @defaultValue 2_000
 */
export const CLOCK_SKEW_TOLERANCE_MS = 2_000;

/** Most jobs whose skew a worker remembers (the oldest are forgotten first). @defaultValue 10_000 */
export const SKEW_MEMORY = 10_000;

/** What the worker reads of a job's stamps: how far the latest lies in its future, and which it is. */
export interface SkewReading {
  /** Milliseconds the stamp lies ahead of the worker's clock (0 within the tolerance). */
  skewMs: number;
  stamp: 'clickedAt' | 'createdAt';
}

/** How far the latest of a job's stamps (`createdAt`, and a confirm's `clickedAt`) lies in the worker's future. */
export function readSkew(job: Job, now: EpochMs, toleranceMs: number = CLOCK_SKEW_TOLERANCE_MS): SkewReading {
  const clicked = job.kind === 'confirm' ? job.clickedAt : Number.NEGATIVE_INFINITY;
  const stamp = clicked > job.createdAt ? 'clickedAt' : 'createdAt';
  const ahead = Math.max(clicked, job.createdAt) - now;
  return { skewMs: ahead > toleranceMs ? ahead : 0, stamp };
}

/** A job's deadline moved back by `skewMs` (never later; a refund waiting for its deadline has none). */
export function deadlineWithSkew(deadline: EpochMs | null, skewMs: number): EpochMs | null {
  return deadline === null ? null : deadline - Math.max(0, skewMs);
}

/**
 * Creates the skew check of a Dispatcher: given a held job, returns the deadline to send it by (its own
 * less the largest skew seen on it by this worker), and emits `clock-skew` the first time it sees skew on
 * that job. The skew seen is remembered for the job's later attempts on this worker (its stamps will have
 * passed by then), for the last {@link SKEW_MEMORY} jobs.
 */
export function createSkewCheck(ctx: { now: () => EpochMs; emit: Emit }): (job: Job) => EpochMs | null {
  const seen = new Map<string, number>();
  return (job) => {
    const reading = readSkew(job, ctx.now());
    const before = seen.get(job.id) ?? 0;
    const skewMs = Math.max(before, reading.skewMs);
    if (skewMs === 0) return job.deadline;
    const deadline = deadlineWithSkew(job.deadline, skewMs);
    if (skewMs > before) {
      seen.delete(job.id);
      if (seen.size >= SKEW_MEMORY) seen.delete(seen.keys().next().value as string);
      seen.set(job.id, skewMs);
      // Once per job: a later look that sees more moves the deadline further back, silently.
      if (before === 0) ctx.emit('clock-skew', { job, skewMs, stamp: reading.stamp, deadline });
    }
    return deadline;
  };
}
