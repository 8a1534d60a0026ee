/**
 * Migration 8 (the ledger) on a schema of version 7 that holds jobs: the table and its trigger are added
 * without a rewrite, and an old job then writes its final-state row, once, when it is delivered.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresOutbox, LATEST_SCHEMA_VERSION, migrate } from '../src/index.ts';
import { migrationScriptUpTo } from '../src/migrations.ts';
import { dropSchema, randomSchema, testPool } from './pg-test-db.ts';

const pool = testPool();
afterAll(() => pool.end());

describe('upgrading a schema of version 7 that holds jobs (migration 8: the ledger)', () => {
  it('adds the ledger without a rewrite; an old job delivered afterwards writes one applied row', async () => {
    const schema = randomSchema();
    const t0 = Date.now() - 60_000;
    try {
      await pool.query(migrationScriptUpTo(schema, 7));
      await pool.query(
        `INSERT INTO "${schema}".jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline,
           click_token, value_micros, clicked_at)
         VALUES ('confirm', 'ord_v7', 'pending', 0, $1, $1, $1, $1::bigint + 86400000, 'tok_v7_ledger', 5000000, $1)`,
        [t0],
      );
      const relfilenode = async () =>
        (await pool.query(`SELECT pg_relation_filenode('"${schema}".jobs') AS f`)).rows[0].f;
      const before = await relfilenode();
      expect(await migrate(pool, { schema })).toEqual({ schema, from: 7, to: LATEST_SCHEMA_VERSION });
      expect(await relfilenode()).toBe(before);
      const outbox = createPostgresOutbox({ pool, schema });
      try {
        expect(await outbox.readLedger()).toEqual([]);
        const now = Date.now();
        const [claimed] = await outbox.claim({ now, limit: 1, leaseMs: 60_000 });
        const job = claimed as NonNullable<typeof claimed>;
        expect(await outbox.complete(job, { now, campaignId: 'cmp_1' })).toBe(true);
        expect(await outbox.complete(job, { now, campaignId: 'cmp_1' })).toBe(false);
        expect(await outbox.readLedger()).toEqual([
          expect.objectContaining({
            kind: 'applied',
            orderId: 'ord_v7',
            actor: 'dispatcher',
            valueMicros: 5_000_000,
          }),
        ]);
      } finally {
        await outbox.close();
      }
    } finally {
      await dropSchema(pool, schema);
    }
  });
});
