import { errorFromResponse } from '@postback/client/errors';
import { describe, expect, it } from 'vitest';
import type { Job, RefundJob } from '../job-types.ts';
import { classifyFailure } from './classify.ts';

const refund = (campaignFrom: RefundJob['campaignFrom']): RefundJob => ({
  kind: 'refund',
  id: 'r1',
  orderId: 'ord_1',
  account: null,
  state: 'inflight',
  attempts: 1,
  createdAt: 0,
  updatedAt: 0,
  nextAttemptAt: 0,
  deadline: 1_000,
  lastError: null,
  lease: { token: 't', expiresAt: 10 },
  deliveredAt: null,
  campaignId: 'cmp_42',
  campaignFrom,
  maybeAppliedAt: null,
  heldAt: null,
  heldCampaignId: null,
});
const detail = 'no confirmed order ord_1 for campaign cmp_42';
const notFound = (job: Job) => classifyFailure(errorFromResponse(404, { detail }), { job });

describe('a reversal answered 404 (classified in classify.ts)', () => {
  it('ends it unmatched when its campaign came from the service’s answer', () => {
    expect(notFound(refund('answer'))).toMatchObject({
      class: 'unmatched',
      reason: expect.stringContaining('no confirmed order ord_1'),
    });
  });

  it.each(['caller', null] as const)(
    'dead-letters it, naming the campaign tried, when its campaign came from %s',
    (from) => {
      const failure = notFound(refund(from));
      expect(failure.class).toBe('permanent');
      expect(failure.reason).toMatch(/campaign cmp_42 .*no confirmed order ord_1/);
    },
  );

  it('leaves every other failure, and a confirmation’s 404, to the usual rules', () => {
    const job = refund('answer');
    const unprocessable = classifyFailure(errorFromResponse(422, { detail: 'bad click' }), { job });
    expect(unprocessable.class).toBe('permanent');
    const html404 = classifyFailure(errorFromResponse(404, '<html>not found</html>'), { job });
    expect(html404.class).toBe('misconfigured');
    const confirm = { ...refund('answer'), kind: 'confirm', clickToken: 't', valueMicros: 1, clickedAt: 0 };
    expect(notFound(confirm as unknown as Job).class).toBe('permanent');
  });
});
