/**
 * Migration 8 on a file written by version 7: the ledger table is added, no job is touched, and a job of
 * the old file then writes its final-state row when it is delivered.
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

describe('a file of schema version 7 (before the ledger)', () => {
  it('is migrated on open, its jobs untouched, and a delivery of an old job then writes its ledger row', async () => {
    temp = tempDatabase();
    const { filename } = temp;
    const before: SqliteOutbox = createSqliteOutbox({ filename, now: () => T0 });
    await before.confirm({
      orderId: 'ord_v7',
      valueMicros: 7_000_000,
      click: { token: 'tok_v7', clickedAt: T0 },
    });
    await before.close();
    const db = new DatabaseSync(filename);
    db.exec('DROP TABLE held_switches; DROP TABLE ledger; PRAGMA user_version = 7;');
    db.close();

    const outbox = createSqliteOutbox({ filename, now: () => T0 });
    try {
      const raw = new DatabaseSync(filename, { readOnly: true });
      expect(raw.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
      raw.close();
      expect(await outbox.readLedger()).toEqual([]);
      const [claimed] = await outbox.claim({ now: T0, limit: 1, leaseMs: 30_000 });
      expect(claimed?.orderId).toBe('ord_v7');
      await outbox.complete(claimed as NonNullable<typeof claimed>, { now: T0 + 1, campaignId: 'cmp_1' });
      expect(await outbox.readLedger()).toEqual([
        expect.objectContaining({
          kind: 'applied',
          orderId: 'ord_v7',
          actor: 'dispatcher',
          valueMicros: 7_000_000,
        }),
      ]);
    } finally {
      await outbox.close();
    }
  });
});
