/** Property tests of the message codec: bodies round-trip, FIFO ids are always valid and never collide. */

import type { Job } from '@postback/core';
import { ATTEMPT_HISTORY_LIMIT } from '@postback/core/store';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { MalformedMessageError } from '../src/errors.ts';
import {
  decodeJobBody,
  deduplicationIdOf,
  encodeJobBody,
  fairGroupIdOf,
  jobOfBody,
  messageGroupIdOf,
  NO_ACCOUNT_GROUP_ID,
} from '../src/message-codec.ts';

const FIFO_ID = /^[\x21-\x7e]{1,128}$/;
const epoch = fc.integer({ min: 0, max: 4_102_444_800_000 });
const orderId = fc.string({ minLength: 1, maxLength: 255, unit: 'grapheme' });
const account = fc
  .string({ minLength: 1, maxLength: 200, unit: 'grapheme' })
  .filter((a) => !/\p{Cc}/u.test(a));

const confirmJob = fc.record({
  id: fc.uuid(),
  orderId,
  account: fc.option(account, { nil: null }),
  createdAt: epoch,
  deadline: epoch,
  clickToken: fc.stringMatching(/^[A-Za-z0-9._~+/=-]{1,64}$/),
  valueMicros: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
  clickedAt: epoch,
  campaignId: fc.option(fc.stringMatching(/^cmp_[A-Za-z0-9]{1,12}$/), { nil: null }),
  maybeAppliedAt: fc.option(epoch, { nil: null }),
});

type ConfirmFields = typeof confirmJob extends fc.Arbitrary<infer T> ? T : never;

const sampleConfirm: ConfirmFields = {
  id: 'c1',
  orderId: 'A-1',
  account: null,
  createdAt: 5,
  deadline: 9,
  clickToken: 'tok_1',
  valueMicros: 1_000,
  clickedAt: 4,
  campaignId: null,
  maybeAppliedAt: null,
};

function asJob(fields: ConfirmFields): Job {
  return {
    kind: 'confirm',
    state: 'pending',
    attempts: 0,
    updatedAt: fields.createdAt,
    nextAttemptAt: fields.createdAt,
    lastError: null,
    lease: null,
    heldAt: null,
    heldCampaignId: null,
    deliveredAt: null,
    ...fields,
  };
}

/** What a body not re-sent for a hold or a pause decodes to (none of these fields is written). */
const NOT_RESENT = { priorAttempts: 0, notBefore: null, heldAt: null, heldCampaignId: null };

