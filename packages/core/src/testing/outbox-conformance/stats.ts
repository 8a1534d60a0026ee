/** Conformance tests: the counts, oldest pending job and nearest deadline of `stats`. */
import { describe, expect } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import { HOUR, type Suite } from './suite.ts';

export function describeStats(s: Suite): void {
  const { enqueue, claimOne, deliver, killConfirm, test } = s;
  describe('stats', () => {
    test(
      'an empty outbox has zero counts, no oldest pending job and no nearest deadline',
      async () => {
        const stats = await s.outbox.stats(s.clock.now());
        expect(stats).toEqual({
          counts: { pending: 0, inflight: 0, delivered: 0, dead: 0, expired: 0, cancelled: 0, unmatched: 0 },
          oldestPendingAt: null,
          nearestDeadline: null,
          atRisk: { count: 0, withinMs: DAY_MS },
          deadlineBuckets: [],
          held: [],
        });
      },
      'exactStats',
    );

    test(
      'counts jobs by state',
      async () => {
        await deliver('ord_d');
        await killConfirm('ord_x');
        await enqueue('ord_i');
        await claimOne();
        await enqueue('ord_p1');
        await enqueue('ord_p2');
        const { counts } = await s.outbox.stats(s.clock.now());
        expect(counts).toEqual({
          pending: 2,
          inflight: 1,
          delivered: 1,
          dead: 1,
          expired: 0,
          cancelled: 0,
          unmatched: 0,
        });
      },
      'exactStats',
    );

    test(
      'reports the oldest pending job and the nearest deadline among pending and inflight jobs',
      async () => {
        const start = s.clock.now();
        await enqueue('ord_a', { click: { token: 'tok_a', clickedAt: start - 2 * DAY_MS } });
        s.clock.advance(1_000);
        const urgent = await enqueue('ord_b', { click: { token: 'tok_b', clickedAt: start - 5 * DAY_MS } });
        s.clock.advance(1_000);
        await enqueue('ord_c', { click: { token: 'tok_c', clickedAt: start - 6 * DAY_MS } });
        const stats = await s.outbox.stats(s.clock.now());
        expect(stats.oldestPendingAt).toBe(start);
        expect(stats.nearestDeadline).toEqual({
          id: expect.any(String),
          orderId: 'ord_c',
          kind: 'confirm',
          deadline: start - 6 * DAY_MS + 7 * DAY_MS - 2 * HOUR,
        });
        expect(urgent.deadline).toBeGreaterThan(stats.nearestDeadline?.deadline as number);
      },
      'exactStats',
    );
  });
}
