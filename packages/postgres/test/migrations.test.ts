/**
 * Versioned migrations: in a schema of the caller's choice, safe to repeat and to run from two processes
 * at once, usable inside the app's own migration transaction.
 */
import type { Job } from '@postback/core';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createPostgresOutbox,
  LATEST_SCHEMA_VERSION,
  migrate,
  migrationScript,
  SchemaNotMigratedError,
  schemaVersion,
} from '../src/index.ts';
import { migrationScriptUpTo } from '../src/migrations.ts';
import { dropSchema, randomSchema, testPool } from './pg-test-db.ts';

const pool = testPool();
afterAll(() => pool.end());

async function tablesOf(schema: string): Promise<string[]> {
  const { rows } = await pool.query(
    'SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename',
    [schema],
  );
  return rows.map((r) => r.tablename);
}

describe('migrate', () => {
  it('creates the tables in the schema it is given and records the version', async () => {
    const schema = randomSchema();
    try {
      expect(await migrate(pool, { schema })).toEqual({ schema, from: 0, to: LATEST_SCHEMA_VERSION });
      expect(await tablesOf(schema)).toEqual([
        'clicks',
        'held_switches',
        'jobs',
        'ledger',
        'migrations',
        'shadow_settings',
        'shadow_spend',
        'workers',
      ]);
      expect(await schemaVersion(pool, schema)).toBe(LATEST_SCHEMA_VERSION);
    } finally {
      await dropSchema(pool, schema);
    }
  });

  it('is a no-op the second time', async () => {
    const schema = randomSchema();
    try {
      await migrate(pool, { schema });
      const outbox = createPostgresOutbox({ pool, schema });
      await outbox.confirm({
        orderId: 'ord_keep',
        valueMicros: 1,
        click: { token: 'tok_keep_me_1', clickedAt: Date.now() },
      });
      expect(await migrate(pool, { schema })).toEqual({
        schema,
        from: LATEST_SCHEMA_VERSION,
        to: LATEST_SCHEMA_VERSION,
      });
      expect(await outbox.getByOrder('ord_keep')).toHaveLength(1);
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".migrations`);
      expect(rows[0].n).toBe(LATEST_SCHEMA_VERSION);
    } finally {
      await dropSchema(pool, schema);
    }
  });

  it('succeeds from several connections at once, applying each version once', async () => {
    const schema = randomSchema();
    const pools = [testPool(1), testPool(1), testPool(1)];
    try {
      const results = await Promise.all(pools.map((p) => migrate(p, { schema })));
      expect(results.every((r) => r.to === LATEST_SCHEMA_VERSION)).toBe(true);
      const { rows } = await pool.query(`SELECT version FROM "${schema}".migrations ORDER BY version`);
      expect(rows.map((r) => r.version)).toEqual(
        Array.from({ length: LATEST_SCHEMA_VERSION }, (_, i) => i + 1),
      );
    } finally {
      await Promise.all(pools.map((p) => p.end()));
      await dropSchema(pool, schema);
    }
  });

  it('joins the caller’s transaction, so a migration tool that rolls back leaves nothing', async () => {
    const schema = randomSchema();
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await migrate(client, { schema });
      await client.query('ROLLBACK');
      expect(await schemaVersion(pool, schema)).toBe(0);
      expect(await tablesOf(schema)).toEqual([]);
    } finally {
      client.release();
      await dropSchema(pool, schema);
    }
  });

  it('rejects a schema name that is not a plain lowercase identifier, before touching the database', async () => {
    for (const bad of [
      'Postback',
      'a-b',
      'x"; DROP TABLE users; --',
      '',
      '1abc',
      'pg_catalog',
      'a'.repeat(49),
    ]) {
      await expect(migrate(pool, { schema: bad }), bad).rejects.toMatchObject({
        name: 'OptionsError',
        field: 'schema',
      });
    }
    expect(() => migrationScript('bad name')).toThrow(/schema/);
  });

  it('gives SQL a file-based migration tool can run, which a later migrate() recognises', async () => {
    const schema = randomSchema();
    try {
      await pool.query(migrationScript(schema));
      expect(await migrate(pool, { schema })).toMatchObject({
        from: LATEST_SCHEMA_VERSION,
        to: LATEST_SCHEMA_VERSION,
      });
    } finally {
      await dropSchema(pool, schema);
    }
  });
});

