/**
 * Migration 7 (shadow mode) on a schema of version 6 that holds jobs: the tables and `jobs_shadow` are
 * added without a rewrite, and an old job can then be recorded in shadow mode and sent at its end.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresOutbox, LATEST_SCHEMA_VERSION, migrate } from '../src/index.ts';
import { migrationScriptUpTo } from '../src/migrations.ts';
import { dropSchema, randomSchema, testPool } from './pg-test-db.ts';

const pool = testPool();
afterAll(() => pool.end());

describe('upgrading a schema of version 6 that holds jobs (migration 7: shadow mode)', () => {
  it('adds shadow mode without a rewrite; an old job can then be recorded and sent at its end', async () => {
    const schema = randomSchema();
    const t0 = Date.now() - 60_000;
    try {
      await pool.query(migrationScriptUpTo(schema, 6));
      await pool.query(
        `INSERT INTO "${schema}".jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline,
           click_token, value_micros, clicked_at)
         VALUES ('confirm', 'ord_v6', 'pending', 0, $1, $1, $1, $1::bigint + 86400000, 'tok_v6_shadow', 5000000, $1)`,
        [t0],
      );
      const relfilenode = async () =>
        (await pool.query(`SELECT pg_relation_filenode('"${schema}".jobs') AS f`)).rows[0].f;
      const before = await relfilenode();
      expect(await migrate(pool, { schema })).toEqual({ schema, from: 6, to: LATEST_SCHEMA_VERSION });
      expect(await relfilenode()).toBe(before);
      const outbox = createPostgresOutbox({ pool, schema });
      try {
        const shadow = outbox.shadow;
        if (shadow === undefined) throw new Error('the Postgres outbox has shadow mode');
        const now = Date.now();
        await shadow.start({ all: true }, now);
        const [claimed] = await outbox.claim({ now, limit: 1, leaseMs: 60_000 });
        expect(await shadow.record(claimed as NonNullable<typeof claimed>, { now })).toBe('recorded');
        const { decided } = await shadow.end({ all: true }, { now, sendCreatedFrom: t0 });
        expect(decided).toEqual([expect.objectContaining({ decision: 'send' })]);
        expect(await outbox.claim({ now, limit: 1, leaseMs: 60_000 })).toHaveLength(1);
      } finally {
        await outbox.close();
      }
    } finally {
      await dropSchema(pool, schema);
    }
  });
});
