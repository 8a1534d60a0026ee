/**
 * Conformance tests: `unmatched`, the final state of a reversal the service had no conversion for, and
 * `campaignFrom`, where a refund's campaign came from (which decides whether a 404 is `unmatched`).
 */
import { describe, expect } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import type { Job, RefundJob } from '../../queue/job-types.ts';
import type { Suite } from './suite.ts';

export function describeUnmatched(s: Suite): void {
  const { enqueue, claimAll, claimOne, deliver, stateOf, has, test } = s;

  /** A delivered order's reversal, claimed. */
  const claimedRefund = async (orderId: string, campaignId?: string): Promise<RefundJob> => {
    await deliver(orderId, 'cmp_42');
    await s.outbox.refund(campaignId === undefined ? { orderId } : { orderId, campaignId });
    return (await claimOne()) as RefundJob;
  };

  describe('unmatched reversals and where a refund’s campaign came from', () => {
    test('a reversal ended unmatched is final: never claimed, never replayed, counted and listed as such', async () => {
      const refund = await claimedRefund('ord_1');
      const reason = 'no confirmed order ord_1 for campaign cmp_42';
      expect(await s.outbox.fail(refund, { now: s.clock.now(), state: 'unmatched', reason })).toBe(true);
      s.clock.advance(DAY_MS);
      expect(await claimAll()).toEqual([]);
      expect(await s.outbox.replay({ all: true }, s.clock.now())).toBe(0);
      if (has('lookup')) {
        expect(await s.outbox.get(refund.id)).toMatchObject({ state: 'unmatched', lastError: reason });
      }
      if (has('exactStats')) {
        const { counts } = await s.outbox.stats(s.clock.now());
        expect(counts).toMatchObject({ unmatched: 1, dead: 0, delivered: 1 });
      }
      if (has('listJobs')) {
        const listed = await s.outbox.listJobs({ states: ['unmatched'] });
        expect(listed.map((j) => j.id)).toEqual([refund.id]);
      }
      if (has('listDead')) expect(await s.outbox.listDead()).toEqual([]);
    });

    test('only a refund can end unmatched', async () => {
      await enqueue('ord_1');
      const confirm = await claimOne();
      const unmatched = { now: s.clock.now(), state: 'unmatched' as const, reason: 'x' };
      await expect(s.outbox.fail(confirm, unmatched)).rejects.toThrow(/refund/);
    });

    test(
      'an unmatched reversal is pruned like a delivered one',
      async () => {
        const refund = await claimedRefund('ord_1');
        await s.outbox.fail(refund, { now: s.clock.now(), state: 'unmatched', reason: 'no such conversion' });
        s.clock.advance(15 * DAY_MS);
        const rules = { olderThanMs: DAY_MS, returnWindowMs: 0 };
        expect(await s.outbox.prune({ now: s.clock.now(), ...rules })).toBe(2);
        expect(await stateOf(refund.id)).toBeUndefined();
      },
      'prune',
    );

    test('a refund keeps where its campaign came from: the confirmation’s answer, or the caller', async () => {
      await deliver('ord_answer', 'cmp_42');
      await deliver('ord_caller', 'cmp_42');
      const fromAnswer = await s.outbox.refund({ orderId: 'ord_answer' });
      expect(fromAnswer.job).toMatchObject({ campaignId: 'cmp_42', campaignFrom: 'answer' });
      const fromCaller = await s.outbox.refund({ orderId: 'ord_caller', campaignId: 'cmp_43' });
      expect(fromCaller.job).toMatchObject({ campaignId: 'cmp_43', campaignFrom: 'caller' });
      const elsewhere = await s.outbox.refund({ orderId: 'ord_elsewhere', campaignId: 'cmp_5' });
      expect(elsewhere.job).toMatchObject({ campaignFrom: 'caller' });
      const claimed = new Map((await claimAll()).map((j: Job) => [j.orderId, j]));
      expect(claimed.get('ord_answer')).toMatchObject({ campaignFrom: 'answer' });
      expect(claimed.get('ord_caller')).toMatchObject({ campaignFrom: 'caller' });
      expect(claimed.get('ord_elsewhere')).toMatchObject({ campaignFrom: 'caller' });
    });

    test('a refund waiting behind its confirm takes the answer’s campaign, marked as from the answer', async () => {
      await enqueue('ord_1');
      const confirm = await claimOne();
      const waiting = await s.outbox.refund({ orderId: 'ord_1' });
      expect(waiting.job).toMatchObject({ campaignId: null, campaignFrom: null });
      expect(await s.outbox.complete(confirm, { now: s.clock.now(), campaignId: 'cmp_9' })).toBe(true);
      expect(await claimOne()).toMatchObject({ kind: 'refund', campaignId: 'cmp_9', campaignFrom: 'answer' });
    });

    test('a campaign supplied for a reversal whose answer carried none is marked as from the caller', async () => {
      await deliver('ord_1', null as unknown as string);
      const first = await s.outbox.refund({ orderId: 'ord_1' });
      expect(first.job).toMatchObject({ campaignId: null, campaignFrom: null });
      const updated = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_7' });
      expect(updated).toMatchObject({
        outcome: 'updated',
        job: { campaignId: 'cmp_7', campaignFrom: 'caller' },
      });
      expect(await claimOne()).toMatchObject({ campaignId: 'cmp_7', campaignFrom: 'caller' });
    });
  });
}
