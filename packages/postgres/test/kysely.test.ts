/**
 * `fromKysely`: postback's confirm and refund inside Kysely's `db.transaction().execute`.
 */
import { Kysely, PostgresDialect } from 'kysely';
import { fromKysely } from '../src/adapters/kysely.ts';
import { describeAdapter } from './adapter-harness.ts';
import { testPool } from './pg-test-db.ts';

interface Database {
  orders: { id: string; total_micros: number };
}

describeAdapter('Kysely', () => {
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: testPool(2) }) });
  return {
    async transaction(schema, work) {
      await db.transaction().execute(async (trx) => {
        await work({
          db: fromKysely(trx),
          insertOrder: async (id, totalMicros) => {
            await trx
              .withSchema(schema)
              .insertInto('orders')
              .values({ id, total_micros: totalMicros })
              .execute();
          },
        });
      });
    },
    close: () => db.destroy(),
  };
});
