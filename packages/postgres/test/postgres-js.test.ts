/**
 * `fromPostgresJs`: postback's confirm and refund inside postgres.js's `sql.begin`.
 */
import postgres from 'postgres';
import { fromPostgresJs } from '../src/adapters/postgres-js.ts';
import { describeAdapter } from './adapter-harness.ts';
import { TEST_PG_URL } from './pg-test-db.ts';

describeAdapter('postgres.js', () => {
  const sql = postgres(TEST_PG_URL, { max: 2, onnotice: () => {} });
  return {
    async transaction(schema, work) {
      await sql.begin(async (tx) => {
        await work({
          db: fromPostgresJs(tx),
          insertOrder: async (id, totalMicros) => {
            await tx`INSERT INTO ${tx(schema)}.orders ${tx({ id, total_micros: totalMicros })}`;
          },
        });
      });
    },
    close: () => sql.end(),
  };
});
