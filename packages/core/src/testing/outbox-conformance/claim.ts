/** Conformance tests: claims hand out due jobs under a lease, never one job to two claimants. */
import { describe, expect } from 'vitest';
import { LEASE_MS, type Suite } from './suite.ts';

export function describeClaim(s: Suite): void {
  const { enqueue, claimAll, claimOne, stateOf, has, test } = s;
  describe('claim', () => {
    test('marks a claimed job inflight with a lease of leaseMs from now and counts the attempt', async () => {
      const job = await enqueue('ord_1');
      const [claimed] = await claimAll(10, 45_000);
      expect(claimed).toMatchObject({ id: job.id, state: 'inflight', attempts: 1 });
      expect(claimed?.lease?.expiresAt).toBe(s.clock.now() + 45_000);
      expect(claimed?.lease?.token).toEqual(expect.any(String));
      if (has('lookup')) expect(await stateOf(job.id)).toBe('inflight');
    });

    test('does not hand out a job again while its lease holds', async () => {
      await enqueue('ord_1');
      await claimOne();
      s.clock.advance(LEASE_MS - 1);
      expect(await claimAll()).toEqual([]);
    });

    test('claims only due jobs: a job retried into the future waits for its nextAttemptAt', async () => {
      await enqueue('ord_1');
      const claimed = await claimOne();
      const at = s.clock.now() + 10_000;
      expect(
        await s.outbox.retry(claimed, { now: s.clock.now(), nextAttemptAt: at, error: 'HTTP 503' }),
      ).toBe(true);
      s.clock.advance(9_999);
      expect(await claimAll()).toEqual([]);
      s.clock.advance(1);
      const [again] = await claimAll();
      expect(again).toMatchObject({ id: claimed.id, attempts: 2 });
      if (has('retryError')) expect(again?.lastError).toBe('HTTP 503');
    });

    test('returns at most limit jobs per claim', async () => {
      for (let i = 0; i < 5; i++) await enqueue(`ord_${i}`);
      expect(await claimAll(2)).toHaveLength(2);
      expect(await claimAll(2)).toHaveLength(2);
      expect(await claimAll(2)).toHaveLength(1);
      expect(await claimAll(2)).toHaveLength(0);
    });

    test('never gives the same job to two concurrent claims', async () => {
      const orders = Array.from({ length: 24 }, (_, i) => `ord_${i}`);
      for (const orderId of orders) await enqueue(orderId);
      const batches = await Promise.all([claimAll(10), claimAll(10), claimAll(10), claimAll(10)]);
      const ids = batches.flat().map((job) => job.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toHaveLength(24);
    });

    test('hands a job whose lease ran out to a new claimant and refuses every transition of the old lease', async () => {
      const job = await enqueue('ord_1');
      const old = await claimOne();
      s.clock.advance(LEASE_MS);
      const fresh = await claimOne();
      expect(fresh.id).toBe(job.id);
      expect(fresh.attempts).toBe(2);
      expect(fresh.lease?.token).not.toBe(old.lease?.token);
      const now = s.clock.now();
      expect(await s.outbox.complete(old, { now, campaignId: 'cmp_1' })).toBe(false);
      expect(await s.outbox.retry(old, { now, nextAttemptAt: now, error: 'x' })).toBe(false);
      expect(await s.outbox.fail(old, { now, state: 'dead', reason: 'x' })).toBe(false);
      expect(await s.outbox.extendLease(old, { now, leaseMs: LEASE_MS })).toBe(false);
      await s.outbox.release([old], now);
      expect(await claimAll()).toEqual([]); // the release with the stale lease changed nothing
      expect(await s.outbox.complete(fresh, { now, campaignId: 'cmp_1' })).toBe(true);
      if (has('lookup')) expect(await stateOf(job.id)).toBe('delivered');
    });
  });
}
