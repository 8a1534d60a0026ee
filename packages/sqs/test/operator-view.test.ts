/**
 * What operators can read on SQS, over real HTTP to the emulator: a dead job's attempt history survives
 * into its dead letter (and through a replay), `listJobs` lists the dead-letter queue with core's filters
 * and refuses the states SQS cannot list, and the features say what is not kept.
 */
import { type AttemptRecord, JobValidationError } from '@postback/core';
import { afterEach, describe, expect, test } from 'vitest';
import { SqsUnsupportedError } from '../src/index.ts';
import { type Harness, startHarness } from './harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const HOUR = 3_600_000;
const LEASE = { limit: 10, leaseMs: 30_000 };

const confirmInput = (orderId: string, at: number) => ({
  orderId,
  valueMicros: 1_000,
  click: { token: `tok_${orderId}`, clickedAt: at - 60_000 },
});
const attempt = (startedAt: number, overrides: Partial<AttemptRecord> = {}): AttemptRecord => ({
  startedAt,
  durationMs: 120,
  outcome: 'transient',
  status: 503,
  detail: '503: Service Unavailable',
  ...overrides,
});
const notFound = (startedAt: number) =>
  attempt(startedAt, { outcome: 'permanent', status: 404, detail: '404: click_token not found' });

describe('attempt history on SQS', () => {
  test('a dead job keeps its failing attempt in the dead letter; a retry before it is not kept', async () => {
    h = startHarness();
    const outbox = h.outbox();
    const { job } = await outbox.confirm(confirmInput('A-1', h.sqs.now()));
    const [first] = await outbox.claim({ now: h.sqs.now(), ...LEASE });
    // A retry only changes the message's visibility: its attempt has nowhere to go.
    await outbox.retry(first!, {
      now: h.sqs.now(),
      nextAttemptAt: h.sqs.now(),
      error: '503',
      attempt: attempt(h.sqs.now()),
    });
    expect(await outbox.history(job.id)).toEqual([]);
    h.sqs.advance(1_000);
    const [second] = await outbox.claim({ now: h.sqs.now(), ...LEASE });
    const dead = notFound(h.sqs.now());
    const failed = await outbox.fail(second!, {
      now: h.sqs.now(),
      state: 'dead',
      reason: dead.detail!,
      attempt: dead,
    });
    expect(failed).toBe(true);
    expect(await outbox.history(job.id)).toEqual([dead]);
    // The dead letter itself carries it: any outbox on the same queues reads it.
    expect(await h.outbox().history(job.id)).toEqual([dead]);
  });

  test('the history travels with a replayed job, so a second death shows the first one too', async () => {
    h = startHarness();
    const outbox = h.outbox();
    const { job } = await outbox.confirm(confirmInput('A-2', h.sqs.now()));
    const [claimed] = await outbox.claim({ now: h.sqs.now(), ...LEASE });
    const first = notFound(h.sqs.now());
    await outbox.fail(claimed!, { now: h.sqs.now(), state: 'dead', reason: 'gone', attempt: first });
    expect(await outbox.replay({ ids: [job.id] }, h.sqs.now())).toBe(1);
    expect(await outbox.history(job.id)).toEqual([]); // back in the queue: not readable there
    h.sqs.advance(1_000);
    const [again] = await outbox.claim({ now: h.sqs.now(), ...LEASE });
    const second = attempt(h.sqs.now(), { status: 422, outcome: 'permanent', detail: '422: bad value' });
    await outbox.fail(again!, { now: h.sqs.now(), state: 'dead', reason: 'bad', attempt: second });
    expect(await outbox.history(job.id)).toEqual([first, second]);
  });

  test('a detail is cut and its control characters escaped, as every store keeps it', async () => {
    h = startHarness();
    const outbox = h.outbox();
    const { job } = await outbox.confirm(confirmInput('A-3', h.sqs.now()));
    const [claimed] = await outbox.claim({ now: h.sqs.now(), ...LEASE });
    const long = attempt(h.sqs.now(), { detail: `a\u0007${'x'.repeat(2_000)}` });
    await outbox.fail(claimed!, { now: h.sqs.now(), state: 'dead', reason: 'x', attempt: long });
    const [kept] = await outbox.history(job.id);
    expect(kept?.detail).toHaveLength(500);
    expect(kept?.detail).not.toContain('\u0007');
    expect(kept?.detail?.endsWith('…')).toBe(true);
  });

  test('an unknown job, or an outbox without a dead-letter queue, has an empty history', async () => {
    h = startHarness();
    expect(await h.outbox().history('no-such-job')).toEqual([]);
    expect(await h.outbox({ deadLetterQueueUrl: undefined }).history('no-such-job')).toEqual([]);
  });
});

