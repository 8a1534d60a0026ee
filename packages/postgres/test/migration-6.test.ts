/**
 * Migration 6 (held jobs) on a schema of version 5 that holds jobs: the columns are added without a
 * rewrite, old jobs are not held, and can then be held and released.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresOutbox, LATEST_SCHEMA_VERSION, migrate } from '../src/index.ts';
import { migrationScriptUpTo } from '../src/migrations.ts';
import { dropSchema, randomSchema, testPool } from './pg-test-db.ts';

const pool = testPool();
afterAll(() => pool.end());

describe('upgrading a schema of version 5 that holds jobs (migration 6: held jobs)', () => {
  it('adds the held columns without a rewrite; old jobs are not held, and can then be held and released', async () => {
    const schema = randomSchema();
    const t0 = Date.now() - 60_000;
    try {
      await pool.query(migrationScriptUpTo(schema, 5));
      await pool.query(
        `INSERT INTO "${schema}".jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline,
           click_token, value_micros, clicked_at)
         VALUES ('confirm', 'ord_v5', 'pending', 0, $1, $1, $1, $1::bigint + 86400000, 'tok_v5_release', 5000000, $1)`,
        [t0],
      );
      const relfilenode = async () =>
        (await pool.query(`SELECT pg_relation_filenode('"${schema}".jobs') AS f`)).rows[0].f;
      const before = await relfilenode();
      expect(await migrate(pool, { schema })).toEqual({ schema, from: 5, to: LATEST_SCHEMA_VERSION });
      expect(await relfilenode()).toBe(before);
      const outbox = createPostgresOutbox({ pool, schema });
      try {
        const [job] = await outbox.getByOrder('ord_v5');
        expect(job).toMatchObject({ heldAt: null, heldCampaignId: null });
        const now = Date.now();
        const [claimed] = await outbox.claim({ now, limit: 1, leaseMs: 60_000 });
        const error = 'campaign cmp_v5 is not on s2s';
        const held = { now, nextAttemptAt: now + 600_000, error, hold: { campaignId: 'cmp_v5' } };
        expect(await outbox.retry(claimed as NonNullable<typeof claimed>, held)).toBe(true);
        expect((await outbox.stats(now)).held).toEqual([
          {
            account: null,
            campaignId: 'cmp_v5',
            count: 1,
            valueMicros: 5_000_000,
            reason: error,
            since: now,
            earliestDeadline: claimed?.deadline,
          },
        ]);
        expect(await outbox.releaseHeld({ now, campaignId: 'cmp_v5' })).toBe(1);
        expect(await outbox.claim({ now, limit: 1, leaseMs: 60_000 })).toHaveLength(1);
      } finally {
        await outbox.close();
      }
    } finally {
      await dropSchema(pool, schema);
    }
  });
});
