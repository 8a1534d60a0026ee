/** Conformance tests: a request that may have reached the service is remembered, and its order is reversed, not cancelled. */
import { describe, expect } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import type { ConfirmJob, RefundJob } from '../../queue/job-types.ts';
import { claimJob, failJob, retryJob } from '../../queue/jobs.ts';
import type { FailResult, RetryResult } from '../../queue/outbox-types.ts';
import { refundAfterConfirm } from '../../queue/refund-rules.ts';
import { maybeAppliedRefundTests } from './maybe-applied-refunds.ts';
import { refusedRefundTests } from './refused-refunds.ts';
import { LEASE_MS, SUITE_POLICY, type Suite } from './suite.ts';

export function describeMaybeApplied(s: Suite): void {
  const { enqueue, claimAll, claimOne, stateOf, has, test, returnDeadline, maybeAppliedConfirm } = s;
  describe('maybe applied (a request may have reached the service without a clear answer)', () => {
    test('a job released, or retried without maybeApplied, is not maybe applied at its next claim', async () => {
      await enqueue('ord_1');
      const first = await claimOne();
      expect(first.maybeAppliedAt).toBeNull();
      await s.outbox.release([first], s.clock.now());
      const second = await claimOne();
      expect(second.maybeAppliedAt).toBeNull();
      const now = s.clock.now();
      expect(await s.outbox.retry(second, { now, nextAttemptAt: now, error: 'HTTP 503' })).toBe(true);
      const third = await claimOne();
      expect(third.maybeAppliedAt).toBeNull();
    });

    test(
      'retry with maybeApplied records the time, and later attempts keep that first time',
      async () => {
        const job = await enqueue('ord_1');
        const first = await claimOne();
        s.clock.advance(1_000);
        const t1 = s.clock.now();
        const lost = {
          now: t1,
          nextAttemptAt: t1,
          error: 'socket closed after sending',
          maybeApplied: true,
        };
        expect(await s.outbox.retry(first, lost)).toBe(true);
        s.clock.advance(1_000);
        const second = await claimOne();
        expect(second.maybeAppliedAt).toBe(t1);
        s.clock.advance(1_000);
        const again = {
          now: s.clock.now(),
          nextAttemptAt: s.clock.now(),
          error: 'timeout',
          maybeApplied: true,
        };
        expect(await s.outbox.retry(second, again)).toBe(true);
        const third = await claimOne();
        expect(third.maybeAppliedAt).toBe(t1);
        s.clock.advance(1_000);
        const failed = { now: s.clock.now(), state: 'dead' as const, reason: 'lost', maybeApplied: true };
        expect(await s.outbox.fail(third, failed)).toBe(true);
        if (has('lookup'))
          expect(await s.outbox.get(job.id)).toMatchObject({ state: 'dead', maybeAppliedAt: t1 });
      },
      'maybeAppliedState',
    );

    test(
      "retry and fail with maybeApplied store exactly the jobs core's retryJob and failJob compute",
      async () => {
        const job = await enqueue('ord_1');
        const first = await claimOne();
        s.clock.advance(100);
        const retried: RetryResult = {
          now: s.clock.now(),
          nextAttemptAt: s.clock.now() + 5_000,
          error: 'HTTP 504 after sending',
          maybeApplied: true,
        };
        expect(await s.outbox.retry(first, retried)).toBe(true);
        expect(await s.outbox.get(job.id)).toEqual(retryJob(first, retried));
        s.clock.advance(5_000);
        const second = await claimOne();
        s.clock.advance(100);
        const expired: FailResult = {
          now: s.clock.now(),
          state: 'expired',
          reason: 'deadline passed',
          maybeApplied: true,
        };
        expect(await s.outbox.fail(second, expired)).toBe(true);
        expect(await s.outbox.get(job.id)).toEqual(failJob(second, expired));

        const other = await enqueue('ord_2');
        const claimed = await claimOne();
        s.clock.advance(100);
        const dead: FailResult = {
          now: s.clock.now(),
          state: 'dead',
          reason: 'HTTP 200 with a body we could not read',
          maybeApplied: true,
        };
        expect(await s.outbox.fail(claimed, dead)).toBe(true);
        expect(await s.outbox.get(other.id)).toEqual(failJob(claimed, dead));
        expect(await s.outbox.get(other.id)).toMatchObject({ maybeAppliedAt: dead.now });
      },
      'lookup',
    );

    test(
      'a claim that retakes an expired lease marks the job maybe applied at its last update before',
      async () => {
        const job = await enqueue('ord_1');
        const first = await claimOne();
        s.clock.advance(10_000);
        const extendedAt = s.clock.now();
        expect(await s.outbox.extendLease(first, { now: extendedAt, leaseMs: LEASE_MS })).toBe(true);
        s.clock.advance(LEASE_MS);
        const before = has('lookup') ? await s.outbox.get(job.id) : null;
        const retaken = await claimOne();
        expect(retaken.maybeAppliedAt).toBe(extendedAt);
        if (before !== null) {
          const options = { now: s.clock.now(), leaseMs: LEASE_MS, token: retaken.lease?.token as string };
          expect(retaken).toEqual(claimJob(before, options));
          expect(await s.outbox.get(job.id)).toEqual(retaken);
        }
        s.clock.advance(LEASE_MS);
        const again = await claimOne(); // retaken once more: the first time is kept
        expect(again.maybeAppliedAt).toBe(extendedAt);
      },
      'maybeAppliedState',
    );

    test(
      'a confirm retaken from a worker that died mid-send is never "never charged": a later refund is sent',
      async () => {
        await enqueue('ord_1');
        await claimOne(); // worker A sends, then dies before recording anything
        const claimedAt = s.clock.now();
        s.clock.advance(LEASE_MS);
        const retaken = await claimOne();
        const refused = { now: s.clock.now(), state: 'dead' as const, reason: 'HTTP 422: duplicate order' };
        expect(await s.outbox.fail(retaken, refused)).toBe(true);
        const result = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
        expect(result).toMatchObject({
          outcome: 'enqueued',
          job: { kind: 'refund', campaignId: 'cmp_5', deadline: returnDeadline(claimedAt) },
        });
        expect((await claimAll()).map((j) => j.id)).toEqual([result.job.id]);
      },
      'maybeAppliedState',
    );

    for (const ending of ['dead', 'expired'] as const) {
      test(`a refund of a confirm that ended ${ending} after a send that may have been applied enqueues a reversal from that time`, async () => {
        const { confirm, at } = await maybeAppliedConfirm('ord_1', ending);
        s.clock.advance(DAY_MS);
        const result = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
        expect(result).toMatchObject({
          outcome: 'enqueued',
          job: { kind: 'refund', state: 'pending', campaignId: 'cmp_5', deadline: returnDeadline(at) },
        });
        if (has('lookup')) {
          expect(await s.outbox.get(result.job.id)).toEqual(result.job);
          expect(await stateOf(confirm.id)).toBe(ending);
        }
        const claimed = await claimAll();
        expect(claimed.map((j) => j.id)).toEqual([result.job.id]);
        expect(claimed[0]).toMatchObject({ kind: 'refund', campaignId: 'cmp_5', attempts: 1 });
      });

      test(`a waiting refund follows its confirm that ended ${ending} after a send that may have been applied`, async () => {
        await enqueue('ord_1');
        const confirm = await claimOne();
        const waiting = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
        expect(waiting).toMatchObject({ outcome: 'enqueued', job: { kind: 'refund', deadline: null } });
        s.clock.advance(1_000);
        const at = s.clock.now();
        const failed = { now: at, state: ending, reason: 'the answer was lost', maybeApplied: true };
        expect(await s.outbox.fail(confirm, failed)).toBe(true);
        if (has('lookup')) {
          const after = (await s.outbox.get(confirm.id)) as ConfirmJob;
          expect(after).toMatchObject({ state: ending, maybeAppliedAt: at });
          const expected = refundAfterConfirm(waiting.job as RefundJob, after, SUITE_POLICY);
          expect(await s.outbox.get(waiting.job.id)).toEqual(expected);
        }
        const [sent] = await claimAll();
        expect(sent).toMatchObject({
          id: waiting.job.id,
          kind: 'refund',
          campaignId: 'cmp_5',
          deadline: returnDeadline(at),
        });
      });
    }

    maybeAppliedRefundTests(s);
    refusedRefundTests(s);
  });
}