describe('upgrading a schema of the previous release (version 1) that holds jobs', () => {
  // Rows written the way release 1 wrote them: its INSERT names its own columns only.
  const insertV1 = (schema: string, values: { orderId: string; state: string; updatedAt: number }) =>
    pool.query(
      `INSERT INTO "${schema}".jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline,
         click_token, value_micros, clicked_at, lease_token, lease_expires_at)
       VALUES ('confirm', $1, $2::text, 1, $3, $3, $3, $3::bigint + 86400000, 'tok_v1_release', 5, $3,
         CASE WHEN $2::text = 'inflight' THEN nextval('"${schema}".lease_tokens') END,
         CASE WHEN $2::text = 'inflight' THEN $3::bigint + 1000 END)`,
      [values.orderId, values.state, values.updatedAt],
    );

  it('adds maybe_applied_at, keeps every job, and claims mark a retaken expired lease maybe applied', async () => {
    const schema = randomSchema();
    const t0 = Date.now() - 60_000;
    try {
      await pool.query(migrationScriptUpTo(schema, 1));
      expect(await schemaVersion(pool, schema)).toBe(1);
      await insertV1(schema, { orderId: 'ord_pending', state: 'pending', updatedAt: t0 });
      await insertV1(schema, { orderId: 'ord_inflight', state: 'inflight', updatedAt: t0 });

      // This release's outbox on the old schema says what to run instead of failing on a missing column.
      const early = createPostgresOutbox({ pool, schema });
      await expect(early.getByOrder('ord_pending')).rejects.toBeInstanceOf(SchemaNotMigratedError);
      await early.close();

      expect(await migrate(pool, { schema })).toEqual({ schema, from: 1, to: LATEST_SCHEMA_VERSION });
      // A worker of the previous release still writes rows during a rolling deploy.
      await insertV1(schema, { orderId: 'ord_old_worker', state: 'pending', updatedAt: t0 });

      const outbox = createPostgresOutbox({ pool, schema });
      for (const orderId of ['ord_pending', 'ord_inflight', 'ord_old_worker']) {
        const [job] = await outbox.getByOrder(orderId);
        expect(job, orderId).toMatchObject({ orderId, maybeAppliedAt: null, attempts: 1 });
      }
      const claimed = await outbox.claim({ now: Date.now(), limit: 10, leaseMs: 60_000 });
      const byOrder = new Map(claimed.map((job) => [job.orderId, job]));
      expect(byOrder.get('ord_inflight')).toMatchObject({
        state: 'inflight',
        attempts: 2,
        maybeAppliedAt: t0,
      });
      expect(byOrder.get('ord_pending')).toMatchObject({ state: 'inflight', maybeAppliedAt: null });
      expect(byOrder.get('ord_old_worker')).toMatchObject({ state: 'inflight', maybeAppliedAt: null });
      await outbox.close();
    } finally {
      await dropSchema(pool, schema);
    }
  });
});

