/**
 * Conformance tests: what the one wait rule (`queue/wait-rule.ts`) asks of a store. A retry capped at a
 * job's last chance is claimable from then; a pause finds the earliest deadline it holds back with
 * `listJobs({ states: ['pending'], limit: 1 })` (most urgent first); a job past its deadline is claimed
 * ahead of the rest once its account is not left out, and recorded `expired`, never left `pending`.
 */
import { describe, expect } from 'vitest';
import type { Job } from '../../queue/job-types.ts';
import { capWait, DEFAULT_WAIT_TIMING, isOverdue, lastChanceAt } from '../../queue/wait-rule.ts';
import { HOUR, LEASE_MS, type Suite } from './suite.ts';

export function describeWaits(s: Suite): void {
  const { enqueue, claimAll, claimOne, test } = s;
  /** An order clicked `hoursAgo` hours ago (its deadline that much nearer). */
  const clickedAgo = (orderId: string, hoursAgo: number, account: string | null = null) =>
    enqueue(orderId, {
      account,
      click: { token: `tok_${orderId}_AbC-9`, clickedAt: s.clock.now() - hoursAgo * HOUR },
    });

  describe('waits answer to the deadline', () => {
    test('a retry capped at the last chance comes due there, and a claim a poll later takes it before the deadline', async () => {
      await clickedAgo('ord_w1', 7 * 24 - 3); // deadline in an hour (the suite's margin is 2 h)
      const job = await claimOne();
      const now = s.clock.now();
      const next = capWait(job, now + 30 * 24 * HOUR, DEFAULT_WAIT_TIMING, now);
      expect(next).toEqual({ at: lastChanceAt(job, DEFAULT_WAIT_TIMING), lastChance: true });
      const at = next?.at as number;
      expect(await s.outbox.retry(job, { now, nextAttemptAt: at, error: 'HTTP 503' })).toBe(true);
      s.clock.set(at - 1);
      expect(await claimAll()).toEqual([]);
      s.clock.set(at + DEFAULT_WAIT_TIMING.claimLatencyMs);
      const [retaken] = await claimAll();
      expect(retaken?.id).toBe(job.id);
      expect(s.clock.now()).toBeLessThan(retaken?.deadline as number);
    });

    test(
      'the pending job with the nearest deadline comes first from listJobs, of everyone and of one account',
      async () => {
        await clickedAgo('ord_far', 1, 'acct_a');
        await clickedAgo('ord_near_b', 100, 'acct_b');
        await clickedAgo('ord_near_a', 50, 'acct_a');
        const [first] = await s.outbox.listJobs({ states: ['pending'], limit: 1 });
        expect(first?.orderId).toBe('ord_near_b');
        const [ofA] = await s.outbox.listJobs({ states: ['pending'], limit: 1, account: 'acct_a' });
        expect(ofA?.orderId).toBe('ord_near_a');
      },
      'listJobs',
    );

    test(
      'a job past its deadline is claimed ahead of every other once its account is not left out, and ends expired',
      async () => {
        await clickedAgo('ord_fresh', 1, 'acct_a');
        const overdue = await clickedAgo('ord_overdue', 7 * 24 - 1, 'acct_b'); // deadline an hour ago
        expect(isOverdue(overdue, s.clock.now())).toBe(true);
        // While acct_b is paused, claims leave it out; the overdue job waits, pending.
        const others = await s.outbox.claim({
          now: s.clock.now(),
          limit: 10,
          leaseMs: LEASE_MS,
          excludeAccounts: ['acct_b'],
        });
        expect(others.map((job) => job.orderId)).toEqual(['ord_fresh']);
        expect(await s.stateOf(overdue.id)).toBe('pending');
        // The pause is up (no pause outlives a last chance): the overdue job comes first.
        const [claimed] = await claimAll(1);
        expect(claimed?.orderId).toBe('ord_overdue');
        const expired = { now: s.clock.now(), state: 'expired' as const, reason: 'deadline passed' };
        expect(await s.outbox.fail(claimed as Job, expired)).toBe(true);
        expect(await s.stateOf(overdue.id)).toBe('expired');
      },
      'fairClaims',
    );
  });
}
