/**
 * The producer side over real HTTP to the SQS emulator: what goes on the wire (FIFO ids, the deadline),
 * batching (ten per request, split by bytes), partial batch failures and throttling retried by the SDK.
 */
import { JobValidationError } from '@postback/core';
import { afterEach, describe, expect, test } from 'vitest';
import { SqsOutboxError } from '../src/errors.ts';
import { DEADLINE_ATTRIBUTE, decodeJobBody } from '../src/message-codec.ts';
import { type Harness, startHarness } from './harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const click = (at: number, token = 'tok_abc') => ({ token, clickedAt: at - 60_000 });

describe('confirm', () => {
  test('sends the job with its deadline as a message attribute, grouped by order and deduplicated by kind + order', async () => {
    h = startHarness();
    const { job } = await h
      .outbox()
      .confirm({ orderId: 'A-1001', valueMicros: 12_340_000, click: click(h.sqs.now()) });
    const send = h.sqs.calls.find((c) => c.operation === 'SendMessage')?.input as Record<string, unknown>;
    expect(send).toMatchObject({ MessageGroupId: 'o:A-1001', MessageDeduplicationId: 'c:o:A-1001' });
    const [stored] = h.sqs.messages(h.queueUrl);
    expect(stored?.attributes[DEADLINE_ATTRIBUTE]).toEqual({
      DataType: 'Number',
      StringValue: String(job.deadline),
    });
    expect(decodeJobBody(stored?.body ?? '')).toMatchObject({
      orderId: 'A-1001',
      valueMicros: 12_340_000,
      deadline: job.deadline,
    });
  });

  test('a second confirm of the same order within five minutes is dropped by FIFO deduplication', async () => {
    h = startHarness();
    const outbox = h.outbox();
    await outbox.confirm({ orderId: 'A-1', valueMicros: 1, click: click(h.sqs.now()) });
    await outbox.confirm({ orderId: 'A-1', valueMicros: 1, click: click(h.sqs.now()) });
    expect(h.sqs.messages(h.queueUrl)).toHaveLength(1);
  });

  test('on a standard queue, sends no deduplication id (the group is the fair-queue tenant) and refuses refunds, which could overtake their confirmation', async () => {
    h = startHarness({ standard: true });
    const outbox = h.outbox();
    expect(outbox.fifo).toBe(false);
    await outbox.confirm({ orderId: 'A-1', valueMicros: 1, click: click(h.sqs.now()) });
    const send = h.sqs.calls.find((c) => c.operation === 'SendMessage')?.input as Record<string, unknown>;
    expect(send.MessageGroupId).toBe('none');
    expect(send.MessageDeduplicationId).toBeUndefined();
    await expect(outbox.refund({ orderId: 'A-1', campaignId: 'cmp_1' })).rejects.toThrow(/FIFO/);
  });

  test('without an order ledger a refund must name its campaign', async () => {
    h = startHarness();
    const err = await h
      .outbox()
      .refund({ orderId: 'A-1' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobValidationError);
    expect((err as JobValidationError).field).toBe('campaignId');
    expect(h.sqs.messages(h.queueUrl)).toHaveLength(0);
  });

  test('throttling answered with 400 RequestThrottled or ThrottlingException is retried by the SDK and the send succeeds', async () => {
    h = startHarness();
    const outbox = h.outbox();
    h.sqs.throttle('SendMessage', 2, 'RequestThrottled');
    await outbox.confirm({ orderId: 'A-1', valueMicros: 1, click: click(h.sqs.now()) });
    h.sqs.throttle('SendMessage', 1, 'ThrottlingException');
    await outbox.confirm({ orderId: 'A-2', valueMicros: 1, click: click(h.sqs.now()) });
    expect(h.sqs.count('SendMessage')).toBe(5);
    expect(h.sqs.messages(h.queueUrl)).toHaveLength(2);
  });

  test('throttling that outlasts the SDK’s retries surfaces as an error and nothing is stored', async () => {
    h = startHarness();
    h.sqs.throttle('SendMessage', 10);
    await expect(
      h.outbox().confirm({ orderId: 'A-1', valueMicros: 1, click: click(h.sqs.now()) }),
    ).rejects.toMatchObject({ name: 'RequestThrottled' });
    expect(h.sqs.messages(h.queueUrl)).toHaveLength(0);
  });
});

describe('confirmMany', () => {
  test('sends 25 confirmations in three SendMessageBatch requests of at most ten, in order', async () => {
    h = startHarness();
    const inputs = Array.from({ length: 25 }, (_, i) => ({
      orderId: `A-${i}`,
      valueMicros: i,
      click: click(h.sqs.now()),
    }));
    const results = await h.outbox().confirmMany(inputs);
    expect(results.every((r) => r.ok)).toBe(true);
    const batches = h.sqs.calls
      .filter((c) => c.operation === 'SendMessageBatch')
      .map((c) => (c.input.Entries as unknown[]).length);
    expect(batches).toEqual([10, 10, 5]);
    expect(h.sqs.messages(h.queueUrl).map((m) => decodeJobBody(m.body).orderId)).toEqual(
      inputs.map((i) => i.orderId),
    );
  });

  test('splits batches by payload size so no request exceeds maxBatchBytes', async () => {
    h = startHarness();
    const token = 'T'.repeat(500);
    const inputs = Array.from({ length: 6 }, (_, i) => ({
      orderId: `A-${i}`,
      valueMicros: i,
      click: click(h.sqs.now(), token),
    }));
    const results = await h.outbox({ maxBatchBytes: 2_048 }).confirmMany(inputs);
    expect(results.every((r) => r.ok)).toBe(true);
    const sizes = h.sqs.calls
      .filter((c) => c.operation === 'SendMessageBatch')
      .map((c) =>
        (c.input.Entries as Array<{ MessageBody: string }>).reduce(
          (n, e) => n + Buffer.byteLength(e.MessageBody),
          0,
        ),
      );
    expect(sizes.length).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(2_048);
  });

  test('entries that failed server-side are sent again; entries refused as the sender’s fault are reported per job', async () => {
    h = startHarness();
    let serverFaults = 2;
    h.sqs.failEntries('SendMessageBatch', (entry) => {
      const body = String(entry.MessageBody);
      if (body.includes('"B-bad"'))
        return { code: 'InvalidMessageContents', senderFault: true, message: 'refused' };
      if (body.includes('"A-flaky"') && serverFaults-- > 0)
        return { code: 'InternalError', senderFault: false };
      return null;
    });
    const at = h.sqs.now();
    const results = await h.outbox().confirmMany([
      { orderId: 'A-ok', valueMicros: 1, click: click(at) },
      { orderId: 'A-flaky', valueMicros: 2, click: click(at) },
      { orderId: 'B-bad', valueMicros: 3, click: click(at) },
      { orderId: '', valueMicros: 4, click: click(at) },
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, true, false, false]);
    expect(results[2]).toMatchObject({ ok: false, error: expect.any(SqsOutboxError) });
    expect(String((results[2] as { error: Error }).error.message)).toMatch(/B-bad: InvalidMessageContents/);
    expect((results[3] as { error: Error }).error).toBeInstanceOf(JobValidationError);
    expect(h.sqs.count('SendMessageBatch')).toBe(3);
    expect(
      h.sqs
        .messages(h.queueUrl)
        .map((m) => decodeJobBody(m.body).orderId)
        .sort(),
    ).toEqual(['A-flaky', 'A-ok']);
  });

  test('an entry that keeps failing server-side is reported after sendAttempts tries', async () => {
    h = startHarness();
    h.sqs.failEntries('SendMessageBatch', () => ({ code: 'InternalError', senderFault: false }));
    const results = await h
      .outbox({ sendAttempts: 2 })
      .confirmMany([{ orderId: 'A-1', valueMicros: 1, click: click(h.sqs.now()) }]);
    expect(results[0]).toMatchObject({ ok: false });
    expect(h.sqs.count('SendMessageBatch')).toBe(2);
  });
});