describe('upgrading a schema of version 2 that holds jobs (migration 3: the operator view)', () => {
  // Rows written the way release 2 wrote them: no history, no last_status.
  const insertV2 = (schema: string, values: { orderId: string; state: string; at: number; error?: string }) =>
    pool.query(
      `INSERT INTO "${schema}".jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline,
         click_token, value_micros, clicked_at, delivered_at, last_error, maybe_applied_at)
       VALUES ('confirm', $1, $2::text, 1, $3, $3, $3, $3::bigint + 86400000, 'tok_v2_release', 5, $3,
         CASE WHEN $2::text = 'delivered' THEN $3::bigint END, $4, NULL)`,
      [values.orderId, values.state, values.at, values.error ?? null],
    );

  it('adds the columns without touching the rows, and old jobs are listed, appended to, pruned and counted', async () => {
    const schema = randomSchema();
    const t0 = Date.now() - 60_000;
    try {
      await pool.query(migrationScriptUpTo(schema, 2));
      expect(await schemaVersion(pool, schema)).toBe(2);
      await insertV2(schema, { orderId: 'ord_v2_pending', state: 'pending', at: t0 });
      await insertV2(schema, { orderId: 'ord_v2_dead', state: 'dead', at: t0 - 1, error: '404: gone' });
      await insertV2(schema, { orderId: 'ord_v2_cancelled', state: 'cancelled', at: t0 - 40 * 86_400_000 });
      const relfilenode = async () =>
        (await pool.query(`SELECT pg_relation_filenode('"${schema}".jobs') AS f`)).rows[0].f;
      const before = await relfilenode();

      // This release's operator reads on the old schema say what to run.
      const early = createPostgresOutbox({ pool, schema });
      await expect(early.history('1')).rejects.toBeInstanceOf(SchemaNotMigratedError);
      await expect(early.workers({ now: t0, sinceMs: 1 })).rejects.toBeInstanceOf(SchemaNotMigratedError);
      await early.close();

      expect(await migrate(pool, { schema })).toEqual({ schema, from: 2, to: LATEST_SCHEMA_VERSION });
      // No table rewrite: the same file holds the rows.
      expect(await relfilenode()).toBe(before);
      expect(await tablesOf(schema)).toEqual([
        'clicks',
        'held_switches',
        'jobs',
        'ledger',
        'migrations',
        'shadow_settings',
        'shadow_spend',
        'workers',
      ]);
      // A worker of the previous release still writes rows during a rolling deploy.
      await insertV2(schema, { orderId: 'ord_v2_late', state: 'pending', at: t0 + 1 });

      const outbox = createPostgresOutbox({ pool, schema });
      const listed = await outbox.listJobs();
      expect(listed.map((job) => job.orderId)).toEqual([
        'ord_v2_cancelled',
        'ord_v2_dead',
        'ord_v2_pending',
        'ord_v2_late',
      ]);
      expect((await outbox.listJobs({ reason: /gone/ })).map((job) => job.orderId)).toEqual(['ord_v2_dead']);
      const [pending] = await outbox.getByOrder('ord_v2_pending');
      expect(await outbox.history(pending?.id ?? '')).toEqual([]);
      const now = Date.now();
      const [claimed] = (await outbox.claim({ now, limit: 10, leaseMs: 60_000 })).filter(
        (job) => job.orderId === 'ord_v2_pending',
      );
      const sent = { startedAt: now, durationMs: 5, outcome: 'transient', status: 502, detail: '502' };
      expect(
        await outbox.retry(claimed as Job, { now, nextAttemptAt: now, error: '502', attempt: sent }),
      ).toBe(true);
      expect(await outbox.history(pending?.id ?? '')).toEqual([sent]);
      expect((await outbox.listJobs({ status: 502 })).map((job) => job.orderId)).toEqual(['ord_v2_pending']);
      expect((await outbox.stats(now)).atRisk.count).toBe(2);
      // The old cancelled job is past its deadline and old enough: pruned; the dead one stays.
      expect(await outbox.prune({ now, olderThanMs: 86_400_000, returnWindowMs: 0 })).toBe(1);
      expect(await outbox.getByOrder('ord_v2_cancelled')).toEqual([]);
      expect(await outbox.getByOrder('ord_v2_dead')).toHaveLength(1);
      await outbox.close();
    } finally {
      await dropSchema(pool, schema);
    }
  });
});

describe('an outbox on a schema never migrated', () => {
  it('fails with an error that says how to migrate', async () => {
    const schema = randomSchema();
    const outbox = createPostgresOutbox({ pool, schema });
    const error = await outbox.stats(Date.now()).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(SchemaNotMigratedError);
    expect((error as Error).message).toContain(`postback migrate --pg <url> --schema ${schema}`);
    await outbox.close();
  });
});

