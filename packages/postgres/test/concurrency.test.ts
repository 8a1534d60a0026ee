/**
 * Many workers on one queue: concurrent claims from separate pools (separate connections, as separate
 * machines would have) never hand out the same job, stale leases are fenced off, and a refund racing the
 * delivery of its confirmation still ends up with the confirmation's campaign and deadline.
 */

import type pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresOutbox, type PostgresOutbox } from '../src/index.ts';
import { freshSchema, testPool } from './pg-test-db.ts';

const admin = testPool(2);
afterAll(() => admin.end());

let schema: string;
let drop: () => Promise<void>;
const extraPools: pg.Pool[] = [];
const outboxes: PostgresOutbox[] = [];

beforeEach(async () => {
  ({ schema, drop } = await freshSchema(admin));
});
afterEach(async () => {
  await Promise.all(outboxes.splice(0).map((o) => o.close()));
  await Promise.all(extraPools.splice(0).map((p) => p.end()));
  await drop();
});

function worker(max = 3): PostgresOutbox {
  const pool = testPool(max);
  extraPools.push(pool);
  const outbox = createPostgresOutbox({ pool, schema });
  outboxes.push(outbox);
  return outbox;
}

const click = { token: 'tok_concurrency01', clickedAt: Date.now() - 1000 };

describe('claims from many workers', () => {
  it('never give the same job to two workers, and give every due job to one', async () => {
    const producer = worker();
    const total = 600;
    for (let i = 0; i < total; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, k) =>
          producer.confirm({ orderId: `ord_${i + k}`, valueMicros: 1, click }),
        ),
      );
    }
    const workers = [worker(), worker(), worker(), worker()];
    const claimedBy = new Map<string, number>();
    const deadline = Date.now() + 20_000;
    await Promise.all(
      workers.map(async (outbox, w) => {
        while (Date.now() < deadline) {
          // Small batches and several loops per worker maximise contention on the same rows.
          const batches = await Promise.all(
            [0, 1].map(() => outbox.claim({ now: Date.now(), limit: 7, leaseMs: 60_000 })),
          );
          const jobs = batches.flat();
          if (jobs.length === 0) return;
          for (const job of jobs) {
            expect(claimedBy.has(job.id), `job ${job.id} claimed twice`).toBe(false);
            claimedBy.set(job.id, w);
          }
          await Promise.all(
            jobs.map((job) => outbox.complete(job, { now: Date.now(), campaignId: 'cmp_1' })),
          );
        }
      }),
    );
    expect(claimedBy.size).toBe(total);
    // Every worker took part: the queue is shared, not drained by whoever came first.
    expect(new Set(claimedBy.values()).size).toBe(workers.length);
    const stats = await producer.stats(Date.now());
    expect(stats.counts.delivered).toBe(total);
    expect(stats.counts.inflight).toBe(0);
  });

  it('taking turns across accounts, never give the same job to two workers, and give every due job to one', async () => {
    const producer = worker();
    // One account with a backlog, six with a few jobs each, some jobs without an account, a few urgent.
    const orders = Array.from({ length: 600 }, (_, i) => ({
      orderId: `ord_${i}`,
      account: i < 400 ? 'big' : i < 580 ? `shop_${i % 6}` : null,
      urgent: i % 97 === 0,
    }));
    const oldClick = { token: 'tok_concurrency02', clickedAt: Date.now() - 7 * 86_400_000 + 3 * 3_600_000 };
    for (let i = 0; i < orders.length; i += 100) {
      await Promise.all(
        orders
          .slice(i, i + 100)
          .map(({ orderId, account, urgent }) =>
            producer.confirm({ orderId, account, valueMicros: 1, click: urgent ? oldClick : click }),
          ),
      );
    }
    const workers = [worker(), worker(), worker(), worker()];
    const claimed = new Set<string>();
    const deadline = Date.now() + 20_000;
    await Promise.all(
      workers.map(async (outbox) => {
        let idle = 0;
        while (Date.now() < deadline && idle < 3) {
          const batches = await Promise.all(
            [0, 1].map(() =>
              outbox.claim({ now: Date.now(), limit: 7, leaseMs: 60_000, urgentWithinMs: 4 * 3_600_000 }),
            ),
          );
          const jobs = batches.flat();
          idle = jobs.length === 0 ? idle + 1 : 0;
          for (const job of jobs) {
            expect(claimed.has(job.id), `job ${job.id} claimed twice`).toBe(false);
            claimed.add(job.id);
          }
          await Promise.all(
            jobs.map((job) => outbox.complete(job, { now: Date.now(), campaignId: 'cmp_1' })),
          );
        }
      }),
    );
    expect(claimed.size).toBe(orders.length);
    const stats = await producer.stats(Date.now());
    expect(stats.counts.delivered).toBe(orders.length);
    expect(stats.counts.inflight).toBe(0);
  });

  it('fence off a worker whose lease ran out: its late completion changes nothing', async () => {
    const [a, b] = [worker(), worker()];
    await a.confirm({ orderId: 'ord_fence', valueMicros: 1, click });
    const t0 = Date.now();
    const [first] = await a.claim({ now: t0, limit: 1, leaseMs: 1000 });
    // Worker a stalls past its lease; b takes the job over with a newer fencing token.
    const [second] = await b.claim({ now: t0 + 1001, limit: 1, leaseMs: 30_000 });
    expect(first?.id).toBe(second?.id);
    expect(BigInt(second?.lease?.token ?? '0')).toBeGreaterThan(BigInt(first?.lease?.token ?? '0'));
    expect(await a.complete(first!, { now: t0 + 1100, campaignId: 'cmp_stale' })).toBe(false);
    expect(await a.retry(first!, { now: t0 + 1100, nextAttemptAt: t0 + 5000, error: 'late' })).toBe(false);
    expect(await b.complete(second!, { now: t0 + 1200, campaignId: 'cmp_fresh' })).toBe(true);
    const [job] = await b.getByOrder('ord_fence');
    expect(job).toMatchObject({ state: 'delivered', campaignId: 'cmp_fresh', attempts: 2 });
  });
});

