import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { OptionsError } from '@postback/core';
import { DatabaseFileError } from '@postback/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { captureIo } from '../../test/capture-io.ts';
import { main } from '../main.ts';
import { BackendFlagError } from './backend.ts';
import { open } from './sqlite.ts';

let dir: string | undefined;
function fresh(): string {
  dir = mkdtempSync(join(tmpdir(), 'postback-cli-sqlite-'));
  return join(dir, 'postback.db');
}
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('the --db backend', () => {
  it('opens a durable outbox on the file and says so', async () => {
    const file = fresh();
    const { outbox, describe: text } = await open(file, {});
    const click = { token: 'tok_cli', clickedAt: Date.now() - 1000 };
    expect((await outbox.confirm({ orderId: 'ord_cli', valueMicros: 1, click })).created).toBe(true);
    await outbox.close();
    expect(text).toContain(file);
    expect(text).toContain('journal=wal');
    expect(text).toContain('synchronous=full');
  });

  it('applies POSTBACK_SQLITE_SYNCHRONOUS', async () => {
    const { outbox, describe: text } = await open(fresh(), { POSTBACK_SQLITE_SYNCHRONOUS: 'NORMAL' });
    await outbox.close();
    expect(text).toContain('synchronous=normal');
  });

  it('names the environment variable when its value is bad', async () => {
    await expect(open(fresh(), { POSTBACK_SQLITE_SYNCHRONOUS: 'off' })).rejects.toThrow(
      expect.objectContaining({ constructor: OptionsError, field: 'POSTBACK_SQLITE_SYNCHRONOUS' }),
    );
    await expect(open(fresh(), { POSTBACK_SQLITE_BUSY_TIMEOUT_MS: '5s' })).rejects.toThrow(
      /POSTBACK_SQLITE_BUSY_TIMEOUT_MS/,
    );
  });
});

/** An application's own SQLite database (a table with rows, rollback journal), as `sqlite3 shop.db` leaves it. */
function shopDatabase(): string {
  const file = fresh().replace(/postback\.db$/, 'shop.db');
  const db = new DatabaseSync(file);
  db.exec(
    'CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER); INSERT INTO orders (total) VALUES (1200)',
  );
  db.close();
  return file;
}

function journalModeOf(file: string): string {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return (db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode;
  } finally {
    db.close();
  }
}

describe('--db that is not a file on disk', () => {
  it('is refused as a usage error before anything opens: the job would be lost at exit', async () => {
    for (const file of [':memory:', '', '  ', 'file::memory:?cache=shared', 'file:jobs.db?mode=memory']) {
      const error = await open(file, {}).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, file).toBeInstanceOf(BackendFlagError);
      expect((error as Error).message).toMatch(/--db needs the path of a database file/);
    }
  });

  it('makes confirm, refund, enqueue and worker exit 2 (usage) without reporting anything created', async () => {
    const lines = fresh().replace(/postback\.db$/, 'jobs.jsonl');
    writeFileSync(lines, '{"kind":"refund","order_id":"ord_1","campaign_id":"cmp_1"}\n');
    const runs: string[][] = [
      ['confirm', '--db', ':memory:', '--click-token', 'tok_1', '--order-id', 'ord_1', '--value-micros', '1'],
      ['refund', '--db', ':memory:', '--order-id', 'ord_1', '--campaign-id', 'cmp_1'],
      ['worker', '--db', ':memory:', '--base-url', 'http://127.0.0.1:9', '--drain'],
      ['enqueue', '--db', ':memory:', '--from', lines],
    ];
    for (const args of runs) {
      const io = captureIo({ env: { POSTBACK_API_KEY: 'pk_test_key' } });
      expect(await main(args, io), args.join(' ')).toBe(2);
      expect(io.err()).toContain('--db needs the path of a database file');
      expect(io.out()).not.toMatch(/created/i);
    }
  });
});

describe("another application's database", () => {
  it('is refused by the backend, and stays byte-identical in its journal mode', async () => {
    const file = shopDatabase();
    const before = readFileSync(file);
    const error = await open(file, {}).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DatabaseFileError);
    expect((error as DatabaseFileError).code).toBe('foreign');
    expect((error as Error).message).toContain(file);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(journalModeOf(file)).toBe('delete');
  });

  it('is left untouched by `postback status --db shop.db` and `dlq list`, which say why', async () => {
    const file = shopDatabase();
    const before = readFileSync(file);
    const names = readdirSync(dir as string);
    for (const args of [
      ['status', '--db', file],
      ['dlq', 'list', '--db', file],
      ['confirm', '--db', file, '--click-token', 'tok_1', '--order-id', 'ord_1', '--value-micros', '1'],
    ]) {
      const io = captureIo();
      expect(await main(args, io), args.join(' ')).not.toBe(0);
      expect(io.err()).toContain(file);
      expect(io.err()).toMatch(/another application/);
    }
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readdirSync(dir as string)).toEqual(names);
    expect(journalModeOf(file)).toBe('delete');
  });

  it('is given our tables only when the caller adopts it on purpose', async () => {
    const file = shopDatabase();
    const { outbox } = await open(file, {}, { adoptForeign: true });
    await outbox.close();
    expect(journalModeOf(file)).toBe('wal');
  });
});

describe('a command that only reads (create: false)', () => {
  it('creates no file where there is none', async () => {
    const file = fresh();
    await expect(open(file, {}, { create: false })).rejects.toThrow(
      expect.objectContaining({ name: 'DatabaseFileError', code: 'missing' }),
    );
    expect(existsSync(file)).toBe(false);
  });
});

describe('postback status and dlq list on a file they must not change', () => {
  it('leave an empty file empty: they neither create our tables nor switch the journal', async () => {
    const file = fresh();
    writeFileSync(file, '');
    for (const args of [
      ['status', '--db', file],
      ['dlq', 'list', '--db', file],
    ]) {
      const io = captureIo();
      expect(await main(args, io), args.join(' ')).toBe(3);
      expect(io.err()).toContain(file);
    }
    expect(readFileSync(file).length).toBe(0);
    expect(readdirSync(dir as string)).toEqual(['postback.db']);
  });
});
