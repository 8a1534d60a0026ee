/**
 * Wake-ups: an idle worker that subscribed hears about a new job as soon as the enqueueing transaction
 * commits, not before, and keeps hearing after its listening connection is killed.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresOutbox, type PostgresOutbox } from '../src/index.ts';
import { freshSchema, testPool } from './pg-test-db.ts';

const pool = testPool();
const workerPool = testPool(3);
afterAll(async () => {
  await pool.end();
  await workerPool.end();
});

let schema: string;
let drop: () => Promise<void>;
let shop: PostgresOutbox;
let worker: PostgresOutbox;
const click = { token: 'tok_wake_up_01', clickedAt: Date.now() };

beforeEach(async () => {
  ({ schema, drop } = await freshSchema(pool));
  shop = createPostgresOutbox({ pool, schema });
  worker = createPostgresOutbox({ pool: workerPool, schema, reconnectMs: 50, onError: () => {} });
});
afterEach(async () => {
  await shop.close();
  await worker.close();
  await drop();
});

async function waitFor(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Resolves with true when `count` wake-ups arrived within `ms`, false otherwise. */
function wakes(
  count: number,
  ms: number,
): { promise: Promise<boolean>; onWake: () => void; seen: () => number } {
  let seen = 0;
  let resolve: (v: boolean) => void = () => {};
  const promise = new Promise<boolean>((r) => {
    resolve = r;
    setTimeout(() => r(false), ms);
  });
  return {
    promise,
    onWake: () => {
      seen += 1;
      if (seen >= count) resolve(true);
    },
    seen: () => seen,
  };
}

describe('subscribe', () => {
  it('wakes an idle worker when a confirmation is enqueued', async () => {
    const w = wakes(1, 5000);
    const stop = worker.subscribe(w.onWake);
    await stop.ready;
    const started = Date.now();
    await shop.confirm({ orderId: 'ord_w1', valueMicros: 1, click });
    expect(await w.promise).toBe(true);
    expect(Date.now() - started).toBeLessThan(1000);
    stop();
  });

  it('does not wake anybody for an order transaction that rolls back, and wakes at commit', async () => {
    const w = wakes(1, 400);
    const stop = worker.subscribe(w.onWake);
    await stop.ready;
    const tx = await pool.connect();
    try {
      await tx.query('BEGIN');
      await shop.confirm(tx, { orderId: 'ord_w2', valueMicros: 1, click });
      await tx.query('ROLLBACK');
      expect(await w.promise).toBe(false);
      const w2 = wakes(1, 5000);
      const stop2 = worker.subscribe(w2.onWake);
      await tx.query('BEGIN');
      await shop.confirm(tx, { orderId: 'ord_w2', valueMicros: 1, click });
      await new Promise((r) => setTimeout(r, 100));
      expect(w2.seen()).toBe(0);
      await tx.query('COMMIT');
      expect(await w2.promise).toBe(true);
      stop2();
    } finally {
      tx.release();
      stop();
    }
  });

  it('ignores jobs enqueued in another schema', async () => {
    const other = await freshSchema(pool);
    const otherOutbox = createPostgresOutbox({ pool, schema: other.schema });
    try {
      const w = wakes(1, 400);
      const stop = worker.subscribe(w.onWake);
      await stop.ready;
      await otherOutbox.confirm({ orderId: 'ord_elsewhere', valueMicros: 1, click });
      expect(await w.promise).toBe(false);
      stop();
    } finally {
      await otherOutbox.close();
      await other.drop();
    }
  });

  it('reconnects after its connection is killed, wakes subscribers then, and keeps hearing new jobs', async () => {
    const errors: unknown[] = [];
    const resilient = createPostgresOutbox({
      pool: workerPool,
      schema,
      reconnectMs: 50,
      onError: (e) => errors.push(e),
    });
    let count = 0;
    const stop = resilient.subscribe(() => {
      count += 1;
    });
    await stop.ready;
    await pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1 AND pid <> pg_backend_pid()`,
      [`LISTEN "postback_${schema}"`],
    );
    const until = Date.now() + 5000;
    while (count === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(count).toBeGreaterThan(0); // the wake-up after reconnecting
    expect(errors.length).toBeGreaterThan(0);
    const before = count;
    const until2 = Date.now() + 5000;
    while (count === before && Date.now() < until2) {
      await shop.confirm({ orderId: `ord_after_${Date.now()}`, valueMicros: 1, click });
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(count).toBeGreaterThan(before);
    stop();
    await resilient.close();
  });

  it('coalesces a burst of enqueues into few wake-ups, the last one after the burst has committed', async () => {
    const wakeTimes: number[] = [];
    const stop = worker.subscribe(() => wakeTimes.push(Date.now()));
    await stop.ready;
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        shop.confirm({ orderId: `ord_burst_${i}`, valueMicros: 1, click }),
      ),
    );
    const burstDone = Date.now();
    const until = Date.now() + 3000;
    while (!wakeTimes.some((t) => t >= burstDone) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20));
    // A worker woken after the last commit finds every job of the burst with its next claim.
    expect(
      wakeTimes.some((t) => t >= burstDone),
      JSON.stringify({ wakeTimes, burstDone }),
    ).toBe(true);
    expect(wakeTimes.length).toBeLessThan(40);
    expect(await worker.claim({ now: Date.now(), limit: 100, leaseMs: 30_000 })).toHaveLength(40);
    stop();
  });

  it('gives its listening connection back when the last subscriber leaves, and on close', async () => {
    const listening = async () =>
      Number(
        (
          await pool.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1', [
            `LISTEN "postback_${schema}"`,
          ])
        ).rows[0].n,
      );
    const a = worker.subscribe(() => {});
    const b = worker.subscribe(() => {});
    await a.ready;
    expect(await listening()).toBe(1); // one connection, however many subscribers
    a();
    expect(await listening()).toBe(1);
    b();
    await waitFor(async () => (await listening()) === 0);
    const c = worker.subscribe(() => {});
    await c.ready;
    expect(await listening()).toBe(1);
    await worker.close();
    await waitFor(async () => (await listening()) === 0);
  });

  it('stops calling a subscriber that unsubscribed', async () => {
    let count = 0;
    const stop = worker.subscribe(() => {
      count += 1;
    });
    await stop.ready;
    stop();
    await shop.confirm({ orderId: 'ord_w5', valueMicros: 1, click });
    await new Promise((r) => setTimeout(r, 300));
    expect(count).toBe(0);
  });
});
