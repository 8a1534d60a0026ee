/**
 * The operator's view where the Postgres outbox does more than the conformance suite reaches: history
 * trimmed in SQL and appended by group commits, `reason` listings paged across several reads, prune over
 * many batches agreeing with core's `prunableAt` row by row, inclusive deadline buckets, and
 * checked inputs.
 */
import { type AttemptRecord, JOB_STATES, type Job } from '@postback/core';
import { ATTEMPT_HISTORY_LIMIT, byUrgency, prunableAt, resolvePolicy } from '@postback/core/store';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresOutbox, type PostgresOutbox } from '../src/index.ts';
import { rowToJob } from '../src/rows.ts';
import { PRUNE_BATCH_SIZE } from '../src/statements.ts';
import { freshSchema, testPool } from './pg-test-db.ts';

const pool = testPool();
afterAll(() => pool.end());

const DAY = 86_400_000;
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 10);

let schema: string;
let drop: () => Promise<void>;
let outbox: PostgresOutbox;
let clock = T0;

beforeEach(async () => {
  ({ schema, drop } = await freshSchema(pool));
  clock = T0;
  outbox = createPostgresOutbox({ pool, schema, now: () => clock, policy: resolvePolicy({}) });
});
afterEach(async () => {
  await outbox.close();
  await drop();
});

const attempt = (startedAt: number, overrides: Partial<AttemptRecord> = {}): AttemptRecord => ({
  startedAt,
  durationMs: 80,
  outcome: 'transient',
  status: 503,
  detail: '503: busy',
  ...overrides,
});

const enqueue = (orderId: string) =>
  outbox.confirm({
    orderId,
    valueMicros: 1_000,
    click: { token: `tok_${orderId}_x`, clickedAt: clock - HOUR },
  });

/**
 * Jobs written straight into the table (many at once): `n` confirms with the given columns per row `i`.
 * Deadlines, states and times come from SQL expressions over `g` (1..n).
 */
async function insertMany(n: number, columns: Record<string, string>): Promise<void> {
  const base: Record<string, string> = {
    kind: "'confirm'",
    order_id: "'bulk_' || g",
    state: "'delivered'",
    attempts: '1',
    created_at: `${T0 - 30 * DAY} + g`,
    updated_at: `${T0 - 30 * DAY} + g`,
    next_attempt_at: `${T0 - 30 * DAY}`,
    deadline: `${T0 - 20 * DAY}`,
    click_token: "'tok_bulk_000'",
    value_micros: '1',
    clicked_at: `${T0 - 31 * DAY}`,
    ...columns,
  };
  await pool.query(
    `INSERT INTO "${schema}".jobs (${Object.keys(base).join(', ')})
     SELECT ${Object.values(base).join(', ')} FROM generate_series(1, ${n}) AS g`,
  );
}

async function allJobs(): Promise<Job[]> {
  const { rows } = await pool.query(
    `SELECT id::text AS id, kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline, last_error,
       lease_token::text AS lease_token, lease_expires_at, delivered_at, campaign_id, maybe_applied_at, click_token,
       value_micros, clicked_at FROM "${schema}".jobs`,
  );
  return rows.map(rowToJob);
}

