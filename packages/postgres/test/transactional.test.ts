/**
 * Enqueueing inside the app's own transaction: the job exists exactly when the order does.
 */

import type pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresOutbox, type PostgresOutbox, type Queryable } from '../src/index.ts';
import { freshSchema, testPool } from './pg-test-db.ts';

const pool = testPool();
afterAll(() => pool.end());

let outbox: PostgresOutbox;
let schema: string;
let drop: () => Promise<void>;
const click = () => ({ token: 'tok_abcdef123456', clickedAt: Date.now() - 60_000 });

beforeEach(async () => {
  ({ schema, drop } = await freshSchema(pool));
  await pool.query(`CREATE TABLE "${schema}".orders (id text PRIMARY KEY, total bigint NOT NULL)`);
  outbox = createPostgresOutbox({ pool, schema });
});
afterEach(async () => {
  await outbox.close();
  await drop();
});

async function inOrderTransaction(
  work: (tx: pg.PoolClient) => Promise<void>,
  outcome: 'commit' | 'rollback',
): Promise<void> {
  const tx = await pool.connect();
  try {
    await tx.query('BEGIN');
    await work(tx);
    await tx.query(outcome === 'commit' ? 'COMMIT' : 'ROLLBACK');
  } finally {
    tx.release();
  }
}

describe('confirm(tx, input)', () => {
  it('leaves no job when the order transaction rolls back', async () => {
    await inOrderTransaction(async (tx) => {
      await tx.query(`INSERT INTO "${schema}".orders VALUES ($1, $2)`, ['ord_1', 12_340_000]);
      const { created } = await outbox.confirm(tx, {
        orderId: 'ord_1',
        valueMicros: 12_340_000,
        click: click(),
      });
      expect(created).toBe(true);
    }, 'rollback');
    expect(await outbox.getByOrder('ord_1')).toEqual([]);
    expect((await pool.query(`SELECT count(*)::int AS n FROM "${schema}".orders`)).rows[0].n).toBe(0);
  });

  it('always leaves a pending job when the order transaction commits', async () => {
    await inOrderTransaction(async (tx) => {
      await tx.query(`INSERT INTO "${schema}".orders VALUES ($1, $2)`, ['ord_2', 5_000_000]);
      await outbox.confirm(tx, { orderId: 'ord_2', valueMicros: 5_000_000, click: click() });
    }, 'commit');
    const jobs = await outbox.getByOrder('ord_2');
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ kind: 'confirm', state: 'pending', valueMicros: 5_000_000 });
  });

  it('is invisible to workers until the order transaction commits', async () => {
    const tx = await pool.connect();
    try {
      await tx.query('BEGIN');
      await outbox.confirm(tx, { orderId: 'ord_3', valueMicros: 1, click: click() });
      expect(await outbox.claim({ now: Date.now(), limit: 10, leaseMs: 30_000 })).toEqual([]);
      await tx.query('COMMIT');
    } finally {
      tx.release();
    }
    const claimed = await outbox.claim({ now: Date.now(), limit: 10, leaseMs: 30_000 });
    expect(claimed.map((j) => j.orderId)).toEqual(['ord_3']);
  });

  it('works through a one-line structural adapter, as a Kysely or Drizzle transaction would be wrapped', async () => {
    const seen: string[] = [];
    await inOrderTransaction(async (tx) => {
      const adapter: Queryable = {
        query: async (text, values) => {
          seen.push(text.trim().split(/\s+/)[0] ?? '');
          const { rows } = await tx.query(text, values);
          return { rows };
        },
      };
      await outbox.confirm(adapter, { orderId: 'ord_4', valueMicros: 7, click: click() });
      await outbox.refund(adapter, { orderId: 'ord_4' });
    }, 'commit');
    expect(seen).toContain('INSERT');
    const [confirmJob] = await outbox.getByOrder('ord_4');
    // The refund of a confirm not yet sent cancels it, inside the same transaction.
    expect(confirmJob).toMatchObject({ kind: 'confirm', state: 'cancelled' });
  });

  it('rejects a malformed order inside the transaction before writing anything', async () => {
    await inOrderTransaction(async (tx) => {
      await expect(
        outbox.confirm(tx, { orderId: 'ord_5', valueMicros: 1.5, click: click() }),
      ).rejects.toMatchObject({
        name: 'JobValidationError',
        field: 'valueMicros',
      });
    }, 'commit');
    expect(await outbox.getByOrder('ord_5')).toEqual([]);
  });

  it('rejects a first argument that cannot run queries', async () => {
    await expect(
      outbox.confirm({} as Queryable, { orderId: 'ord_6', valueMicros: 1, click: click() }),
    ).rejects.toThrow(/transaction/);
  });
});

describe('refund(tx, input)', () => {
  it('is undone with the transaction that rolls back', async () => {
    await outbox.confirm({ orderId: 'ord_7', valueMicros: 9, click: click() });
    await inOrderTransaction(async (tx) => {
      const outcome = await outbox.refund(tx, { orderId: 'ord_7' });
      expect(outcome.outcome).toBe('cancelled');
    }, 'rollback');
    const [job] = await outbox.getByOrder('ord_7');
    expect(job?.state).toBe('pending');
  });

  it('holds the order while its transaction is open, so a worker cannot claim the confirm it is cancelling', async () => {
    await outbox.confirm({ orderId: 'ord_8', valueMicros: 9, click: click() });
    const tx = await pool.connect();
    try {
      await tx.query('BEGIN');
      await outbox.refund(tx, { orderId: 'ord_8' });
      // SKIP LOCKED: the worker moves on instead of waiting for the shop's transaction.
      expect(await outbox.claim({ now: Date.now(), limit: 10, leaseMs: 30_000 })).toEqual([]);
      await tx.query('COMMIT');
    } finally {
      tx.release();
    }
    expect(await outbox.claim({ now: Date.now(), limit: 10, leaseMs: 30_000 })).toEqual([]);
    expect((await outbox.getByOrder('ord_8'))[0]?.state).toBe('cancelled');
  });
});
