/**
 * Claims stay cheap as history grows: with many finished jobs in the table, the claim reads the due
 * index and fetches its rows by primary key, instead of scanning every job ever enqueued.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { jobStatements } from '../src/statements.ts';
import { freshSchema, testPool } from './pg-test-db.ts';

const pool = testPool(2);
afterAll(() => pool.end());

/** Every node type and relation of a JSON plan, flattened. */
function nodes(plan: Record<string, unknown>): Array<{ type: string; index?: string; relation?: string }> {
  const here = {
    type: String(plan['Node Type']),
    index: plan['Index Name'] as string | undefined,
    relation: plan['Relation Name'] as string | undefined,
  };
  const children = (plan.Plans as Array<Record<string, unknown>> | undefined) ?? [];
  return [here, ...children.flatMap(nodes)];
}

describe('the claim statement', () => {
  it('uses the due index and primary-key lookups, not a scan of the whole table, with 20,000 delivered jobs', async () => {
    const { schema, drop } = await freshSchema(pool);
    try {
      const now = Date.now();
      await pool.query(
        `INSERT INTO "${schema}".jobs (kind, order_id, state, created_at, updated_at, next_attempt_at, deadline, click_token, value_micros, clicked_at, delivered_at)
         SELECT 'confirm', 'old_' || g, CASE WHEN g <= 20000 THEN 'delivered' ELSE 'pending' END, $1::bigint, $1::bigint, $1::bigint,
                $1::bigint + 86400000, 'tok_plan', 1, $1::bigint, CASE WHEN g <= 20000 THEN $1::bigint END
         FROM generate_series(1, 20050) AS g`,
        [now - 1000],
      );
      await pool.query(`ANALYZE "${schema}".jobs`);
      const sql = jobStatements(`"${schema}"`);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql.claim}`, [now, 10, 30_000]);
        await client.query('ROLLBACK');
        const plan = (rows[0]['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan;
        const all = nodes(plan);
        expect(
          all.filter((n) => n.type === 'Seq Scan'),
          JSON.stringify(all),
        ).toEqual([]);
        expect(all.some((n) => n.index === 'jobs_due')).toBe(true);
        expect(all.some((n) => n.index?.endsWith('_pkey'))).toBe(true);
      } finally {
        client.release();
      }
    } finally {
      await drop();
    }
  });
});
