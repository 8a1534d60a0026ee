/**
 * The SQS outbox and core's job model for confirmations that may have reached the service: what SQS and
 * the order ledger keep of `maybeAppliedAt` (retry, failure, replay, a lease that ran out), what they do
 * not mistake for it (a clean retry, a release, a hand-back), and what a refund does after such a
 * confirmation (sent, never cancelled; a missing campaign supplied later). Real SDK, emulated SQS.
 */
import type { Job } from '@postback/core';
import { refundDeadlineOf, resolvePolicy } from '@postback/core/store';
import { afterEach, describe, expect, test } from 'vitest';
import { STATE_ATTRIBUTE } from '../src/dead-letter.ts';
import { createMemoryOrderLedger, type SqsOutbox } from '../src/index.ts';
import { type Harness, startHarness } from './harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const LEASE = 30_000;
const policy = resolvePolicy();

function open(): SqsOutbox {
  h = startHarness();
  return h.outbox({ ledger: createMemoryOrderLedger() });
}
const confirmInput = (orderId: string) => ({
  orderId,
  valueMicros: 1_000,
  click: { token: `tok_${orderId}`, clickedAt: h.sqs.now() - 60_000 },
});
async function claimOne(outbox: SqsOutbox): Promise<Job> {
  const jobs = await outbox.claim({ now: h.sqs.now(), limit: 10, leaseMs: LEASE });
  expect(jobs).toHaveLength(1);
  return jobs[0] as Job;
}

describe('what the outbox keeps of maybeAppliedAt', () => {
  test('a retry that may have been applied is remembered by the next receive, at the time of that retry', async () => {
    const outbox = open();
    await outbox.confirm(confirmInput('A-1'));
    const first = await claimOne(outbox);
    h.sqs.advance(1_000);
    const retriedAt = h.sqs.now();
    const error = 'the answer was lost';
    await outbox.retry(first, { now: retriedAt, nextAttemptAt: retriedAt, error, maybeApplied: true });
    h.sqs.advance(1_000);
    const again = await claimOne(outbox);
    expect(again).toMatchObject({ id: first.id, attempts: 2, maybeAppliedAt: retriedAt });
    // A later clean retry keeps the first time.
    await outbox.retry(again, { now: h.sqs.now(), nextAttemptAt: h.sqs.now(), error: 'HTTP 503' });
    expect(await claimOne(outbox)).toMatchObject({ attempts: 3, maybeAppliedAt: retriedAt });
  });

  test('a message retaken after its visibility ran out (the worker died holding it) is marked maybe applied', async () => {
    const outbox = open();
    const { job } = await outbox.confirm(confirmInput('A-1'));
    h.sqs.advance(5_000);
    const first = await claimOne(outbox);
    expect(first.maybeAppliedAt).toBeNull();
    h.sqs.advance(LEASE); // no outcome recorded: the lease runs out
    const retaken = await claimOne(outbox);
    // The receive that died came after the last recorded outcome (the enqueue): its time is the bound kept.
    expect(retaken).toMatchObject({ id: job.id, attempts: 2, maybeAppliedAt: job.updatedAt });
  });

  test('a clean retry, a release and a hand-back are recorded outcomes, not leases that ran out', async () => {
    const outbox = open();
    await outbox.confirm(confirmInput('A-1'));
    await outbox.refund({ orderId: 'A-1', campaignId: 'cmp_1' });
    // One receive hands out the confirm and hands the refund behind it back.
    const first = await claimOne(outbox);
    expect(first.kind).toBe('confirm');
    // An auth pause gives the attempt back (SQS cannot): still an outcome of this receive.
    const paused = { now: h.sqs.now(), nextAttemptAt: h.sqs.now(), error: 'HTTP 401', countAttempt: false };
    await outbox.retry(first, paused);
    const second = await claimOne(outbox);
    await outbox.release([second], h.sqs.now());
    const third = await claimOne(outbox);
    expect(third).toMatchObject({ attempts: 3, maybeAppliedAt: null });
    expect(await outbox.complete(third, { now: h.sqs.now(), campaignId: 'cmp_1' })).toBe(true);
    const refund = await claimOne(outbox);
    expect(refund).toMatchObject({ kind: 'refund', maybeAppliedAt: null });
    expect(refund.attempts).toBeGreaterThan(1); // it was received (and handed back) before
  });

  test('a failure that may have been applied is in the dead letter, the ledger, and the replayed message', async () => {
    const outbox = open();
    const { job } = await outbox.confirm(confirmInput('A-1'));
    const claimed = await claimOne(outbox);
    const failedAt = h.sqs.now();
    const result = { now: failedAt, state: 'dead' as const, reason: 'HTTP 200, unreadable body' };
    expect(await outbox.fail(claimed, { ...result, maybeApplied: true })).toBe(true);
    expect(await outbox.listDead()).toEqual([
      expect.objectContaining({ id: job.id, maybeAppliedAt: failedAt }),
    ]);
    expect(await outbox.getByOrder('A-1')).toEqual([
      expect.objectContaining({ state: 'dead', maybeAppliedAt: failedAt }),
    ]);
    h.sqs.advance(1_000);
    expect(await outbox.replay({ ids: [job.id] }, h.sqs.now())).toBe(1);
    expect(await claimOne(outbox)).toMatchObject({ id: job.id, attempts: 1, maybeAppliedAt: failedAt });
  });
});

