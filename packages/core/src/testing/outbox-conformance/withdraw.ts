/**
 * Conformance tests: `withdraw` (consent withdrawn after the order) cancels a confirmation none of whose
 * requests may have reached the service, with the order's waiting refund; one that may have reached it is
 * left as it is and reported so; nothing is ever sent by a withdrawal.
 */
import { describe, expect } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import { LEASE_MS, type Suite } from './suite.ts';

export function describeWithdraw(s: Suite): void {
  const { enqueue, claimAll, claimOne, deliver, killConfirm, stateOf, has, test, expectValidation } = s;
  describe('withdraw', () => {
    test(
      'cancels a pending confirm: it is never claimed nor replayed',
      async () => {
        const job = await enqueue('ord_1');
        const result = await s.outbox.withdraw({ orderId: 'ord_1' });
        expect(result).toMatchObject({ outcome: 'cancelled', job: { id: job.id, state: 'cancelled' } });
        expect(result.job?.lastError).toMatch(/consent was withdrawn/);
        s.clock.advance(DAY_MS);
        expect(await claimAll()).toEqual([]);
        expect(await s.outbox.replay({ all: true }, s.clock.now())).toBe(0);
        if (has('lookup')) expect(await stateOf(job.id)).toBe('cancelled');
        // Withdrawn twice: already ended without charge.
        expect(await s.outbox.withdraw({ orderId: 'ord_1' })).toMatchObject({ outcome: 'not-charged' });
      },
      'cancelPendingConfirm',
    );

    test(
      'cancels a dead confirm that was never sent past a clear refusal, so no replay can send it',
      async () => {
        const job = await killConfirm('ord_1');
        expect(await s.outbox.withdraw({ orderId: 'ord_1' })).toMatchObject({
          outcome: 'cancelled',
          job: { id: job.id, state: 'cancelled' },
        });
        expect(await s.outbox.replay({ all: true }, s.clock.now())).toBe(0);
        expect(await claimAll()).toEqual([]);
      },
      'cancelPendingConfirm',
    );

    test(
      'leaves a delivered confirm as it is and says it may have charged; sends no reversal',
      async () => {
        const job = await deliver('ord_1', 'cmp_42');
        const result = await s.outbox.withdraw({ orderId: 'ord_1' });
        expect(result).toMatchObject({
          outcome: 'may-have-charged',
          job: { id: job.id, state: 'delivered' },
        });
        s.clock.advance(DAY_MS);
        expect(await claimAll()).toEqual([]);
        if (has('lookup')) expect(await s.outbox.getByOrder('ord_1')).toHaveLength(1);
      },
      'cancelPendingConfirm',
    );

    test(
      'leaves an inflight confirm to its worker (it may be reaching the service now)',
      async () => {
        await enqueue('ord_1');
        const claimed = await claimOne();
        const result = await s.outbox.withdraw({ orderId: 'ord_1' });
        expect(result).toMatchObject({ outcome: 'may-have-charged', job: { id: claimed.id } });
        expect(await s.outbox.complete(claimed, { now: s.clock.now(), campaignId: 'cmp_1' })).toBe(true);
      },
      'cancelPendingConfirm',
    );

    test(
      'leaves a pending confirm whose earlier request may have been applied: it is still delivered',
      async () => {
        await enqueue('ord_1');
        const claimed = await claimOne();
        const lost = {
          now: s.clock.now(),
          nextAttemptAt: s.clock.now(),
          error: 'timeout',
          maybeApplied: true,
        };
        expect(await s.outbox.retry(claimed, lost)).toBe(true);
        expect(await s.outbox.withdraw({ orderId: 'ord_1' })).toMatchObject({ outcome: 'may-have-charged' });
        expect((await claimAll()).map((job) => job.id)).toEqual([claimed.id]);
      },
      'cancelPendingConfirm',
      'maybeAppliedState',
    );

    test(
      'cancels the waiting refund of a confirm it cancels: nothing of the order is ever sent',
      async () => {
        await enqueue('ord_1');
        const confirm = await claimOne();
        const { job: refund } = await s.outbox.refund({ orderId: 'ord_1' });
        const now = s.clock.now();
        expect(await s.outbox.retry(confirm, { now, nextAttemptAt: now, error: 'HTTP 503' })).toBe(true);
        expect(await s.outbox.withdraw({ orderId: 'ord_1' })).toMatchObject({ outcome: 'cancelled' });
        s.clock.advance(LEASE_MS + DAY_MS);
        expect(await claimAll()).toEqual([]);
        if (has('lookup')) expect(await stateOf(refund.id)).toBe('cancelled');
      },
      'cancelPendingConfirm',
    );

    test(
      'answers not-found for an order it does not hold, and touches only the order of the given account',
      async () => {
        const job = await enqueue('ord_1', { account: 'shop-a' });
        expect(await s.outbox.withdraw({ orderId: 'ord_1' })).toEqual({ outcome: 'not-found', job: null });
        expect(await s.outbox.withdraw({ orderId: 'ord_1', account: 'shop-b' })).toEqual({
          outcome: 'not-found',
          job: null,
        });
        expect((await claimAll()).map((claimed) => claimed.id)).toEqual([job.id]);
      },
      'cancelPendingConfirm',
    );

    test(
      'refuses a malformed withdrawal, naming the field',
      async () => {
        await expectValidation(s.outbox.withdraw({ orderId: '' }), 'orderId');
        await expectValidation(s.outbox.withdraw({ orderId: 'ord_1', account: '' }), 'account');
        await expectValidation(s.outbox.withdraw(null as never), 'input');
      },
      'cancelPendingConfirm',
    );
  });
}
