import { errorFromResponse } from '@postback/client/errors';
import { describe, expect, it } from 'vitest';
import type { Job, RefundJob } from '../job-types.ts';
import { classifyFailure } from './classify.ts';
import { notFoundReversal } from './record.ts';

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
const notFound = classifyFailure(
  errorFromResponse(404, { detail: 'no confirmed order ord_1 for campaign cmp_42' }),
);

describe('notFoundReversal', () => {
  it('ends a reversal answered 404 unmatched when its campaign came from the service’s answer', () => {
    expect(notFoundReversal(refund('answer'), notFound)).toEqual({
      state: 'unmatched',
      reason: expect.stringContaining('no confirmed order ord_1'),
    });
  });

  it.each(['caller', null] as const)(
    'dead-letters it, naming the campaign tried, when its campaign came from %s',
    (from) => {
      const outcome = notFoundReversal(refund(from), notFound);
      expect(outcome?.state).toBe('dead');
      expect(outcome?.reason).toMatch(/campaign cmp_42 .*no confirmed order ord_1/);
    },
  );

  it('leaves every other failure, and a confirmation’s 404, to the usual rules', () => {
    const unprocessable = classifyFailure(errorFromResponse(422, { detail: 'bad click' }));
    expect(notFoundReversal(refund('answer'), unprocessable)).toBeNull();
    const html404 = classifyFailure(errorFromResponse(404, '<html>not found</html>'));
    expect(html404.class).toBe('misconfigured');
    expect(notFoundReversal(refund('answer'), html404)).toBeNull();
    const confirm = { ...refund('answer'), kind: 'confirm' } as unknown as Job;
    expect(notFoundReversal(confirm, notFound)).toBeNull();
  });
});
