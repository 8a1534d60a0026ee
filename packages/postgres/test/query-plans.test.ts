/**
 * Claims stay cheap as history grows: with many finished jobs in the table, the claim reads the due
 * index and fetches its rows by primary key, instead of scanning every job ever enqueued. The operator's
 * reads (listings by state, deadlines at risk, prune batches, histories) read the index of what they ask.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobListShape, jobStatements } from '../src/statements.ts';
import { switchStatements } from '../src/switch-methods.ts';
import { freshSchema, testPool } from './pg-test-db.ts';

const pool = testPool(2);
afterAll(() => pool.end());

/** Every node type and relation of a JSON plan, flattened. */
function nodes(
  plan: Record<string, unknown>,
): Array<{ type: string; index?: string; relation?: string; rows: number; loops: number }> {
  const here = {
    type: String(plan['Node Type']),
    loops: Number(plan['Actual Loops'] ?? 1),
    rows: Number(plan['Actual Rows'] ?? 0) * Number(plan['Actual Loops'] ?? 1),
    index: plan['Index Name'] as string | undefined,
    relation: plan['Relation Name'] as string | undefined,
  };
  const children = (plan.Plans as Array<Record<string, unknown>> | undefined) ?? [];
  return [here, ...children.flatMap(nodes)];
}

