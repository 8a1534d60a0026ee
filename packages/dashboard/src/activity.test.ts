import { describe, expect, it } from 'vitest';
import { ACTIVITY_BUCKET_MS, ACTIVITY_BUCKETS, createActivity } from './activity.ts';

const counts = (delivered: number, dead = 0, expired = 0) => ({
  pending: 0,
  inflight: 0,
  delivered,
  dead,
  expired,
  cancelled: 0,
  unmatched: 0,
});

describe('the activity series', () => {
  it('puts the growth of delivered and of dead plus expired between two reads in the minute of the later one', () => {
    const activity = createActivity();
    const t0 = 100 * ACTIVITY_BUCKET_MS;
    activity.record(t0 + 1_000, counts(10, 2));
    activity.record(t0 + 30_000, counts(14, 3));
    activity.record(t0 + 65_000, counts(20, 3, 1));
    const { buckets } = activity.series(t0 + 65_000);
    expect(buckets).toHaveLength(ACTIVITY_BUCKETS);
    expect(buckets.at(-2)).toEqual({ at: t0, delivered: 4, failed: 1, watched: true });
    expect(buckets.at(-1)).toEqual({ at: t0 + ACTIVITY_BUCKET_MS, delivered: 6, failed: 1, watched: true });
    expect(buckets.at(-3)).toMatchObject({ delivered: 0, watched: false });
  });

  it('counts a prune, a replay or a purge as nothing, and a gap of more than two minutes as unwatched', () => {
    const activity = createActivity();
    const t0 = 100 * ACTIVITY_BUCKET_MS;
    activity.record(t0, counts(50, 10));
    activity.record(t0 + 10_000, counts(20, 4)); // pruned and purged
    activity.record(t0 + 10 * ACTIVITY_BUCKET_MS, counts(90, 9)); // nobody watched in between
    const { buckets } = activity.series(t0 + 10 * ACTIVITY_BUCKET_MS);
    expect(buckets.at(-11)).toEqual({ at: t0, delivered: 0, failed: 0, watched: true });
    expect(buckets.slice(-10).every((b) => !b.watched)).toBe(true);
  });

  it('keeps an hour: older minutes are dropped', () => {
    const activity = createActivity();
    for (let m = 0; m < 3 * ACTIVITY_BUCKETS; m++) activity.record(m * ACTIVITY_BUCKET_MS, counts(m));
    const { buckets } = activity.series((3 * ACTIVITY_BUCKETS - 1) * ACTIVITY_BUCKET_MS);
    expect(buckets.every((b) => b.watched && b.delivered === 1)).toBe(true);
  });
});
