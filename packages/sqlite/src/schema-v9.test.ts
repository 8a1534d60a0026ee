/**
 * Migration 9 on a file written by version 8: the `held_switches` table is added, no job is touched, and a
 * job of the old file held for its campaign then has its switch noted and decided.
 */
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { type TempDatabase, tempDatabase } from '../test/temp-files.ts';
import { createSqliteOutbox, type SqliteOutbox } from './outbox.ts';
import { SCHEMA_VERSION } from './schema.ts';

const T0 = Date.UTC(2026, 0, 15, 12);
let temp: TempDatabase | undefined;

afterEach(() => {
  temp?.cleanup();
  temp = undefined;
});

describe('a file of schema version 8 (before the switches of held campaigns)', () => {
  it('is migrated on open, its held job untouched, whose switch is then noted and decided', async () => {
    temp = tempDatabase();
    const { filename } = temp;
    const before: SqliteOutbox = createSqliteOutbox({ filename, now: () => T0 });
    await before.confirm({
      orderId: 'ord_v8',
      valueMicros: 7_000_000,
      click: { token: 'tok_v8', clickedAt: T0 },
    });
    const [claimed] = await before.claim({ now: T0, limit: 1, leaseMs: 30_000 });
    const hold = { campaignId: 'cmp_v8' };
    const error = 'campaign cmp_v8 is not on s2s';
    await before.retry(claimed as NonNullable<typeof claimed>, {
      now: T0,
      nextAttemptAt: T0 + 60_000,
      error,
      hold,
    });
    await before.close();
    const db = new DatabaseSync(filename);
    db.exec('DROP TABLE held_switches; PRAGMA user_version = 8;');
    db.close();

    const outbox = createSqliteOutbox({ filename, now: () => T0 });
    try {
      const raw = new DatabaseSync(filename, { readOnly: true });
      expect(raw.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
      raw.close();
      const switches = outbox.switches;
      if (switches === undefined) throw new Error('the SQLite outbox keeps switches');
      expect(await switches.list()).toEqual([]);
      const [job] = await outbox.getByOrder('ord_v8');
      expect(job).toMatchObject({ state: 'pending', heldAt: T0, heldCampaignId: 'cmp_v8' });
      expect(await switches.note({ account: null, campaignId: 'cmp_v8', at: T0 + 1 })).toBe(true);
      expect(await switches.list()).toEqual([{ account: null, campaignId: 'cmp_v8', at: T0 + 1 }]);
      const decided = await switches.decide({
        account: null,
        campaignId: 'cmp_v8',
        decision: 'send',
        now: T0 + 2,
      });
      expect(decided).toEqual([
        { decision: 'send', job: expect.objectContaining({ state: 'pending', nextAttemptAt: T0 + 2 }) },
      ]);
      expect(await switches.list()).toEqual([]);
    } finally {
      await outbox.close();
    }
  });
});
