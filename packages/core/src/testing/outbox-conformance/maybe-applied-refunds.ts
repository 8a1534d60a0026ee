/** Conformance tests (inside "maybe applied"): refunds of an order whose confirm may have been applied. */
import { expect } from 'vitest';
import type { Job } from '../../queue/job-types.ts';
import { HOUR, type Suite } from './suite.ts';

export function maybeAppliedRefundTests(s: Suite): void {
  const { enqueue, claimAll, claimOne, stateOf, has, test, returnDeadline, maybeAppliedConfirm } = s;
  test(
    'a confirm maybe applied by an earlier attempt stays so when a later one is refused: its waiting refund follows from the first time',
    async () => {
      await enqueue('ord_1');
      const first = await claimOne();
      const t1 = s.clock.now();
      const lost = { now: t1, nextAttemptAt: t1, error: 'timeout after sending', maybeApplied: true };
      expect(await s.outbox.retry(first, lost)).toBe(true);
      const second = await claimOne();
      const { job: refund } = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
      s.clock.advance(1_000);
      const refused = { now: s.clock.now(), state: 'dead' as const, reason: 'HTTP 422: unknown click' };
      expect(await s.outbox.fail(second, refused)).toBe(true);
      const [sent] = await claimAll();
      expect(sent).toMatchObject({ id: refund.id, kind: 'refund', deadline: returnDeadline(t1) });
    },
    'maybeAppliedState',
  );

  test(
    'a refund of a pending confirm that may have been applied waits behind it instead of cancelling it, then follows its delivery',
    async () => {
      await enqueue('ord_1');
      const first = await claimOne();
      const now = s.clock.now();
      const lost = {
        now,
        nextAttemptAt: now + 60_000,
        error: 'timeout after sending',
        maybeApplied: true,
      };
      expect(await s.outbox.retry(first, lost)).toBe(true);
      const result = await s.outbox.refund({ orderId: 'ord_1' });
      expect(result).toMatchObject({
        outcome: 'enqueued',
        job: { kind: 'refund', deadline: null, campaignId: null },
      });
      if (has('lookup')) expect(await stateOf(first.id)).toBe('pending');
      s.clock.advance(60_000);
      const retried = await claimAll();
      expect(retried.map((j) => j.kind)).toEqual(['confirm']); // the refund still waits
      expect(await s.outbox.complete(retried[0] as Job, { now: s.clock.now(), campaignId: 'cmp_9' })).toBe(
        true,
      );
      const [refund] = await claimAll();
      expect(refund).toMatchObject({
        id: result.job.id,
        campaignId: 'cmp_9',
        deadline: returnDeadline(s.clock.now()),
      });
    },
    'maybeAppliedState',
  );

  test('a reversal with no campaign that dead-lettered is pending again, due now, once a refund gives the campaign (updated)', async () => {
    const { at } = await maybeAppliedConfirm('ord_1', 'expired');
    const first = await s.outbox.refund({ orderId: 'ord_1' });
    expect(first).toMatchObject({
      outcome: 'enqueued',
      job: { kind: 'refund', campaignId: null, deadline: returnDeadline(at) },
    });
    const claimed = await claimOne();
    expect(claimed).toMatchObject({ id: first.job.id, campaignId: null });
    const reason = 'no campaign to reverse in: give campaignId';
    expect(await s.outbox.fail(claimed, { now: s.clock.now(), state: 'dead', reason })).toBe(true);
    s.clock.advance(HOUR);
    const given = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_8' });
    expect(given).toMatchObject({
      outcome: 'updated',
      job: {
        id: first.job.id,
        kind: 'refund',
        state: 'pending',
        campaignId: 'cmp_8',
        attempts: 0,
        nextAttemptAt: s.clock.now(),
        updatedAt: s.clock.now(),
        deadline: returnDeadline(at),
        lastError: null,
        lease: null,
      },
    });
    if (has('lookup')) expect(await s.outbox.get(first.job.id)).toEqual(given.job);
    if (has('listDead')) expect(await s.outbox.listDead()).toEqual([]);
    const [again] = await claimAll();
    expect(again).toMatchObject({ id: first.job.id, campaignId: 'cmp_8', attempts: 1 });
    const third = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_9' });
    expect(third).toMatchObject({ outcome: 'duplicate', job: { id: first.job.id } });
  });

  test('a waiting reversal with no campaign takes the one a later refund gives and still waits for its confirm (updated)', async () => {
    await enqueue('ord_1');
    const confirm = await claimOne();
    const first = await s.outbox.refund({ orderId: 'ord_1' });
    expect(first.job).toMatchObject({ kind: 'refund', campaignId: null, deadline: null });
    s.clock.advance(1_000);
    const given = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_8' });
    expect(given).toMatchObject({
      outcome: 'updated',
      job: { id: first.job.id, state: 'pending', campaignId: 'cmp_8', deadline: null, attempts: 0 },
    });
    if (has('lookup')) expect(await s.outbox.get(first.job.id)).toEqual(given.job);
    expect(await claimAll()).toEqual([]); // still behind its inflight confirm
    expect(await s.outbox.complete(confirm, { now: s.clock.now(), campaignId: 'cmp_9' })).toBe(true);
    const [sent] = await claimAll();
    expect(sent).toMatchObject({
      id: first.job.id,
      campaignId: 'cmp_8',
      deadline: returnDeadline(s.clock.now()),
    });
  });

  test('a reversal of a confirmation whose answer named no campaign is kept without one until a refund gives it (updated)', async () => {
    await enqueue('ord_1');
    const claimed = await claimOne();
    expect(await s.outbox.complete(claimed, { now: s.clock.now(), campaignId: null })).toBe(true);
    const deliveredAt = s.clock.now();
    s.clock.advance(HOUR);
    const first = await s.outbox.refund({ orderId: 'ord_1' });
    expect(first).toMatchObject({
      outcome: 'enqueued',
      job: { campaignId: null, deadline: returnDeadline(deliveredAt) },
    });
    const given = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_8' });
    expect(given).toMatchObject({
      outcome: 'updated',
      job: { id: first.job.id, state: 'pending', campaignId: 'cmp_8' },
    });
    const [sent] = await claimAll();
    expect(sent).toMatchObject({ id: first.job.id, campaignId: 'cmp_8' });
  });

  test('replay cancels a dead confirm that may have been applied once its order has a reversal, and the reversal is sent', async () => {
    const { confirm } = await maybeAppliedConfirm('ord_1', 'dead');
    const result = await s.outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
    expect(result.outcome).toBe('enqueued');
    expect(await s.outbox.replay({ ids: [confirm.id] }, s.clock.now())).toBe(0);
    expect(await s.outbox.replay({ all: true }, s.clock.now())).toBe(0);
    if (has('lookup')) expect(await stateOf(confirm.id)).toBe('cancelled');
    if (has('listDead')) expect(await s.outbox.listDead()).toEqual([]);
    expect((await claimAll()).map((j) => j.id)).toEqual([result.job.id]);
  });
}
