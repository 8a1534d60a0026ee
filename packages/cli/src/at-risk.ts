/**
 * Which jobs the CLI calls at risk: open jobs (pending, inflight) whose deadline is still ahead and within
 * the window. An open job whose deadline has passed is not at risk any more: it can no longer be sent (a
 * worker's next claim marks it expired), so it is counted apart, as past its deadline. A store's
 * `stats().atRisk` counts both (`deadline <= now + within`); one extra deadline bucket at 0 tells them apart.
 */
import type { Outbox, OutboxStats } from '@postback/core';

/** A store's stats with `atRisk` counting only deadlines still ahead, and the open jobs past theirs. */
export interface QueueStats extends OutboxStats {
  /** Open jobs whose deadline is ahead, within `withinMs`. */
  atRisk: { count: number; withinMs: number };
  /** Open jobs whose deadline has passed: lost, never sent; expired at a worker's next claim. */
  pastDeadline: number;
}

/**
 * The outbox's stats at `now`, at risk counted as the CLI shows it.
 *
 * @example
 * ```ts
 * const { atRisk, pastDeadline } = await queueStats(outbox, Date.now(), 86_400_000);
 * ```
 */
export async function queueStats(outbox: Outbox, now: number, atRiskWithinMs?: number): Promise<QueueStats> {
  const stats = await outbox.stats(now, {
    ...(atRiskWithinMs === undefined ? {} : { atRiskWithinMs }),
    deadlineBucketsMs: [0],
  });
  const pastDeadline = stats.deadlineBuckets[0]?.count ?? 0;
  return {
    ...stats,
    atRisk: { count: Math.max(0, stats.atRisk.count - pastDeadline), withinMs: stats.atRisk.withinMs },
    deadlineBuckets: [],
    pastDeadline,
  };
}