test('without a ledger, a failure that may have been applied still reaches the dead letter and its replay', async () => {
  h = startHarness();
  const outbox = h.outbox();
  const { job } = await outbox.confirm(confirmInput('A-1'));
  const failedAt = h.sqs.now();
  const lost = {
    now: failedAt,
    state: 'dead' as const,
    reason: 'timed out after sending',
    maybeApplied: true,
  };
  expect(await outbox.fail(await claimOne(outbox), lost)).toBe(true);
  expect(await outbox.listDead()).toEqual([
    expect.objectContaining({ id: job.id, maybeAppliedAt: failedAt }),
  ]);
  expect(await outbox.replay({ ids: [job.id] }, h.sqs.now())).toBe(1);
  expect(await claimOne(outbox)).toMatchObject({ id: job.id, maybeAppliedAt: failedAt });
});

test('a confirmation the redrive policy moved after workers died holding it is replayed maybe applied', async () => {
  h = startHarness({ queueAttributes: { RedrivePolicy: '' } });
  const redrive = JSON.stringify({ deadLetterTargetArn: h.sqs.arnOf(h.dlqUrl), maxReceiveCount: 2 });
  h.sqs.createQueue('poison.fifo', { RedrivePolicy: redrive });
  const outbox = h.outbox({
    queueUrl: `${h.sqs.endpoint}/${h.sqs.account}/poison.fifo`,
    ledger: createMemoryOrderLedger(),
  });
  const { job } = await outbox.confirm(confirmInput('A-1'));
  for (let i = 0; i < 3; i++) {
    await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 1_000 }); // the worker dies each time
    h.sqs.advance(1_000);
  }
  expect(await outbox.replay({ ids: [job.id] }, h.sqs.now())).toBe(1);
  expect(await claimOne(outbox)).toMatchObject({ id: job.id, attempts: 1, maybeAppliedAt: job.updatedAt });
});

