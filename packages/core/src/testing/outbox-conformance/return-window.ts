/**
 * Conformance tests: the return window. With none configured (the default) a reversal is sent however
 * late, bounded only by `confirmationRetentionMs`, and the service decides; a configured window closed at
 * refund time answers `window-closed` and writes nothing.
 */
import { describe, expect } from 'vitest';
import { DAY_MS, resolvePolicy } from '../../policy.ts';
import { HOUR, SUITE_POLICY, type Suite } from './suite.ts';

/** Open-ended, with a retention that is not the default: a store that ignores it fails. */
const RETENTION_MS = 90 * DAY_MS;
const OPEN_POLICY = resolvePolicy({
  ...SUITE_POLICY,
  returnWindowMs: null,
  confirmationRetentionMs: RETENTION_MS,
});
/** The suite's configured window, less its margin. */
const WINDOW_SPAN = 14 * DAY_MS - 2 * HOUR;

export function describeReturnWindow(s: Suite): void {
  const { enqueue, claimAll, claimOne, deliver, has, test } = s;
  describe('return window', () => {
    test('with no return window configured, a refund 45 days after delivery is enqueued and sent, its deadline the retention after the charge', async () => {
      await s.reopen(OPEN_POLICY);
      await deliver('ord_1', 'cmp_42');
      const deliveredAt = s.clock.now();
      s.clock.advance(45 * DAY_MS);
      const result = await s.outbox.refund({ orderId: 'ord_1' });
      expect(result).toMatchObject({
        outcome: 'enqueued',
        job: { kind: 'refund', campaignId: 'cmp_42', deadline: deliveredAt + RETENTION_MS },
      });
      expect((await claimAll()).map((j) => j.id)).toEqual([result.job.id]);
    });

    test('with no return window configured, a refund waiting behind its confirm takes the retention deadline from the delivery', async () => {
      await s.reopen(OPEN_POLICY);
      await enqueue('ord_1');
      const confirm = await claimOne();
      const waiting = await s.outbox.refund({ orderId: 'ord_1' });
      expect(waiting).toMatchObject({ outcome: 'enqueued', job: { deadline: null } });
      s.clock.advance(1_000);
      expect(await s.outbox.complete(confirm, { now: s.clock.now(), campaignId: 'cmp_9' })).toBe(true);
      const [refund] = await claimAll();
      expect(refund).toMatchObject({ kind: 'refund', deadline: s.clock.now() + RETENTION_MS });
    });

    test('with no return window configured, a refund of an order confirmed elsewhere is bounded by now + the retention', async () => {
      await s.reopen(OPEN_POLICY);
      const result = await s.outbox.refund({ orderId: 'ord_elsewhere', campaignId: 'cmp_5' });
      expect(result.job.deadline).toBe(s.clock.now() + RETENTION_MS);
    });

    test(
      'with no return window configured, a reversal months away from its deadline is not at risk',
      async () => {
        await s.reopen(OPEN_POLICY);
        await deliver('ord_1', 'cmp_42');
        const deliveredAt = s.clock.now();
        s.clock.advance(45 * DAY_MS);
        await s.outbox.refund({ orderId: 'ord_1' });
        const stats = await s.outbox.stats(s.clock.now(), { deadlineBucketsMs: [DAY_MS, 60 * DAY_MS] });
        expect(stats.atRisk.count).toBe(0);
        expect(stats.nearestDeadline).toMatchObject({ kind: 'refund', deadline: deliveredAt + RETENTION_MS });
        expect(stats.deadlineBuckets.map((b) => b.count)).toEqual([0, 1]);
      },
      'exactStats',
    );

    test(
      'with no return window configured, prune keeps a delivered confirmation for the retention, so a late refund finds its campaign',
      async () => {
        await s.reopen(OPEN_POLICY);
        await deliver('ord_1', 'cmp_42');
        s.clock.advance(60 * DAY_MS);
        const rules = { olderThanMs: DAY_MS, returnWindowMs: RETENTION_MS };
        expect(await s.outbox.prune({ now: s.clock.now(), ...rules })).toBe(0);
        const result = await s.outbox.refund({ orderId: 'ord_1' });
        expect(result).toMatchObject({ outcome: 'enqueued', job: { campaignId: 'cmp_42' } });
      },
      'prune',
    );

    test('a configured return window closed at refund time answers window-closed and writes nothing', async () => {
      const confirm = await deliver('ord_1', 'cmp_42');
      s.clock.advance(WINDOW_SPAN + 1);
      const result = await s.outbox.refund({ orderId: 'ord_1' });
      expect(result).toMatchObject({
        outcome: 'window-closed',
        job: { id: confirm.id, kind: 'confirm', state: 'delivered' },
      });
      // Nothing was written: asking again gives the same answer, not a duplicate.
      expect((await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_42' })).outcome).toBe(
        'window-closed',
      );
      expect(await claimAll()).toEqual([]);
      if (has('lookup')) expect((await s.outbox.getByOrder('ord_1')).map((j) => j.kind)).toEqual(['confirm']);
    });

    test('a refund at the last moment of a configured return window is enqueued', async () => {
      await deliver('ord_1', 'cmp_42');
      s.clock.advance(WINDOW_SPAN);
      expect((await s.outbox.refund({ orderId: 'ord_1' })).outcome).toBe('enqueued');
      expect(await claimAll()).toHaveLength(1);
    });

    test('a configured return window counts from a request that may have been applied: closed, it answers window-closed', async () => {
      const { confirm } = await s.maybeAppliedConfirm('ord_1', 'dead');
      s.clock.advance(WINDOW_SPAN + 1);
      const result = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
      expect(result).toMatchObject({ outcome: 'window-closed', job: { id: confirm.id, kind: 'confirm' } });
      expect(await claimAll()).toEqual([]);
    });
  });
}
