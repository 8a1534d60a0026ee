/** Conformance tests: what a confirm stores, and that a second confirm of an order is a no-op. */
import { describe, expect } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import type { Job } from '../../queue/job-types.ts';
import { HOUR, type Suite } from './suite.ts';

export function describeEnqueue(s: Suite): void {
  const { confirmInput, claimAll, deliver, has, test } = s;
  describe('enqueue', () => {
    test('stores a confirm as pending, due now, no attempts, deadline = click + window − margin', async () => {
      const clickedAt = s.clock.now() - 3 * HOUR;
      const { created, job } = await s.outbox.confirm(
        confirmInput('ord_1', { click: { token: 'tok_A-b_c', clickedAt } }),
      );
      expect(created).toBe(true);
      expect(job).toMatchObject({
        kind: 'confirm',
        orderId: 'ord_1',
        state: 'pending',
        attempts: 0,
        nextAttemptAt: s.clock.now(),
        deadline: clickedAt + 7 * DAY_MS - 2 * HOUR,
        clickToken: 'tok_A-b_c',
        clickedAt,
        valueMicros: 12_340_000,
        lease: null,
        deliveredAt: null,
        campaignId: null,
        maybeAppliedAt: null,
        lastError: null,
      });
      expect(typeof job.id).toBe('string');
      if (has('lookup')) expect(await s.outbox.get(job.id)).toEqual(job);
    });

    test('treats a second confirm of the same order as a no-op returning the stored job', async () => {
      const first = await s.outbox.confirm(confirmInput('ord_1', { valueMicros: 1_000_000 }));
      s.clock.advance(1_000);
      const second = await s.outbox.confirm(confirmInput('ord_1', { valueMicros: 2_000_000 }));
      expect(second.created).toBe(false);
      expect(second.job.id).toBe(first.job.id);
      expect(second.job.valueMicros).toBe(1_000_000);
      const claimed = await claimAll();
      expect(claimed.map((j) => j.orderId)).toEqual(['ord_1']);
    });

    test('stays a no-op after delivery: confirming a delivered order again sends nothing more', async () => {
      await deliver('ord_1');
      const again = await s.outbox.confirm(confirmInput('ord_1'));
      expect(again.created).toBe(false);
      expect(again.job.state).toBe('delivered');
      s.clock.advance(HOUR);
      expect(await claimAll()).toEqual([]);
    });

    test('stores a confirm whose click is already past its deadline, so the dispatcher can expire it visibly', async () => {
      const { job } = await s.outbox.confirm(
        confirmInput('ord_old', { click: { token: 'tok_old', clickedAt: s.clock.now() - 8 * DAY_MS } }),
      );
      expect(job.deadline).toBeLessThan(s.clock.now());
      const [claimed] = await claimAll();
      expect(claimed?.id).toBe(job.id);
      expect(
        await s.outbox.fail(claimed as Job, {
          now: s.clock.now(),
          state: 'expired',
          reason: 'deadline passed',
        }),
      ).toBe(true);
      expect(await claimAll()).toEqual([]);
    });
  });
}