describe('attempt history', () => {
  it('trims to the last attempts in SQL even from a longer stored history, and keeps last_status', async () => {
    const job = (await enqueue('ord_trim')).job;
    const long = Array.from({ length: ATTEMPT_HISTORY_LIMIT + 5 }, (_, i) =>
      attempt(i, { detail: `old ${i}` }),
    );
    await pool.query(`UPDATE "${schema}".jobs SET history = $1::jsonb WHERE id = $2`, [
      JSON.stringify(long),
      job.id,
    ]);
    const [claimed] = await outbox.claim({ now: clock, limit: 1, leaseMs: 30_000 });
    const last = attempt(clock, { status: 429, detail: 'x'.repeat(600) });
    expect(
      await outbox.retry(claimed as Job, { now: clock, nextAttemptAt: clock, error: 'x', attempt: last }),
    ).toBe(true);
    const history = await outbox.history(job.id);
    expect(history).toHaveLength(ATTEMPT_HISTORY_LIMIT);
    expect(history[0]?.detail).toBe('old 6');
    // Cut as core's attemptDetail cuts it.
    expect(history.at(-1)?.detail).toBe(`${'x'.repeat(499)}…`);
    expect((await outbox.listJobs({ status: 429 })).map((j) => j.id)).toEqual([job.id]);
  });

  it('group-committed completions append each job its own attempt', async () => {
    for (const id of ['ord_g1', 'ord_g2', 'ord_g3']) await enqueue(id);
    const claimed = await outbox.claim({ now: clock, limit: 10, leaseMs: 30_000 });
    expect(claimed).toHaveLength(3);
    const results = await Promise.all(
      claimed.map((job, i) =>
        outbox.complete(job, {
          now: clock,
          campaignId: 'cmp_1',
          // The second completes without an attempt: its history stays empty.
          attempt:
            i === 1 ? undefined : attempt(clock + i, { outcome: 'delivered', status: 200 + i, detail: null }),
        }),
      ),
    );
    expect(results).toEqual([true, true, true]);
    const histories = await Promise.all(claimed.map((job) => outbox.history(job.id)));
    expect(histories).toEqual([
      [attempt(clock, { outcome: 'delivered', status: 200, detail: null })],
      [],
      [attempt(clock + 2, { outcome: 'delivered', status: 202, detail: null })],
    ]);
    expect((await outbox.listJobs({ status: 202 })).map((j) => j.id)).toEqual([claimed[2]?.id]);
  });

  it('rejects a malformed attempt, and keeps characters jsonb cannot hold as escapes', async () => {
    await enqueue('ord_bad');
    const [claimed] = await outbox.claim({ now: clock, limit: 1, leaseMs: 30_000 });
    const job = claimed as Job;
    await expect(
      outbox.retry(job, {
        now: clock,
        nextAttemptAt: clock,
        error: 'x',
        attempt: { ...attempt(clock), status: 42 },
      }),
    ).rejects.toThrow(/attempt.status/);
    await expect(
      outbox.fail(job, {
        now: clock,
        state: 'dead',
        reason: 'x',
        attempt: { ...attempt(clock), durationMs: -1 },
      }),
    ).rejects.toThrow(/attempt.durationMs/);
    const odd = attempt(clock, { outcome: 'weird\u0000', detail: 'nul \u0000 here' });
    expect(await outbox.fail(job, { now: clock, state: 'dead', reason: 'x', attempt: odd })).toBe(true);
    const [kept] = await outbox.history(job.id);
    expect(kept?.outcome).toBe('weird\\u{0}');
    expect(kept?.detail).not.toContain('\u0000');
  });

  it('is empty for an id this outbox cannot have', async () => {
    expect(await outbox.history('not-a-number')).toEqual([]);
    expect(await outbox.history('99999999999999999999')).toEqual([]);
  });
});

describe('ordering by id', () => {
  it('is numeric, not textual, in listJobs ties and in listDead pages (job 10 after job 9)', async () => {
    await insertMany(12, { state: "'dead'", created_at: `${T0}`, deadline: `${T0}` });
    const ids = (await allJobs()).map((job) => Number(job.id)).sort((a, b) => a - b);
    expect((await outbox.listJobs()).map((job) => Number(job.id))).toEqual(ids);
    const first = await outbox.listDead({ limit: 9 });
    const rest = await outbox.listDead({ limit: 9, after: first.at(-1)?.id });
    expect([...first, ...rest].map((job) => Number(job.id))).toEqual(ids);
  });
});

describe('listJobs with a reason', () => {
  it('pages among the matching jobs across several reads, most urgent first', async () => {
    // 1,300 dead jobs, every third one matching, with deadlines out of creation order.
    await insertMany(1_300, {
      state: "'dead'",
      deadline: `${T0} + (g * 7919) % 1300`,
      last_error: "CASE WHEN g % 3 = 0 THEN '404: click_token not found ' || g ELSE '503: busy' END",
    });
    const expected = (await allJobs())
      .filter((job) => job.lastError?.includes('click_token'))
      .sort(byUrgency)
      .map((job) => job.id);
    expect(expected).toHaveLength(433);
    const page = async (offset: number, limit: number) =>
      (await outbox.listJobs({ reason: /CLICK_TOKEN/i, offset, limit })).map((job) => job.id);
    expect(await page(0, 1000)).toEqual(expected);
    expect(await page(200, 150)).toEqual(expected.slice(200, 350));
    expect(await page(430, 10)).toEqual(expected.slice(430));
    expect(await page(433, 10)).toEqual([]);
    // A g-flagged RegExp is used without its state.
    expect((await outbox.listJobs({ reason: /click_token/g, limit: 5 })).map((j) => j.id)).toEqual(
      expected.slice(0, 5),
    );
  });
});

