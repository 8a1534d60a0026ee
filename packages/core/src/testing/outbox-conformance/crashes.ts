/** Conformance tests: a worker that dies holding a lease loses nothing and charges nothing twice. */
import { describe, expect } from 'vitest';
import type { ConfirmJob, Job, RefundJob } from '../../queue/job-types.ts';
import { LEASE_MS, type Suite } from './suite.ts';

export function describeCrashes(s: Suite): void {
  const { enqueue, claimAll, claimOne, has, test } = s;
  describe('crashes', () => {
    test('a job claimed by a worker that died is delivered exactly once after its lease runs out', async () => {
      await enqueue('ord_1');
      const dead = await claimOne(); // worker A claims, then crashes before any transition
      s.clock.advance(LEASE_MS);
      const retaken = await claimOne(); // worker B
      expect(retaken).toMatchObject({
        orderId: 'ord_1',
        clickToken: (dead as ConfirmJob).clickToken,
        valueMicros: 12_340_000,
      });
      expect(await s.outbox.complete(retaken, { now: s.clock.now(), campaignId: 'cmp_1' })).toBe(true);
      s.clock.advance(LEASE_MS * 10);
      expect(await claimAll()).toEqual([]);
      expect(await s.outbox.complete(dead, { now: s.clock.now(), campaignId: 'cmp_1' })).toBe(false);
      if (has('lookup')) {
        const jobs = await s.outbox.getByOrder('ord_1');
        expect(jobs).toHaveLength(1);
        expect(jobs[0]).toMatchObject({ state: 'delivered', attempts: 2 });
      }
    });

    test('a refund waiting behind a crashed worker’s confirm is sent only after the retaken confirm is delivered', async () => {
      await enqueue('ord_1');
      await claimOne(); // crashes
      const { job: refund } = (await s.outbox.refund({ orderId: 'ord_1' })) as { job: RefundJob };
      s.clock.advance(LEASE_MS);
      const retaken = await claimAll();
      expect(retaken.map((j) => j.kind)).toEqual(['confirm']);
      await s.outbox.complete(retaken[0] as Job, { now: s.clock.now(), campaignId: 'cmp_3' });
      const [sent] = await claimAll();
      expect(sent).toMatchObject({ id: refund.id, campaignId: 'cmp_3' });
    });
  });
}
