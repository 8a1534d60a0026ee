/** Conformance tests: complete, retry, fail, release and extendLease apply only under the lease they were given. */
import { describe, expect } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import { completeJob } from '../../queue/jobs.ts';
import { LEASE_MS, type Suite } from './suite.ts';

export function describeTransitions(s: Suite): void {
  const { enqueue, claimAll, claimOne, deliver, killConfirm, has, test } = s;
  describe('transitions', () => {
    test('complete records the delivery and the campaign the service returned', async () => {
      const job = await enqueue('ord_1');
      const claimed = await claimOne();
      s.clock.advance(250);
      expect(await s.outbox.complete(claimed, { now: s.clock.now(), campaignId: 'cmp_42' })).toBe(true);
      s.clock.advance(LEASE_MS * 2);
      expect(await claimAll()).toEqual([]);
      if (has('lookup')) {
        expect(await s.outbox.get(job.id)).toMatchObject({
          state: 'delivered',
          deliveredAt: s.clock.now() - LEASE_MS * 2,
          campaignId: 'cmp_42',
          lease: null,
        });
      }
    });

    test("complete stores exactly the job core's completeJob computes, after a failed attempt too", async () => {
      const job = await enqueue('ord_1');
      const first = await claimOne();
      expect(
        await s.outbox.retry(first, { now: s.clock.now(), nextAttemptAt: s.clock.now(), error: 'HTTP 502' }),
      ).toBe(true);
      s.clock.advance(10);
      const second = await claimOne();
      expect(second.attempts).toBe(2);
      if (has('retryError')) expect(second.lastError).toBe('HTTP 502');
      s.clock.advance(250);
      const result = { now: s.clock.now(), campaignId: 'cmp_42' };
      expect(await s.outbox.complete(second, result)).toBe(true);
      if (has('lookup')) expect(await s.outbox.get(job.id)).toEqual(completeJob(second, result));
    });

    test("a refund's complete keeps the campaign it was sent with, whatever the response names", async () => {
      const confirm = await deliver('ord_1', 'cmp_7');
      const refund = await s.outbox.refund({ orderId: confirm.orderId });
      expect(refund.outcome).toBe('enqueued');
      const claimed = await claimOne();
      expect(claimed).toMatchObject({ kind: 'refund', campaignId: 'cmp_7' });
      const result = { now: s.clock.now(), campaignId: 'cmp_other' };
      expect(await s.outbox.complete(claimed, result)).toBe(true);
      if (has('lookup')) {
        expect(await s.outbox.get(claimed.id)).toEqual(completeJob(claimed, result));
        expect(await s.outbox.get(claimed.id)).toMatchObject({ campaignId: 'cmp_7' });
      }
    });

    test('refuses transitions of a job that was never claimed', async () => {
      const job = await enqueue('ord_1');
      const now = s.clock.now();
      expect(await s.outbox.complete(job, { now, campaignId: 'cmp_1' })).toBe(false);
      expect(await s.outbox.fail(job, { now, state: 'dead', reason: 'x' })).toBe(false);
      expect(await claimAll()).toHaveLength(1);
    });

    test('uses a lease once: a transition after a successful one is refused', async () => {
      await enqueue('ord_1');
      const claimed = await claimOne();
      expect(
        await s.outbox.retry(claimed, {
          now: s.clock.now(),
          nextAttemptAt: s.clock.now(),
          error: 'HTTP 502',
        }),
      ).toBe(true);
      expect(await s.outbox.complete(claimed, { now: s.clock.now(), campaignId: 'cmp_1' })).toBe(false);
      expect(
        await s.outbox.retry(claimed, { now: s.clock.now(), nextAttemptAt: s.clock.now(), error: 'again' }),
      ).toBe(false);
    });

    test(
      'retry without countAttempt gives back the attempt counted at claim',
      async () => {
        await enqueue('ord_1');
        const claimed = await claimOne();
        const now = s.clock.now();
        expect(
          await s.outbox.retry(claimed, {
            now,
            nextAttemptAt: now,
            error: 'paused: 401',
            countAttempt: false,
          }),
        ).toBe(true);
        const again = await claimOne();
        expect(again.attempts).toBe(1);
      },
      'uncountedAttempts',
    );

    test('fail dead keeps the reason; a dead job is not claimed again', async () => {
      const job = await killConfirm('ord_1', 'Ad service answered 404: unknown click token');
      s.clock.advance(DAY_MS);
      expect(await claimAll()).toEqual([]);
      if (has('lookup'))
        expect(await s.outbox.get(job.id)).toMatchObject({
          state: 'dead',
          lastError: 'Ad service answered 404: unknown click token',
        });
    });

    test('fail expired is final: not claimed, not listed as dead, not replayed', async () => {
      const job = await enqueue('ord_1');
      const claimed = await claimOne();
      expect(
        await s.outbox.fail(claimed, { now: s.clock.now(), state: 'expired', reason: 'deadline passed' }),
      ).toBe(true);
      expect(await s.outbox.replay({ ids: [job.id] }, s.clock.now())).toBe(0);
      expect(await s.outbox.replay({ all: true }, s.clock.now())).toBe(0);
      expect(await claimAll()).toEqual([]);
      if (has('listDead')) expect(await s.outbox.listDead()).toEqual([]);
      if (has('lookup'))
        expect(await s.outbox.get(job.id)).toMatchObject({ state: 'expired', lastError: 'deadline passed' });
    });

    test('release gives claimed jobs back, due now, without counting the attempt', async () => {
      await enqueue('ord_1');
      await enqueue('ord_2');
      const claimed = await claimAll();
      s.clock.advance(1_000);
      await s.outbox.release(claimed, s.clock.now());
      const again = await claimAll();
      expect(again.map((j) => j.id).sort()).toEqual(claimed.map((j) => j.id).sort());
      if (has('uncountedAttempts')) expect(again.every((j) => j.attempts === 1)).toBe(true);
    });

    test('extendLease keeps a long send from being claimed by another worker', async () => {
      await enqueue('ord_1');
      const claimed = await claimOne();
      s.clock.advance(LEASE_MS - 1_000);
      expect(await s.outbox.extendLease(claimed, { now: s.clock.now(), leaseMs: LEASE_MS })).toBe(true);
      s.clock.advance(LEASE_MS - 1);
      expect(await claimAll()).toEqual([]);
      expect(await s.outbox.complete(claimed, { now: s.clock.now(), campaignId: 'cmp_1' })).toBe(true);
    });

    test('a lease extension expires too: the job becomes claimable leaseMs after the last extension', async () => {
      await enqueue('ord_1');
      const claimed = await claimOne();
      s.clock.advance(10_000);
      expect(await s.outbox.extendLease(claimed, { now: s.clock.now(), leaseMs: 5_000 })).toBe(true);
      s.clock.advance(5_000);
      expect((await claimAll()).map((j) => j.id)).toEqual([claimed.id]);
    });
  });
}
