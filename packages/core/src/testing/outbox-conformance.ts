/**
 * The `Outbox` conformance suite: one set of vitest tests that every store (memory, SQLite, Postgres,
 * SQS) runs, so the rules of the `Outbox` interface hold the same everywhere. The suite owns a fake clock
 * and a non-default window policy (so a store that ignores the policy fails), builds a fresh outbox per
 * test through the backend's factory, and closes and cleans it up after.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DAY_MS, type EpochMs, resolvePolicy, type WindowPolicy } from '../policy.ts';
import { claimJob, completeJob, failJob, refundAfterConfirm, retryJob } from '../queue/jobs.ts';
import type {
  ConfirmInput,
  ConfirmJob,
  FailResult,
  Job,
  JobState,
  Outbox,
  RefundJob,
  RetryResult,
} from '../queue/types.ts';
import { JobValidationError } from '../queue/validation.ts';
import { createFakeClock, type FakeClock } from './fake-clock.ts';

export { createFakeClock, type FakeClock } from './fake-clock.ts';

/** What the suite gives a backend's factory: the clock to stamp jobs with and the windows to use. */
export interface OutboxFactoryContext {
  /** The suite's fake clock. Use it wherever the store reads the time (creation stamps, validation). */
  now: () => EpochMs;
  /** The windows the store must stamp deadlines with. */
  policy: WindowPolicy;
}

/** A backend's outbox for one test, and how to dispose of what it created (files, schemas, queues). */
export interface OutboxUnderTest {
  outbox: Outbox;
  /** Runs after `outbox.close()`. */
  cleanup?: () => Promise<void> | void;
}

/** Builds a fresh, empty outbox for one test. */
export type OutboxFactory = (context: OutboxFactoryContext) => Promise<OutboxUnderTest> | OutboxUnderTest;

/**
 * Abilities a backend may lack by its nature; the tests that need one are skipped with the given reason.
 * - `lookup`: `get` and `getByOrder` (SQS has no lookup by id or key). Without it the suite checks state
 *   through `claim` and the transitions' results only.
 * - `cancelPendingConfirm`: a refund cancels a confirm not yet sent (`pending` or `dead`) instead of
 *   enqueueing a reversal behind it.
 * - `exactStats`: `stats` counts exactly (SQS counts are approximate).
 * - `listDead`: `listDead` with paging.
 * - `uncountedAttempts`: `release` and `retry({ countAttempt: false })` give back the attempt counted at
 *   claim (SQS's `ApproximateReceiveCount` only grows).
 * - `retryError`: the error of a `retry` is kept and shows as `lastError` at the next claim (SQS keeps no
 *   per-message state).
 * - `maybeAppliedState`: `maybeAppliedAt` is kept on the job between claims: set by
 *   `retry({ maybeApplied: true })` and by a claim that retakes an expired lease, it shows at the next
 *   claim and governs a later `fail` and `refund` of the order. (`fail({ maybeApplied: true })` followed by
 *   a refund is tested without it: every store must send that reversal.)
 */
export type OutboxCapability =
  | 'lookup'
  | 'cancelPendingConfirm'
  | 'exactStats'
  | 'listDead'
  | 'uncountedAttempts'
  | 'retryError'
  | 'maybeAppliedState';

/** Options of {@link describeOutbox}. */
export interface DescribeOutboxOptions {
  /** Capabilities the backend cannot provide, each with the reason shown in the skipped test's name. */
  unsupported?: Partial<Record<OutboxCapability, string>>;
  /** Per-test timeout in milliseconds. @defaultValue 15_000 */
  timeoutMs?: number;
}

const HOUR = 3_600_000;
const LEASE_MS = 30_000;
/** Deliberately not the defaults: a store that ignores the policy it is given fails the deadline tests. */
const SUITE_POLICY: WindowPolicy = resolvePolicy({
  confirmWindowMs: 7 * DAY_MS,
  safetyMarginMs: 2 * HOUR,
  returnWindowMs: 14 * DAY_MS,
});

/**
 * Registers the conformance tests for an `Outbox` implementation.
 *
 * @param name - shown in the describe block, e.g. `"sqlite"`
 * @param factory - builds a fresh outbox per test with the suite's clock and policy
 * @example
 * ```ts
 * import { describeOutbox } from '@postback/core/testing';
 * describeOutbox('sqlite', async ({ now, policy }) => {
 *   const dir = await mkdtemp(join(tmpdir(), 'pb-'));
 *   const outbox = await openSqliteOutbox({ path: join(dir, 'jobs.db'), now, policy });
 *   return { outbox, cleanup: () => rm(dir, { recursive: true }) };
 * });
 * ```
 */
