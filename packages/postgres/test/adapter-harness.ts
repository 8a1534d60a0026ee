/**
 * One suite for every query-builder adapter (postgres.js, Kysely, Drizzle): the order, written with the
 * library's own API, and postback's job commit together or not at all, and values cross the adapter as
 * they cross `pg`. Each test file supplies a transaction runner for its library.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createPostgresOutbox,
  LATEST_SCHEMA_VERSION,
  migrate,
  type PostgresOutbox,
  type Queryable,
  schemaVersion,
} from '../src/index.ts';
import { dropSchema, freshSchema, randomSchema, testPool } from './pg-test-db.ts';

/** What a transaction of the library under test hands the test. */
export interface AdapterTransaction {
  /** The library's transaction handle, adapted. */
  db: Queryable;
  /** Inserts into `<schema>.orders (id text, total_micros bigint)` with the library's own API. */
  insertOrder(id: string, totalMicros: number): Promise<void>;
}

/** A library under test. */
export interface AdapterCase {
  /** Runs `work` in one of the library's transactions: commits when it resolves, rolls back when it throws. */
  transaction(schema: string, work: (tx: AdapterTransaction) => Promise<void>): Promise<void>;
  /** Ends the library's connections. */
  close(): Promise<void>;
}

class Rollback extends Error {}

/**
 * Registers the suite for one adapter. `multiStatement: false` for a library that sends one statement
 * per call: `migrate()` (one multi-statement script) must then fail whole, leaving no schema behind.
 */
