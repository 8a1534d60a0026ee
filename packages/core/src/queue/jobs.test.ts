import { describe, expect, it } from 'vitest';
import { DAY_MS, resolvePolicy } from '../policy.ts';
import type { ConfirmJob, RefundJob } from './job-types.ts';
import { claimJob, completeJob, failJob, isClaimable, newConfirmJob, replayJob, retryJob } from './jobs.ts';
import { mayHaveCharged, planRefund, refundAfterConfirm } from './refund-rules.ts';
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
      maybeAppliedAt: null,
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

const LEASE = { leaseMs: 1_000, token: 't' };
const RETURN_DEADLINE = (at: number) => at + 14 * DAY_MS - 3_600_000;
/** A confirm ended in `state` whose request may have reached the service at `at`. */
const maybeApplied = (state: ConfirmJob['state'], at = NOW - 5_000): ConfirmJob => ({
  ...confirmIn(state === 'delivered' ? 'pending' : state),
  state,
  maybeAppliedAt: at,
});
const waitingRefund = (campaignId: string | null = null): RefundJob => {
  const outcome = planRefund(
    { orderId: 'ord_1', ...(campaignId === null ? {} : { campaignId }) },
    { now: NOW - 10_000, id: 'r1', policy, confirm: confirmIn('inflight'), refund: null },
  );
  return outcome.job as RefundJob;
};

describe('maybeAppliedAt', () => {
  it('retryJob and failJob set it to now only with maybeApplied, and keep the first time after', () => {
    const claimed = claimJob(confirmIn('pending'), { now: NOW, ...LEASE });
    expect(
      retryJob(claimed, { now: NOW + 1, nextAttemptAt: NOW + 2, error: 'HTTP 503' }).maybeAppliedAt,
    ).toBe(null);
    const lost = retryJob(claimed, { now: NOW + 1, nextAttemptAt: NOW + 2, error: 'x', maybeApplied: true });
    expect(lost.maybeAppliedAt).toBe(NOW + 1);
    const again = claimJob(lost, { now: NOW + 2, ...LEASE });
    expect(again.maybeAppliedAt).toBe(NOW + 1);
    expect(
      failJob(again, { now: NOW + 3, state: 'dead', reason: 'r', maybeApplied: true }).maybeAppliedAt,
    ).toBe(NOW + 1);
    expect(failJob(again, { now: NOW + 3, state: 'expired', reason: 'r' }).maybeAppliedAt).toBe(NOW + 1);
    expect(
      failJob(claimed, { now: NOW + 3, state: 'dead', reason: 'r', maybeApplied: true }).maybeAppliedAt,
    ).toBe(NOW + 3);
    expect(failJob(claimed, { now: NOW + 3, state: 'dead', reason: 'r' }).maybeAppliedAt).toBe(null);
  });

  it('claimJob sets it to the updatedAt of an inflight job it retakes, never for a pending one', () => {
    const first = claimJob(confirmIn('pending'), { now: NOW, ...LEASE });
    expect(first.maybeAppliedAt).toBe(null);
    const retaken = claimJob({ ...first, updatedAt: NOW + 500 }, { now: NOW + 2_000, ...LEASE });
    expect(retaken.maybeAppliedAt).toBe(NOW + 500);
    expect(claimJob(retaken, { now: NOW + 9_000, ...LEASE }).maybeAppliedAt).toBe(NOW + 500);
  });

  it('mayHaveCharged is true for a delivered confirm or one with maybeAppliedAt', () => {
    expect(mayHaveCharged(confirmIn('delivered'))).toBe(true);
    expect(mayHaveCharged(confirmIn('dead'))).toBe(false);
    expect(mayHaveCharged(maybeApplied('expired'))).toBe(true);
  });
});