describe('upgrading a schema of version 3 that holds jobs (migration 4: accounts)', () => {
  // Rows written the way release 3 wrote them: no account column.
  const insertV3 = (
    schema: string,
    values: { kind?: 'confirm' | 'refund'; orderId: string; state: string; at: number; campaignId?: string },
  ) =>
    pool.query(
      `INSERT INTO "${schema}".jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline,
         click_token, value_micros, clicked_at, delivered_at, campaign_id, lease_token, lease_expires_at)
       VALUES ($4, $1, $2::text, 1, $3, $3, $3, $3::bigint + 86400000,
         CASE WHEN $4 = 'confirm' THEN 'tok_v3_release' END, CASE WHEN $4 = 'confirm' THEN 5 END,
         CASE WHEN $4 = 'confirm' THEN $3::bigint END,
         CASE WHEN $2::text = 'delivered' THEN $3::bigint END, $5,
         CASE WHEN $2::text = 'inflight' THEN nextval('"${schema}".lease_tokens') END,
         CASE WHEN $2::text = 'inflight' THEN $3::bigint + 1000 END)`,
      [values.orderId, values.state, values.at, values.kind ?? 'confirm', values.campaignId ?? null],
    );

  it('adds account without a rewrite; old jobs are the orders without an account: claimed, delivered and refunded as before', async () => {
    const schema = randomSchema();
    const t0 = Date.now() - 60_000;
    try {
      await pool.query(migrationScriptUpTo(schema, 3));
      expect(await schemaVersion(pool, schema)).toBe(3);
      await insertV3(schema, { orderId: 'ord_v3_pending', state: 'pending', at: t0 });
      await insertV3(schema, { orderId: 'ord_v3_inflight', state: 'inflight', at: t0 });
      await insertV3(schema, { orderId: 'ord_v3_sent', state: 'delivered', at: t0, campaignId: 'cmp_v3' });
      await pool.query(
        `INSERT INTO "${schema}".workers (worker_id, at, state, version) VALUES ('w_v3', $1, 'running', '0.3.0')`,
        [t0],
      );
      const relfilenode = async () =>
        (await pool.query(`SELECT pg_relation_filenode('"${schema}".jobs') AS f`)).rows[0].f;
      const before = await relfilenode();

      // This release on the old schema says what to run instead of failing on a missing column.
      const early = createPostgresOutbox({ pool, schema });
      await expect(early.getByOrder('ord_v3_pending')).rejects.toBeInstanceOf(SchemaNotMigratedError);
      await early.close();

      expect(await migrate(pool, { schema })).toEqual({ schema, from: 3, to: LATEST_SCHEMA_VERSION });
      expect(await relfilenode()).toBe(before);
      // A worker of the previous release still writes rows (naming its own columns) during a rolling deploy.
      await insertV3(schema, { orderId: 'ord_v3_late', state: 'pending', at: t0 + 1 });

      const outbox = createPostgresOutbox({ pool, schema });
      const listed = await outbox.listJobs();
      expect(listed).toHaveLength(4);
      expect(listed.every((job) => job.account === null)).toBe(true);
      expect(await outbox.listJobs({ account: null })).toHaveLength(4);
      expect(await outbox.listJobs({ account: 'shop-a' })).toEqual([]);
      expect((await outbox.workers({ now: t0, sinceMs: 1 }))[0]).toMatchObject({
        workerId: 'w_v3',
        pausedAccounts: [],
      });

      // The same order id is still one order: a confirm again is a duplicate of the old job.
      const again = await outbox.confirm({
        orderId: 'ord_v3_pending',
        valueMicros: 5,
        click: { token: 'tok_v3_release', clickedAt: t0 },
      });
      expect(again).toMatchObject({ created: false, job: { orderId: 'ord_v3_pending', account: null } });

      const now = Date.now();
      const claimed = await outbox.claim({ now, limit: 10, leaseMs: 60_000 });
      const byOrder = new Map(claimed.map((job) => [job.orderId, job]));
      expect([...byOrder.keys()].sort()).toEqual(['ord_v3_inflight', 'ord_v3_late', 'ord_v3_pending']);
      // The retaken expired lease first, marked maybe applied.
      expect(claimed[0]).toMatchObject({ orderId: 'ord_v3_inflight', attempts: 2, maybeAppliedAt: t0 });
      for (const job of claimed)
        expect(await outbox.complete(job, { now, campaignId: 'cmp_new' }), job.orderId).toBe(true);
      expect(await outbox.claim({ now, limit: 10, leaseMs: 60_000 })).toEqual([]);

      // Refunds find the old orders (account null) and their campaigns.
      expect(await outbox.refund({ orderId: 'ord_v3_sent' })).toMatchObject({
        outcome: 'enqueued',
        job: { account: null, campaignId: 'cmp_v3' },
      });
      expect(await outbox.refund({ orderId: 'ord_v3_pending' })).toMatchObject({
        outcome: 'enqueued',
        job: { account: null, campaignId: 'cmp_new' },
      });
      // An account's order of the same id is another order: nothing of it exists.
      expect(await outbox.getByOrder('ord_v3_sent', 'shop-a')).toEqual([]);
      const later = Date.now() + 1;
      const refunds = await outbox.claim({ now: later, limit: 10, leaseMs: 60_000 });
      expect(refunds.map((job) => `${job.kind}:${job.orderId}`).sort()).toEqual([
        'refund:ord_v3_pending',
        'refund:ord_v3_sent',
      ]);
      for (const job of refunds) expect(await outbox.complete(job, { now: later })).toBe(true);
      expect((await outbox.getByOrder('ord_v3_sent')).map((job) => `${job.kind}:${job.state}`)).toEqual([
        'confirm:delivered',
        'refund:delivered',
      ]);
      await outbox.close();
    } finally {
      await dropSchema(pool, schema);
    }
  });
});
