/**
 * Migration 5 (unmatched reversals) on a schema of version 4 holding jobs: no table rewrite, old refunds
 * read `campaignFrom: null`, the new state and column are checked on new rows.
 */
import type { Job } from '@postback/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresOutbox, LATEST_SCHEMA_VERSION, migrate, schemaVersion } from '../src/index.ts';
import { migrationScriptUpTo } from '../src/migrations.ts';
import { dropSchema, randomSchema, testPool } from './pg-test-db.ts';

const pool = testPool();
afterAll(() => pool.end());

describe('upgrading a schema of version 4 that holds jobs (migration 5: unmatched reversals)', () => {
  it('adds the state and campaign_from without a rewrite; an old refund can end unmatched, and reads no campaign source', async () => {
    const schema = randomSchema();
    const t0 = Date.now() - 60_000;
    try {
      await pool.query(migrationScriptUpTo(schema, 4));
      expect(await schemaVersion(pool, schema)).toBe(4);
      await pool.query(
        `INSERT INTO "${schema}".jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at,
           deadline, campaign_id) VALUES ('refund', 'ord_v4', 'pending', 0, $1, $1, $1, $1::bigint + 86400000, 'cmp_v4')`,
        [t0],
      );
      const relfilenode = async () =>
        (await pool.query(`SELECT pg_relation_filenode('"${schema}".jobs') AS f`)).rows[0].f;
      const before = await relfilenode();
      expect(await migrate(pool, { schema })).toEqual({ schema, from: 4, to: LATEST_SCHEMA_VERSION });
      expect(await relfilenode()).toBe(before);

      const outbox = createPostgresOutbox({ pool, schema });
      const [old] = await outbox.getByOrder('ord_v4');
      expect(old).toMatchObject({ kind: 'refund', campaignId: 'cmp_v4', campaignFrom: null });
      const now = Date.now();
      const [claimed] = await outbox.claim({ now, limit: 10, leaseMs: 60_000 });
      const unmatched = { now, state: 'unmatched' as const, reason: 'no such conversion' };
      expect(await outbox.fail(claimed as Job, unmatched)).toBe(true);
      expect((await outbox.stats(now)).counts).toMatchObject({ unmatched: 1, dead: 0 });
      const given = await outbox.refund({ orderId: 'ord_new', campaignId: 'cmp_x' });
      expect(await outbox.get(given.job.id)).toMatchObject({ campaignFrom: 'caller' });
      await outbox.close();

      // The database keeps both to refunds, whatever writes to it.
      const confirmUnmatched = pool.query(
        `INSERT INTO "${schema}".jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at,
           deadline, click_token, value_micros, clicked_at) VALUES ('confirm', 'ord_c', 'unmatched', 0, 1, 1, 1, 2, 't', 1, 1)`,
      );
      await expect(confirmUnmatched).rejects.toMatchObject({ code: '23514' });
      const badSource = pool.query(
        `UPDATE "${schema}".jobs SET campaign_from = 'guess' WHERE order_id = 'ord_v4'`,
      );
      await expect(badSource).rejects.toMatchObject({ code: '23514' });
    } finally {
      await dropSchema(pool, schema);
    }
  });
});