describe('prune', () => {
  const rules = { olderThanMs: DAY, returnWindowMs: 14 * DAY };

  it('deletes exactly the jobs core says, over many batches of ids and across a gap of ids', async () => {
    const n = PRUNE_BATCH_SIZE * 2 + 37;
    // Confirms: final and not, charged at various times, deadlines passed or not.
    await insertMany(n, {
      state:
        "(ARRAY['delivered', 'cancelled', 'expired', 'dead', 'pending', 'delivered', 'expired'])[1 + g % 7]",
      updated_at: `${T0} - (g % 5) * ${DAY} + g`,
      deadline: `${T0} - ((g * 31) % 11 - 3) * ${DAY}`,
      delivered_at: `CASE WHEN g % 7 IN (0, 5) THEN ${T0} - (g % 20) * ${DAY} END`,
      maybe_applied_at: `CASE WHEN g % 7 = 6 AND g % 2 = 0 THEN ${T0} - (g % 17) * ${DAY} END`,
    });
    // A gap of ids (as earlier prunes leave): the walk jumps it instead of reading empty ranges.
    await pool.query(
      `SELECT setval(pg_get_serial_sequence('"${schema}".jobs', 'id'), 50 * ${PRUNE_BATCH_SIZE})`,
    );
    // Refunds without a deadline (cancelled before their confirm was charged), more than one batch.
    await insertMany(PRUNE_BATCH_SIZE + 11, {
      kind: "'refund'",
      order_id: "'nodl_' || g",
      state: "CASE WHEN g % 4 = 0 THEN 'pending' ELSE 'cancelled' END",
      updated_at: `${T0} - (g % 3) * ${DAY}`,
      deadline: 'NULL',
      click_token: 'NULL',
      value_micros: 'NULL',
      clicked_at: 'NULL',
    });
    const before = await allJobs();
    const doomed = new Set(
      before
        .filter((job) => {
          const at = prunableAt(job, rules);
          return at !== null && at <= T0;
        })
        .map((job) => job.id),
    );
    // More candidates than one batch holds; a fair share of them goes.
    expect(before.filter((job) => job.deadline !== null && job.deadline <= T0).length).toBeGreaterThan(
      PRUNE_BATCH_SIZE,
    );
    expect(doomed.size).toBeGreaterThan(PRUNE_BATCH_SIZE * 0.8);
    expect(doomed.size).toBeLessThan(before.length);
    await outbox.beat({
      workerId: 'gone',
      at: T0 - 2 * DAY,
      state: 'stopped',
      pausedUntil: null,
      pauseReason: null,
      version: '0.1.0',
      host: null,
      pid: null,
      pausedAccounts: [],
    });

    expect(await outbox.prune({ now: T0, ...rules })).toBe(doomed.size);
    const left = new Set((await allJobs()).map((job) => job.id));
    expect(left.size).toBe(before.length - doomed.size);
    for (const id of doomed) expect(left.has(id), id).toBe(false);
    // Workers not seen within the retention go too.
    expect(await outbox.workers({ now: T0, sinceMs: 30 * DAY })).toEqual([]);
    // Nothing more the second time.
    expect(await outbox.prune({ now: T0, ...rules })).toBe(0);
  });
});

describe('stats', () => {
  it('counts a deadline exactly on a bound in it, and a bound equal to the at-risk window', async () => {
    await insertMany(4, {
      state: "'pending'",
      deadline: `${T0} + (ARRAY[0, ${HOUR}, ${HOUR} + 1, ${-DAY}])[g]`,
    });
    const stats = await outbox.stats(T0, { atRiskWithinMs: HOUR, deadlineBucketsMs: [0, HOUR, DAY] });
    expect(stats.atRisk).toEqual({ count: 3, withinMs: HOUR });
    expect(stats.deadlineBuckets).toEqual([
      { withinMs: 0, count: 2 },
      { withinMs: HOUR, count: 3 },
      { withinMs: DAY, count: 4 },
    ]);
    expect((await outbox.stats(T0, { atRiskWithinMs: 0 })).atRisk.count).toBe(2);
  });
});

describe('heart-beats', () => {
  it('checks a beat and the workers query', async () => {
    await expect(outbox.beat({ workerId: '' } as never)).rejects.toThrow(/workerId/);
    await expect(outbox.workers({ now: T0, sinceMs: -1 })).rejects.toThrow(/sinceMs/);
    expect(outbox.features).toMatchObject({ attemptHistory: true, heartbeats: true, prune: true });
    expect(outbox.features.listableStates).toEqual(JOB_STATES);
  });
});
