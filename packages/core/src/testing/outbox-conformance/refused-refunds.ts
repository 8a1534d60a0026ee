/**
 * Conformance tests (inside "maybe applied"): refunds of an order whose confirmation the service refused
 * for good (`neverApplied`: a 404, its click unknown), after an earlier request that may have been applied.
 * Nothing was charged: the refund answers so and no reversal is ever sent.
 */
import { expect } from 'vitest';
import type { Suite } from './suite.ts';

export function refusedRefundTests(s: Suite): void {
  const { enqueue, claimAll, claimOne, test } = s;

  /** A confirm whose first request may have been applied (lost answer), then refused 404 for good. */
  const refusedAfterLostAnswer = async (orderId: string) => {
    await enqueue(orderId);
    const first = await claimOne();
    const t1 = s.clock.now();
    const lost = { now: t1, nextAttemptAt: t1, error: 'timeout after sending', maybeApplied: true };
    expect(await s.outbox.retry(first, lost)).toBe(true);
    const second = await claimOne();
    s.clock.advance(1_000);
    return second;
  };
  const refused = (now: number) => ({
    now,
    state: 'dead' as const,
    reason: 'HTTP 404: click_token not found',
    neverApplied: true,
  });

  test(
    'a refund of a confirmation refused for good (neverApplied) after a lost answer says nothing was charged and enqueues no reversal',
    async () => {
      const second = await refusedAfterLostAnswer('ord_1');
      expect(await s.outbox.fail(second, refused(s.clock.now()))).toBe(true);
      const result = await s.outbox.refund({ orderId: 'ord_1' });
      if (s.has('cancelPendingConfirm')) {
        expect(result.outcome).toBe('cancelled');
        expect(result.job).toMatchObject({ kind: 'confirm', maybeAppliedAt: null });
      } else {
        // SQS cannot take the dead confirmation out of its queue: the refund waits behind it and is
        // cancelled, unsent, when it comes up.
        expect(result.outcome).toBe('enqueued');
      }
      s.clock.advance(60_000);
      expect(await claimAll()).toEqual([]);
    },
    'maybeAppliedState',
  );

  test(
    'a refund waiting behind a confirmation that is then refused for good is cancelled, never sent',
    async () => {
      const second = await refusedAfterLostAnswer('ord_1');
      const waiting = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
      expect(waiting.outcome).toBe('enqueued');
      expect(await s.outbox.fail(second, refused(s.clock.now()))).toBe(true);
      s.clock.advance(60_000);
      expect(await claimAll()).toEqual([]);
    },
    'maybeAppliedState',
  );

  test(
    'a confirmation that ended on a lost answer without a refusal still gets its refund sent',
    async () => {
      const second = await refusedAfterLostAnswer('ord_1');
      const expired = { now: s.clock.now(), state: 'expired' as const, reason: 'deadline passed' };
      expect(await s.outbox.fail(second, expired)).toBe(true);
      const result = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
      expect(result).toMatchObject({ outcome: 'enqueued', job: { kind: 'refund' } });
    },
    'maybeAppliedState',
  );
}
