/**
 * The switches of held campaigns on Postgres under concurrency: a sighting noted while a decision on its
 * problem is in progress waits for it (`note` locks a held job `FOR SHARE`) and then finds nothing held, so
 * a decided problem is never left with a switch that no held job backs. The contract itself is the
 * conformance suite's (`conformance.test.ts`).
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresOutbox, type PostgresOutbox } from '../src/index.ts';
import { freshSchema, testPool } from './pg-test-db.ts';

const pool = testPool(4);
afterAll(() => pool.end());

let schema: string;
let drop: () => Promise<void>;
let outbox: PostgresOutbox;
/** The outbox's clock: jobs are stamped with it, so a claim at `now` finds them due. */
let now: number;

beforeEach(async () => {
  ({ schema, drop } = await freshSchema(pool));
  now = Date.now();
  outbox = createPostgresOutbox({ pool, schema, now: () => now });
});
afterEach(async () => {
  await outbox.close();
  await drop();
});

/** Waits until `check` holds (a condition of the server, never a duration under test). */
async function waitFor(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Enqueues, claims and holds an order for `cmp_race`; returns the held job's id. */
async function heldJob(orderId: string): Promise<string> {
  await outbox.confirm({
    orderId,
    valueMicros: 1_000_000,
    click: { token: `tok_${orderId}_race`, clickedAt: now - 1_000 },
  });
  const [claimed] = await outbox.claim({ now, limit: 1, leaseMs: 60_000 });
  const held = { now, nextAttemptAt: now + 600_000, error: 'not on s2s', hold: { campaignId: 'cmp_race' } };
  expect(await outbox.retry(claimed as NonNullable<typeof claimed>, held)).toBe(true);
  return (claimed as NonNullable<typeof claimed>).id;
}

/** Runs `during` while another connection's open transaction has cancelled job `id` (a decision in progress). */
async function whileDecided<T>(id: string, during: () => Promise<T>): Promise<T> {
  const decision = await pool.connect();
  try {
    await decision.query('BEGIN');
    await decision.query(
      `UPDATE "${schema}".jobs SET state = 'cancelled', held_at = NULL, held_campaign_id = NULL WHERE id = $1`,
      [id],
    );
    const result = during();
    // The call waits on the job's row lock: the server says so.
    await waitFor(async () => {
      const { rows } = await pool.query(
        `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
        [`%"${schema}".%`],
      );
      return rows.length > 0;
    });
    await decision.query('COMMIT');
    return await result;
  } finally {
    decision.release();
  }
}

describe('switches on Postgres', () => {
  it('a sighting noted during a decision on its problem waits for it and notes nothing', async () => {
    const id = await heldJob('ord_note');
    const switches = outbox.switches as NonNullable<PostgresOutbox['switches']>;
    const sighting = { account: null, campaignId: 'cmp_race', at: now };
    expect(await whileDecided(id, () => switches.note(sighting))).toBe(false);
    expect(await switches.list()).toEqual([]);
  });

  it('a decision racing another on the same job waits for it and decides nothing: a dropped job is never sent', async () => {
    const id = await heldJob('ord_decide');
    const switches = outbox.switches as NonNullable<PostgresOutbox['switches']>;
    const send = { account: null, campaignId: 'cmp_race', decision: 'send' as const, now };
    expect(await whileDecided(id, () => switches.decide(send))).toEqual([]);
    expect(await outbox.get(id)).toMatchObject({ state: 'cancelled', heldAt: null });
  });
});