describe('planRefund of a confirm that may have been applied', () => {
  const ctx = (confirm: ConfirmJob | null, refund: RefundJob | null = null) => ({
    now: NOW,
    id: 'r2',
    policy,
    confirm,
    refund,
  });

  it('enqueues a reversal from maybeAppliedAt for a dead or expired confirm, instead of cancelled / not-charged', () => {
    for (const state of ['dead', 'expired'] as const) {
      const confirm = maybeApplied(state);
      const outcome = planRefund({ orderId: 'ord_1' }, ctx(confirm));
      expect(outcome).toMatchObject({
        outcome: 'enqueued',
        job: { kind: 'refund', state: 'pending', campaignId: null, deadline: RETURN_DEADLINE(NOW - 5_000) },
      });
      const named = planRefund({ orderId: 'ord_1', campaignId: 'cmp_2' }, ctx(confirm));
      expect(named.job.campaignId).toBe('cmp_2');
    }
  });

  it('takes the campaign of the confirm when it is known', () => {
    const confirm = { ...maybeApplied('dead'), campaignId: 'cmp_4' };
    expect(planRefund({ orderId: 'ord_1' }, ctx(confirm)).job.campaignId).toBe('cmp_4');
  });

  it('enqueues a waiting reversal behind a pending confirm instead of cancelling it', () => {
    const outcome = planRefund({ orderId: 'ord_1' }, ctx(maybeApplied('pending')));
    expect(outcome).toMatchObject({ outcome: 'enqueued', job: { kind: 'refund', deadline: null } });
  });

  it('still reports not-charged for a cancelled confirm', () => {
    expect(planRefund({ orderId: 'ord_1' }, ctx(maybeApplied('cancelled'))).outcome).toBe('not-charged');
  });

  it('updates a pending refund with no campaign to the given one, leaving it waiting', () => {
    const refund = waitingRefund();
    const outcome = planRefund({ orderId: 'ord_1', campaignId: 'cmp_8' }, ctx(confirmIn('inflight'), refund));
    expect(outcome).toEqual({
      outcome: 'updated',
      job: { ...refund, campaignId: 'cmp_8', campaignFrom: 'caller', updatedAt: NOW },
    });
  });

  it('updates a dead refund with no campaign to pending, due now, attempts reset', () => {
    const dead: RefundJob = {
      ...waitingRefund(),
      state: 'dead',
      attempts: 3,
      deadline: NOW + DAY_MS,
      lastError: 'no campaign',
    };
    const outcome = planRefund({ orderId: 'ord_1', campaignId: 'cmp_8' }, ctx(maybeApplied('dead'), dead));
    expect(outcome).toEqual({
      outcome: 'updated',
      job: {
        ...dead,
        campaignId: 'cmp_8',
        campaignFrom: 'caller',
        state: 'pending',
        attempts: 0,
        nextAttemptAt: NOW,
        updatedAt: NOW,
        lastError: null,
        lease: null,
      },
    });
  });

  it('is a duplicate when the refund has a campaign, no campaign is given, or the refund is not waiting', () => {
    const confirm = confirmIn('inflight');
    expect(
      planRefund({ orderId: 'ord_1', campaignId: 'cmp_x' }, ctx(confirm, waitingRefund('cmp_c'))).outcome,
    ).toBe('duplicate');
    expect(planRefund({ orderId: 'ord_1' }, ctx(confirm, waitingRefund())).outcome).toBe('duplicate');
    const delivered = { ...waitingRefund(), state: 'delivered' as const };
    expect(planRefund({ orderId: 'ord_1', campaignId: 'cmp_x' }, ctx(confirm, delivered)).outcome).toBe(
      'duplicate',
    );
  });
});

describe('refundAfterConfirm', () => {
  it('leaves the refund waiting while the confirm is pending or inflight', () => {
    const refund = waitingRefund();
    expect(refundAfterConfirm(refund, confirmIn('inflight'), policy)).toBe(refund);
    expect(refundAfterConfirm(refund, maybeApplied('pending'), policy)).toBe(refund);
  });

  it('follows a delivered confirm: its campaign and a deadline from the delivery', () => {
    const next = refundAfterConfirm(waitingRefund(), confirmIn('delivered'), policy);
    expect(next).toMatchObject({ state: 'pending', campaignId: 'cmp_7', deadline: RETURN_DEADLINE(NOW) });
  });

  it('follows a confirm that ended dead or expired maybe applied, counting from maybeAppliedAt', () => {
    for (const state of ['dead', 'expired'] as const) {
      const next = refundAfterConfirm(waitingRefund('cmp_1'), maybeApplied(state, NOW - 7_000), policy);
      expect(next).toMatchObject({
        state: 'pending',
        campaignId: 'cmp_1',
        deadline: RETURN_DEADLINE(NOW - 7_000),
      });
    }
  });

  it('cancels the refund when the confirm ended never charged', () => {
    for (const state of ['dead', 'expired', 'cancelled'] as const) {
      const next = refundAfterConfirm(waitingRefund(), confirmIn(state), policy);
      expect(next.state).toBe('cancelled');
      expect(next.lastError).toContain(state);
    }
  });

  it('changes nothing of a refund that is no longer pending, or already has its deadline', () => {
    const dead = { ...waitingRefund(), state: 'dead' as const };
    expect(refundAfterConfirm(dead, confirmIn('dead'), policy)).toBe(dead);
    const following = refundAfterConfirm(waitingRefund(), confirmIn('delivered'), policy);
    expect(refundAfterConfirm(following, confirmIn('delivered'), policy)).toBe(following);
  });
});

describe('replayJob of a maybe-applied confirm', () => {
  it('cancels it when its order has a refund, keeping maybeAppliedAt', () => {
    const replayed = replayJob(maybeApplied('dead'), { now: NOW, orderHasRefund: true });
    expect(replayed).toMatchObject({ state: 'cancelled', maybeAppliedAt: NOW - 5_000 });
  });
});
