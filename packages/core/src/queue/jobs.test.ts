import { describe, expect, it } from 'vitest';
import { DAY_MS, resolvePolicy } from '../policy.ts';
import { claimJob, completeJob, isClaimable, newConfirmJob, planRefund, replayJob } from './jobs.ts';
import type { ConfirmJob } from './types.ts';
import { JobValidationError } from './validation.ts';

const NOW = Date.UTC(2026, 0, 15, 12);
const policy = resolvePolicy({ safetyMarginMs: 3_600_000, returnWindowMs: 14 * DAY_MS });
const input = {
  orderId: 'ord_1',
  valueMicros: 5_000_000,
  click: { token: 'tok_1', clickedAt: NOW - DAY_MS },
};

function confirmIn(state: ConfirmJob['state']): ConfirmJob {
  const job = newConfirmJob(input, { now: NOW, id: 'c1', policy });
  if (state === 'delivered')
    return completeJob(claimJob(job, { now: NOW, leaseMs: 1_000, token: 't' }), {
      now: NOW,
      campaignId: 'cmp_7',
    });
  return { ...job, state };
}

describe('newConfirmJob', () => {
  it('builds a pending job due now whose deadline is click + window − margin', () => {
    const job = newConfirmJob(input, { now: NOW, id: 'job_1', policy });
    expect(job).toMatchObject({
      kind: 'confirm',
      id: 'job_1',
      state: 'pending',
      attempts: 0,
      nextAttemptAt: NOW,
      deadline: NOW - DAY_MS + 7 * DAY_MS - 3_600_000,
      clickToken: 'tok_1',
      valueMicros: 5_000_000,
      clickedAt: NOW - DAY_MS,
      campaignId: null,
      lease: null,
    });
  });

  it('validates before building anything', () => {
    expect(() => newConfirmJob({ ...input, valueMicros: 0.5 }, { now: NOW, id: 'x' })).toThrow(
      JobValidationError,
    );
  });
});

describe('planRefund', () => {
  const ctx = (confirm: ConfirmJob | null) => ({ now: NOW, id: 'r1', policy, confirm, refund: null });

  it('cancels a pending or dead confirm instead of enqueueing a reversal', () => {
    for (const state of ['pending', 'dead'] as const) {
      const outcome = planRefund({ orderId: 'ord_1' }, ctx(confirmIn(state)));
      expect(outcome.outcome).toBe('cancelled');
      expect(outcome.job.state).toBe('cancelled');
    }
  });

  it('reports not-charged for an expired or cancelled confirm', () => {
    for (const state of ['expired', 'cancelled'] as const) {
      expect(planRefund({ orderId: 'ord_1' }, ctx(confirmIn(state))).outcome).toBe('not-charged');
    }
  });

  it('enqueues a reversal with the campaign and return-window deadline of a delivered confirm', () => {
    const outcome = planRefund({ orderId: 'ord_1' }, ctx(confirmIn('delivered')));
    expect(outcome).toMatchObject({
      outcome: 'enqueued',
      job: { kind: 'refund', campaignId: 'cmp_7', deadline: NOW + 14 * DAY_MS - 3_600_000 },
    });
  });

  it('enqueues a waiting reversal (no deadline) behind an inflight confirm', () => {
    const outcome = planRefund({ orderId: 'ord_1' }, ctx(confirmIn('inflight')));
    expect(outcome).toMatchObject({ outcome: 'enqueued', job: { deadline: null, campaignId: null } });
    expect(isClaimable(outcome.job as never, NOW + DAY_MS, confirmIn('inflight'))).toBe(false);
  });

  it('requires campaignId when the outbox knows no confirmation for the order', () => {
    expect(() => planRefund({ orderId: 'ord_9' }, ctx(null))).toThrow(
      expect.objectContaining({ field: 'campaignId' }),
    );
    expect(planRefund({ orderId: 'ord_9', campaignId: 'cmp_3' }, ctx(null))).toMatchObject({
      outcome: 'enqueued',
      job: { campaignId: 'cmp_3', deadline: NOW + 14 * DAY_MS - 3_600_000 },
    });
  });
});

describe('replayJob', () => {
  it('cancels a dead confirm whose order was refunded meanwhile, so a returned order is never charged', () => {
    expect(replayJob(confirmIn('dead'), { now: NOW, orderHasRefund: true }).state).toBe('cancelled');
    expect(replayJob(confirmIn('dead'), { now: NOW, orderHasRefund: false }).state).toBe('pending');
  });
});
