import { errorFromResponse } from '@postback/client/errors';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ConfirmJob, RefundJob } from '../job-types.ts';
import { newConfirmJob } from '../jobs.ts';
import { REQUEST_VALUE_PLACEHOLDER, withoutRequestValues } from './answer-words.ts';
import { classifyFailure } from './classify.ts';

const DAY = 86_400_000;
/** Words every pattern of the classifier looks for, and then some. */
const PATTERN_WORDS = [
  'pixel',
  'not on s2s',
  'not set to s2s',
  'conversion source',
  'expired',
  'older than',
  'window closed',
  'window has closed',
  'too late',
  'too old',
];

const word = fc.constantFrom(...PATTERN_WORDS);
/** An order id (or token) holding pattern words, in the characters an app may use. */
const idWithWords = fc
  .tuple(fc.stringMatching(/^[A-Za-z0-9_-]{0,8}$/), word, fc.stringMatching(/^[A-Za-z0-9 _-]{0,8}$/))
  .map(([a, w, b]) => `${a}${w}${b}`);
/** A click token holding pattern words, in its URL-safe characters. */
const tokenWithWords = idWithWords.map((id) => id.replaceAll(' ', '-'));

const confirm = (orderId: string, clickToken: string, clickedAt: number): ConfirmJob => ({
  ...newConfirmJob(
    { orderId, valueMicros: 42_000_000, click: { token: clickToken, clickedAt } },
    { now: clickedAt, id: 'job_1' },
  ),
  state: 'inflight',
});

const refund = (orderId: string, campaignId: string): RefundJob => ({
  kind: 'refund',
  id: 'r1',
  orderId,
  account: null,
  state: 'inflight',
  attempts: 1,
  createdAt: 0,
  updatedAt: 0,
  nextAttemptAt: 0,
  deadline: 30 * DAY,
  lastError: null,
  lease: { token: 't', expiresAt: 10 },
  deliveredAt: null,
  campaignId,
  campaignFrom: 'answer',
  maybeAppliedAt: null,
  heldAt: null,
  heldCampaignId: null,
});

describe('withoutRequestValues', () => {
  it('takes the order id, campaign, click token, value and key out of a detail', () => {
    const said = withoutRequestValues(
      'order_id pixel-7 (token tok_expired, 42000000 micros, key pbsk_1) of campaign cmp_old; 142000000 ok',
      {
        orderId: 'pixel-7',
        clickToken: 'tok_expired',
        valueMicros: 42_000_000,
        apiKey: 'pbsk_1',
        campaignId: 'cmp_old',
      },
    );
    const p = REQUEST_VALUE_PLACEHOLDER;
    expect(said).toBe(`order_id ${p} (token ${p}, ${p} micros, key ${p}) of campaign ${p}; 142000000 ok`);
  });

  it('changes no class: a detail echoing ids full of pattern words is classed as one echoing plain ids (property)', () => {
    const details = fc.constantFrom(
      (o: string, _t: string) =>
        `order_id ${o} was already confirmed with a different click_token or value_micros`,
      (o: string, t: string) => `click_token ${t} not found for order ${o}`,
      (o: string, t: string) => `campaign cmp_spring is not on s2s (order ${o}, click ${t})`,
      (o: string, t: string) => `click ${t} is older than 7 days; order ${o} refused`,
    );
    fc.assert(
      fc.property(
        idWithWords,
        tokenWithWords,
        details,
        fc.constantFrom(400, 404, 409, 422),
        fc.integer({ min: 0, max: 8 * DAY }),
        (orderId, clickToken, detailOf, status, age) => {
          const classOf = (o: string, t: string) =>
            classifyFailure(errorFromResponse(status, { detail: detailOf(o, t) }), {
              job: confirm(o, t, 1_000),
              at: 1_000 + age,
            }).class;
          expect(classOf(orderId, clickToken)).toBe(classOf('ord_1', 'tok_1'));
        },
      ),
    );
  });
});

describe('a refusal that echoes the request', () => {
  it('never turns an order id or click token holding pattern words into a hold or an expiry (property)', () => {
    fc.assert(
      fc.property(
        idWithWords,
        tokenWithWords,
        fc.constantFrom(400, 404, 409, 422),
        fc.integer({ min: 0, max: 5 * DAY }),
        (orderId, clickToken, status, age) => {
          const job = confirm(orderId, clickToken, 1_000);
          const details = [
            `order_id ${orderId} was already confirmed with a different click_token or value_micros`,
            `click_token ${clickToken} not found`,
            `order ${orderId} is invalid`,
          ];
          for (const detail of details) {
            const failure = classifyFailure(errorFromResponse(status, { detail }), { job, at: 1_000 + age });
            expect(failure.class).toBe('permanent');
          }
        },
      ),
    );
  });

  it('never turns a reversal’s 404 that names pattern words of its order or campaign into a hold or an expiry (property)', () => {
    fc.assert(
      fc.property(idWithWords, fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/), (orderId, tail) => {
        const campaignId = `cmp_pixel_expired_${tail}`;
        const detail = `no confirmed order ${orderId} for campaign ${campaignId}`;
        const failure = classifyFailure(errorFromResponse(404, { detail }), {
          job: refund(orderId, campaignId),
        });
        expect(failure.class).toBe('unmatched');
      }),
    );
  });

  it('still holds the service’s own "not on s2s" 422 and names its campaign, whatever the order id', () => {
    const job = confirm('pixel-7', 'tok_cmp_evil', 1_000);
    const detail = 'campaign cmp_spring is not on s2s: its conversion source is pixel';
    const failure = classifyFailure(errorFromResponse(422, { detail }), { job, at: 2_000 });
    expect(failure).toMatchObject({ class: 'held', campaignId: 'cmp_spring' });
  });

  it('holds only an answer of a hold status: a 409 or a 400 saying "pixel" is not a hold', () => {
    const job = confirm('ord_1', 'tok_1', 1_000);
    const detail = 'campaign cmp_spring is not on s2s: its conversion source is pixel';
    for (const status of [400, 403, 404, 409]) {
      const failure = classifyFailure(errorFromResponse(status, { detail }), { job, at: 2_000 });
      expect(failure.class).not.toBe('held');
    }
    const custom = classifyFailure(errorFromResponse(400, { detail }), {
      job,
      at: 2_000,
      holdStatuses: [400],
    });
    expect(custom.class).toBe('held');
  });

  it('believes a confirmation’s closed window only once its click is old enough, and never on a 409', () => {
    const clickedAt = 1_000;
    const job = confirm('ord_1', 'tok_1', clickedAt);
    const detail = 'click is older than 7 days; confirmations are accepted for 7 days after the click';
    const at = (age: number) => ({ job, at: clickedAt + age });
    expect(classifyFailure(errorFromResponse(422, { detail }), at(2 * DAY)).class).toBe('permanent');
    expect(classifyFailure(errorFromResponse(422, { detail }), at(6 * DAY + 1)).class).toBe('window-closed');
    expect(classifyFailure(errorFromResponse(422, { detail }), at(8 * DAY)).class).toBe('window-closed');
    expect(classifyFailure(errorFromResponse(409, { detail }), at(8 * DAY)).class).toBe('permanent');
    // A reversal has no click of its own: its closed window is believed.
    const late = 'return window closed: order ord_1 was confirmed long ago';
    const reversal = classifyFailure(errorFromResponse(422, { detail: late }), {
      job: refund('ord_1', 'cmp_1'),
    });
    expect(reversal.class).toBe('window-closed');
  });
});
