/**
 * Outcomes recorded in batches (`outcome-batch.ts`), with and without prepared statements: completions
 * made together share one transaction, yet each stays conditional on its own lease token, and a batch
 * that fails records none of its outcomes, so nothing is lost or doubled when they are made again.
 * Also: the prepared statements survive a `DISCARD ALL` on the pool's connection.
 */
import type { AttemptRecord, Job } from '@postback/core';
import type pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createPostgresOutbox, type PoolLike, type PostgresOutbox } from '../src/index.ts';
import { freshSchema, TEST_PG_URL, testPool } from './pg-test-db.ts';

const admin = testPool(2);
afterAll(() => admin.end());

let schema: string;
let drop: () => Promise<void>;
const pools: pg.Pool[] = [];
const outboxes: PostgresOutbox[] = [];

beforeEach(async () => {
  ({ schema, drop } = await freshSchema(admin));
});
afterEach(async () => {
  await Promise.all(outboxes.splice(0).map((o) => o.close()));
  await Promise.all(pools.splice(0).map((p) => p.end()));
  await drop();
});

const click = { token: 'tok_outcome_batch', clickedAt: Date.now() - 1000 };

/** The send the service accepted, as the Dispatcher records it. */
const accepted = (startedAt: number): AttemptRecord => ({
  startedAt,
  durationMs: 5,
  outcome: 'delivered',
  status: 200,
  detail: null,
});