describe('the claim statement', () => {
  it('reads the fair and urgent indexes and fetches by primary key, never the backlog, planned for its values or generic: 20,000 delivered jobs, 100,000 due in one account, 19 other accounts', async () => {
    const { schema, drop } = await freshSchema(pool);
    try {
      const now = Date.now();
      const day = 86_400_000;
      // g <= 20000 delivered; then 100,000 pending in 'big'; then 3 pending in each of 19 accounts.
      await pool.query(
        `INSERT INTO "${schema}".jobs (kind, order_id, account, state, created_at, updated_at, next_attempt_at, deadline, click_token, value_micros, clicked_at, delivered_at)
         SELECT 'confirm', 'ord_' || g,
                CASE WHEN g <= 120000 THEN 'big' ELSE 'shop_' || (g % 19) END,
                CASE WHEN g <= 20000 THEN 'delivered' ELSE 'pending' END, $1::bigint - g, $1::bigint - g, $1::bigint - 200000 + g,
                $1::bigint + 3 * $2::bigint, 'tok_plan', 1, $1::bigint - g, CASE WHEN g <= 20000 THEN $1::bigint END
         FROM generate_series(1, 120057) AS g`,
        [now - 1000, day],
      );
      // Two urgent jobs and two inflight jobs whose lease ran out.
      await pool.query(
        `UPDATE "${schema}".jobs SET deadline = $1::bigint + 60000 WHERE order_id IN ('ord_50000', 'ord_120001')`,
        [now],
      );
      await pool.query(
        `UPDATE "${schema}".jobs SET state = 'inflight', lease_token = nextval('"${schema}".lease_tokens'),
           lease_expires_at = $1::bigint - 1 WHERE order_id IN ('ord_60000', 'ord_120002')`,
        [now],
      );
      await pool.query(`VACUUM ANALYZE "${schema}".jobs`);
      const sql = jobStatements(`"${schema}"`);
      const client = await pool.connect();
      // Planned for its values (a statement sent once), and generic (prepared, as the outbox sends it by
      // default: Postgres may then reuse one plan for any values).
      await client.query(`PREPARE claim_plan AS ${sql.claim}`);
      try {
        for (const generic of [false, true]) {
          await client.query('BEGIN');
          const values = [now, 16, 30_000, [], 3_600_000, 'shop_3'];
          if (generic) await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
          const { rows } = generic
            ? await client.query(
                `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim_plan(${now}, 16, 30000, ARRAY[]::text[], 3600000, 'shop_3')`,
              )
            : await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql.claim}`, values);
          await client.query('ROLLBACK');
          const plan = (rows[0]['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan;
          const all = nodes(plan);
          const summary = JSON.stringify(all);
          expect(
            all.filter((n) => n.type === 'Seq Scan' && n.relation === 'jobs'),
            summary,
          ).toEqual([]);
          for (const index of ['jobs_fair', 'jobs_urgent', 'jobs_open', 'jobs_pkey'])
            expect(
              all.some((n) => n.index === index),
              `${index}: ${summary}`,
            ).toBe(true);
          // No node reads more than a few hundred rows, whatever the backlog.
          const widest = Math.max(...all.map((n) => n.rows));
          expect(widest, summary).toBeLessThan(500);
          // A full claim: the 2 retaken, the 2 urgent, then 12 in turns.
          expect(plan['Actual Rows'], summary).toBe(16);
        }
      } finally {
        await client.query('DEALLOCATE claim_plan');
        client.release();
      }
    } finally {
      await drop();
    }
  }, 60_000);
});

describe('the claim with many accounts', () => {
  it('walks only as many accounts as it serves, from its cursor: 3,000 accounts with due jobs cost a claim what 20 do, and a quiet account is served first', async () => {
    const { schema, drop } = await freshSchema(pool);
    try {
      const now = Date.now();
      // 2 due jobs in each of 3,000 accounts, created a minute ago; one quiet account's job created now.
      await pool.query(
        `INSERT INTO "${schema}".jobs (kind, order_id, account, state, created_at, updated_at, next_attempt_at, deadline, click_token, value_micros, clicked_at)
         SELECT 'confirm', 'ord_' || g, 'acct_' || lpad((g % 3000)::text, 4, '0'), 'pending',
                $1::bigint - 60000, $1::bigint - 60000, $1::bigint - 60000 + g, $1::bigint + 3 * 86400000, 'tok_plan', 1, $1::bigint - 60000
         FROM generate_series(1, 6000) AS g`,
        [now],
      );
      await pool.query(
        `INSERT INTO "${schema}".jobs (kind, order_id, account, state, created_at, updated_at, next_attempt_at, deadline, click_token, value_micros, clicked_at)
         VALUES ('confirm', 'quiet_1', 'zz_quiet', 'pending', $1::bigint - 5, $1::bigint - 5, $1::bigint - 5, $1::bigint + 3 * 86400000, 'tok_plan', 1, $1::bigint - 5)`,
        [now],
      );
      await pool.query(`VACUUM ANALYZE "${schema}".jobs`);
      const sql = jobStatements(`"${schema}"`);
      const client = await pool.connect();
      try {
        // Each in a transaction rolled back: EXPLAIN ANALYZE runs the UPDATE too.
        const values = [now, 16, 30_000, [], 3_600_000, 'acct_2990'];
        await client.query('BEGIN');
        const { rows: claimed } = await client.query(sql.claim, values);
        await client.query('ROLLBACK');
        await client.query('BEGIN');
        const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql.claim}`, values);
        await client.query('ROLLBACK');
        const all = nodes((rows[0]['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan);
        const summary = JSON.stringify(all);
        // Every index read of the claim together: a few per account served, not one per account held.
        const probes = all.filter((n) => n.index !== undefined).reduce((sum, n) => sum + n.loops, 0);
        expect(probes, summary).toBeLessThan(200);
        // The quiet account first, then turns from the cursor on, wrapping around to the first accounts.
        const order = [...claimed].sort((a, b) => Number(a.claim_order) - Number(b.claim_order));
        expect(order.map((row) => row.account)).toEqual([
          'zz_quiet',
          ...['2991', '2992', '2993', '2994', '2995', '2996', '2997', '2998', '2999'].map((n) => `acct_${n}`),
          ...['0000', '0001', '0002', '0003', '0004', '0005'].map((n) => `acct_${n}`),
        ]);
      } finally {
        client.release();
      }
    } finally {
      await drop();
    }
  }, 60_000);

  it('with a quiet job taken and 20 accounts of 2,000 due jobs, no node of the generic plan reads an account whole', async () => {
    const { schema, drop } = await freshSchema(pool);
    try {
      const now = Date.now();
      await pool.query(
        `INSERT INTO "${schema}".jobs (kind, order_id, account, state, created_at, updated_at, next_attempt_at, deadline, click_token, value_micros, clicked_at)
         SELECT 'confirm', 'ord_' || g, 'acct_' || lpad((g % 20)::text, 2, '0'), 'pending',
                $1::bigint - 3600000, $1::bigint - 3600000, $1::bigint - 3600000, $1::bigint + 3 * 86400000, 'tok_plan', 1, $1::bigint - 3600000
         FROM generate_series(1, 40000) AS g
         UNION ALL SELECT 'confirm', 'quiet_1', 'zz_quiet', 'pending', $1::bigint - 5, $1::bigint - 5, $1::bigint - 5, $1::bigint + 3 * 86400000, 'tok_plan', 1, $1::bigint - 5`,
        [now],
      );
      await pool.query(`VACUUM ANALYZE "${schema}".jobs`);
      const sql = jobStatements(`"${schema}"`);
      const client = await pool.connect();
      await client.query(`PREPARE claim_many AS ${sql.claim}`);
      try {
        await client.query('BEGIN');
        await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
        const { rows } = await client.query(
          `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim_many(${now}, 16, 30000, ARRAY[]::text[], 3600000, 'acct_05')`,
        );
        await client.query('ROLLBACK');
        const plan = (rows[0]['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan;
        const all = nodes(plan);
        const summary = JSON.stringify(all);
        expect(plan['Actual Rows'], summary).toBe(16);
        expect(Math.max(...all.map((n) => n.rows)), summary).toBeLessThan(500);
      } finally {
        await client.query('DEALLOCATE claim_many');
        client.release();
      }
    } finally {
      await drop();
    }
  }, 60_000);

  it('with a young backlog of 3,000 jobs in one account, the quiet tier reads a bounded few of them, with the generic plan made while the table was empty', async () => {
    const { schema, drop } = await freshSchema(pool);
    try {
      const now = Date.now();
      const sql = jobStatements(`"${schema}"`);
      const client = await pool.connect();
      // A worker prepares its claim and runs it on an empty outbox, then a backlog comes in one commit
      // (no ANALYZE yet): the plan Postgres keeps was made for an empty table.
      await client.query(`PREPARE claim_young AS ${sql.claim}`);
      try {
        await client.query('SET plan_cache_mode = force_generic_plan');
        await client.query(`EXECUTE claim_young(${now}, 8, 30000, ARRAY[]::text[], 3600000, NULL)`);
        await pool.query(
          `INSERT INTO "${schema}".jobs (kind, order_id, account, state, created_at, updated_at, next_attempt_at, deadline, click_token, value_micros, clicked_at)
           SELECT 'confirm', 'ord_' || g, '', 'pending', $1::bigint - 3000 + g, $1::bigint - 3000 + g, $1::bigint - 3000 + g,
                  $1::bigint + 3 * 86400000, 'tok_plan', 1, $1::bigint - 60000
           FROM generate_series(1, 3000) AS g`,
          [now],
        );
        await client.query('BEGIN');
        const { rows } = await client.query(
          `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim_young(${now}, 8, 30000, ARRAY[]::text[], 3600000, NULL)`,
        );
        await client.query('ROLLBACK');
        const plan = (rows[0]['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan;
        const all = nodes(plan);
        const summary = JSON.stringify(all);
        expect(plan['Actual Rows'], summary).toBe(8);
        const probes = all.filter((n) => n.index !== undefined).reduce((sum, n) => sum + n.loops, 0);
        // Without statistics the planner may read the young jobs by bitmap (a few thousand rows, once); what
        // it must not do is check every pending job's account (one index read per job).
        expect(probes, summary).toBeLessThan(100);
      } finally {
        await client.query('DEALLOCATE claim_young');
        await client.query('RESET plan_cache_mode');
        client.release();
      }
    } finally {
      await drop();
    }
  }, 60_000);
});

/**
 * The operator's reads on a table of 20,000 delivered jobs (half of them past their deadline, kept for
 * their return window), a few dead ones and an open backlog: each reads an index of what it asks for.
 * Migration 3 adds no index on jobs (every enqueue and transition would write it): a listing of every
 * state sorts the table, which prune keeps small.
 */
describe('the operator view statements', () => {
  const now = Date.now();
  let schema: string;
  let drop: () => Promise<void>;
  let sql: ReturnType<typeof jobStatements>;
  const noFilter: JobListShape = {
    states: 0,
    kind: false,
    orderId: false,
    account: false,
    reason: false,
    status: false,
    deadlineBefore: false,
    updatedBefore: false,
  };

  beforeAll(async () => {
    ({ schema, drop } = await freshSchema(pool));
    await pool.query(
      `INSERT INTO "${schema}".jobs (kind, order_id, state, created_at, updated_at, next_attempt_at, deadline, click_token,
         value_micros, clicked_at, delivered_at, last_error, last_status)
       SELECT 'confirm', 'op_' || g, CASE WHEN g <= 20000 THEN 'delivered' WHEN g <= 20030 THEN 'dead' ELSE 'pending' END,
              $1::bigint - 3 * 86400000 + g, $1::bigint, $1::bigint,
              CASE WHEN g % 2 = 0 THEN $1::bigint - 86400000 ELSE $1::bigint + 4 * 86400000 END - g * 1000,
              'tok_plan', 1, $1::bigint, CASE WHEN g <= 20000 THEN $1::bigint END,
              CASE WHEN g > 20000 THEN '503: busy' END, CASE WHEN g > 20000 THEN 503 END
       FROM generate_series(1, 20080) AS g`,
      [now],
    );
    await pool.query(`ANALYZE "${schema}".jobs`);
    sql = jobStatements(`"${schema}"`);
  }, 60_000);
  const switches = () => switchStatements(`"${schema}"`);
  afterAll(() => drop());

  async function planOf(text: string, values: unknown[]) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
      await client.query('ROLLBACK');
      return nodes((rows[0]['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan);
    } finally {
      client.release();
    }
  }

  const cases: Array<[string, () => [string, unknown[]], string]> = [
    [
      'listJobs of dead jobs',
      () => [sql.listJobs({ ...noFilter, states: 1 }), ['dead', 100, 0]],
      'jobs_dead',
    ],
    [
      'listJobs of open jobs',
      () => [sql.listJobs({ ...noFilter, states: 2 }), ['pending', 'inflight', 100, 0]],
      'jobs_open',
    ],
    [
      'listJobs of an order',
      () => [sql.listJobs({ ...noFilter, orderId: true }), ['op_7', 100, 0]],
      'jobs_one_per_account_order_and_kind',
    ],
    [
      'deadlines at risk',
      () => [sql.deadlineRisk, [[String(now + 3_600_001)], now + 3_600_000]],
      'jobs_open',
    ],
    ['the nearest deadline', () => [sql.nearestDeadline, []], 'jobs_open'],
    ['a prune batch', () => [sql.prune, [now, now - 86_400_000, 14 * 86_400_000, '5000']], 'jobs_pkey'],
    ['a history', () => [sql.history, ['5']], 'jobs_pkey'],
    ['releaseHeld', () => [sql.releaseHeld, [now, true, '', true, null]], 'jobs_held'],
    ['the held problems of stats', () => [sql.heldProblems, []], 'jobs_held'],
    ['a switch noted', () => [switches().note, ['\u0001cmp_x', '', 'cmp_x', now]], 'jobs_held'],
    ["a decision's held jobs", () => [switches().held, ['', 'cmp_x', null]], 'jobs_held'],
    ['a switch forgotten', () => [switches().forget, ['\u0001cmp_x', '', 'cmp_x']], 'jobs_held'],
  ];

  for (const [name, statement, index] of cases) {
    it(`${name} reads ${index}, never the whole table`, async () => {
      const [text, values] = statement();
      const all = await planOf(text, values);
      expect(
        all.filter((n) => n.type === 'Seq Scan' && n.relation === 'jobs'),
        JSON.stringify(all),
      ).toEqual([]);
      expect(
        all.some((n) => n.index === index),
        JSON.stringify(all),
      ).toBe(true);
    });
  }
});
