/**
 * Conformance tests: jobs held for their campaign (`retry({ hold })`: the campaign is not on s2s), their
 * release (`releaseHeld`) and how `stats` reports them (`held`). A backend that cannot hold jobs
 * (`features.holds: false`) refuses a hold and releases nothing.
 */
import { describe, expect } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import type { Job } from '../../queue/job-types.ts';
import { HOUR, LEASE_MS, type Suite } from './suite.ts';

const NOT_S2S = 'Ad service answered 422: campaign cmp_pix is not on s2s: its conversion source is pixel';
const PROBE = 10 * 60_000;

export function describeHolds(s: Suite): void {
  const { enqueue, claimOne, claimAll, test } = s;

  /** Holds a claimed job for `campaignId` at the clock's time; its next probe `PROBE` later. */
  const hold = async (job: Job, campaignId: string | null = 'cmp_pix') => {
    const now = s.clock.now();
    const held = { now, nextAttemptAt: now + PROBE, error: NOT_S2S, hold: { campaignId } };
    expect(await s.outbox.retry(job, held)).toBe(true);
  };
  /** Enqueues and holds an order of `account`. */
  /** Enqueues and holds an order of `account`; returns its deadline. */
  const heldOrder = async (orderId: string, account: string | null, campaignId: string | null) => {
    await enqueue(orderId, { account, valueMicros: 5_000_000 });
    const [claimed] = await claimAll(1);
    expect(claimed?.orderId).toBe(orderId);
    await hold(claimed as Job, campaignId);
    return (claimed as Job).deadline;
  };

  describe('holds', () => {
    test(
      'a held job stays pending, its attempt uncounted, the first hold time kept across probes',
      async () => {
        const job = await enqueue('ord_h');
        const first = s.clock.now();
        await hold(await claimOne());
        let stored = (await s.outbox.get(job.id)) as Job;
        expect(stored).toMatchObject({
          state: 'pending',
          attempts: 0,
          heldAt: first,
          heldCampaignId: 'cmp_pix',
          lastError: NOT_S2S,
          nextAttemptAt: first + PROBE,
        });
        expect(await claimAll()).toEqual([]);
        s.clock.advance(PROBE);
        const probe = await claimOne();
        expect(probe.heldAt).toBe(first);
        await hold(probe, null);
        stored = (await s.outbox.get(job.id)) as Job;
        expect(stored).toMatchObject({ state: 'pending', attempts: 0, heldAt: first, heldCampaignId: null });
      },
      'holds',
      'lookup',
    );

    test(
      'any other outcome clears the held fields: delivered, retried, dead',
      async () => {
        const ids: string[] = [];
        for (const orderId of ['ord_c1', 'ord_c2', 'ord_c3']) {
          ids.push((await enqueue(orderId)).id);
          await hold(await claimOne());
        }
        s.clock.advance(PROBE);
        const claimed = await claimAll();
        expect(claimed.map((job) => job.heldAt)).toEqual([
          expect.any(Number),
          expect.any(Number),
          expect.any(Number),
        ]);
        const byOrder = new Map(claimed.map((job) => [job.orderId, job]));
        const now = s.clock.now();
        await s.outbox.complete(byOrder.get('ord_c1') as Job, { now, campaignId: 'cmp_pix' });
        await s.outbox.retry(byOrder.get('ord_c2') as Job, {
          now,
          nextAttemptAt: now + 1_000,
          error: 'HTTP 503',
        });
        await s.outbox.fail(byOrder.get('ord_c3') as Job, {
          now,
          state: 'dead',
          reason: 'HTTP 422: bad order',
        });
        for (const id of ids) {
          expect(await s.outbox.get(id)).toMatchObject({ heldAt: null, heldCampaignId: null });
        }
        expect((await s.outbox.stats(now)).held).toEqual([]);
      },
      'holds',
      'lookup',
    );

    test(
      'deadlines still rule: a held job past its deadline expires, and is no longer held',
      async () => {
        const clickedAt = s.clock.now() - 7 * DAY_MS + 3 * HOUR;
        const job = await enqueue('ord_late', { click: { token: 'tok_late_AbC', clickedAt } });
        const deadline = job.deadline as number;
        const claimed = await claimOne();
        const now = s.clock.now();
        const nextAttemptAt = Math.min(now + 2 * HOUR, deadline);
        const held = { now, nextAttemptAt, error: NOT_S2S, hold: { campaignId: 'cmp_pix' } };
        expect(await s.outbox.retry(claimed, held)).toBe(true);
        s.clock.set(deadline + 1);
        const retaken = await claimOne();
        expect(retaken.id).toBe(job.id);
        const reason = 'deadline passed before the job could be sent';
        expect(await s.outbox.fail(retaken, { now: s.clock.now(), state: 'expired', reason })).toBe(true);
        expect(await s.outbox.get(job.id)).toMatchObject({ state: 'expired', heldAt: null });
        expect((await s.outbox.stats(s.clock.now())).held).toEqual([]);
      },
      'holds',
      'lookup',
    );

    test(
      'releaseHeld makes the held jobs asked for due now, and only those; they stay held until their outcome',
      async () => {
        await heldOrder('ord_a1', 'shop_a', 'cmp_pix');
        await heldOrder('ord_a2', 'shop_a', null);
        await heldOrder('ord_a3', 'shop_a', 'cmp_other');
        await heldOrder('ord_b1', 'shop_b', 'cmp_pix');
        await heldOrder('ord_n1', null, 'cmp_pix');
        await enqueue('ord_plain', { account: 'shop_a' });
        const [plain] = await claimAll(1);
        const now = s.clock.now();
        await s.outbox.retry(plain as Job, { now, nextAttemptAt: now + HOUR, error: 'HTTP 503' });
        s.clock.advance(1_000);
        const at = s.clock.now();
        expect(await s.outbox.releaseHeld({ now: at, account: 'shop_a', campaignId: 'cmp_pix' })).toBe(1);
        expect(await s.outbox.releaseHeld({ now: at, account: 'shop_a', campaignId: null })).toBe(1);
        let due = await claimAll();
        expect(due.map((job) => job.orderId).sort()).toEqual(['ord_a1', 'ord_a2']);
        expect(due.every((job) => job.heldAt !== null)).toBe(true);
        // A hold does not count its attempt (SQS FIFO holds by a visibility change, which counts a receive).
        if (s.has('uncountedAttempts')) expect(due.every((job) => job.attempts === 1)).toBe(true);
        // Those two are inflight now: only pending held jobs are released (and counted).
        expect(await s.outbox.releaseHeld({ now: at, account: null })).toBe(1);
        expect((await claimAll()).map((job) => job.orderId)).toEqual(['ord_n1']);
        expect(await s.outbox.releaseHeld({ now: s.clock.now() })).toBe(2);
        due = await claimAll();
        expect(due.map((job) => job.orderId).sort()).toEqual(['ord_a3', 'ord_b1']);
      },
      'holds',
    );

    test(
      'a problem probed by one job: the others, held until their deadline, wait there unless the problem is released',
      async () => {
        const clickedAt = s.clock.now() - 2 * DAY_MS;
        const held: Job[] = [];
        for (const orderId of ['ord_q1', 'ord_q2', 'ord_q3']) {
          await enqueue(orderId, { account: 'shop_a', click: { token: `tok_${orderId}_AbC`, clickedAt } });
          held.push(...(await claimAll(1)));
        }
        await heldOrder('ord_other', 'shop_a', 'cmp_other');
        const now = s.clock.now();
        const [probe, ...waiting] = held as [Job, ...Job[]];
        await hold(probe);
        for (const job of waiting) {
          const until = {
            now,
            nextAttemptAt: job.deadline as number,
            error: NOT_S2S,
            hold: { campaignId: 'cmp_pix' },
          };
          expect(await s.outbox.retry(job, until)).toBe(true);
        }
        s.clock.advance(PROBE);
        // Only the probe (and the other problem's job) come back after the probe interval.
        const due = await claimAll();
        expect(due.map((job) => job.orderId).sort()).toEqual(['ord_other', 'ord_q1']);
        expect(
          await s.outbox.releaseHeld({ now: s.clock.now(), account: 'shop_a', campaignId: 'cmp_third' }),
        ).toBe(0);
        expect(await claimAll()).toEqual([]);
        // The probe was delivered: its problem is released, its waiting jobs due now, long before their deadline.
        expect(
          await s.outbox.releaseHeld({ now: s.clock.now(), account: 'shop_a', campaignId: 'cmp_pix' }),
        ).toBe(2);
        const released = await claimAll();
        expect(released.map((job) => job.orderId).sort()).toEqual(['ord_q2', 'ord_q3']);
        expect(released.every((job) => job.heldCampaignId === 'cmp_pix')).toBe(true);
      },
      'holds',
    );

    test(
      'stats name each held problem once: account, campaign, count, value, reason, since and earliest deadline',
      async () => {
        const start = s.clock.now();
        const first = await heldOrder('ord_p1', 'shop_a', 'cmp_pix');
        s.clock.advance(1_000);
        await heldOrder('ord_p2', 'shop_a', 'cmp_pix');
        const p3 = await heldOrder('ord_p3', 'shop_a', null);
        const p4 = await heldOrder('ord_p4', null, 'cmp_pix');
        await enqueue('ord_open');
        const stats = await s.outbox.stats(s.clock.now());
        expect(stats.held).toEqual([
          {
            account: 'shop_a',
            campaignId: 'cmp_pix',
            count: 2,
            valueMicros: 10_000_000,
            reason: NOT_S2S,
            since: start,
            earliestDeadline: first,
          },
          {
            account: null,
            campaignId: 'cmp_pix',
            count: 1,
            valueMicros: 5_000_000,
            reason: NOT_S2S,
            since: start + 1_000,
            earliestDeadline: p4,
          },
          {
            account: 'shop_a',
            campaignId: null,
            count: 1,
            valueMicros: 5_000_000,
            reason: NOT_S2S,
            since: start + 1_000,
            earliestDeadline: p3,
          },
        ]);
        expect(stats.counts.pending).toBe(5);
      },
      'holds',
      'exactStats',
    );

    test(
      'a hold names a campaign id or null, and releaseHeld a time: anything else is refused, naming the field',
      async () => {
        await enqueue('ord_bad');
        const claimed = await claimOne();
        const now = s.clock.now();
        const bad = { now, nextAttemptAt: now + PROBE, error: NOT_S2S, hold: { campaignId: 'pixel' } };
        await expect(s.outbox.retry(claimed, bad)).rejects.toThrow(/hold\.campaignId/);
        await expect(s.outbox.releaseHeld({ now: -1 })).rejects.toThrow(/now/);
        await expect(s.outbox.releaseHeld({ now, campaignId: 'x' })).rejects.toThrow(/campaignId/);
        // Refused before any write: the job is still held by its claim.
        expect(await s.outbox.extendLease(claimed, { now, leaseMs: LEASE_MS })).toBe(true);
      },
      'holds',
    );

    if (!s.has('holds')) {
      test('a backend that cannot hold jobs says so, refuses a hold and releases nothing', async () => {
        expect(s.outbox.features.holds).toBe(false);
        await enqueue('ord_nohold');
        const claimed = await claimOne();
        const now = s.clock.now();
        const held = { now, nextAttemptAt: now + PROBE, error: NOT_S2S, hold: { campaignId: null } };
        await expect(s.outbox.retry(claimed, held)).rejects.toThrow(/hold/);
        expect(await s.outbox.releaseHeld({ now })).toBe(0);
        expect((await s.outbox.stats(now)).held).toEqual([]);
      });
    } else {
      test('a backend that holds jobs says so', async () => {
        expect(s.outbox.features.holds).toBe(true);
      });
    }
  });
}