/** An outbox on a pool of its own, counting the connections its calls check out. */
function worker(preparedStatements: boolean, max = 3): { outbox: PostgresOutbox; checkouts: () => number } {
  const pool = testPool(max);
  pools.push(pool);
  let checkouts = 0;
  const counting = new Proxy(pool, {
    get(target, key) {
      if (key === 'connect')
        return (...args: unknown[]) => {
          checkouts += 1;
          return (target.connect as (...a: unknown[]) => unknown).apply(target, args);
        };
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as PoolLike;
  const outbox = createPostgresOutbox({ pool: counting, schema, preparedStatements });
  outboxes.push(outbox);
  return { outbox, checkouts: () => checkouts };
}

async function enqueue(outbox: PostgresOutbox, n: number): Promise<void> {
  for (let i = 0; i < n; i += 1) await outbox.confirm({ orderId: `ord_b${i}`, valueMicros: 1, click });
}

describe.each([
  ['prepared statements', true],
  ['plain statements', false],
])('a batch of completions (%s)', (_, prepared) => {
  it('where one job lost its lease records the others and not that one', async () => {
    const a = worker(prepared);
    const b = worker(prepared);
    await enqueue(a.outbox, 3);
    const t0 = Date.now();
    const held = await a.outbox.claim({ now: t0, limit: 3, leaseMs: 1000 });
    expect(held).toHaveLength(3);
    // Worker a stalls past its lease; b takes the middle job over (a newer token).
    const lost = held[1]!;
    await admin.query(`UPDATE "${schema}".jobs SET lease_expires_at = $2 WHERE id = $1`, [lost.id, t0]);
    const [takenOver] = await b.outbox.claim({ now: t0 + 1, limit: 1, leaseMs: 60_000 });
    expect(takenOver?.id).toBe(lost.id);

    const before = a.checkouts();
    const results = await Promise.all(
      held.map((job, i) =>
        a.outbox.complete(job, { now: t0 + 10, campaignId: `cmp_a${i}`, attempt: accepted(t0 + 5) }),
      ),
    );
    expect(results).toEqual([true, false, true]);
    // One batch: one connection (prepared: the script's) or none (plain: through pool.query).
    expect(a.checkouts() - before).toBe(prepared ? 1 : 0);

    const stored = await Promise.all(held.map((job) => a.outbox.get(job.id)));
    expect(stored.map((job) => [job?.state, job?.campaignId])).toEqual([
      ['delivered', 'cmp_a0'],
      ['inflight', null],
      ['delivered', 'cmp_a2'],
    ]);
    // The lost job is b's as b claimed it: its lease, no attempt of a in its history.
    expect(stored[1]?.lease).toEqual(takenOver?.lease);
    expect(await a.outbox.history(lost.id)).toEqual([]);
    expect(await a.outbox.history(held[0]!.id)).toEqual([accepted(t0 + 5)]);
    // b still holds it, and records its own outcome.
    expect(await b.outbox.complete(takenOver as Job, { now: t0 + 20, campaignId: 'cmp_b' })).toBe(true);
    expect(await b.outbox.get(lost.id)).toMatchObject({ state: 'delivered', campaignId: 'cmp_b' });
  });

  it('made one at a time, waits for the rest of its claim and goes in one batch', async () => {
    const a = worker(prepared);
    await enqueue(a.outbox, 3);
    const t0 = Date.now();
    const held = await a.outbox.claim({ now: t0, limit: 3, leaseMs: 60_000 });
    expect(held).toHaveLength(3);
    const states = async () =>
      (await admin.query(`SELECT state FROM "${schema}".jobs ORDER BY id`)).rows.map((r) => r.state);
    // The wait (COMPLETION_WAIT_MS) never ends by itself here: only the claim's last outcome sends the batch.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const before = a.checkouts();
      const done = (i: number) =>
        a.outbox.complete(held[i]!, { now: t0 + 10 + i, attempt: accepted(t0 + 5) });
      const first = done(0);
      // Five round trips of our own: time enough for a completion written at once to be answered.
      const roundTrips = async () => {
        for (let i = 0; i < 5; i += 1) await states();
        return 'waiting';
      };
      expect(await Promise.race([first.then(() => 'written'), roundTrips()])).toBe('waiting');
      const second = done(1);
      expect(await states()).toEqual(['inflight', 'inflight', 'inflight']);
      expect(await Promise.all([first, second, done(2)])).toEqual([true, true, true]);
      // One batch: one connection (prepared: the script's) or none (plain: through pool.query).
      expect(a.checkouts() - before).toBe(prepared ? 1 : 0);
    } finally {
      vi.useRealTimers();
    }
    expect(await states()).toEqual(['delivered', 'delivered', 'delivered']);
  });

  it('that fails records none of its outcomes; made again, each is recorded once', async () => {
    // The worker's statements give up after 300 ms waiting (here: for a row another transaction holds).
    const pool = testPool(2);
    pools.push(pool);
    const impatient = new (pool.constructor as typeof pg.Pool)({
      connectionString: TEST_PG_URL,
      max: 2,
      options: '-c statement_timeout=300',
    });
    pools.push(impatient);
    const outbox = createPostgresOutbox({ pool: impatient, schema, preparedStatements: prepared });
    outboxes.push(outbox);
    await enqueue(outbox, 3);
    const t0 = Date.now();
    const held = await outbox.claim({ now: t0, limit: 3, leaseMs: 60_000 });
    expect(held).toHaveLength(3);

    const blocker = await admin.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM "${schema}".jobs WHERE id = $1 FOR UPDATE`, [held[2]!.id]);
      const outcomes = await Promise.allSettled(
        held.map((job) => outbox.complete(job, { now: t0 + 10, attempt: accepted(t0 + 5) })),
      );
      // The whole batch failed: every caller has its error, none an answer.
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/statement timeout/);
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    // Nothing was recorded, not even the two jobs that were not blocked.
    const between = await Promise.all(held.map((job) => outbox.get(job.id)));
    expect(between.map((job) => job?.state)).toEqual(['inflight', 'inflight', 'inflight']);
    expect(await outbox.history(held[0]!.id)).toEqual([]);

    // The Dispatcher's next try records each outcome exactly once; a third call changes nothing.
    const again = await Promise.all(
      held.map((job) => outbox.complete(job, { now: t0 + 20, attempt: accepted(t0 + 15) })),
    );
    expect(again).toEqual([true, true, true]);
    expect(await outbox.complete(held[0]!, { now: t0 + 30, attempt: accepted(t0 + 25) })).toBe(false);
    for (const job of held) {
      expect((await outbox.get(job.id))?.state).toBe('delivered');
      expect(await outbox.history(job.id)).toEqual([accepted(t0 + 15)]);
    }
  });
});

describe('prepared statements', () => {
  it('give the claim excluded account keys and a cursor with quotes and backslashes as they are', async () => {
    const { outbox } = worker(true);
    const odd = "o'brien\\shop";
    await outbox.confirm({ orderId: 'ord_odd', account: odd, valueMicros: 1, click });
    await outbox.confirm({ orderId: 'ord_plain', account: 'plain', valueMicros: 1, click });
    const t0 = Date.now();
    const first = await outbox.claim({ now: t0, limit: 5, leaseMs: 60_000, excludeAccounts: [odd] });
    expect(first.map((job) => job.account)).toEqual(['plain']);
    // The cursor is now 'plain'; the odd account's turn comes next.
    expect(
      (await outbox.claim({ now: t0, limit: 5, leaseMs: 60_000, excludeAccounts: ['plain'] })).map(
        (job) => job.account,
      ),
    ).toEqual([odd]);
    await outbox.confirm({ orderId: 'ord_odd_2', account: odd, valueMicros: 1, click });
    // With the odd key as the cursor.
    expect(
      (await outbox.claim({ now: Date.now(), limit: 5, leaseMs: 60_000 })).map((job) => job.orderId),
    ).toEqual(['ord_odd_2']);
  });

  it('survive a DISCARD ALL on the connection: scripts are prepared again, a named statement fails once', async () => {
    const pool = testPool(1);
    pools.push(pool);
    const outbox = createPostgresOutbox({ pool, schema });
    outboxes.push(outbox);
    await enqueue(outbox, 4);
    const t0 = Date.now();
    const [first, second, third] = await outbox.claim({ now: t0, limit: 3, leaseMs: 60_000 });
    expect(await outbox.complete(first!, { now: t0 + 1 })).toBe(true);
    expect(await outbox.extendLease(third!, { now: t0 + 1, leaseMs: 60_000 })).toBe(true);
    const { rows } = await pool.query('SELECT name FROM pg_prepared_statements');
    // The claim, completeMany and followConfirms (PREPAREd by us), extendLease (pg's named statement).
    expect(rows.map((r) => String(r.name).slice(0, 4)).sort()).toEqual(['pbq_', 'pbs_', 'pbs_', 'pbs_']);

    // Someone resets the session (a pooler's server_reset_query, or the app itself).
    await pool.query('DISCARD ALL');
    expect(await outbox.complete(second!, { now: t0 + 2 })).toBe(true);
    expect(await outbox.claim({ now: t0 + 3, limit: 1, leaseMs: 60_000 })).toHaveLength(1);
    // pg still believes extendLease is prepared on that connection: that call fails, pg's pool drops the
    // connection with it, and the next call runs on a new one.
    await expect(outbox.extendLease(third!, { now: t0 + 4, leaseMs: 60_000 })).rejects.toMatchObject({
      code: '26000',
    });
    expect(await outbox.extendLease(third!, { now: t0 + 5, leaseMs: 60_000 })).toBe(true);
  });
});
