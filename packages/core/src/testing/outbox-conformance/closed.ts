/** Conformance tests: after `close()` every method rejects with core's `OutboxClosedError`. */
import { describe, expect } from 'vitest';
import { OutboxClosedError } from '../../errors.ts';
import type { Job } from '../../queue/job-types.ts';
import { LEASE_MS, type Suite } from './suite.ts';

export function describeClosed(s: Suite): void {
  const { confirmInput, enqueue, claimOne, has, test } = s;
  describe('closed', () => {
    test('rejects every call after close() with OutboxClosedError, whatever the backend', async () => {
      await enqueue('ord_1');
      const claimed = await claimOne();
      await s.outbox.close();
      const now = s.clock.now();
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['confirm', () => s.outbox.confirm(confirmInput('ord_2'))],
        ['refund', () => s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_1' })],
        ['claim', () => s.outbox.claim({ now, limit: 1, leaseMs: LEASE_MS })],
        ['complete', () => s.outbox.complete(claimed, { now, campaignId: 'cmp_1' })],
        ['retry', () => s.outbox.retry(claimed, { now, nextAttemptAt: now, error: 'HTTP 503' })],
        ['fail', () => s.outbox.fail(claimed, { now, state: 'dead', reason: 'HTTP 422' })],
        ['release', () => s.outbox.release([claimed as Job], now)],
        ['extendLease', () => s.outbox.extendLease(claimed, { now, leaseMs: LEASE_MS })],
        ['stats', () => s.outbox.stats(now)],
        ['replay', () => s.outbox.replay({ all: true }, now)],
        ['purgeDead', () => s.outbox.purgeDead()],
      ];
      if (has('lookup')) {
        calls.push(['get', () => s.outbox.get(claimed.id)]);
        calls.push(['getByOrder', () => s.outbox.getByOrder('ord_1')]);
      }
      if (has('listDead')) calls.push(['listDead', () => s.outbox.listDead()]);
      if (has('cancelPendingConfirm'))
        calls.push(['withdraw', () => s.outbox.withdraw({ orderId: 'ord_1' })]);
      for (const [method, call] of calls) {
        const err = await call().then(
          () => null,
          (e: unknown) => e,
        );
        expect(err, `${method} after close()`).toBeInstanceOf(OutboxClosedError);
      }
    });
  });
}
