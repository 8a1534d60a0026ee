/**
 * The consumer side over real HTTP to the SQS emulator: leases as visibility timeouts, re-delivery when
 * they run out, stale receipt handles, backoff capped by SQS's 12 hours, batched deletes, malformed
 * messages, throttled receives, and a long poll cut short by close().
 */
import { inspect } from 'node:util';
import { SQSClient } from '@aws-sdk/client-sqs';
import { OptionsError } from '@postback/core';
import { afterEach, describe, expect, test } from 'vitest';
import { REASON_ATTRIBUTE, STATE_ATTRIBUTE } from '../src/dead-letter.ts';
import { createSqsOutbox } from '../src/index.ts';
import { FAKE_CREDENTIALS, type Harness, startHarness } from './harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const HOUR = 3_600_000;

const confirmInput = (orderId: string, at: number) => ({
  orderId,
  valueMicros: 1_000,
  click: { token: `tok_${orderId}`, clickedAt: at - 60_000 },
});

describe('leases', () => {
  test('a message whose visibility ran out is delivered again, with one more attempt and a new receipt handle', async () => {
    h = startHarness();
    const outbox = h.outbox();
    await outbox.confirm(confirmInput('A-1', h.sqs.now()));
    const [first] = await outbox.claim({ now: h.sqs.now(), limit: 10, leaseMs: 30_000 });
    expect(await outbox.claim({ now: h.sqs.now(), limit: 10, leaseMs: 30_000 })).toEqual([]);
    h.sqs.advance(30_000);
    const [second] = await outbox.claim({ now: h.sqs.now(), limit: 10, leaseMs: 30_000 });
    expect(second).toMatchObject({ id: first?.id, attempts: 2 });
    expect(second?.lease?.token).not.toBe(first?.lease?.token);
  });

  test('DeleteMessage with a receipt handle whose visibility expired is refused, so complete reports the lost lease', async () => {
    h = startHarness();
    const outbox = h.outbox();
    await outbox.confirm(confirmInput('A-1', h.sqs.now()));
    const [job] = await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 5_000 });
    h.sqs.advance(6_000);
    expect(await outbox.complete(job!, { now: h.sqs.now(), campaignId: 'cmp_1' })).toBe(false);
    expect(h.sqs.messages(h.queueUrl)).toHaveLength(1);
  });

  test('heart-beats keep a slow send’s message hidden past its first lease', async () => {
    h = startHarness();
    const outbox = h.outbox();
    await outbox.confirm(confirmInput('A-1', h.sqs.now()));
    const [job] = await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 10_000 });
    for (let i = 0; i < 5; i++) {
      h.sqs.advance(8_000);
      expect(await outbox.extendLease(job!, { now: h.sqs.now(), leaseMs: 10_000 })).toBe(true);
      expect(await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 10_000 })).toEqual([]);
    }
    expect(await outbox.complete(job!, { now: h.sqs.now(), campaignId: 'cmp_1' })).toBe(true);
  });

  test('completions of concurrent sends share one DeleteMessageBatch', async () => {
    h = startHarness();
    const outbox = h.outbox({ deleteBatchWindowMs: 20 });
    await outbox.confirmMany(Array.from({ length: 10 }, (_, i) => confirmInput(`A-${i}`, h.sqs.now())));
    const jobs = await outbox.claim({ now: h.sqs.now(), limit: 10, leaseMs: 30_000 });
    expect(jobs).toHaveLength(10);
    const done = await Promise.all(
      jobs.map((job) => outbox.complete(job, { now: h.sqs.now(), campaignId: 'cmp_1' })),
    );
    expect(done.every(Boolean)).toBe(true);
    expect(h.sqs.count('DeleteMessageBatch')).toBe(1);
    expect(h.sqs.messages(h.queueUrl)).toHaveLength(0);
  });

  test('release makes claimed messages receivable at once', async () => {
    h = startHarness();
    const outbox = h.outbox();
    await outbox.confirm(confirmInput('A-1', h.sqs.now()));
    const jobs = await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 60_000 });
    await outbox.release(jobs, h.sqs.now());
    expect((await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 60_000 })).map((j) => j.id)).toEqual(
      jobs.map((j) => j.id),
    );
  });
});