describe('job bodies', () => {
  test('a confirm job survives encoding and decoding with everything a worker needs to send it', () => {
    fc.assert(
      fc.property(confirmJob, (fields) => {
        const job = asJob(fields);
        const body = decodeJobBody(encodeJobBody(job));
        expect(body).toEqual({ v: 1, kind: 'confirm', ...fields, history: [], ...NOT_RESENT });
      }),
    );
  });

  test('a refund job whose deadline is not known yet keeps a null deadline and campaign', () => {
    const refund: Job = {
      kind: 'refund',
      id: 'r1',
      orderId: 'A-1',
      account: null,
      state: 'pending',
      attempts: 0,
      createdAt: 5,
      updatedAt: 5,
      nextAttemptAt: 5,
      deadline: null,
      lastError: null,
      lease: null,
      deliveredAt: null,
      campaignId: null,
      campaignFrom: null,
      maybeAppliedAt: null,
      heldAt: null,
      heldCampaignId: null,
    };
    // No campaign source: the body stays what earlier versions wrote.
    expect(encodeJobBody(refund)).not.toContain('campaignFrom');
    expect(decodeJobBody(encodeJobBody(refund))).toEqual({
      v: 1,
      kind: 'refund',
      id: 'r1',
      orderId: 'A-1',
      account: null,
      createdAt: 5,
      deadline: null,
      campaignId: null,
      campaignFrom: null,
      maybeAppliedAt: null,
      history: [],
      ...NOT_RESENT,
    });
  });

  test('a refund keeps where its campaign came from; a body without it reads null (unknown)', () => {
    const body = JSON.parse(
      encodeJobBody({
        kind: 'refund',
        id: 'r2',
        orderId: 'A-2',
        account: null,
        state: 'pending',
        attempts: 0,
        createdAt: 5,
        updatedAt: 5,
        nextAttemptAt: 5,
        deadline: 9,
        lastError: null,
        lease: null,
        deliveredAt: null,
        campaignId: 'cmp_1',
        campaignFrom: 'answer',
        maybeAppliedAt: null,
        heldAt: null,
        heldCampaignId: null,
      }),
    );
    expect(decodeJobBody(JSON.stringify(body))).toMatchObject({ campaignFrom: 'answer' });
    delete body.campaignFrom;
    expect(decodeJobBody(JSON.stringify(body))).toMatchObject({ campaignFrom: null });
    expect(() => decodeJobBody(JSON.stringify({ ...body, campaignFrom: 'guess' }))).toThrow(/campaignFrom/);
  });

  test('a body written before maybeAppliedAt existed decodes with maybeAppliedAt null', () => {
    const before = JSON.stringify({
      v: 1,
      id: 'c1',
      orderId: 'A-1',
      createdAt: 5,
      deadline: 9,
      campaignId: null,
      kind: 'confirm',
      clickToken: 'tok_1',
      valueMicros: 1_000,
      clickedAt: 4,
    });
    expect(decodeJobBody(before)).toMatchObject({ id: 'c1', maybeAppliedAt: null, account: null });
  });

  test('the account is written only when the job has one, so a job without one keeps today’s body', () => {
    const none = asJob(sampleConfirm);
    expect(encodeJobBody(none)).toBe(
      '{"v":1,"id":"c1","orderId":"A-1","createdAt":5,"deadline":9,"campaignId":null,"kind":"confirm","clickToken":"tok_1","valueMicros":1000,"clickedAt":4}',
    );
    const shop = asJob({ ...sampleConfirm, account: 'shop-17' });
    expect(JSON.parse(encodeJobBody(shop)).account).toBe('shop-17');
    expect(decodeJobBody(encodeJobBody(shop)).account).toBe('shop-17');
    const empty = { ...JSON.parse(encodeJobBody(none)), account: '' };
    expect(() => decodeJobBody(JSON.stringify(empty))).toThrow(MalformedMessageError);
  });

  test('maybeAppliedAt is written only when set, so a fresh job’s body stays what earlier workers read', () => {
    fc.assert(
      fc.property(confirmJob, (fields) => {
        const text = encodeJobBody(asJob(fields));
        expect('maybeAppliedAt' in JSON.parse(text)).toBe(fields.maybeAppliedAt !== null);
      }),
    );
    const maybeApplied = asJob({ ...sampleConfirm, maybeAppliedAt: 7 });
    expect(decodeJobBody(encodeJobBody(maybeApplied)).maybeAppliedAt).toBe(7);
  });

  test('a body re-sent for a hold or a pause carries its attempts, held fields and due time back into the job', () => {
    fc.assert(
      fc.property(
        confirmJob,
        fc.nat({ max: 1_000 }),
        fc.option(epoch, { nil: null }),
        fc.option(fc.record({ heldAt: epoch, campaign: fc.option(fc.constant('cmp_pix'), { nil: null }) }), {
          nil: null,
        }),
        (fields, attempts, notBefore, held) => {
          const job: Job = {
            ...asJob(fields),
            attempts,
            heldAt: held?.heldAt ?? null,
            heldCampaignId: held?.campaign ?? null,
          };
          const body = decodeJobBody(encodeJobBody(job, [], { notBefore }));
          expect(body).toMatchObject({
            priorAttempts: attempts,
            notBefore,
            ...(held ? { heldAt: held.heldAt } : {}),
          });
          const back = jobOfBody(body, {
            state: 'pending',
            attempts: body.priorAttempts + 1,
            updatedAt: 0,
            lease: null,
            campaignId: null,
            maybeAppliedAt: null,
            lastError: null,
          });
          expect(back).toMatchObject({
            attempts: attempts + 1,
            heldAt: job.heldAt,
            heldCampaignId: job.heldAt === null ? null : job.heldCampaignId,
          });
          // A body not re-sent writes none of these fields.
          for (const key of ['priorAttempts', 'notBefore', 'heldAt', 'heldCampaignId'])
            expect(JSON.parse(encodeJobBody(job))).not.toHaveProperty(key);
        },
      ),
    );
  });

  test('the attempt history travels only when there is one, keeps the newest 20, and a bad one reads as none', () => {
    const job = asJob(sampleConfirm);
    expect('history' in JSON.parse(encodeJobBody(job))).toBe(false);
    const attempts = Array.from({ length: ATTEMPT_HISTORY_LIMIT + 2 }, (_, i) => ({
      startedAt: i,
      durationMs: 10,
      outcome: 'transient',
      status: i % 2 === 0 ? 503 : null,
      detail: i % 2 === 0 ? `try ${i}` : null,
    }));
    const decoded = decodeJobBody(encodeJobBody(job, attempts));
    expect(decoded.history).toEqual(attempts.slice(2));
    // Attempts are for operators: an unreadable history never dead-letters a job that can be sent.
    const broken = { ...JSON.parse(encodeJobBody(job)), history: [{ startedAt: 'yesterday' }] };
    expect(decodeJobBody(JSON.stringify(broken)).history).toEqual([]);
  });

  test('any body that is not a job of this format is refused with a MalformedMessageError naming the field', () => {
    const cases: Array<[string, string]> = [
      ['not json at all', 'body'],
      ['{"v":2,"kind":"confirm"}', 'v'],
      [
        JSON.stringify({
          v: 1,
          kind: 'confirm',
          id: 'x',
          orderId: 'o',
          createdAt: 1,
          deadline: 2,
          campaignId: null,
          clickToken: 't',
          valueMicros: 1.5,
          clickedAt: 1,
        }),
        'valueMicros',
      ],
      [
        JSON.stringify({
          v: 1,
          kind: 'refund',
          id: 'x',
          orderId: '',
          createdAt: 1,
          deadline: 2,
          campaignId: null,
        }),
        'orderId',
      ],
      [
        JSON.stringify({
          v: 1,
          kind: 'refund',
          id: 'x',
          orderId: 'o',
          createdAt: 1,
          deadline: 2,
          campaignId: null,
          extra: 1,
        }),
        'body',
      ],
    ];
    for (const [text, field] of cases) {
      const err = (() => {
        try {
          decodeJobBody(text);
          return null;
        } catch (e) {
          return e;
        }
      })();
      expect(err, text).toBeInstanceOf(MalformedMessageError);
      expect((err as MalformedMessageError).field).toBe(field);
    }
    fc.assert(
      fc.property(fc.string(), (text) => {
        try {
          decodeJobBody(text);
        } catch (e) {
          expect(e).toBeInstanceOf(MalformedMessageError);
        }
      }),
    );
  });
});