export function describeAdapter(name: string, make: () => AdapterCase, { multiStatement = true } = {}): void {
  describe(`${name} adapter`, () => {
    const pool = testPool(2);
    const lib = make();
    afterAll(async () => {
      await lib.close();
      await pool.end();
    });

    let outbox: PostgresOutbox;
    let schema: string;
    let drop: () => Promise<void>;
    const click = { token: 'tok_abcdef123456', clickedAt: Date.now() - 60_000 };
    const orders = async () =>
      (await pool.query(`SELECT id, total_micros::text AS total FROM "${schema}".orders ORDER BY id`)).rows;

    beforeEach(async () => {
      ({ schema, drop } = await freshSchema(pool));
      await pool.query(`CREATE TABLE "${schema}".orders (id text PRIMARY KEY, total_micros bigint NOT NULL)`);
      outbox = createPostgresOutbox({ pool, schema, onError: () => {} });
    });
    afterEach(async () => {
      await outbox.close();
      await drop();
    });

    it('commits the order and its confirmation together, amounts exact up to 2^53 - 1 micros', async () => {
      const big = Number.MAX_SAFE_INTEGER;
      await lib.transaction(schema, async (tx) => {
        await tx.insertOrder('ord_1', big);
        const { created, job } = await outbox.confirm(tx.db, { orderId: 'ord_1', valueMicros: big, click });
        expect(created).toBe(true);
        expect(job).toMatchObject({ orderId: 'ord_1', valueMicros: big, state: 'pending' });
      });
      expect(await orders()).toEqual([{ id: 'ord_1', total: '9007199254740991' }]);
      const [job] = await outbox.getByOrder('ord_1');
      expect(job).toMatchObject({
        kind: 'confirm',
        state: 'pending',
        valueMicros: big,
        clickToken: click.token,
        clickedAt: click.clickedAt,
      });
    });

    it('leaves neither the order nor the confirmation when the transaction rolls back', async () => {
      await expect(
        lib.transaction(schema, async (tx) => {
          await tx.insertOrder('ord_2', 12_340_000);
          await outbox.confirm(tx.db, { orderId: 'ord_2', valueMicros: 12_340_000, click });
          throw new Rollback();
        }),
      ).rejects.toBeInstanceOf(Rollback);
      expect(await orders()).toEqual([]);
      expect(await outbox.getByOrder('ord_2')).toEqual([]);
    });

    it('keeps the job from workers until commit, and reads a duplicate confirm back in the transaction', async () => {
      await lib.transaction(schema, async (tx) => {
        await tx.insertOrder('ord_3', 5_000_000);
        const first = await outbox.confirm(tx.db, { orderId: 'ord_3', valueMicros: 5_000_000, click });
        const again = await outbox.confirm(tx.db, { orderId: 'ord_3', valueMicros: 5_000_000, click });
        expect(again).toEqual({ created: false, job: first.job });
        expect(await outbox.claim({ now: Date.now(), limit: 10, leaseMs: 30_000 })).toEqual([]);
      });
      const claimed = await outbox.claim({ now: Date.now(), limit: 10, leaseMs: 30_000 });
      expect(claimed.map((j) => j.orderId)).toEqual(['ord_3']);
    });

    it('refunds inside the transaction: cancels the unsent confirm at commit, nothing at rollback', async () => {
      await outbox.confirm({ orderId: 'ord_4', valueMicros: 9, click });
      await expect(
        lib.transaction(schema, async (tx) => {
          expect((await outbox.refund(tx.db, { orderId: 'ord_4' })).outcome).toBe('cancelled');
          throw new Rollback();
        }),
      ).rejects.toBeInstanceOf(Rollback);
      expect((await outbox.getByOrder('ord_4'))[0]?.state).toBe('pending');
      await lib.transaction(schema, async (tx) => {
        expect((await outbox.refund(tx.db, { orderId: 'ord_4', campaignId: 'cmp_42' })).outcome).toBe(
          'cancelled',
        );
      });
      expect((await outbox.getByOrder('ord_4'))[0]).toMatchObject({ state: 'cancelled' });
    });

    it('passes values as pg would: bigint-sized numbers, json, text with $1 in it, booleans, null, arrays', async () => {
      const doc = { a: [1, 'x'], quote: "it's", nested: { n: 1.5 } };
      let row: Record<string, unknown> | undefined;
      await lib.transaction(schema, async (tx) => {
        const result = await tx.db.query(
          `SELECT $1::bigint::text AS big, $2::jsonb AS doc, $3::text AS s, $4::boolean AS b,
                  $5::int + $5::int AS twice, $6::text IS NULL AS nul, $7::text[] AS arr, '$1' AS literal`,
          [Number.MAX_SAFE_INTEGER, doc, 'price $1, "quoted"', true, 21, null, ['a', 'b,c']],
        );
        row = result.rows[0];
      });
      expect(row).toEqual({
        big: '9007199254740991',
        doc,
        s: 'price $1, "quoted"',
        b: true,
        twice: 42,
        nul: true,
        arr: ['a', 'b,c'],
        literal: '$1',
      });
    });

    it.runIf(multiStatement)(
      'runs migrate() inside the transaction (a migration tool’s), undone by its rollback',
      async () => {
        const other = randomSchema();
        try {
          await expect(
            lib.transaction(schema, async (tx) => {
              expect(await migrate(tx.db, { schema: other })).toMatchObject({
                from: 0,
                to: LATEST_SCHEMA_VERSION,
              });
              throw new Rollback();
            }),
          ).rejects.toBeInstanceOf(Rollback);
          expect(await schemaVersion(pool, other)).toBe(0);
          await lib.transaction(schema, async (tx) => {
            await migrate(tx.db, { schema: other });
          });
          expect(await schemaVersion(pool, other)).toBe(LATEST_SCHEMA_VERSION);
        } finally {
          await dropSchema(pool, other);
        }
      },
    );

    it.skipIf(multiStatement)('refuses migrate() whole, creating nothing', async () => {
      const other = randomSchema();
      try {
        await expect(
          lib.transaction(schema, async (tx) => {
            await migrate(tx.db, { schema: other });
          }),
        ).rejects.toThrow();
        expect(await schemaVersion(pool, other)).toBe(0);
        expect((await pool.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [other])).rows).toEqual([]);
      } finally {
        await dropSchema(pool, other);
      }
    });
  });
}