describe('retries', () => {
  test('a transient failure hides the message until the next attempt', async () => {
    h = startHarness();
    const outbox = h.outbox();
    await outbox.confirm(confirmInput('A-1', h.sqs.now()));
    const [job] = await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
    expect(
      await outbox.retry(job!, { now: h.sqs.now(), nextAttemptAt: h.sqs.now() + 90_000, error: 'HTTP 503' }),
    ).toBe(true);
    h.sqs.advance(89_000);
    expect(await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 })).toEqual([]);
    h.sqs.advance(1_000);
    expect(await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 })).toHaveLength(1);
  });

  test('a backoff longer than SQS allows is cut to its 12-hour maximum instead of failing', async () => {
    h = startHarness();
    const outbox = h.outbox();
    await outbox.confirm(confirmInput('A-1', h.sqs.now()));
    const [job] = await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
    h.sqs.advance(20_000);
    expect(
      await outbox.retry(job!, {
        now: h.sqs.now(),
        nextAttemptAt: h.sqs.now() + 30 * HOUR,
        error: 'HTTP 503',
      }),
    ).toBe(true);
    h.sqs.advance(12 * HOUR - 25_000);
    expect(await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 })).toEqual([]);
    h.sqs.advance(10_000);
    expect(await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 })).toHaveLength(1);
  });

  test('a retry due after the deadline brings the message back at the deadline, so it can be expired in time', async () => {
    h = startHarness();
    const outbox = h.outbox();
    const at = h.sqs.now();
    // Clicked so long ago that the deadline is 10 minutes away.
    const { job: queued } = await outbox.confirm({
      orderId: 'A-1',
      valueMicros: 1,
      click: { token: 'tok_x', clickedAt: at - 7 * 24 * HOUR + HOUR + 600_000 },
    });
    expect(queued.deadline).toBe(at + 600_000);
    const [job] = await outbox.claim({ now: at, limit: 1, leaseMs: 30_000 });
    await outbox.retry(job!, { now: at, nextAttemptAt: at + 6 * HOUR, error: 'HTTP 503' });
    h.sqs.advance(600_000);
    const [back] = await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
    expect(back?.deadline).toBe(h.sqs.now());
  });
});

