import { DatabaseSync } from 'node:sqlite';
import { DAY_MS, OptionsError } from '@postback/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type TempDatabase, tempDatabase } from '../test/temp-files.ts';
import { createSqliteClickStore, type SqliteClickStore } from './click-store.ts';
import { createSqliteOutbox } from './outbox.ts';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const WINDOW = 7 * DAY_MS;
let temp: TempDatabase | undefined;
const opened: Array<{ close(): Promise<void> }> = [];

function open(extra: Partial<Parameters<typeof createSqliteClickStore>[0]> = {}): SqliteClickStore {
  temp ??= tempDatabase();
  const store = createSqliteClickStore({ filename: temp.filename, ...extra });
  opened.push(store);
  return store;
}

afterEach(async () => {
  for (const handle of opened.splice(0)) await handle.close();
  temp?.cleanup();
  temp = undefined;
});

describe('SQLite click store', () => {
  it('returns the click kept for a key until it is older than the confirmation window', async () => {
    const store = open();
    await store.put('cust_1', { token: 'tok_1', clickedAt: T0 });
    expect(await store.get('cust_1', T0 + WINDOW)).toEqual({ token: 'tok_1', clickedAt: T0 });
    expect(await store.get('cust_1', T0 + WINDOW + 1)).toBeNull();
    expect(await store.get('cust_unknown', T0)).toBeNull();
  });

  it('keeps the first time of a token put again, across a reopen, and lets another token replace it', async () => {
    const store = open();
    await store.put('cust_1', { token: 'tok_same', clickedAt: T0 });
    await store.close();
    const reopened = open();
    await reopened.put('cust_1', { token: 'tok_same', clickedAt: T0 + 5 * DAY_MS });
    expect(await reopened.get('cust_1', T0 + 5 * DAY_MS)).toEqual({ token: 'tok_same', clickedAt: T0 });
    await reopened.put('cust_1', { token: 'tok_other', clickedAt: T0 + 6 * DAY_MS });
    expect(await reopened.get('cust_1', T0 + 6 * DAY_MS)).toEqual({
      token: 'tok_other',
      clickedAt: T0 + 6 * DAY_MS,
    });
  });

  it('keeps the latest put for a key (the caller decides attribution)', async () => {
    const store = open();
    await store.put('cust_1', { token: 'tok_first', clickedAt: T0 });
    await store.put('cust_1', { token: 'tok_last', clickedAt: T0 + 1000 });
    expect(await store.get('cust_1', T0 + 2000)).toEqual({ token: 'tok_last', clickedAt: T0 + 1000 });
  });

  it('forgets a deleted key', async () => {
    const store = open();
    await store.put('cust_1', { token: 'tok_1', clickedAt: T0 });
    await store.delete('cust_1');
    expect(await store.get('cust_1', T0)).toBeNull();
  });

  it('sweep deletes exactly the clicks older than the window and reports how many', async () => {
    const store = open();
    await Promise.all([
      store.put('old_1', { token: 'tok_a', clickedAt: T0 - WINDOW - 1 }),
      store.put('old_2', { token: 'tok_b', clickedAt: T0 - WINDOW - 50 }),
      store.put('edge', { token: 'tok_c', clickedAt: T0 - WINDOW }),
      store.put('new', { token: 'tok_d', clickedAt: T0 }),
    ]);
    expect(await store.sweep(T0)).toBe(2);
    const db = new DatabaseSync((temp as TempDatabase).filename);
    const keys = (db.prepare('SELECT key FROM clicks ORDER BY key').all() as Array<{ key: string }>).map(
      (r) => r.key,
    );
    db.close();
    expect(keys).toEqual(['edge', 'new']);
  });

  it('sweeps more clicks than one chunk', async () => {
    const store = open();
    await Promise.all(
      Array.from({ length: 12_000 }, (_, i) =>
        store.put(`k${i}`, { token: 'tok_x', clickedAt: T0 - WINDOW - 1 - i }),
      ),
    );
    expect(await store.sweep(T0)).toBe(12_000);
  });

  it('persists clicks across reopen, in the same file as an outbox', async () => {
    temp = tempDatabase();
    const outbox = createSqliteOutbox({ filename: temp.filename });
    opened.push(outbox);
    const first = open();
    await first.put('cust_1', { token: 'tok_1', clickedAt: T0 });
    await first.close();
    expect(await open().get('cust_1', T0)).toEqual({ token: 'tok_1', clickedAt: T0 });
  });

  it('works on a shared DatabaseSync and leaves it open on close', async () => {
    temp = tempDatabase();
    const db = new DatabaseSync(temp.filename);
    const store = createSqliteClickStore({ database: db });
    await store.put('cust_1', { token: 'tok_1', clickedAt: T0 });
    await store.close();
    expect(db.prepare('SELECT token FROM clicks').get()).toEqual({ token: 'tok_1' });
    db.close();
  });

  it('expires clicks by a configured confirmation window', async () => {
    const store = open({ policy: { confirmWindowMs: DAY_MS, safetyMarginMs: 0 } });
    await store.put('cust_1', { token: 'tok_1', clickedAt: T0 });
    expect(await store.get('cust_1', T0 + DAY_MS + 1)).toBeNull();
  });

  it('rejects a malformed click token, naming the field, and stores nothing', async () => {
    const store = open();
    await expect(store.put('cust_1', { token: 'bad token<script>', clickedAt: T0 })).rejects.toThrow(
      expect.objectContaining({ field: 'click.token' }),
    );
    await expect(store.put('', { token: 'tok_1', clickedAt: T0 })).rejects.toThrow(/key/);
    expect(await store.get('cust_1', T0)).toBeNull();
  });

  it('rejects both filename and database, and unknown options', () => {
    temp = tempDatabase();
    const db = new DatabaseSync(':memory:');
    expect(() => createSqliteClickStore({ filename: temp!.filename, database: db })).toThrow(OptionsError);
    expect(() => createSqliteClickStore({ filename: temp!.filename, ttlMs: 5 } as never)).toThrow(/ttlMs/);
    db.close();
  });
});
