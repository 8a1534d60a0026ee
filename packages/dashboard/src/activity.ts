/**
 * Delivered and failed jobs over time, derived from the outbox's counts by state: each overview reads
 * `stats()` anyway, and the growth of `delivered` (and of `dead` plus `expired`) between two reads is
 * what was delivered (failed) in between, put in the minute of the later read. No store schema and no
 * extra read: the series covers the minutes some page was open (a minute without a read in it, or after
 * a gap of more than two minutes, is "not watched"), and a prune (fewer delivered jobs) or a replay or
 * purge (fewer dead jobs) between two reads counts as nothing rather than as negative.
 */
import type { OutboxStats } from '@postback/core';

/** Width of one bar of the activity chart. @defaultValue 60_000 (1 min) */
export const ACTIVITY_BUCKET_MS = 60_000;

/** How many bars the activity chart shows (the last hour). @defaultValue 60 */
export const ACTIVITY_BUCKETS = 60;

/** One minute of the activity chart. */
export interface ActivityBucket {
  /** Start of the minute. */
  at: number;
  delivered: number;
  /** Jobs that became dead or expired. */
  failed: number;
  /** Whether two reads close enough apart measured this minute (false: nobody watched, counts unknown). */
  watched: boolean;
}

/** The chart's data: one bucket per minute, oldest first. */
export interface ActivitySeries {
  bucketMs: number;
  buckets: ActivityBucket[];
}

interface Sample {
  at: number;
  delivered: number;
  failed: number;
}

/** The series kept by one dashboard. */
export interface Activity {
  /** Records the counts read at `now`. */
  record(now: number, counts: OutboxStats['counts']): void;
  /** The last {@link ACTIVITY_BUCKETS} minutes up to `now`. */
  series(now: number): ActivitySeries;
}

/**
 * Creates an empty series.
 *
 * @example
 * ```ts
 * const activity = createActivity();
 * activity.record(Date.now(), (await outbox.stats(Date.now())).counts);
 * ```
 */
export function createActivity(): Activity {
  const minutes = new Map<number, { delivered: number; failed: number }>();
  let last: Sample | null = null;
  const minuteOf = (at: number) => Math.floor(at / ACTIVITY_BUCKET_MS) * ACTIVITY_BUCKET_MS;

  return {
    record(now, counts) {
      const sample = { at: now, delivered: counts.delivered, failed: counts.dead + counts.expired };
      if (last !== null && now < last.at) return; // a clock that went back: keep the later sample
      if (last !== null && now - last.at <= 2 * ACTIVITY_BUCKET_MS) {
        const key = minuteOf(now);
        const minute = minutes.get(key) ?? { delivered: 0, failed: 0 };
        minute.delivered += Math.max(0, sample.delivered - last.delivered);
        minute.failed += Math.max(0, sample.failed - last.failed);
        minutes.set(key, minute);
      }
      last = sample;
      const oldest = minuteOf(now) - (ACTIVITY_BUCKETS - 1) * ACTIVITY_BUCKET_MS;
      for (const key of minutes.keys()) if (key < oldest) minutes.delete(key);
    },
    series(now) {
      const newest = minuteOf(now);
      const buckets: ActivityBucket[] = [];
      for (let i = ACTIVITY_BUCKETS - 1; i >= 0; i--) {
        const at = newest - i * ACTIVITY_BUCKET_MS;
        const minute = minutes.get(at);
        buckets.push({
          at,
          delivered: minute?.delivered ?? 0,
          failed: minute?.failed ?? 0,
          watched: minute !== undefined,
        });
      }
      return { bucketMs: ACTIVITY_BUCKET_MS, buckets };
    },
  };
}