describe('receiving', () => {
  test('a throttled ReceiveMessage is retried by the SDK and the claim still gets the job', async () => {
    h = startHarness();
    const outbox = h.outbox();
    await outbox.confirm(confirmInput('A-1', h.sqs.now()));
    h.sqs.throttle('ReceiveMessage', 2, 'ThrottlingException');
    expect(await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 })).toHaveLength(1);
    expect(h.sqs.count('ReceiveMessage')).toBe(3);
  });

  test('a malformed message goes to the dead-letter queue with its reason and does not block the jobs behind it', async () => {
    h = startHarness();
    const outbox = h.outbox();
    h.sqs.inject(h.queueUrl, '{"hello":"world"}', { groupId: 'o:A-1' });
    await outbox.confirm(confirmInput('A-1', h.sqs.now()));
    const jobs = await outbox.claim({ now: h.sqs.now(), limit: 10, leaseMs: 30_000 });
    const more = await outbox.claim({ now: h.sqs.now(), limit: 10, leaseMs: 30_000 });
    expect([...jobs, ...more].map((j) => j.orderId)).toEqual(['A-1']);
    const [letter] = h.sqs.messages(h.dlqUrl);
    expect(letter?.body).toBe('{"hello":"world"}');
    expect(letter?.attributes[STATE_ATTRIBUTE]?.StringValue).toBe('dead');
    expect(letter?.attributes[REASON_ATTRIBUTE]?.StringValue).toMatch(/malformed postback message/);
  });

  test('without a dead-letter queue a malformed message is hidden for 12 hours and reported', async () => {
    h = startHarness();
    const warnings: string[] = [];
    const outbox = h.outbox({ deadLetterQueueUrl: undefined, onWarning: (m) => warnings.push(m) });
    h.sqs.inject(h.queueUrl, 'garbage', { groupId: 'g' });
    expect(await outbox.claim({ now: h.sqs.now(), limit: 10, leaseMs: 30_000 })).toEqual([]);
    expect(warnings.join('\n')).toMatch(/not a postback job.*no deadLetterQueueUrl/);
    h.sqs.advance(11 * HOUR);
    expect(h.sqs.messages(h.queueUrl)[0]?.visibleAt).toBeGreaterThan(h.sqs.now());
  });

  /** Each ReceiveMessage's size and wait, in order (the emulator keeps every request). */
  const receives = () =>
    h.sqs.calls
      .filter((c) => c.operation === 'ReceiveMessage')
      .map((c) => `${c.input.MaxNumberOfMessages}/${c.input.WaitTimeSeconds}s`);

  test('a claim long-polls with one receive; only after a full answer do receives go side by side, short-polled', async () => {
    h = startHarness({ standard: true });
    const outbox = h.outbox({ waitTimeSeconds: 20 });
    await outbox.confirmMany(Array.from({ length: 25 }, (_, i) => confirmInput(`A-${i}`, h.sqs.now())));
    expect(await outbox.claim({ now: h.sqs.now(), limit: 40, leaseMs: 30_000 })).toHaveLength(25);
    // A receive beside the long poll could wait out the poll on an empty queue, holding these jobs.
    expect(receives()).toEqual(['10/20s', '10/0s', '10/0s', '10/0s']);
  });

  test('a claim after one that received something waits a second at most; after an empty one, waitTimeSeconds', async () => {
    h = startHarness();
    const outbox = h.outbox({ waitTimeSeconds: 20 });
    await outbox.confirmMany([confirmInput('A-1', h.sqs.now()), confirmInput('A-2', h.sqs.now())]);
    const claim = () => outbox.claim({ now: h.sqs.now(), limit: 16, leaseMs: 30_000 });
    expect(await claim()).toHaveLength(2);
    expect(await claim()).toEqual([]); // what ends a drain: one second of an empty long poll
    expect(await claim()).toEqual([]);
    expect(receives()).toEqual(['10/20s', '10/1s', '10/20s']);
  });

  test('close() ends a claim waiting in a long poll', async () => {
    h = startHarness({ emulator: { maxLongPollMs: 20_000 } });
    const outbox = h.outbox({ waitTimeSeconds: 20 });
    const started = Date.now();
    const claim = outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
    await new Promise((r) => setTimeout(r, 100));
    await outbox.close();
    expect(await claim).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('failures', () => {
  test('fail moves the job to the dead-letter queue with its state and reason, and listDead shows it', async () => {
    h = startHarness();
    const outbox = h.outbox();
    const { job } = await outbox.confirm(confirmInput('A-1', h.sqs.now()));
    const [claimed] = await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
    expect(
      await outbox.fail(claimed!, {
        now: h.sqs.now(),
        state: 'dead',
        reason: 'HTTP 404: unknown click token',
      }),
    ).toBe(true);
    expect(h.sqs.messages(h.queueUrl)).toHaveLength(0);
    const dead = await outbox.listDead();
    expect(dead).toEqual([
      expect.objectContaining({
        id: job.id,
        state: 'dead',
        lastError: 'HTTP 404: unknown click token',
        attempts: 1,
      }),
    ]);
    // Listing gives the messages back: a second listing sees the same.
    expect((await outbox.listDead()).map((j) => j.id)).toEqual([job.id]);
  });

  test('a message the queue’s redrive policy moved is listed as dead with a reason saying so', async () => {
    h = startHarness({ queueAttributes: { RedrivePolicy: '' } });
    const redrive = JSON.stringify({ deadLetterTargetArn: h.sqs.arnOf(h.dlqUrl), maxReceiveCount: 2 });
    h.sqs.createQueue('poison.fifo', { RedrivePolicy: redrive });
    const poisonUrl = `${h.sqs.endpoint}/${h.sqs.account}/poison.fifo`;
    const outbox = h.outbox({ queueUrl: poisonUrl });
    await outbox.confirm(confirmInput('A-1', h.sqs.now()));
    for (let i = 0; i < 3; i++) {
      await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 1_000 }); // the worker crashes each time
      h.sqs.advance(1_000);
    }
    const [dead] = await outbox.listDead();
    expect(dead).toMatchObject({
      orderId: 'A-1',
      state: 'dead',
      lastError: expect.stringMatching(/redrive policy/),
    });
  });

  test('fail without a dead-letter queue is a configuration error, not a silent drop', async () => {
    h = startHarness();
    const outbox = h.outbox({ deadLetterQueueUrl: undefined });
    await outbox.confirm(confirmInput('A-1', h.sqs.now()));
    const [claimed] = await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
    await expect(
      outbox.fail(claimed!, { now: h.sqs.now(), state: 'dead', reason: 'x' }),
    ).rejects.toMatchObject({ code: 'configuration' });
    expect(h.sqs.messages(h.queueUrl)).toHaveLength(1);
  });
});

