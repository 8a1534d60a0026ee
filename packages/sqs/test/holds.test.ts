/**
 * Holds and pauses of the SQS outbox over real HTTP to the SQS emulator: on a standard queue a held or
 * paused job is re-sent delayed (never counting a receive), its wait chained past SQS's 900 s, never past
 * its deadline, and never lost when the re-send fails; `releaseHeld` reaches a chained hold at its next
 * delay; on a FIFO queue a hold is a visibility change, its held fields kept in the ledger.
 */
import type { Job } from '@postback/core';
import { DEFAULT_WAIT_TIMING, lastChanceAt } from '@postback/core/store';
import { afterEach, describe, expect, test } from 'vitest';
import { createMemoryOrderLedger, type SqsOutbox } from '../src/index.ts';
import { decodeJobBody } from '../src/message-codec.ts';
import { type Harness, startHarness } from './harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const LEASE = 30_000;
const HOUR = 3_600_000;
const NOT_S2S = 'Ad service answered 422: campaign cmp_pix is not on s2s: its conversion source is pixel';

const claim = (outbox: SqsOutbox) => outbox.claim({ now: h.sqs.now(), limit: 10, leaseMs: LEASE });
const confirm = (outbox: SqsOutbox, orderId: string, clickedAt = h.sqs.now() - 60_000) =>
  outbox.confirm({ orderId, valueMicros: 2_000_000, click: { token: `tok_${orderId}`, clickedAt } });
const hold = (outbox: SqsOutbox, job: Job, nextAttemptAt: number, campaignId: string | null = 'cmp_pix') =>
  outbox.retry(job, { now: h.sqs.now(), nextAttemptAt, error: NOT_S2S, hold: { campaignId } });

describe('on a standard queue', () => {
  test('a hold longer than 900 s is chained in delays: no receive counted, attempts and held fields kept', async () => {
    h = startHarness({ standard: true });
    const outbox = h.outbox({ ledger: createMemoryOrderLedger() });
    await confirm(outbox, 'A-1');
    const [job] = await claim(outbox);
    const heldAt = h.sqs.now();
    expect(await hold(outbox, job as Job, heldAt + HOUR)).toBe(true);
    for (let step = 0; step < 3; step++) {
      const [message] = h.sqs.messages(h.queueUrl);
      expect(message).toMatchObject({ receiveCount: 0, visibleAt: h.sqs.now() + 900_000 });
      expect(decodeJobBody(message?.body ?? '')).toMatchObject({ notBefore: heldAt + HOUR, heldAt });
      h.sqs.advance(900_000);
      expect(await claim(outbox)).toEqual([]);
    }
    h.sqs.advance(900_000);
    const [probe] = await claim(outbox);
    // The ledger's record explains every receive: the hold is not taken for a lease that ran out.
    expect(probe).toMatchObject({
      orderId: 'A-1',
      attempts: 1,
      heldAt,
      heldCampaignId: 'cmp_pix',
      maybeAppliedAt: null,
    });
    expect(h.sqs.messages(h.queueUrl)).toHaveLength(1);
  });

  test('a hold never waits past its last chance (core’s wait rule): the job comes up while a real try remains', async () => {
    h = startHarness({ standard: true });
    const outbox = h.outbox();
    const clickedAt = h.sqs.now() - 7 * 24 * HOUR + 2 * HOUR;
    const { job: enqueued } = await confirm(outbox, 'A-late', clickedAt);
    const deadline = enqueued.deadline as number;
    const last = lastChanceAt(enqueued, DEFAULT_WAIT_TIMING) as number;
    const [job] = await claim(outbox);
    expect(await hold(outbox, job as Job, deadline + HOUR)).toBe(true);
    let probe: Job[] = [];
    for (let step = 0; step < 20 && probe.length === 0; step++) {
      const [message] = h.sqs.messages(h.queueUrl);
      expect(message?.visibleAt).toBeLessThanOrEqual(last);
      h.sqs.setTime(message?.visibleAt as number);
      probe = await claim(outbox);
    }
    expect(probe.map((j) => j.orderId)).toEqual(['A-late']);
    expect(h.sqs.now()).toBeLessThanOrEqual(last);
    expect(h.sqs.now()).toBeGreaterThan(last - 1_000);
  });

  test('a job of a paused account is re-sent hidden for the delay, but never past its last chance', async () => {
    h = startHarness({ standard: true });
    const outbox = h.outbox({ excludedAccountDelaySeconds: 600 });
    const clickedAt = h.sqs.now() - 7 * 24 * HOUR + 2 * HOUR;
    const late = await outbox.confirm({
      orderId: 'P-late',
      account: 'shop-a',
      valueMicros: 1,
      click: { token: 'tok_late', clickedAt },
    });
    const deadline = late.job.deadline as number;
    h.sqs.setTime(deadline - 120_000);
    await outbox.confirm({
      orderId: 'P-1',
      account: 'shop-a',
      valueMicros: 1,
      click: { token: 'tok_p1', clickedAt: h.sqs.now() },
    });
    const at = h.sqs.now();
    expect(await outbox.claim({ now: at, limit: 10, leaseMs: LEASE, excludeAccounts: ['shop-a'] })).toEqual(
      [],
    );
    const visibleAt = (orderId: string) =>
      h.sqs.messages(h.queueUrl).find((m) => decodeJobBody(m.body).orderId === orderId)?.visibleAt;
    expect(visibleAt('P-1')).toBe(at + 600_000);
    expect(visibleAt('P-late')).toBeLessThanOrEqual(lastChanceAt(late.job, DEFAULT_WAIT_TIMING) as number);
    expect(h.sqs.messages(h.queueUrl).every((m) => m.receiveCount === 0)).toBe(true);
  });

  test('a pause (attempt not counted) is a re-send too; the received copy is deleted only after it', async () => {
    h = startHarness({ standard: true });
    const outbox = h.outbox();
    await confirm(outbox, 'A-2');
    for (let pause = 0; pause < 5; pause++) {
      const [job] = await claim(outbox);
      expect(job?.attempts).toBe(1);
      const now = h.sqs.now();
      expect(
        await outbox.retry(job as Job, { now, nextAttemptAt: now, error: 'HTTP 401', countAttempt: false }),
      ).toBe(true);
      expect(h.sqs.messages(h.queueUrl)).toMatchObject([{ receiveCount: 0 }]);
    }
    const operations = h.sqs.calls.map((c) => c.operation).filter((o) => o !== 'ReceiveMessage');
    const firstSend = operations.indexOf('SendMessage', 1);
    expect(operations.indexOf('DeleteMessageBatch')).toBeGreaterThan(firstSend);
  });

  test('a hold whose re-send fails keeps the received message: it comes back, never lost', async () => {
    h = startHarness({ standard: true });
    const outbox = h.outbox();
    await confirm(outbox, 'A-3');
    const [job] = await claim(outbox);
    h.sqs.throttle('SendMessage', 10);
    await expect(hold(outbox, job as Job, h.sqs.now() + 60_000)).rejects.toThrow();
    expect(h.sqs.messages(h.queueUrl)).toHaveLength(1);
    h.sqs.throttle('SendMessage', 0);
    h.sqs.advance(60_000);
    expect((await claim(outbox)).map((j) => j.orderId)).toEqual(['A-3']);
  });

  test('releaseHeld is remembered: a chained hold it covers is due when its current delay ends', async () => {
    h = startHarness({ standard: true });
    const outbox = h.outbox();
    await confirm(outbox, 'A-4');
    await confirm(outbox, 'A-5');
    const [first, second] = await claim(outbox);
    await hold(outbox, first as Job, h.sqs.now() + 6 * HOUR, 'cmp_pix');
    await hold(outbox, second as Job, h.sqs.now() + 6 * HOUR, 'cmp_other');
    h.sqs.advance(1_000);
    expect(await outbox.releaseHeld({ now: h.sqs.now(), campaignId: 'cmp_pix' })).toBe(0);
    h.sqs.advance(900_000);
    const released = await claim(outbox);
    expect(released.map((j) => j.orderId)).toEqual([first?.orderId]);
    expect(released[0]).toMatchObject({ heldCampaignId: 'cmp_pix', attempts: 1 });
  });
});

