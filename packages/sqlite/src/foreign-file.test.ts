/**
 * A file that is not a postback database is never changed by opening it: no WAL switch, no tables, the
 * bytes as they were. Only a caller that may create (`create`, the default) writes a new or empty file, and
 * a foreign database is adopted only when asked (`adoptForeign`).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { type TempDatabase, tempDatabase } from '../test/temp-files.ts';
import { createSqliteClickStore } from './click-store.ts';
import { DatabaseFileError, inspectDatabaseFile } from './database.ts';
import { createSqliteOutbox, type SqliteOutbox } from './outbox.ts';
import { SCHEMA_VERSION } from './schema.ts';

let temp: TempDatabase | undefined;
const opened: SqliteOutbox[] = [];
afterEach(async () => {
  for (const outbox of opened.splice(0)) await outbox.close();
  temp?.cleanup();
  temp = undefined;
});

function file(name = 'shop.db'): string {
  temp = tempDatabase(name);
  return temp.filename;
}

/** An application's own database: one table with rows, rollback journal (`delete`), as sqlite3 makes it. */
function shopDatabase(userVersion = 0): string {
  const filename = file();
  const db = new DatabaseSync(filename);
  db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)');
  db.exec('INSERT INTO orders (total) VALUES (1200), (3400)');
  if (userVersion !== 0) db.exec(`PRAGMA user_version = ${userVersion}`);
  db.close();
  return filename;
}

function journalModeOf(filename: string): string {
  const db = new DatabaseSync(filename, { readOnly: true });
  try {
    return (db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode;
  } finally {
    db.close();
  }
}

function open(filename: string, extra: Partial<Parameters<typeof createSqliteOutbox>[0]> = {}) {
  const outbox = createSqliteOutbox({ filename, ...extra });
  opened.push(outbox);
  return outbox;
}

/** Runs `fn`, expecting a DatabaseFileError of `code` naming the file; returns it. */
function refused(fn: () => unknown, code: DatabaseFileError['code'], filename: string): DatabaseFileError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(DatabaseFileError);
  const error = caught as DatabaseFileError;
  expect(error).toMatchObject({ name: 'DatabaseFileError', code, filename });
  expect(error.message).toContain(filename);
  return error;
}

describe('a database of another application', () => {
  it('is refused by the outbox and the click store, and stays byte-identical in its journal mode', () => {
    const filename = shopDatabase();
    const before = readFileSync(filename);
    const names = readdirSync(temp?.dir as string);
    const error = refused(() => open(filename), 'foreign', filename);
    expect(error.message).toContain('orders');
    expect(error.message).toContain('adoptForeign');
    refused(() => open(filename, { thread: false, synchronous: 'extra' }), 'foreign', filename);
    refused(() => createSqliteClickStore({ filename }), 'foreign', filename);
    expect(readFileSync(filename).equals(before)).toBe(true);
    expect(readdirSync(temp?.dir as string)).toEqual(names); // no -wal, no -shm, no journal left behind
    expect(journalModeOf(filename)).toBe('delete');
    expect(inspectDatabaseFile(filename)).toEqual({ kind: 'foreign', schemaVersion: 0, tables: ['orders'] });
  });

  it('is refused even with a table named jobs, when it is not ours', () => {
    const filename = file();
    const db = new DatabaseSync(filename);
    db.exec('CREATE TABLE jobs (id INTEGER PRIMARY KEY, cron TEXT); PRAGMA user_version = 3');
    db.close();
    const before = readFileSync(filename);
    refused(() => open(filename), 'foreign', filename);
    expect(readFileSync(filename).equals(before)).toBe(true);
  });

  it('is adopted only when asked: its tables and rows kept, our schema added, WAL', async () => {
    const filename = shopDatabase();
    const outbox = open(filename, { adoptForeign: true });
    const click = { token: 'tok_adopt', clickedAt: Date.now() - 1_000 };
    expect((await outbox.confirm({ orderId: 'ord_1', valueMicros: 1, click })).created).toBe(true);
    await outbox.close();
    const db = new DatabaseSync(filename, { readOnly: true });
    expect(db.prepare('SELECT total FROM orders ORDER BY id').all()).toEqual([
      { total: 1200 },
      { total: 3400 },
    ]);
    db.close();
    expect(journalModeOf(filename)).toBe('wal');
    expect(inspectDatabaseFile(filename)).toMatchObject({ kind: 'postback', schemaVersion: SCHEMA_VERSION });
    // Ours from now on: opened without the option.
    expect((await open(filename).getByOrder('ord_1')).length).toBe(1);
  });

  it('is not adopted when another tool versions it with user_version (we would overwrite it)', () => {
    const filename = shopDatabase(7);
    const before = readFileSync(filename);
    const error = refused(() => open(filename, { adoptForeign: true }), 'foreign', filename);
    expect(error.message).toContain('user_version 7');
    expect(readFileSync(filename).equals(before)).toBe(true);
  });

  it('in WAL mode, is looked at without a -wal or -shm left beside it', () => {
    const filename = file();
    const db = new DatabaseSync(filename);
    db.exec('PRAGMA journal_mode = WAL; CREATE TABLE orders (id INTEGER PRIMARY KEY)');
    db.close();
    const before = readFileSync(filename);
    const names = readdirSync(temp?.dir as string);
    refused(() => open(filename), 'foreign', filename);
    refused(() => open(filename, { readOnly: true }), 'foreign', filename);
    expect(readdirSync(temp?.dir as string)).toEqual(names);
    expect(readFileSync(filename).equals(before)).toBe(true);
  });

  it('is not adopted by a caller that may not create', () => {
    const filename = shopDatabase();
    const before = readFileSync(filename);
    refused(() => open(filename, { adoptForeign: true, create: false }), 'foreign', filename);
    expect(readFileSync(filename).equals(before)).toBe(true);
  });
});

