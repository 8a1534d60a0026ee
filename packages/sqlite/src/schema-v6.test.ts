/**
 * Migration 7 on a file written by version 6: shadow mode's tables and `jobs_shadow` are added, no job is
 * touched, and a job of the old file can then be recorded in shadow mode and decided at its end.
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

describe('a file of schema version 6 (before shadow mode)', () => {
  it('is migrated on open, its jobs untouched, and they can then be recorded in shadow mode', async () => {
    temp = tempDatabase();
    const { filename } = temp;
    const before: SqliteOutbox = createSqliteOutbox({ filename, now: () => T0 });
    await before.confirm({
      orderId: 'ord_v6',
      valueMicros: 7_000_000,
      click: { token: 'tok_v6', clickedAt: T0 },
    });
    await before.close();
    const db = new DatabaseSync(filename);
    db.exec(`
      DROP TABLE held_switches;
      DROP TABLE ledger;
      DROP INDEX jobs_shadow;
      DROP TABLE shadow_spend;
      DROP TABLE shadow_settings;
      PRAGMA user_version = 6;
    `);
    db.close();

    const outbox = createSqliteOutbox({ filename, now: () => T0 });
    try {
      const raw = new DatabaseSync(filename, { readOnly: true });
      expect(raw.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
      const names = raw
        .prepare(
          "SELECT name FROM sqlite_schema WHERE name IN ('jobs_shadow', 'shadow_spend', 'shadow_settings')",
        )
        .all()
        .map((row) => row.name);
      expect(names.sort()).toEqual(['jobs_shadow', 'shadow_settings', 'shadow_spend']);
      raw.close();
      const shadow = outbox.shadow;
      if (shadow === undefined) throw new Error('the SQLite outbox has shadow mode');
      await shadow.start({ all: true }, T0);
      const [claimed] = await outbox.claim({ now: T0, limit: 1, leaseMs: 30_000 });
      expect(await shadow.record(claimed as NonNullable<typeof claimed>, { now: T0 })).toBe('recorded');
      const { decided } = await shadow.end({ all: true }, { now: T0 + 1, sendCreatedFrom: T0 });
      expect(decided).toEqual([expect.objectContaining({ decision: 'send' })]);
      expect((await outbox.getByOrder('ord_v6'))[0]).toMatchObject({ state: 'pending', lastError: null });
    } finally {
      await outbox.close();
    }
  });
});
