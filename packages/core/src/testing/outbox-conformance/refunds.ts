/** Conformance tests: a refund cancels a confirm not yet sent, else enqueues a reversal with the confirmation's campaign. */
import { describe, expect } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import type { ConfirmJob, RefundJob } from '../../queue/job-types.ts';
import { refundAfterConfirm } from '../../queue/refund-rules.ts';
import { HOUR, LEASE_MS, SUITE_POLICY, type Suite } from './suite.ts';

export function describeRefunds(s: Suite): void {
  const { enqueue, claimAll, claimOne, deliver, killConfirm, stateOf, has, test } = s;
  describe('refunds', () => {
    test(
      'a refund of a pending confirm cancels it: nothing is sent and nothing needs reversing',
      async () => {
        const job = await enqueue('ord_1');
        const result = await s.outbox.refund({ orderId: 'ord_1' });
        expect(result.outcome).toBe('cancelled');
        expect(result.job).toMatchObject({ id: job.id, kind: 'confirm', state: 'cancelled' });
        s.clock.advance(DAY_MS);
        expect(await claimAll()).toEqual([]);
        expect(await s.outbox.replay({ all: true }, s.clock.now())).toBe(0);
      },
      'cancelPendingConfirm',
    );

    test(
      'a refund of a dead confirm cancels it, so a later replay can never charge the returned order',
      async () => {
        const job = await killConfirm('ord_1');
        const result = await s.outbox.refund({ orderId: 'ord_1' });
        expect(result).toMatchObject({ outcome: 'cancelled', job: { id: job.id, state: 'cancelled' } });
        expect(await s.outbox.replay({ all: true }, s.clock.now())).toBe(0);
        expect(await claimAll()).toEqual([]);
      },
      'cancelPendingConfirm',
    );

    test('a refund of an expired confirm reports not-charged and enqueues nothing', async () => {
      await enqueue('ord_1');
      const claimed = await claimOne();
      await s.outbox.fail(claimed, { now: s.clock.now(), state: 'expired', reason: 'deadline passed' });
      const result = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
      expect(result).toMatchObject({ outcome: 'not-charged', job: { id: claimed.id, state: 'expired' } });
      s.clock.advance(DAY_MS);
      expect(await claimAll()).toEqual([]);
    });

    test('a refund of a delivered confirm enqueues a reversal with its campaign and a return-window deadline', async () => {
      await deliver('ord_1', 'cmp_42');
      const deliveredAt = s.clock.now();
      s.clock.advance(DAY_MS);
      const result = await s.outbox.refund({ orderId: 'ord_1' });
      expect(result.outcome).toBe('enqueued');
      expect(result.job).toMatchObject({
        kind: 'refund',
        orderId: 'ord_1',
        state: 'pending',
        campaignId: 'cmp_42',
        deadline: deliveredAt + 14 * DAY_MS - 2 * HOUR,
      });
      const [claimed] = await claimAll();
      expect(claimed).toMatchObject({
        id: result.job.id,
        kind: 'refund',
        campaignId: 'cmp_42',
        attempts: 1,
      });
    });

    test('a refund that names its campaign keeps it over the confirmation’s', async () => {
      await deliver('ord_1', 'cmp_42');
      const result = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_43' });
      expect(result.job.campaignId).toBe('cmp_43');
    });

    test('a refund behind an inflight confirm waits until the confirm is delivered, then takes its campaign and deadline', async () => {
      await enqueue('ord_1');
      const confirm = await claimOne();
      const result = await s.outbox.refund({ orderId: 'ord_1' });
      expect(result).toMatchObject({
        outcome: 'enqueued',
        job: { kind: 'refund', deadline: null, campaignId: null },
      });
      s.clock.advance(LEASE_MS - 1);
      expect(await claimAll()).toEqual([]); // the refund must not overtake its confirmation
      expect(await s.outbox.complete(confirm, { now: s.clock.now(), campaignId: 'cmp_9' })).toBe(true);
      const deliveredAt = s.clock.now();
      const [refund] = await claimAll();
      expect(refund).toMatchObject({
        id: result.job.id,
        kind: 'refund',
        campaignId: 'cmp_9',
        deadline: deliveredAt + 14 * DAY_MS - 2 * HOUR,
      });
    });

    test('a waiting refund stays held while its confirm is retried after a transient failure', async () => {
      await enqueue('ord_1');
      const confirm = await claimOne();
      await s.outbox.refund({ orderId: 'ord_1' });
      await s.outbox.retry(confirm, { now: s.clock.now(), nextAttemptAt: s.clock.now(), error: 'HTTP 503' });
      const claimed = await claimAll();
      expect(claimed.map((j) => j.kind)).toEqual(['confirm']);
      s.clock.advance(LEASE_MS);
      expect((await claimAll()).map((j) => j.kind)).toEqual(['confirm']); // the lease ran out; still the confirm
    });

    for (const ending of ['dead', 'expired'] as const) {
      test(`a waiting refund is cancelled when its confirm ends ${ending}: nothing was charged`, async () => {
        await enqueue('ord_1');
        const confirm = await claimOne();
        const { job: refund } = await s.outbox.refund({ orderId: 'ord_1' });
        expect(await s.outbox.fail(confirm, { now: s.clock.now(), state: ending, reason: 'x' })).toBe(true);
        if (has('lookup')) {
          const after = (await s.outbox.get(confirm.id)) as ConfirmJob;
          expect(after.maybeAppliedAt).toBeNull();
          const expected = refundAfterConfirm(refund as RefundJob, after, SUITE_POLICY);
          expect(expected.state).toBe('cancelled');
          expect(await s.outbox.get(refund.id)).toEqual(expected);
        }
        s.clock.advance(DAY_MS);
        expect(await claimAll()).toEqual([]);
        if (has('lookup')) expect(await stateOf(refund.id)).toBe('cancelled');
        // A dead confirm of a refunded order is never re-sent: replay cancels it instead.
        if (has('cancelPendingConfirm')) expect(await s.outbox.replay({ all: true }, s.clock.now())).toBe(0);
      });
    }

    test('a second refund of the same order is a duplicate and changes nothing', async () => {
      await deliver('ord_1', 'cmp_42');
      const first = await s.outbox.refund({ orderId: 'ord_1' });
      const second = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_99' });
      expect(second).toMatchObject({
        outcome: 'duplicate',
        job: { id: first.job.id, campaignId: 'cmp_42' },
      });
      expect(await claimAll()).toHaveLength(1);
    });

    test('a refund of an order this outbox never confirmed is sent with the given campaign, within a return window from now', async () => {
      const result = await s.outbox.refund({ orderId: 'ord_elsewhere', campaignId: 'cmp_5' });
      expect(result).toMatchObject({
        outcome: 'enqueued',
        job: { campaignId: 'cmp_5', deadline: s.clock.now() + 14 * DAY_MS - 2 * HOUR },
      });
      expect((await claimAll()).map((j) => j.id)).toEqual([result.job.id]);
    });

    test(
      'getByOrder returns the confirm and the refund of an order',
      async () => {
        await deliver('ord_1');
        await s.outbox.refund({ orderId: 'ord_1' });
        const jobs = await s.outbox.getByOrder('ord_1');
        expect(jobs.map((j) => j.kind).sort()).toEqual(['confirm', 'refund']);
        expect(await s.outbox.getByOrder('ord_none')).toEqual([]);
      },
      'lookup',
    );
  });
}
