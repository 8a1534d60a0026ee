import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../policy.ts';
import type { ConfirmJob } from './job-types.ts';
import { newConfirmJob } from './jobs.ts';
import { planRefund } from './refund-rules.ts';
import { planWithdraw } from './withdraw-rules.ts';

const NOW = Date.UTC(2026, 0, 15, 12);
const confirm = (state: 'pending' | 'dead', updatedAt: number): ConfirmJob => ({
  ...newConfirmJob(
    { orderId: 'ord_1', valueMicros: 5_000_000, click: { token: 'tok_1', clickedAt: NOW - DAY_MS } },
    { now: NOW - 1_000, id: 'c1' },
  ),
  state,
  updatedAt,
  lastError: state === 'dead' ? 'HTTP 400: bad value' : null,
});

describe('the cancel step of a refund and of a withdrawal', () => {
  it.each([
    ['pending', NOW - 1_000],
    ['dead', NOW - 1_000],
    // A store clock behind the job's last change never moves updatedAt back.
    ['dead', NOW + 5_000],
  ] as const)(
    'writes the same cancelled %s confirm (updated at %i), only the reason differs',
    (state, updatedAt) => {
      const job = confirm(state, updatedAt);
      const byRefund = planRefund({ orderId: 'ord_1' }, { now: NOW, id: 'r1', confirm: job, refund: null });
      const byWithdrawal = planWithdraw(job, NOW);
      expect(byRefund.outcome).toBe('cancelled');
      expect(byWithdrawal.outcome).toBe('cancelled');
      const { lastError: refundReason, ...refunded } = byRefund.job as ConfirmJob;
      const { lastError: withdrawReason, ...withdrawn } = byWithdrawal.job as ConfirmJob;
      expect(refunded).toEqual(withdrawn);
      expect(refunded).toMatchObject({
        state: 'cancelled',
        lease: null,
        updatedAt: Math.max(updatedAt, NOW),
      });
      expect(refundReason).toMatch(/refund/);
      expect(withdrawReason).toMatch(/consent was withdrawn/);
    },
  );
});