describe('completions made together (group commit)', () => {
  it('answer each caller for its own job: fresh leases apply, a stale lease and a second call do not', async () => {
    const outbox = worker();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => outbox.confirm({ orderId: `ord_g${i}`, valueMicros: 1, click })),
    );
    const t0 = Date.now();
    const jobs = await outbox.claim({ now: t0, limit: 20, leaseMs: 30_000 });
    expect(jobs).toHaveLength(20);
    const stale = {
      ...jobs[0]!,
      lease: { token: String(BigInt(jobs[0]!.lease!.token) + 1000n), expiresAt: 0 },
    };
    const results = await Promise.all([
      ...jobs.map((job, i) => outbox.complete(job, { now: t0 + 1, campaignId: `cmp_${i}` })),
      outbox.complete(stale, { now: t0 + 1, campaignId: 'cmp_stale' }),
      outbox.complete(jobs[1]!, { now: t0 + 2, campaignId: 'cmp_again' }),
    ]);
    expect(results).toEqual([...jobs.map(() => true), false, false]);
    const stored = await Promise.all(jobs.map((job) => outbox.get(job.id)));
    expect(stored.map((job) => [job?.state, job?.campaignId])).toEqual(
      jobs.map((_, i) => ['delivered', `cmp_${i}`]),
    );
  });
});

describe('a refund racing the delivery of its confirmation', () => {
  it('gets the campaign and deadline when delivery commits while the refund holds the order', async () => {
    const shop = worker();
    const dispatcher = worker();
    await shop.confirm({ orderId: 'ord_race', valueMicros: 1, click });
    const [claimed] = await dispatcher.claim({ now: Date.now(), limit: 1, leaseMs: 30_000 });
    const tx = await extraPools[0]!.connect();
    try {
      await tx.query('BEGIN');
      const outcome = await shop.refund(tx, { orderId: 'ord_race' });
      expect(outcome.outcome).toBe('enqueued');
      // The delivery has to wait for the shop's lock on the confirm row...
      const completing = dispatcher.complete(claimed!, { now: Date.now(), campaignId: 'cmp_race' });
      await new Promise((r) => setTimeout(r, 200));
      await tx.query('COMMIT');
      expect(await completing).toBe(true);
    } finally {
      tx.release();
    }
    // ...and still sees the refund committed meanwhile, so the refund is not stuck without a deadline.
    const jobs = await shop.getByOrder('ord_race');
    const refundJob = jobs.find((j) => j.kind === 'refund');
    expect(refundJob?.campaignId).toBe('cmp_race');
    expect(refundJob?.deadline).not.toBeNull();
    const [next] = await dispatcher.claim({ now: Date.now(), limit: 1, leaseMs: 30_000 });
    expect(next?.kind).toBe('refund');
  });

  it('two concurrent refunds of one order create one reversal', async () => {
    const [a, b] = [worker(), worker()];
    await a.confirm({ orderId: 'ord_twice', valueMicros: 1, click });
    const [claimed] = await a.claim({ now: Date.now(), limit: 1, leaseMs: 30_000 });
    await a.complete(claimed!, { now: Date.now(), campaignId: 'cmp_9' });
    const outcomes = await Promise.all([
      a.refund({ orderId: 'ord_twice' }),
      b.refund({ orderId: 'ord_twice' }),
    ]);
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(['duplicate', 'enqueued']);
    expect((await a.getByOrder('ord_twice')).filter((j) => j.kind === 'refund')).toHaveLength(1);
  });
});