describe('FIFO identifiers', () => {
  test('group and deduplication ids are always 1–128 printable ASCII characters, whatever the order id', () => {
    fc.assert(
      fc.property(orderId, (id) => {
        expect(messageGroupIdOf(id)).toMatch(FIFO_ID);
        expect(deduplicationIdOf('confirm', id)).toMatch(FIFO_ID);
        expect(deduplicationIdOf('refund', id)).toMatch(FIFO_ID);
      }),
    );
  });

  test('an order keeps its group id (so a refund lands behind its confirmation), and two orders never share one', () => {
    fc.assert(
      fc.property(orderId, orderId, (a, b) => {
        expect(messageGroupIdOf(a)).toBe(messageGroupIdOf(a));
        if (a !== b) expect(messageGroupIdOf(a)).not.toBe(messageGroupIdOf(b));
      }),
    );
    // An order id shaped like a hashed key does not collide with the order it was hashed from.
    const long = 'x'.repeat(200);
    expect(messageGroupIdOf(messageGroupIdOf(long))).not.toBe(messageGroupIdOf(long));
  });

  test('the confirm and the refund of one order have different deduplication ids', () => {
    fc.assert(
      fc.property(orderId, (id) => {
        expect(deduplicationIdOf('confirm', id)).not.toBe(deduplicationIdOf('refund', id));
      }),
    );
  });

  test('with an account, ids stay valid, differ from the same order id without one or in another account', () => {
    fc.assert(
      fc.property(orderId, account, account, (id, a, b) => {
        expect(messageGroupIdOf(id, a)).toMatch(FIFO_ID);
        expect(deduplicationIdOf('confirm', id, a)).toMatch(FIFO_ID);
        expect(messageGroupIdOf(id, a)).not.toBe(messageGroupIdOf(id));
        expect(messageGroupIdOf(id, null)).toBe(messageGroupIdOf(id));
        if (a !== b) expect(messageGroupIdOf(id, a)).not.toBe(messageGroupIdOf(id, b));
        expect(deduplicationIdOf('confirm', id, a)).not.toBe(deduplicationIdOf('confirm', id));
      }),
    );
  });

  test('the fair-queue group of a standard queue is the account (valid, distinct), one fixed group without one', () => {
    fc.assert(
      fc.property(account, account, (a, b) => {
        expect(fairGroupIdOf(a)).toMatch(FIFO_ID);
        expect(fairGroupIdOf(a)).not.toBe(NO_ACCOUNT_GROUP_ID);
        if (a !== b) expect(fairGroupIdOf(a)).not.toBe(fairGroupIdOf(b));
      }),
    );
    expect(fairGroupIdOf('shop-17')).toBe('a:shop-17');
    expect(fairGroupIdOf(null)).toBe('none');
  });

  test('a short printable order id stays readable in the AWS console', () => {
    expect(messageGroupIdOf('A-1001')).toBe('o:A-1001');
    expect(deduplicationIdOf('confirm', 'A-1001')).toBe('c:o:A-1001');
    expect(messageGroupIdOf('commande n°7')).toMatch(/^h:[0-9a-f]{64}$/);
  });
});
