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

beforeEach(async () => {
  ({ schema, drop } = await freshSchema(pool));
  outbox = createPostgresOutbox({ pool, schema });
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

describe('switches on Postgres', () => {
  it('a sighting noted during a decision on its problem waits for it and notes nothing', async () => {
    const now = Date.now();
    await outbox.confirm({
      orderId: 'ord_race',
      valueMicros: 1_000_000,
      click: { token: 'tok_switch_race', clickedAt: now - 1_000 },
    });
    const [claimed] = await outbox.claim({ now, limit: 1, leaseMs: 60_000 });
    const hold = { campaignId: 'cmp_race' };
    const error = 'campaign cmp_race is not on s2s';
    await outbox.retry(claimed as NonNullable<typeof claimed>, {
      now,
      nextAttemptAt: now + 600_000,
      error,
      hold,
    });
    const switches = outbox.switches;
    if (switches === undefined) throw new Error('the Postgres outbox keeps switches');

    // A decision in progress on another connection: the held job is locked and no longer held.
    const decision = await pool.connect();
    try {
      await decision.query('BEGIN');
      await decision.query(
        `UPDATE "${schema}".jobs SET state = 'cancelled', held_at = NULL, held_campaign_id = NULL WHERE id = $1`,
        [claimed?.id],
      );
      const noted = switches.note({ account: null, campaignId: 'cmp_race', at: now });
      await waitFor(async () => {
        const { rows } = await pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO "${schema}".held_switches%'`,
        );
        return rows.length > 0;
      });
      await decision.query('COMMIT');
      expect(await noted).toBe(false);
    } finally {
      decision.release();
    }
    expect(await switches.list()).toEqual([]);
  });
});