describe('refunds after a confirmation that may have been applied', () => {
  test('an expired confirmation whose earlier send may have been applied is reversed, not "not-charged"', async () => {
    const outbox = open();
    await outbox.confirm(confirmInput('A-1'));
    const first = await claimOne(outbox);
    const lostAt = h.sqs.now();
    await outbox.retry(first, { now: lostAt, nextAttemptAt: lostAt, error: 'reset', maybeApplied: true });
    const second = await claimOne(outbox);
    await outbox.fail(second, { now: h.sqs.now(), state: 'expired', reason: 'deadline passed' });
    const outcome = await outbox.refund({ orderId: 'A-1', campaignId: 'cmp_1' });
    expect(outcome).toMatchObject({
      outcome: 'enqueued',
      job: { campaignId: 'cmp_1', deadline: refundDeadlineOf(lostAt, policy) },
    });
    expect(await claimOne(outbox)).toMatchObject({ kind: 'refund', orderId: 'A-1', campaignId: 'cmp_1' });
  });

  test('a refund waiting behind a confirmation that ends dead after a lost answer is sent, not cancelled', async () => {
    const outbox = open();
    await outbox.confirm(confirmInput('A-1'));
    await outbox.refund({ orderId: 'A-1', campaignId: 'cmp_1' });
    const confirm = await claimOne(outbox);
    const failedAt = h.sqs.now();
    const dead = { now: failedAt, state: 'dead' as const, reason: 'HTTP 200, unreadable body' };
    await outbox.fail(confirm, { ...dead, maybeApplied: true });
    expect(await claimOne(outbox)).toMatchObject({
      kind: 'refund',
      campaignId: 'cmp_1',
      deadline: refundDeadlineOf(failedAt, policy),
    });
  });

  test('a refund behind a confirmation retaken after its lease ran out, then refused, is still sent', async () => {
    const outbox = open();
    const { job } = await outbox.confirm(confirmInput('A-1'));
    await outbox.refund({ orderId: 'A-1', campaignId: 'cmp_1' });
    await claimOne(outbox); // the worker dies holding it
    h.sqs.advance(LEASE);
    const retaken = await claimOne(outbox);
    await outbox.fail(retaken, { now: h.sqs.now(), state: 'dead', reason: 'HTTP 422: unknown click' });
    expect(await claimOne(outbox)).toMatchObject({
      kind: 'refund',
      deadline: refundDeadlineOf(job.updatedAt, policy),
    });
  });

  test('a refund behind a confirmation refused with a clear 4xx is cancelled: nothing was charged', async () => {
    const outbox = open();
    await outbox.confirm(confirmInput('A-1'));
    await outbox.refund({ orderId: 'A-1', campaignId: 'cmp_1' });
    const confirm = await claimOne(outbox);
    await outbox.fail(confirm, { now: h.sqs.now(), state: 'dead', reason: 'HTTP 422: unknown click' });
    expect(await outbox.claim({ now: h.sqs.now(), limit: 10, leaseMs: LEASE })).toEqual([]);
    const states = h.sqs.messages(h.dlqUrl).map((m) => m.attributes[STATE_ATTRIBUTE]?.StringValue);
    expect(states.sort()).toEqual(['cancelled', 'dead']);
    expect((await outbox.getByOrder('A-1')).map((j) => j.state)).toEqual(['dead', 'cancelled']);
  });
});

describe('a refund with no campaign, given one later (core’s "updated")', () => {
  test('a refund dead-lettered for want of a campaign is sent again when a refund gives one', async () => {
    const outbox = open();
    await outbox.confirm(confirmInput('A-1'));
    // The confirmation's answer carried no campaign_id.
    expect(await outbox.complete(await claimOne(outbox), { now: h.sqs.now(), campaignId: null })).toBe(true);
    expect(await outbox.refund({ orderId: 'A-1' })).toMatchObject({
      outcome: 'enqueued',
      job: { campaignId: null },
    });
    const refund = await claimOne(outbox);
    expect(refund.campaignId).toBeNull();
    // What the Dispatcher does with a reversal it cannot address.
    await outbox.fail(refund, { now: h.sqs.now(), state: 'dead', reason: 'no campaign_id is known' });
    expect(await outbox.refund({ orderId: 'A-1', campaignId: 'cmp_9' })).toMatchObject({
      outcome: 'updated',
      job: { id: refund.id, state: 'pending', campaignId: 'cmp_9', attempts: 0 },
    });
    expect(h.sqs.messages(h.dlqUrl)).toHaveLength(0);
    expect(await claimOne(outbox)).toMatchObject({ id: refund.id, kind: 'refund', campaignId: 'cmp_9' });
    // A further refund is a duplicate.
    expect((await outbox.refund({ orderId: 'A-1', campaignId: 'cmp_7' })).outcome).toBe('duplicate');
  });

  test('a refund still waiting in the queue takes the campaign given later from the ledger', async () => {
    const outbox = open();
    await outbox.confirm(confirmInput('A-1'));
    await outbox.refund({ orderId: 'A-1' });
    expect((await outbox.refund({ orderId: 'A-1', campaignId: 'cmp_9' })).outcome).toBe('updated');
    const confirm = await claimOne(outbox);
    await outbox.complete(confirm, { now: h.sqs.now(), campaignId: null });
    expect(await claimOne(outbox)).toMatchObject({ kind: 'refund', campaignId: 'cmp_9' });
  });
});