describe('a file that is not SQLite', () => {
  it('is refused and left as it was', () => {
    const filename = file('notes.txt');
    writeFileSync(filename, 'order 1042: shipped\n');
    refused(() => open(filename), 'not_sqlite', filename);
    refused(() => open(filename, { adoptForeign: true }), 'not_sqlite', filename);
    expect(readFileSync(filename, 'utf8')).toBe('order 1042: shipped\n');
  });
});

describe('create: false (tools that only read)', () => {
  it('refuses a missing file and creates nothing', () => {
    const filename = file();
    const error = refused(() => open(filename, { create: false }), 'missing', filename);
    expect(error.message).toContain('nothing was created');
    expect(readdirSync(temp?.dir as string)).toEqual([]);
  });

  it('refuses an empty file and leaves it empty', () => {
    const filename = file();
    writeFileSync(filename, '');
    refused(() => open(filename, { create: false }), 'missing', filename);
    expect(readFileSync(filename).length).toBe(0);
  });

  it('refuses an outbox of an older schema version and leaves it unmigrated', () => {
    const filename = file();
    const db = new DatabaseSync(filename);
    db.exec(
      'PRAGMA journal_mode = WAL; CREATE TABLE jobs (id INTEGER PRIMARY KEY, kind TEXT, order_id TEXT, state TEXT, ' +
        'next_attempt_at INTEGER, lease_token TEXT, click_token TEXT); PRAGMA user_version = 1',
    );
    db.close();
    const before = readFileSync(filename);
    refused(() => open(filename, { create: false }), 'needs_migration', filename);
    expect(readFileSync(filename).equals(before)).toBe(true);
  });

  it('opens an outbox at the current version and reads it', async () => {
    const filename = file();
    const click = { token: 'tok_ro', clickedAt: Date.now() - 1_000 };
    const writer = open(filename);
    await writer.confirm({ orderId: 'ord_1', valueMicros: 1, click });
    const reader = open(filename, { create: false });
    expect((await reader.stats(Date.now())).counts.pending).toBe(1);
  });
});

