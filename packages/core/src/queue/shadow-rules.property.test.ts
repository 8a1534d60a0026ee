/**
 * Shadow mode's rules under random jobs and times (fast-check): the decision is `send` exactly for a job
 * created at or after the time given; a job ending shadow mode is pending (to be sent) only when it was to
 * be sent, its deadline has not passed and its order was not refunded; a dropped job names why; and the
 * scope checker refuses anything but `{ all: true }` or `{ account }`, naming the field.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../policy.ts';
import type { ConfirmJob } from './job-types.ts';
import { isShadowDropped, isShadowRecorded, SHADOW_RECORDED_REASON } from './shadow-mark.ts';
import { checkShadowScope, decideAtShadowEnd, decideRecorded, endShadowJob } from './shadow-rules.ts';
import { JobValidationError } from './validation.ts';

const T0 = Date.UTC(2026, 10, 1);

/** A confirm recorded in shadow mode, created at `createdAt`, with its deadline. */
function recorded(createdAt: number, deadline: number): ConfirmJob {
  return {
    kind: 'confirm',
    id: '1',
    orderId: 'ord_1',
    account: null,
    state: 'cancelled',
    attempts: 0,
    createdAt,
    updatedAt: createdAt,
    nextAttemptAt: createdAt,
    deadline,
    lastError: SHADOW_RECORDED_REASON,
    lease: null,
    deliveredAt: null,
    campaignId: null,
    maybeAppliedAt: null,
    heldAt: null,
    heldCampaignId: null,
    clickToken: 'tok_abcdefgh',
    valueMicros: 1_000_000,
    clickedAt: createdAt,
  };
}

const time = fc.integer({ min: T0, max: T0 + 14 * DAY_MS });

describe('shadow rules', () => {
  it('send exactly the jobs created at or after the time given, never one past its deadline or refunded', () => {
    fc.assert(
      fc.property(
        time,
        time,
        time,
        fc.option(time, { nil: null }),
        fc.boolean(),
        (createdAt, deadline, now, from, refunded) => {
          const job = recorded(createdAt, deadline);
          const decision = decideRecorded(job, { sendCreatedFrom: from });
          expect(decision).toBe(from !== null && createdAt >= from ? 'send' : 'drop');
          const next = endShadowJob(job, decision, { now, orderHasRefund: refunded, sendCreatedFrom: from });
          expect(isShadowRecorded(next)).toBe(false);
          expect(next.updatedAt).toBe(now);
          if (next.state === 'pending') {
            expect(decision).toBe('send');
            expect(deadline).toBeGreaterThanOrEqual(now);
            expect(refunded).toBe(false);
            expect(next).toMatchObject({ nextAttemptAt: now, attempts: 0, lastError: null });
          } else {
            expect(['cancelled', 'expired']).toContain(next.state);
            expect(next.lastError).toMatch(/^shadow end: /);
          }
          expect(isShadowDropped(next)).toBe(decision === 'drop');
        },
      ),
    );
  });

  it('sends every recorded reversal at the end, and decides every order as decideRecorded does', () => {
    fc.assert(
      fc.property(time, fc.option(time, { nil: null }), (createdAt, from) => {
        const options = { sendCreatedFrom: from };
        expect(decideAtShadowEnd({ kind: 'refund', createdAt }, options)).toBe('send');
        expect(decideAtShadowEnd({ kind: 'confirm', createdAt }, options)).toBe(
          decideRecorded({ createdAt }, options),
        );
      }),
    );
  });

  it('leaves a job that is not recorded as it is', () => {
    fc.assert(
      fc.property(time, fc.constantFrom('send' as const, 'drop' as const), (now, decision) => {
        const job = { ...recorded(T0, T0 + DAY_MS), lastError: 'cancelled by a refund before it was sent' };
        expect(endShadowJob(job, decision, { now, orderHasRefund: false })).toBe(job);
      }),
    );
  });

  it('takes only { all: true } or { account }, naming the field of anything else', () => {
    fc.assert(
      fc.property(fc.anything(), (scope) => {
        let checked: unknown;
        try {
          checked = checkShadowScope(scope);
        } catch (error) {
          expect(error).toBeInstanceOf(JobValidationError);
          expect(['scope', 'scope.account']).toContain((error as JobValidationError).field);
          return;
        }
        expect(checked).toSatisfy(
          (c: unknown) =>
            JSON.stringify(c) === '{"all":true}' ||
            (typeof c === 'object' && c !== null && Object.keys(c).join() === 'account'),
        );
      }),
    );
    expect(checkShadowScope({ account: 'shop-7' })).toEqual({ account: 'shop-7' });
    expect(checkShadowScope({ account: null })).toEqual({ account: null });
  });
});
