/**
 * `fromDrizzle`: postback's confirm and refund inside Drizzle's `db.transaction`, on both of its
 * Postgres drivers (node-postgres and postgres.js).
 */
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { bigint, pgSchema, text } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { fromDrizzle } from '../src/adapters/drizzle.ts';
import { type AdapterCase, describeAdapter } from './adapter-harness.ts';
import { TEST_PG_URL, testPool } from './pg-test-db.ts';

const ordersIn = (schema: string) =>
  pgSchema(schema).table('orders', {
    id: text('id').primaryKey(),
    totalMicros: bigint('total_micros', { mode: 'number' }).notNull(),
  });

function drizzleCase(
  db: ReturnType<typeof drizzleNodePg> | ReturnType<typeof drizzlePostgresJs>,
  close: () => Promise<void>,
): AdapterCase {
  return {
    async transaction(schema, work) {
      // The two drivers' databases have the same transaction API but different result types.
      await (db as ReturnType<typeof drizzleNodePg>).transaction(async (tx) => {
        await work({
          db: fromDrizzle(tx),
          insertOrder: async (id, totalMicros) => {
            await tx.insert(ordersIn(schema)).values({ id, totalMicros });
          },
        });
      });
    },
    close,
  };
}

describeAdapter('Drizzle (node-postgres)', () => {
  const pool = testPool(2);
  return drizzleCase(drizzleNodePg({ client: pool }), () => pool.end());
});

describeAdapter('Drizzle (postgres.js)', () => {
  const sql = postgres(TEST_PG_URL, { max: 2, onnotice: () => {} });
  return drizzleCase(drizzlePostgresJs({ client: sql }), () => sql.end());
});