describe('operations', () => {
  test('stats reads the approximate counts of both queues', async () => {
    h = startHarness();
    const outbox = h.outbox();
    for (const id of ['A-1', 'A-2', 'A-3']) await outbox.confirm(confirmInput(id, h.sqs.now()));
    const [claimed] = await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
    await outbox.fail(claimed!, { now: h.sqs.now(), state: 'dead', reason: 'x' });
    await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
    const stats = await outbox.stats(h.sqs.now());
    expect(stats.counts).toEqual({
      pending: 1,
      inflight: 1,
      delivered: 0,
      dead: 1,
      expired: 0,
      cancelled: 0,
      unmatched: 0,
    });
  });

  test('rejects unknown and invalid options with an OptionsError naming the option', () => {
    const base = { queueUrl: 'https://sqs.us-east-1.amazonaws.com/1/q.fifo' };
    expect(() => createSqsOutbox({ ...base, waitTimeSecs: 3 } as never)).toThrow(OptionsError);
    expect(() => createSqsOutbox({ ...base, waitTimeSecs: 3 } as never)).toThrow(/waitTimeSecs/);
    expect(() => createSqsOutbox({ ...base, waitTimeSeconds: 21 })).toThrow(/waitTimeSeconds/);
    expect(() => createSqsOutbox({ queueUrl: 'not a url' })).toThrow(/queueUrl/);
  });

  test('credentials given in clientConfig never show in util.inspect or JSON of the outbox', async () => {
    const outbox = createSqsOutbox({
      queueUrl: 'https://sqs.us-east-1.amazonaws.com/1/q.fifo',
      clientConfig: { region: 'us-east-1', credentials: FAKE_CREDENTIALS },
    });
    expect(inspect(outbox, { depth: 10 })).not.toContain(FAKE_CREDENTIALS.secretAccessKey);
    expect(JSON.stringify(outbox)).not.toContain(FAKE_CREDENTIALS.secretAccessKey);
    await outbox.close();
  });

  test('an injected SQSClient is used as is and not destroyed by close()', async () => {
    h = startHarness();
    const client = new SQSClient({
      region: 'us-east-1',
      endpoint: h.sqs.endpoint,
      credentials: FAKE_CREDENTIALS,
    });
    const first = h.outbox({ client });
    await first.close();
    await h.outbox({ client }).confirm(confirmInput('A-1', h.sqs.now()));
    expect(h.sqs.messages(h.queueUrl)).toHaveLength(1);
    client.destroy();
  });
});

test('interruptClaims() cuts a waiting long poll short, and the next claim polls again as usual', async () => {
  h = startHarness({ emulator: { maxLongPollMs: 20_000 } });
  const outbox = h.outbox({ waitTimeSeconds: 20 });
  const started = Date.now();
  const waiting = outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
  await new Promise((r) => setTimeout(r, 100));
  outbox.interruptClaims();
  expect(await waiting).toEqual([]);
  expect(Date.now() - started).toBeLessThan(5_000);
  const next = outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
  await outbox.confirm(confirmInput('A-1', h.sqs.now()));
  expect((await next).map((j) => j.orderId)).toEqual(['A-1']);
});

test('a job dead-lettered, replayed and dead-lettered again within five minutes keeps both dead-letter records', async () => {
  h = startHarness();
  const outbox = h.outbox();
  const { job } = await outbox.confirm(confirmInput('A-1', h.sqs.now()));
  const [first] = await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
  expect(await outbox.fail(first!, { now: h.sqs.now(), state: 'dead', reason: 'HTTP 400' })).toBe(true);
  expect(await outbox.replay({ ids: [job.id] }, h.sqs.now())).toBe(1);
  const [again] = await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
  expect(again?.attempts).toBe(1);
  expect(await outbox.fail(again!, { now: h.sqs.now(), state: 'dead', reason: 'HTTP 400 again' })).toBe(true);
  expect(h.sqs.messages(h.queueUrl)).toHaveLength(0);
  expect((await outbox.listDead()).map((j) => j.lastError)).toEqual(['HTTP 400 again']);
});