describe('listJobs on SQS', () => {
  /** Two dead jobs (404, 422), one expired, one still pending. */
  async function seed() {
    const outbox = h.outbox();
    const at = h.sqs.now();
    for (const orderId of ['D-404', 'D-422', 'E-1', 'P-1']) await outbox.confirm(confirmInput(orderId, at));
    const claimed = await outbox.claim({ now: at, ...LEASE });
    const byOrder = new Map(claimed.map((job) => [job.orderId, job]));
    await outbox.fail(byOrder.get('D-404')!, {
      now: at,
      state: 'dead',
      reason: '404: click_token not found',
      attempt: notFound(at),
    });
    h.sqs.advance(1_000);
    const bad = attempt(h.sqs.now(), { outcome: 'permanent', status: 422, detail: '422: bad value' });
    await outbox.fail(byOrder.get('D-422')!, {
      now: h.sqs.now(),
      state: 'dead',
      reason: '422: bad value',
      attempt: bad,
    });
    await outbox.fail(byOrder.get('E-1')!, { now: h.sqs.now(), state: 'expired', reason: 'deadline passed' });
    await outbox.release([byOrder.get('P-1')!], h.sqs.now());
    return outbox;
  }
  const orders = (jobs: { orderId: string }[]) => jobs.map((job) => job.orderId).sort();

  test('lists dead jobs from the dead-letter queue, filtered by reason and by the last attempt status', async () => {
    h = startHarness();
    const outbox = await seed();
    expect(orders(await outbox.listJobs({ states: ['dead'] }))).toEqual(['D-404', 'D-422']);
    const byReason = await outbox.listJobs({ states: ['dead'], reason: /click_token/i });
    expect(byReason.map((job) => [job.orderId, job.state, job.lastError])).toEqual([
      ['D-404', 'dead', '404: click_token not found'],
    ]);
    expect(orders(await outbox.listJobs({ status: 422 }))).toEqual(['D-422']);
    expect(orders(await outbox.listJobs({ states: ['expired'] }))).toEqual(['E-1']);
    // No states: what SQS can list (the dead-letter queue), never the queued job.
    expect(orders(await outbox.listJobs())).toEqual(['D-404', 'D-422', 'E-1']);
    expect(await outbox.listJobs({ limit: 1, offset: 5 })).toEqual([]);
    // Listing gives every dead letter back: a second listing sees the same.
    expect(orders(await outbox.listJobs({ states: ['dead'] }))).toEqual(['D-404', 'D-422']);
    expect(h.sqs.messages(h.dlqUrl)).toHaveLength(3);
  });

  test('a state SQS cannot list is an SqsUnsupportedError naming it; a malformed filter a JobValidationError', async () => {
    h = startHarness();
    const outbox = await seed();
    const refused = outbox.listJobs({ states: ['dead', 'pending'] });
    await expect(refused).rejects.toBeInstanceOf(SqsUnsupportedError);
    await expect(outbox.listJobs({ states: ['inflight'] })).rejects.toThrow(/'inflight'/);
    await expect(outbox.listJobs({ limit: 0 })).rejects.toBeInstanceOf(JobValidationError);
    expect(outbox.features.listableStates).toEqual(['dead', 'expired', 'cancelled', 'unmatched']);

    const noDlq = h.outbox({ deadLetterQueueUrl: undefined });
    expect(noDlq.features.listableStates).toEqual([]);
    expect(await noDlq.listJobs()).toEqual([]);
    await expect(noDlq.listJobs({ states: ['dead'] })).rejects.toThrow(/no deadLetterQueueUrl/);
  });
});

describe('withdraw on SQS', () => {
  test('is an SqsUnsupportedError (a queued confirmation cannot be taken back); a malformed one a JobValidationError', async () => {
    h = startHarness();
    const outbox = h.outbox();
    await outbox.confirm(confirmInput('W-1', h.sqs.now()));
    const refused = outbox.withdraw({ orderId: 'W-1' });
    await expect(refused).rejects.toBeInstanceOf(SqsUnsupportedError);
    await expect(outbox.withdraw({ orderId: 'W-1' })).rejects.toThrow(/withdraw\(\) is not supported/);
    await expect(outbox.withdraw({ orderId: '' })).rejects.toBeInstanceOf(JobValidationError);
    // Nothing was taken out: the confirmation is still delivered.
    expect((await outbox.claim({ now: h.sqs.now(), ...LEASE })).map((job) => job.orderId)).toEqual(['W-1']);
  });
});

describe('what SQS does not keep', () => {
  test('features say so; stats count nothing at risk, prune deletes nothing, heart-beats are not kept', async () => {
    h = startHarness();
    const outbox = h.outbox();
    expect(outbox.features).toEqual({
      attemptHistory: false,
      listableStates: ['dead', 'expired', 'cancelled', 'unmatched'],
      heartbeats: false,
      prune: false,
      fairClaims: false,
      holds: true,
      ledger: false,
    });
    await outbox.confirm(confirmInput('A-1', h.sqs.now() - 7 * 24 * HOUR + 3 * HOUR));
    const stats = await outbox.stats(h.sqs.now(), {
      atRiskWithinMs: HOUR,
      deadlineBucketsMs: [HOUR, 24 * HOUR],
    });
    expect(stats.atRisk).toEqual({ count: 0, withinMs: HOUR });
    expect(stats.deadlineBuckets).toEqual([
      { withinMs: HOUR, count: 0 },
      { withinMs: 24 * HOUR, count: 0 },
    ]);
    await expect(outbox.stats(h.sqs.now(), { atRiskWithinMs: -1 })).rejects.toBeInstanceOf(
      JobValidationError,
    );
    expect(await outbox.prune({ now: h.sqs.now(), olderThanMs: 0, returnWindowMs: 0 })).toBe(0);
    await expect(
      outbox.prune({ now: h.sqs.now(), olderThanMs: -1, returnWindowMs: 0 }),
    ).rejects.toBeInstanceOf(JobValidationError);
    await outbox.beat({
      workerId: 'w1',
      at: h.sqs.now(),
      state: 'running',
      pausedUntil: null,
      pauseReason: null,
      version: '0.1.0',
      host: null,
      pid: null,
      pausedAccounts: [],
    });
    expect(await outbox.workers({ now: h.sqs.now(), sinceMs: HOUR })).toEqual([]);
  });
});