describe('on a FIFO queue', () => {
  test('a job of a paused account is hidden for the delay, but never past its last chance', async () => {
    h = startHarness();
    const outbox = h.outbox({ excludedAccountDelaySeconds: 600 });
    const clickedAt = h.sqs.now() - 7 * 24 * HOUR + 2 * HOUR;
    const { job } = await outbox.confirm({
      orderId: 'P-late',
      account: 'shop-a',
      valueMicros: 1,
      click: { token: 'tok_late', clickedAt },
    });
    const deadline = job.deadline as number;
    h.sqs.setTime(deadline - 120_000);
    const at = h.sqs.now();
    expect(await outbox.claim({ now: at, limit: 10, leaseMs: LEASE, excludeAccounts: ['shop-a'] })).toEqual(
      [],
    );
    expect(h.sqs.messages(h.queueUrl)[0]?.visibleAt).toBeLessThanOrEqual(
      lastChanceAt(job, DEFAULT_WAIT_TIMING) as number,
    );
  });

  test('a hold is a visibility change; the ledger keeps its held fields, and releaseHeld makes it visible now', async () => {
    h = startHarness();
    const outbox = h.outbox({ ledger: createMemoryOrderLedger() });
    await confirm(outbox, 'F-1');
    const [job] = await claim(outbox);
    const heldAt = h.sqs.now();
    expect(await hold(outbox, job as Job, heldAt + HOUR)).toBe(true);
    expect(h.sqs.messages(h.queueUrl)).toMatchObject([{ receiveCount: 1 }]);
    expect(await claim(outbox)).toEqual([]);
    expect(await outbox.releaseHeld({ now: h.sqs.now(), account: null, campaignId: 'cmp_pix' })).toBe(1);
    const [again] = await claim(outbox);
    expect(again).toMatchObject({ orderId: 'F-1', heldAt, heldCampaignId: 'cmp_pix' });
  });
});