describe('a new or empty file (create: true, the default)', () => {
  it('gets our schema in WAL mode, a 0-byte file too', async () => {
    const filename = file();
    writeFileSync(filename, '');
    const outbox = open(filename);
    expect(outbox.durability.journalMode).toBe('wal');
    expect(inspectDatabaseFile(filename)).toMatchObject({ kind: 'postback', schemaVersion: SCHEMA_VERSION });
  });

  it('an empty SQLite database (no schema) counts as new', () => {
    const filename = file();
    new DatabaseSync(filename).exec('VACUUM');
    expect(inspectDatabaseFile(filename).kind).toBe('empty');
    expect(open(filename).durability.journalMode).toBe('wal');
  });
});

/** `chattr` on `path` (root, on a file system with attributes): whether it worked. */
function chattr(flag: '+i' | '-i', path: string): boolean {
  return spawnSync('chattr', [flag, path]).status === 0;
}

/** Whether this machine can make a folder immutable (a stand-in for a read-only mount). */
const CAN_CHATTR = (() => {
  const probe = tempDatabase('probe');
  try {
    const ok = chattr('+i', probe.dir);
    if (ok) chattr('-i', probe.dir);
    return ok;
  } finally {
    probe.cleanup();
  }
})();

describe('readOnly: true (tools that only look)', () => {
  /** An outbox file with one pending job, closed (no -wal, no -shm beside it). */
  async function outboxFile(): Promise<string> {
    const filename = file();
    const writer = createSqliteOutbox({ filename });
    await writer.confirm({
      orderId: 'ord_1',
      valueMicros: 1,
      click: { token: 'tok_ro', clickedAt: Date.now() },
    });
    await writer.close();
    return filename;
  }

  it('reads, refuses every write, and leaves the file and its folder as they were', async () => {
    const filename = await outboxFile();
    const before = { bytes: readFileSync(filename), mtime: statSync(filename).mtimeMs };
    const names = readdirSync(temp?.dir as string);
    const reader = open(filename, { readOnly: true });
    expect(reader.threaded).toBe(false);
    expect((await reader.stats(Date.now())).counts.pending).toBe(1);
    await expect(
      reader.confirm({
        orderId: 'ord_2',
        valueMicros: 1,
        click: { token: 'tok_ro2', clickedAt: Date.now() },
      }),
    ).rejects.toThrow(/read-only/);
    await expect(reader.claim({ now: Date.now(), limit: 1, leaseMs: 1_000 })).rejects.toThrow(/read-only/);
    await reader.close();
    expect(readFileSync(filename).equals(before.bytes)).toBe(true);
    expect(statSync(filename).mtimeMs).toBe(before.mtime);
    expect(readdirSync(temp?.dir as string)).toEqual(names);
    refused(() => open(`${filename}.missing`, { readOnly: true }), 'missing', `${filename}.missing`);
  });

  it('sees what a writer still at work has committed (through its WAL)', async () => {
    const filename = await outboxFile();
    const writer = open(filename);
    await writer.confirm({
      orderId: 'ord_2',
      valueMicros: 1,
      click: { token: 'tok_w2', clickedAt: Date.now() },
    });
    const reader = open(filename, { readOnly: true });
    expect((await reader.stats(Date.now())).counts.pending).toBe(2);
    await writer.confirm({
      orderId: 'ord_3',
      valueMicros: 1,
      click: { token: 'tok_w3', clickedAt: Date.now() },
    });
    expect((await reader.stats(Date.now())).counts.pending).toBe(3);
  });

  it.skipIf(!CAN_CHATTR)('reads a file in a folder it cannot write (as on a read-only mount)', async () => {
    const filename = await outboxFile();
    const dir = temp?.dir as string;
    const names = readdirSync(dir);
    expect(chattr('+i', dir)).toBe(true);
    try {
      // What a writer would need is refused there, as before.
      expect(() => open(filename)).toThrow(/unable to open/);
      const reader = open(filename, { readOnly: true });
      expect((await reader.stats(Date.now())).counts.pending).toBe(1);
      expect((await reader.getByOrder('ord_1'))[0]?.state).toBe('pending');
      await reader.close();
      expect(readdirSync(dir)).toEqual(names);
    } finally {
      chattr('-i', dir);
    }
  });
});