export function describeOutbox(
  name: string,
  factory: OutboxFactory,
  options: DescribeOutboxOptions = {},
): void {
  const unsupported = options.unsupported ?? {};
  const timeout = options.timeoutMs ?? 15_000;
  const has = (capability: OutboxCapability) => unsupported[capability] === undefined;
  /** `it`, or a skip that says why when the backend lacks one of `capabilities`. */
  const test = (title: string, fn: () => Promise<void>, ...capabilities: OutboxCapability[]) => {
    const missing = capabilities.find((c) => !has(c));
    // Skipped on purpose when the backend declared it cannot do this (e.g. SQS cannot cancel a queued
    // message); the reason it gave goes into the test's title, so the report shows it.
    const shown =
      missing === undefined ? title : `${title} [unsupported ${missing}: ${unsupported[missing]}]`;
    it.skipIf(missing !== undefined)(shown, fn, timeout);
  };

  describe(`Outbox conformance: ${name}`, () => {
    let clock: FakeClock;
    let outbox: Outbox;
    let cleanup: (() => Promise<void> | void) | undefined;
    let tokens = 0;

    beforeEach(async () => {
      clock = createFakeClock();
      const made = await factory({ now: clock.now, policy: SUITE_POLICY });
      outbox = made.outbox;
      cleanup = made.cleanup;
    });

    afterEach(async () => {
      try {
        await outbox.close();
      } finally {
        await cleanup?.();
      }
    });

    const confirmInput = (orderId: string, overrides: Partial<ConfirmInput> = {}): ConfirmInput => ({
      orderId,
      valueMicros: 12_340_000,
      click: { token: `tok_${++tokens}_AbC-9`, clickedAt: clock.now() - HOUR },
      ...overrides,
    });
    const enqueue = async (orderId: string, overrides: Partial<ConfirmInput> = {}) =>
      (await outbox.confirm(confirmInput(orderId, overrides))).job;
    const claimAll = (limit = 100, leaseMs = LEASE_MS) => outbox.claim({ now: clock.now(), limit, leaseMs });
    const claimOne = async (): Promise<Job> => {
      const jobs = await claimAll(1);
      expect(jobs).toHaveLength(1);
      return jobs[0] as Job;
    };
    const deliver = async (orderId: string, campaignId = 'cmp_77'): Promise<ConfirmJob> => {
      await enqueue(orderId);
      const claimed = await claimOne();
      expect(await outbox.complete(claimed, { now: clock.now(), campaignId })).toBe(true);
      return claimed as ConfirmJob;
    };
    const killConfirm = async (orderId: string, reason = 'Ad service answered 404: unknown click token') => {
      await enqueue(orderId);
      const claimed = await claimOne();
      expect(await outbox.fail(claimed, { now: clock.now(), state: 'dead', reason })).toBe(true);
      return claimed;
    };
    const stateOf = async (id: string): Promise<JobState | undefined> => (await outbox.get(id))?.state;
    const expectValidation = async (promise: Promise<unknown>, field: string) => {
      const err = await promise.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, `expected a JobValidationError naming ${field}`).toBeInstanceOf(JobValidationError);
      expect((err as JobValidationError).field).toBe(field);
      expect((err as Error).message).toContain(field);
    };

    describe('validation', () => {
      test('rejects a malformed confirm with a JobValidationError naming the field, and stores nothing', async () => {
        const cases: Array<[string, Partial<ConfirmInput> | Record<string, unknown>]> = [
          ['orderId', { orderId: '' }],
          ['orderId', { orderId: 'x'.repeat(256) }],
          ['orderId', { orderId: 'ord\u0000' }],
          ['valueMicros', { valueMicros: 12.5 }],
          ['valueMicros', { valueMicros: -1 }],
          ['valueMicros', { valueMicros: '12.34' }],
          ['click.token', { click: { token: 'has space', clickedAt: clock.now() } }],
          ['click.token', { click: { token: '', clickedAt: clock.now() } }],
          ['click.clickedAt', { click: { token: 'tok_ok', clickedAt: Number.NaN } }],
          ['click.clickedAt', { click: { token: 'tok_ok', clickedAt: clock.now() + DAY_MS } }],
        ];
        for (const [field, patch] of cases) {
          await expectValidation(
            outbox.confirm({ ...confirmInput('ord_bad'), ...patch } as ConfirmInput),
            field,
          );
        }
        expect(await claimAll()).toEqual([]);
        if (has('lookup')) expect(await outbox.getByOrder('ord_bad')).toEqual([]);
        if (has('exactStats')) expect((await outbox.stats(clock.now())).counts.pending).toBe(0);
      });

      test('rejects a malformed refund with a JobValidationError naming the field, and stores nothing', async () => {
        await expectValidation(outbox.refund({ orderId: '' }), 'orderId');
        await expectValidation(outbox.refund({ orderId: 'ord_r', campaignId: 'campaign-7' }), 'campaignId');
        clock.advance(DAY_MS);
        expect(await claimAll()).toEqual([]);
        if (has('lookup')) expect(await outbox.getByOrder('ord_r')).toEqual([]);
      });

      test('refuses a refund without campaignId when it holds no confirmation for the order', async () => {
        await expectValidation(outbox.refund({ orderId: 'ord_unknown' }), 'campaignId');
        expect(await claimAll()).toEqual([]);
      });
    });

    describe('enqueue', () => {
      test('stores a confirm as pending, due now, no attempts, deadline = click + window − margin', async () => {
        const clickedAt = clock.now() - 3 * HOUR;
        const { created, job } = await outbox.confirm(
          confirmInput('ord_1', { click: { token: 'tok_A-b_c', clickedAt } }),
        );
        expect(created).toBe(true);
        expect(job).toMatchObject({
          kind: 'confirm',
          orderId: 'ord_1',
          state: 'pending',
          attempts: 0,
          nextAttemptAt: clock.now(),
          deadline: clickedAt + 7 * DAY_MS - 2 * HOUR,
          clickToken: 'tok_A-b_c',
          clickedAt,
          valueMicros: 12_340_000,
          lease: null,
          deliveredAt: null,
          campaignId: null,
          maybeAppliedAt: null,
          lastError: null,
        });
        expect(typeof job.id).toBe('string');
        if (has('lookup')) expect(await outbox.get(job.id)).toEqual(job);
      });

      test('treats a second confirm of the same order as a no-op returning the stored job', async () => {
        const first = await outbox.confirm(confirmInput('ord_1', { valueMicros: 1_000_000 }));
        clock.advance(1_000);
        const second = await outbox.confirm(confirmInput('ord_1', { valueMicros: 2_000_000 }));
        expect(second.created).toBe(false);
        expect(second.job.id).toBe(first.job.id);
        expect(second.job.valueMicros).toBe(1_000_000);
        const claimed = await claimAll();
        expect(claimed.map((j) => j.orderId)).toEqual(['ord_1']);
      });

      test('stays a no-op after delivery: confirming a delivered order again sends nothing more', async () => {
        await deliver('ord_1');
        const again = await outbox.confirm(confirmInput('ord_1'));
        expect(again.created).toBe(false);
        expect(again.job.state).toBe('delivered');
        clock.advance(HOUR);
        expect(await claimAll()).toEqual([]);
      });

      test('stores a confirm whose click is already past its deadline, so the dispatcher can expire it visibly', async () => {
        const { job } = await outbox.confirm(
          confirmInput('ord_old', { click: { token: 'tok_old', clickedAt: clock.now() - 8 * DAY_MS } }),
        );
        expect(job.deadline).toBeLessThan(clock.now());
        const [claimed] = await claimAll();
        expect(claimed?.id).toBe(job.id);
        expect(
          await outbox.fail(claimed as Job, {
            now: clock.now(),
            state: 'expired',
            reason: 'deadline passed',
          }),
        ).toBe(true);
        expect(await claimAll()).toEqual([]);
      });
    });

    describe('claim', () => {
      test('marks a claimed job inflight with a lease of leaseMs from now and counts the attempt', async () => {
        const job = await enqueue('ord_1');
        const [claimed] = await claimAll(10, 45_000);
        expect(claimed).toMatchObject({ id: job.id, state: 'inflight', attempts: 1 });
        expect(claimed?.lease?.expiresAt).toBe(clock.now() + 45_000);
        expect(claimed?.lease?.token).toEqual(expect.any(String));
        if (has('lookup')) expect(await stateOf(job.id)).toBe('inflight');
      });

      test('does not hand out a job again while its lease holds', async () => {
        await enqueue('ord_1');
        await claimOne();
        clock.advance(LEASE_MS - 1);
        expect(await claimAll()).toEqual([]);
      });

      test('claims only due jobs: a job retried into the future waits for its nextAttemptAt', async () => {
        await enqueue('ord_1');
        const claimed = await claimOne();
        const at = clock.now() + 10_000;
        expect(await outbox.retry(claimed, { now: clock.now(), nextAttemptAt: at, error: 'HTTP 503' })).toBe(
          true,
        );
        clock.advance(9_999);
        expect(await claimAll()).toEqual([]);
        clock.advance(1);
        const [again] = await claimAll();
        expect(again).toMatchObject({ id: claimed.id, attempts: 2 });
        if (has('retryError')) expect(again?.lastError).toBe('HTTP 503');
      });

      test('returns at most limit jobs per claim', async () => {
        for (let i = 0; i < 5; i++) await enqueue(`ord_${i}`);
        expect(await claimAll(2)).toHaveLength(2);
        expect(await claimAll(2)).toHaveLength(2);
        expect(await claimAll(2)).toHaveLength(1);
        expect(await claimAll(2)).toHaveLength(0);
      });

      test('never gives the same job to two concurrent claims', async () => {
        const orders = Array.from({ length: 24 }, (_, i) => `ord_${i}`);
        for (const orderId of orders) await enqueue(orderId);
        const batches = await Promise.all([claimAll(10), claimAll(10), claimAll(10), claimAll(10)]);
        const ids = batches.flat().map((job) => job.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids).toHaveLength(24);
      });

      test('hands a job whose lease ran out to a new claimant and refuses every transition of the old lease', async () => {
        const job = await enqueue('ord_1');
        const old = await claimOne();
        clock.advance(LEASE_MS);
        const fresh = await claimOne();
        expect(fresh.id).toBe(job.id);
        expect(fresh.attempts).toBe(2);
        expect(fresh.lease?.token).not.toBe(old.lease?.token);
        const now = clock.now();
        expect(await outbox.complete(old, { now, campaignId: 'cmp_1' })).toBe(false);
        expect(await outbox.retry(old, { now, nextAttemptAt: now, error: 'x' })).toBe(false);
        expect(await outbox.fail(old, { now, state: 'dead', reason: 'x' })).toBe(false);
        expect(await outbox.extendLease(old, { now, leaseMs: LEASE_MS })).toBe(false);
        await outbox.release([old], now);
        expect(await claimAll()).toEqual([]); // the release with the stale lease changed nothing
        expect(await outbox.complete(fresh, { now, campaignId: 'cmp_1' })).toBe(true);
        if (has('lookup')) expect(await stateOf(job.id)).toBe('delivered');
      });
    });

    describe('transitions', () => {
      test('complete records the delivery and the campaign the service returned', async () => {
        const job = await enqueue('ord_1');
        const claimed = await claimOne();
        clock.advance(250);
        expect(await outbox.complete(claimed, { now: clock.now(), campaignId: 'cmp_42' })).toBe(true);
        clock.advance(LEASE_MS * 2);
        expect(await claimAll()).toEqual([]);
        if (has('lookup')) {
          expect(await outbox.get(job.id)).toMatchObject({
            state: 'delivered',
            deliveredAt: clock.now() - LEASE_MS * 2,
            campaignId: 'cmp_42',
            lease: null,
          });
        }
      });

      test("complete stores exactly the job core's completeJob computes, after a failed attempt too", async () => {
        const job = await enqueue('ord_1');
        const first = await claimOne();
        expect(
          await outbox.retry(first, { now: clock.now(), nextAttemptAt: clock.now(), error: 'HTTP 502' }),
        ).toBe(true);
        clock.advance(10);
        const second = await claimOne();
        expect(second.attempts).toBe(2);
        if (has('retryError')) expect(second.lastError).toBe('HTTP 502');
        clock.advance(250);
        const result = { now: clock.now(), campaignId: 'cmp_42' };
        expect(await outbox.complete(second, result)).toBe(true);
        if (has('lookup')) expect(await outbox.get(job.id)).toEqual(completeJob(second, result));
      });

      test("a refund's complete keeps the campaign it was sent with, whatever the response names", async () => {
        const confirm = await deliver('ord_1', 'cmp_7');
        const refund = await outbox.refund({ orderId: confirm.orderId });
        expect(refund.outcome).toBe('enqueued');
        const claimed = await claimOne();
        expect(claimed).toMatchObject({ kind: 'refund', campaignId: 'cmp_7' });
        const result = { now: clock.now(), campaignId: 'cmp_other' };
        expect(await outbox.complete(claimed, result)).toBe(true);
        if (has('lookup')) {
          expect(await outbox.get(claimed.id)).toEqual(completeJob(claimed, result));
          expect(await outbox.get(claimed.id)).toMatchObject({ campaignId: 'cmp_7' });
        }
      });

      test('refuses transitions of a job that was never claimed', async () => {
        const job = await enqueue('ord_1');
        const now = clock.now();
        expect(await outbox.complete(job, { now, campaignId: 'cmp_1' })).toBe(false);
        expect(await outbox.fail(job, { now, state: 'dead', reason: 'x' })).toBe(false);
        expect(await claimAll()).toHaveLength(1);
      });

      test('uses a lease once: a transition after a successful one is refused', async () => {
        await enqueue('ord_1');
        const claimed = await claimOne();
        expect(
          await outbox.retry(claimed, { now: clock.now(), nextAttemptAt: clock.now(), error: 'HTTP 502' }),
        ).toBe(true);
        expect(await outbox.complete(claimed, { now: clock.now(), campaignId: 'cmp_1' })).toBe(false);
        expect(
          await outbox.retry(claimed, { now: clock.now(), nextAttemptAt: clock.now(), error: 'again' }),
        ).toBe(false);
      });

      test(
        'retry without countAttempt gives back the attempt counted at claim',
        async () => {
          await enqueue('ord_1');
          const claimed = await claimOne();
          const now = clock.now();
          expect(
            await outbox.retry(claimed, {
              now,
              nextAttemptAt: now,
              error: 'paused: 401',
              countAttempt: false,
            }),
          ).toBe(true);
          const again = await claimOne();
          expect(again.attempts).toBe(1);
        },
        'uncountedAttempts',
      );

      test('fail dead keeps the reason; a dead job is not claimed again', async () => {
        const job = await killConfirm('ord_1', 'Ad service answered 404: unknown click token');
        clock.advance(DAY_MS);
        expect(await claimAll()).toEqual([]);
        if (has('lookup'))
          expect(await outbox.get(job.id)).toMatchObject({
            state: 'dead',
            lastError: 'Ad service answered 404: unknown click token',
          });
      });

      test('fail expired is final: not claimed, not listed as dead, not replayed', async () => {
        const job = await enqueue('ord_1');
        const claimed = await claimOne();
        expect(
          await outbox.fail(claimed, { now: clock.now(), state: 'expired', reason: 'deadline passed' }),
        ).toBe(true);
        expect(await outbox.replay({ ids: [job.id] }, clock.now())).toBe(0);
        expect(await outbox.replay({ all: true }, clock.now())).toBe(0);
        expect(await claimAll()).toEqual([]);
        if (has('listDead')) expect(await outbox.listDead()).toEqual([]);
        if (has('lookup'))
          expect(await outbox.get(job.id)).toMatchObject({ state: 'expired', lastError: 'deadline passed' });
      });

      test('release gives claimed jobs back, due now, without counting the attempt', async () => {
        await enqueue('ord_1');
        await enqueue('ord_2');
        const claimed = await claimAll();
        clock.advance(1_000);
        await outbox.release(claimed, clock.now());
        const again = await claimAll();
        expect(again.map((j) => j.id).sort()).toEqual(claimed.map((j) => j.id).sort());
        if (has('uncountedAttempts')) expect(again.every((j) => j.attempts === 1)).toBe(true);
      });

      test('extendLease keeps a long send from being claimed by another worker', async () => {
        await enqueue('ord_1');
        const claimed = await claimOne();
        clock.advance(LEASE_MS - 1_000);
        expect(await outbox.extendLease(claimed, { now: clock.now(), leaseMs: LEASE_MS })).toBe(true);
        clock.advance(LEASE_MS - 1);
        expect(await claimAll()).toEqual([]);
        expect(await outbox.complete(claimed, { now: clock.now(), campaignId: 'cmp_1' })).toBe(true);
      });

      test('a lease extension expires too: the job becomes claimable leaseMs after the last extension', async () => {
        await enqueue('ord_1');
        const claimed = await claimOne();
        clock.advance(10_000);
        expect(await outbox.extendLease(claimed, { now: clock.now(), leaseMs: 5_000 })).toBe(true);
        clock.advance(5_000);
        expect((await claimAll()).map((j) => j.id)).toEqual([claimed.id]);
      });
    });

    describe('refunds', () => {
      test(
        'a refund of a pending confirm cancels it: nothing is sent and nothing needs reversing',
        async () => {
          const job = await enqueue('ord_1');
          const result = await outbox.refund({ orderId: 'ord_1' });
          expect(result.outcome).toBe('cancelled');
          expect(result.job).toMatchObject({ id: job.id, kind: 'confirm', state: 'cancelled' });
          clock.advance(DAY_MS);
          expect(await claimAll()).toEqual([]);
          expect(await outbox.replay({ all: true }, clock.now())).toBe(0);
        },
        'cancelPendingConfirm',
      );

      test(
        'a refund of a dead confirm cancels it, so a later replay can never charge the returned order',
        async () => {
          const job = await killConfirm('ord_1');
          const result = await outbox.refund({ orderId: 'ord_1' });
          expect(result).toMatchObject({ outcome: 'cancelled', job: { id: job.id, state: 'cancelled' } });
          expect(await outbox.replay({ all: true }, clock.now())).toBe(0);
          expect(await claimAll()).toEqual([]);
        },
        'cancelPendingConfirm',
      );

      test('a refund of an expired confirm reports not-charged and enqueues nothing', async () => {
        await enqueue('ord_1');
        const claimed = await claimOne();
        await outbox.fail(claimed, { now: clock.now(), state: 'expired', reason: 'deadline passed' });
        const result = await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
        expect(result).toMatchObject({ outcome: 'not-charged', job: { id: claimed.id, state: 'expired' } });
        clock.advance(DAY_MS);
        expect(await claimAll()).toEqual([]);
      });

      test('a refund of a delivered confirm enqueues a reversal with its campaign and a return-window deadline', async () => {
        await deliver('ord_1', 'cmp_42');
        const deliveredAt = clock.now();
        clock.advance(DAY_MS);
        const result = await outbox.refund({ orderId: 'ord_1' });
        expect(result.outcome).toBe('enqueued');
        expect(result.job).toMatchObject({
          kind: 'refund',
          orderId: 'ord_1',
          state: 'pending',
          campaignId: 'cmp_42',
          deadline: deliveredAt + 14 * DAY_MS - 2 * HOUR,
        });
        const [claimed] = await claimAll();
        expect(claimed).toMatchObject({
          id: result.job.id,
          kind: 'refund',
          campaignId: 'cmp_42',
          attempts: 1,
        });
      });

      test('a refund that names its campaign keeps it over the confirmation’s', async () => {
        await deliver('ord_1', 'cmp_42');
        const result = await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_43' });
        expect(result.job.campaignId).toBe('cmp_43');
      });

      test('a refund behind an inflight confirm waits until the confirm is delivered, then takes its campaign and deadline', async () => {
        await enqueue('ord_1');
        const confirm = await claimOne();
        const result = await outbox.refund({ orderId: 'ord_1' });
        expect(result).toMatchObject({
          outcome: 'enqueued',
          job: { kind: 'refund', deadline: null, campaignId: null },
        });
        clock.advance(LEASE_MS - 1);
        expect(await claimAll()).toEqual([]); // the refund must not overtake its confirmation
        expect(await outbox.complete(confirm, { now: clock.now(), campaignId: 'cmp_9' })).toBe(true);
        const deliveredAt = clock.now();
        const [refund] = await claimAll();
        expect(refund).toMatchObject({
          id: result.job.id,
          kind: 'refund',
          campaignId: 'cmp_9',
          deadline: deliveredAt + 14 * DAY_MS - 2 * HOUR,
        });
      });

      test('a waiting refund stays held while its confirm is retried after a transient failure', async () => {
        await enqueue('ord_1');
        const confirm = await claimOne();
        await outbox.refund({ orderId: 'ord_1' });
        await outbox.retry(confirm, { now: clock.now(), nextAttemptAt: clock.now(), error: 'HTTP 503' });
        const claimed = await claimAll();
        expect(claimed.map((j) => j.kind)).toEqual(['confirm']);
        clock.advance(LEASE_MS);
        expect((await claimAll()).map((j) => j.kind)).toEqual(['confirm']); // the lease ran out; still the confirm
      });

      for (const ending of ['dead', 'expired'] as const) {
        test(`a waiting refund is cancelled when its confirm ends ${ending}: nothing was charged`, async () => {
          await enqueue('ord_1');
          const confirm = await claimOne();
          const { job: refund } = await outbox.refund({ orderId: 'ord_1' });
          expect(await outbox.fail(confirm, { now: clock.now(), state: ending, reason: 'x' })).toBe(true);
          if (has('lookup')) {
            const after = (await outbox.get(confirm.id)) as ConfirmJob;
            expect(after.maybeAppliedAt).toBeNull();
            const expected = refundAfterConfirm(refund as RefundJob, after, SUITE_POLICY);
            expect(expected.state).toBe('cancelled');
            expect(await outbox.get(refund.id)).toEqual(expected);
          }
          clock.advance(DAY_MS);
          expect(await claimAll()).toEqual([]);
          if (has('lookup')) expect(await stateOf(refund.id)).toBe('cancelled');
          // A dead confirm of a refunded order is never re-sent: replay cancels it instead.
          if (has('cancelPendingConfirm')) expect(await outbox.replay({ all: true }, clock.now())).toBe(0);
        });
      }

      test('a second refund of the same order is a duplicate and changes nothing', async () => {
        await deliver('ord_1', 'cmp_42');
        const first = await outbox.refund({ orderId: 'ord_1' });
        const second = await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_99' });
        expect(second).toMatchObject({
          outcome: 'duplicate',
          job: { id: first.job.id, campaignId: 'cmp_42' },
        });
        expect(await claimAll()).toHaveLength(1);
      });

      test('a refund of an order this outbox never confirmed is sent with the given campaign, within a return window from now', async () => {
        const result = await outbox.refund({ orderId: 'ord_elsewhere', campaignId: 'cmp_5' });
        expect(result).toMatchObject({
          outcome: 'enqueued',
          job: { campaignId: 'cmp_5', deadline: clock.now() + 14 * DAY_MS - 2 * HOUR },
        });
        expect((await claimAll()).map((j) => j.id)).toEqual([result.job.id]);
      });

      test(
        'getByOrder returns the confirm and the refund of an order',
        async () => {
          await deliver('ord_1');
          await outbox.refund({ orderId: 'ord_1' });
          const jobs = await outbox.getByOrder('ord_1');
          expect(jobs.map((j) => j.kind).sort()).toEqual(['confirm', 'refund']);
          expect(await outbox.getByOrder('ord_none')).toEqual([]);
        },
        'lookup',
      );
    });

    describe('maybe applied (a request may have reached the service without a clear answer)', () => {
      /** The last day a reversal of something charged at `at` is accepted, minus the margin. */
      const returnDeadline = (at: EpochMs) => at + 14 * DAY_MS - 2 * HOUR;
      /** A confirm whose only attempt may have been applied, ended `ending` at the returned time. */
      const maybeAppliedConfirm = async (orderId: string, ending: 'dead' | 'expired') => {
        await enqueue(orderId);
        const claimed = await claimOne();
        clock.advance(1_000);
        const at = clock.now();
        const failed = { now: at, state: ending, reason: 'the answer was lost', maybeApplied: true };
        expect(await outbox.fail(claimed, failed)).toBe(true);
        return { confirm: claimed as ConfirmJob, at };
      };

      test('a job released, or retried without maybeApplied, is not maybe applied at its next claim', async () => {
        await enqueue('ord_1');
        const first = await claimOne();
        expect(first.maybeAppliedAt).toBeNull();
        await outbox.release([first], clock.now());
        const second = await claimOne();
        expect(second.maybeAppliedAt).toBeNull();
        const now = clock.now();
        expect(await outbox.retry(second, { now, nextAttemptAt: now, error: 'HTTP 503' })).toBe(true);
        const third = await claimOne();
        expect(third.maybeAppliedAt).toBeNull();
      });

      test(
        'retry with maybeApplied records the time, and later attempts keep that first time',
        async () => {
          const job = await enqueue('ord_1');
          const first = await claimOne();
          clock.advance(1_000);
          const t1 = clock.now();
          const lost = {
            now: t1,
            nextAttemptAt: t1,
            error: 'socket closed after sending',
            maybeApplied: true,
          };
          expect(await outbox.retry(first, lost)).toBe(true);
          clock.advance(1_000);
          const second = await claimOne();
          expect(second.maybeAppliedAt).toBe(t1);
          clock.advance(1_000);
          const again = {
            now: clock.now(),
            nextAttemptAt: clock.now(),
            error: 'timeout',
            maybeApplied: true,
          };
          expect(await outbox.retry(second, again)).toBe(true);
          const third = await claimOne();
          expect(third.maybeAppliedAt).toBe(t1);
          clock.advance(1_000);
          const failed = { now: clock.now(), state: 'dead' as const, reason: 'lost', maybeApplied: true };
          expect(await outbox.fail(third, failed)).toBe(true);
          if (has('lookup'))
            expect(await outbox.get(job.id)).toMatchObject({ state: 'dead', maybeAppliedAt: t1 });
        },
        'maybeAppliedState',
      );

      test(
        "retry and fail with maybeApplied store exactly the jobs core's retryJob and failJob compute",
        async () => {
          const job = await enqueue('ord_1');
          const first = await claimOne();
          clock.advance(100);
          const retried: RetryResult = {
            now: clock.now(),
            nextAttemptAt: clock.now() + 5_000,
            error: 'HTTP 504 after sending',
            maybeApplied: true,
          };
          expect(await outbox.retry(first, retried)).toBe(true);
          expect(await outbox.get(job.id)).toEqual(retryJob(first, retried));
          clock.advance(5_000);
          const second = await claimOne();
          clock.advance(100);
          const expired: FailResult = {
            now: clock.now(),
            state: 'expired',
            reason: 'deadline passed',
            maybeApplied: true,
          };
          expect(await outbox.fail(second, expired)).toBe(true);
          expect(await outbox.get(job.id)).toEqual(failJob(second, expired));

          const other = await enqueue('ord_2');
          const claimed = await claimOne();
          clock.advance(100);
          const dead: FailResult = {
            now: clock.now(),
            state: 'dead',
            reason: 'HTTP 200 with a body we could not read',
            maybeApplied: true,
          };
          expect(await outbox.fail(claimed, dead)).toBe(true);
          expect(await outbox.get(other.id)).toEqual(failJob(claimed, dead));
          expect(await outbox.get(other.id)).toMatchObject({ maybeAppliedAt: dead.now });
        },
        'lookup',
      );

      test(
        'a claim that retakes an expired lease marks the job maybe applied at its last update before',
        async () => {
          const job = await enqueue('ord_1');
          const first = await claimOne();
          clock.advance(10_000);
          const extendedAt = clock.now();
          expect(await outbox.extendLease(first, { now: extendedAt, leaseMs: LEASE_MS })).toBe(true);
          clock.advance(LEASE_MS);
          const before = has('lookup') ? await outbox.get(job.id) : null;
          const retaken = await claimOne();
          expect(retaken.maybeAppliedAt).toBe(extendedAt);
          if (before !== null) {
            const options = { now: clock.now(), leaseMs: LEASE_MS, token: retaken.lease?.token as string };
            expect(retaken).toEqual(claimJob(before, options));
            expect(await outbox.get(job.id)).toEqual(retaken);
          }
          clock.advance(LEASE_MS);
          const again = await claimOne(); // retaken once more: the first time is kept
          expect(again.maybeAppliedAt).toBe(extendedAt);
        },
        'maybeAppliedState',
      );

      test(
        'a confirm retaken from a worker that died mid-send is never "never charged": a later refund is sent',
        async () => {
          await enqueue('ord_1');
          await claimOne(); // worker A sends, then dies before recording anything
          const claimedAt = clock.now();
          clock.advance(LEASE_MS);
          const retaken = await claimOne();
          const refused = { now: clock.now(), state: 'dead' as const, reason: 'HTTP 422: duplicate order' };
          expect(await outbox.fail(retaken, refused)).toBe(true);
          const result = await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
          expect(result).toMatchObject({
            outcome: 'enqueued',
            job: { kind: 'refund', campaignId: 'cmp_5', deadline: returnDeadline(claimedAt) },
          });
          expect((await claimAll()).map((j) => j.id)).toEqual([result.job.id]);
        },
        'maybeAppliedState',
      );

      for (const ending of ['dead', 'expired'] as const) {
        test(`a refund of a confirm that ended ${ending} after a send that may have been applied enqueues a reversal from that time`, async () => {
          const { confirm, at } = await maybeAppliedConfirm('ord_1', ending);
          clock.advance(DAY_MS);
          const result = await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
          expect(result).toMatchObject({
            outcome: 'enqueued',
            job: { kind: 'refund', state: 'pending', campaignId: 'cmp_5', deadline: returnDeadline(at) },
          });
          if (has('lookup')) {
            expect(await outbox.get(result.job.id)).toEqual(result.job);
            expect(await stateOf(confirm.id)).toBe(ending);
          }
          const claimed = await claimAll();
          expect(claimed.map((j) => j.id)).toEqual([result.job.id]);
          expect(claimed[0]).toMatchObject({ kind: 'refund', campaignId: 'cmp_5', attempts: 1 });
        });

        test(`a waiting refund follows its confirm that ended ${ending} after a send that may have been applied`, async () => {
          await enqueue('ord_1');
          const confirm = await claimOne();
          const waiting = await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
          expect(waiting).toMatchObject({ outcome: 'enqueued', job: { kind: 'refund', deadline: null } });
          clock.advance(1_000);
          const at = clock.now();
          const failed = { now: at, state: ending, reason: 'the answer was lost', maybeApplied: true };
          expect(await outbox.fail(confirm, failed)).toBe(true);
          if (has('lookup')) {
            const after = (await outbox.get(confirm.id)) as ConfirmJob;
            expect(after).toMatchObject({ state: ending, maybeAppliedAt: at });
            const expected = refundAfterConfirm(waiting.job as RefundJob, after, SUITE_POLICY);
            expect(await outbox.get(waiting.job.id)).toEqual(expected);
          }
          const [sent] = await claimAll();
          expect(sent).toMatchObject({
            id: waiting.job.id,
            kind: 'refund',
            campaignId: 'cmp_5',
            deadline: returnDeadline(at),
          });
        });
      }

      test(
        'a confirm maybe applied by an earlier attempt stays so when a later one is refused: its waiting refund follows from the first time',
        async () => {
          await enqueue('ord_1');
          const first = await claimOne();
          const t1 = clock.now();
          const lost = { now: t1, nextAttemptAt: t1, error: 'timeout after sending', maybeApplied: true };
          expect(await outbox.retry(first, lost)).toBe(true);
          const second = await claimOne();
          const { job: refund } = await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
          clock.advance(1_000);
          const refused = { now: clock.now(), state: 'dead' as const, reason: 'HTTP 422: unknown click' };
          expect(await outbox.fail(second, refused)).toBe(true);
          const [sent] = await claimAll();
          expect(sent).toMatchObject({ id: refund.id, kind: 'refund', deadline: returnDeadline(t1) });
        },
        'maybeAppliedState',
      );

      test(
        'a refund of a pending confirm that may have been applied waits behind it instead of cancelling it, then follows its delivery',
        async () => {
          await enqueue('ord_1');
          const first = await claimOne();
          const now = clock.now();
          const lost = {
            now,
            nextAttemptAt: now + 60_000,
            error: 'timeout after sending',
            maybeApplied: true,
          };
          expect(await outbox.retry(first, lost)).toBe(true);
          const result = await outbox.refund({ orderId: 'ord_1' });
          expect(result).toMatchObject({
            outcome: 'enqueued',
            job: { kind: 'refund', deadline: null, campaignId: null },
          });
          if (has('lookup')) expect(await stateOf(first.id)).toBe('pending');
          clock.advance(60_000);
          const retried = await claimAll();
          expect(retried.map((j) => j.kind)).toEqual(['confirm']); // the refund still waits
          expect(await outbox.complete(retried[0] as Job, { now: clock.now(), campaignId: 'cmp_9' })).toBe(
            true,
          );
          const [refund] = await claimAll();
          expect(refund).toMatchObject({
            id: result.job.id,
            campaignId: 'cmp_9',
            deadline: returnDeadline(clock.now()),
          });
        },
        'maybeAppliedState',
      );

      test('a reversal with no campaign that dead-lettered is pending again, due now, once a refund gives the campaign (updated)', async () => {
        const { at } = await maybeAppliedConfirm('ord_1', 'expired');
        const first = await outbox.refund({ orderId: 'ord_1' });
        expect(first).toMatchObject({
          outcome: 'enqueued',
          job: { kind: 'refund', campaignId: null, deadline: returnDeadline(at) },
        });
        const claimed = await claimOne();
        expect(claimed).toMatchObject({ id: first.job.id, campaignId: null });
        const reason = 'no campaign to reverse in: give campaignId';
        expect(await outbox.fail(claimed, { now: clock.now(), state: 'dead', reason })).toBe(true);
        clock.advance(HOUR);
        const given = await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_8' });
        expect(given).toMatchObject({
          outcome: 'updated',
          job: {
            id: first.job.id,
            kind: 'refund',
            state: 'pending',
            campaignId: 'cmp_8',
            attempts: 0,
            nextAttemptAt: clock.now(),
            updatedAt: clock.now(),
            deadline: returnDeadline(at),
            lastError: null,
            lease: null,
          },
        });
        if (has('lookup')) expect(await outbox.get(first.job.id)).toEqual(given.job);
        if (has('listDead')) expect(await outbox.listDead()).toEqual([]);
        const [again] = await claimAll();
        expect(again).toMatchObject({ id: first.job.id, campaignId: 'cmp_8', attempts: 1 });
        const third = await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_9' });
        expect(third).toMatchObject({ outcome: 'duplicate', job: { id: first.job.id } });
      });

      test('a waiting reversal with no campaign takes the one a later refund gives and still waits for its confirm (updated)', async () => {
        await enqueue('ord_1');
        const confirm = await claimOne();
        const first = await outbox.refund({ orderId: 'ord_1' });
        expect(first.job).toMatchObject({ kind: 'refund', campaignId: null, deadline: null });
        clock.advance(1_000);
        const given = await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_8' });
        expect(given).toMatchObject({
          outcome: 'updated',
          job: { id: first.job.id, state: 'pending', campaignId: 'cmp_8', deadline: null, attempts: 0 },
        });
        if (has('lookup')) expect(await outbox.get(first.job.id)).toEqual(given.job);
        expect(await claimAll()).toEqual([]); // still behind its inflight confirm
        expect(await outbox.complete(confirm, { now: clock.now(), campaignId: 'cmp_9' })).toBe(true);
        const [sent] = await claimAll();
        expect(sent).toMatchObject({
          id: first.job.id,
          campaignId: 'cmp_8',
          deadline: returnDeadline(clock.now()),
        });
      });

      test('a reversal of a confirmation whose answer named no campaign is kept without one until a refund gives it (updated)', async () => {
        await enqueue('ord_1');
        const claimed = await claimOne();
        expect(await outbox.complete(claimed, { now: clock.now(), campaignId: null })).toBe(true);
        const deliveredAt = clock.now();
        clock.advance(HOUR);
        const first = await outbox.refund({ orderId: 'ord_1' });
        expect(first).toMatchObject({
          outcome: 'enqueued',
          job: { campaignId: null, deadline: returnDeadline(deliveredAt) },
        });
        const given = await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_8' });
        expect(given).toMatchObject({
          outcome: 'updated',
          job: { id: first.job.id, state: 'pending', campaignId: 'cmp_8' },
        });
        const [sent] = await claimAll();
        expect(sent).toMatchObject({ id: first.job.id, campaignId: 'cmp_8' });
      });

      test('replay cancels a dead confirm that may have been applied once its order has a reversal, and the reversal is sent', async () => {
        const { confirm } = await maybeAppliedConfirm('ord_1', 'dead');
        const result = await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_5' });
        expect(result.outcome).toBe('enqueued');
        expect(await outbox.replay({ ids: [confirm.id] }, clock.now())).toBe(0);
        expect(await outbox.replay({ all: true }, clock.now())).toBe(0);
        if (has('lookup')) expect(await stateOf(confirm.id)).toBe('cancelled');
        if (has('listDead')) expect(await outbox.listDead()).toEqual([]);
        expect((await claimAll()).map((j) => j.id)).toEqual([result.job.id]);
      });
    });

    describe('dead jobs', () => {
      test('replay puts a dead job back to pending, due now, with attempts reset', async () => {
        const job = await enqueue('ord_1');
        for (let i = 0; i < 3; i++) {
          const claimed = await claimOne();
          await outbox.retry(claimed, { now: clock.now(), nextAttemptAt: clock.now(), error: 'HTTP 500' });
        }
        const claimed = await claimOne();
        await outbox.fail(claimed, { now: clock.now(), state: 'dead', reason: 'HTTP 400' });
        clock.advance(HOUR);
        expect(await outbox.replay({ ids: [job.id] }, clock.now())).toBe(1);
        const [again] = await claimAll();
        expect(again).toMatchObject({ id: job.id, attempts: 1 });
      });

      test('replay of all dead jobs leaves other jobs untouched', async () => {
        await killConfirm('ord_1');
        await killConfirm('ord_2');
        await enqueue('ord_3');
        const inflight = await claimOne();
        expect(await outbox.replay({ all: true }, clock.now())).toBe(2);
        const claimed = await claimAll();
        expect(claimed.map((j) => j.orderId).sort()).toEqual(['ord_1', 'ord_2']);
        expect(await outbox.complete(inflight, { now: clock.now(), campaignId: 'cmp_1' })).toBe(true);
      });

      test('replay expires a dead job whose deadline has passed instead of sending it', async () => {
        const job = await killConfirm('ord_1');
        clock.set((job.deadline as number) + 1);
        expect(await outbox.replay({ ids: [job.id] }, clock.now())).toBe(0);
        expect(await claimAll()).toEqual([]);
        if (has('listDead')) expect(await outbox.listDead()).toEqual([]);
        if (has('lookup')) expect(await stateOf(job.id)).toBe('expired');
      });

      test('replay ignores ids of jobs that are not dead', async () => {
        const pending = await enqueue('ord_1');
        expect(await outbox.replay({ ids: [pending.id, 'no-such-id'] }, clock.now())).toBe(0);
        const [claimed] = await claimAll();
        expect(claimed?.attempts).toBe(1);
      });

      test('purgeDead deletes dead jobs only, all or by id, and returns the count', async () => {
        const a = await killConfirm('ord_1');
        await killConfirm('ord_2');
        const pending = await enqueue('ord_3');
        expect(await outbox.purgeDead({ ids: [a.id, pending.id] })).toBe(1);
        expect(await outbox.purgeDead()).toBe(1);
        expect(await outbox.purgeDead()).toBe(0);
        expect(await outbox.replay({ all: true }, clock.now())).toBe(0);
        expect((await claimAll()).map((j) => j.id)).toEqual([pending.id]);
      });

      test(
        'listDead pages through dead jobs oldest first, each exactly once, with their reasons',
        async () => {
          const ids: string[] = [];
          for (let i = 0; i < 5; i++) {
            ids.push((await killConfirm(`ord_${i}`, `reason ${i}`)).id);
            clock.advance(1_000);
          }
          const seen: Job[] = [];
          let after: string | undefined;
          for (let page = 0; page < 10; page++) {
            const jobs = await outbox.listDead({ limit: 2, ...(after === undefined ? {} : { after }) });
            if (jobs.length === 0) break;
            expect(jobs.length).toBeLessThanOrEqual(2);
            seen.push(...jobs);
            after = jobs[jobs.length - 1]?.id;
          }
          expect(seen.map((j) => j.id)).toEqual(ids);
          expect(seen.map((j) => j.lastError)).toEqual([
            'reason 0',
            'reason 1',
            'reason 2',
            'reason 3',
            'reason 4',
          ]);
          expect(seen.every((j) => j.state === 'dead')).toBe(true);
        },
        'listDead',
      );
    });

    describe('stats', () => {
      test(
        'an empty outbox has zero counts, no oldest pending job and no nearest deadline',
        async () => {
          const stats = await outbox.stats(clock.now());
          expect(stats).toEqual({
            counts: { pending: 0, inflight: 0, delivered: 0, dead: 0, expired: 0, cancelled: 0 },
            oldestPendingAt: null,
            nearestDeadline: null,
          });
        },
        'exactStats',
      );

      test(
        'counts jobs by state',
        async () => {
          await deliver('ord_d');
          await killConfirm('ord_x');
          await enqueue('ord_i');
          await claimOne();
          await enqueue('ord_p1');
          await enqueue('ord_p2');
          const { counts } = await outbox.stats(clock.now());
          expect(counts).toEqual({
            pending: 2,
            inflight: 1,
            delivered: 1,
            dead: 1,
            expired: 0,
            cancelled: 0,
          });
        },
        'exactStats',
      );

      test(
        'reports the oldest pending job and the nearest deadline among pending and inflight jobs',
        async () => {
          const start = clock.now();
          await enqueue('ord_a', { click: { token: 'tok_a', clickedAt: start - 2 * DAY_MS } });
          clock.advance(1_000);
          const urgent = await enqueue('ord_b', { click: { token: 'tok_b', clickedAt: start - 5 * DAY_MS } });
          clock.advance(1_000);
          await enqueue('ord_c', { click: { token: 'tok_c', clickedAt: start - 6 * DAY_MS } });
          const stats = await outbox.stats(clock.now());
          expect(stats.oldestPendingAt).toBe(start);
          expect(stats.nearestDeadline).toEqual({
            id: expect.any(String),
            orderId: 'ord_c',
            kind: 'confirm',
            deadline: start - 6 * DAY_MS + 7 * DAY_MS - 2 * HOUR,
          });
          expect(urgent.deadline).toBeGreaterThan(stats.nearestDeadline?.deadline as number);
        },
        'exactStats',
      );
    });

    describe('crashes', () => {
      test('a job claimed by a worker that died is delivered exactly once after its lease runs out', async () => {
        await enqueue('ord_1');
        const dead = await claimOne(); // worker A claims, then crashes before any transition
        clock.advance(LEASE_MS);
        const retaken = await claimOne(); // worker B
        expect(retaken).toMatchObject({
          orderId: 'ord_1',
          clickToken: (dead as ConfirmJob).clickToken,
          valueMicros: 12_340_000,
        });
        expect(await outbox.complete(retaken, { now: clock.now(), campaignId: 'cmp_1' })).toBe(true);
        clock.advance(LEASE_MS * 10);
        expect(await claimAll()).toEqual([]);
        expect(await outbox.complete(dead, { now: clock.now(), campaignId: 'cmp_1' })).toBe(false);
        if (has('lookup')) {
          const jobs = await outbox.getByOrder('ord_1');
          expect(jobs).toHaveLength(1);
          expect(jobs[0]).toMatchObject({ state: 'delivered', attempts: 2 });
        }
      });

      test('a refund waiting behind a crashed worker’s confirm is sent only after the retaken confirm is delivered', async () => {
        await enqueue('ord_1');
        await claimOne(); // crashes
        const { job: refund } = (await outbox.refund({ orderId: 'ord_1' })) as { job: RefundJob };
        clock.advance(LEASE_MS);
        const retaken = await claimAll();
        expect(retaken.map((j) => j.kind)).toEqual(['confirm']);
        await outbox.complete(retaken[0] as Job, { now: clock.now(), campaignId: 'cmp_3' });
        const [sent] = await claimAll();
        expect(sent).toMatchObject({ id: refund.id, campaignId: 'cmp_3' });
      });
    });
  });
}
