/**
 * The exit codes the README promises (2: usage or input, nothing was done; 3: the backend could not be
 * reached), where they used to lie: an input that cannot be read, a bad value of a store's variable, and
 * a database the reading commands may only read (read-only folder or mount; a file they must not modify).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';
import { db, setUpCommandHarness } from './command-harness.ts';
import { seedDead, token } from './db-fixture.ts';

setUpCommandHarness();

async function run(args: string[], env: Record<string, string> = {}) {
  const io = captureIo({ env });
  const code = await main(args, io);
  return { code, out: io.out(), err: io.err() };
}

/** `chattr` on `path`: whether it worked (root, on a file system with attributes). */
function chattr(flag: '+i' | '-i', path: string): boolean {
  return spawnSync('chattr', [flag, path]).status === 0;
}

/** Whether a folder can be made immutable here: the stand-in for a read-only mount. */
const CAN_CHATTR = (() => {
  const probe = join(import.meta.dirname, `.chattr-probe-${process.pid}`);
  mkdirSync(probe, { recursive: true });
  try {
    const ok = chattr('+i', probe);
    if (ok) chattr('-i', probe);
    return ok;
  } finally {
    spawnSync('rmdir', [probe]);
  }
})();

/** A database with a pending job and a dead one, closed. */
async function seeded(): Promise<void> {
  const outbox = db.open();
  await outbox.confirm({
    orderId: 'open-1',
    valueMicros: 5,
    click: { token: token(1), clickedAt: Date.now() },
  });
  await seedDead(outbox, ['dead-1'], 'Ad service answered 404: click_token not found');
  await outbox.close();
}

/** What a file and its folder look like: bytes, modification time, the folder's names. */
function snapshot(file: string) {
  return {
    bytes: readFileSync(file).toString('base64'),
    mtimeMs: statSync(file).mtimeMs,
    names: readdirSync(join(file, '..')).sort(),
  };
}

const READING = [
  ['status'],
  ['status', '--json'],
  ['jobs'],
  ['job', '1'],
  ['dlq', 'list'],
  ['prune', '--dry-run'],
];

describe('exit 2: the input, not the backend', () => {
  it('enqueue --from a folder exits 2 naming it, and creates no database', async () => {
    const { code, err } = await run(['enqueue', '--db', db.file, '--from', db.dir]);
    expect(code, err).toBe(2);
    expect(err).toMatch(/^postback enqueue: --from: .* is a folder/);
    expect(existsSync(db.file)).toBe(false);
  });

  it('a bad POSTBACK_SQLITE_SYNCHRONOUS or POSTBACK_SQLITE_BUSY_TIMEOUT_MS exits 2 naming it, creating nothing', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ POSTBACK_SQLITE_SYNCHRONOUS: 'fast' }, /POSTBACK_SQLITE_SYNCHRONOUS: .*full/],
      [
        { POSTBACK_SQLITE_BUSY_TIMEOUT_MS: '5s' },
        /POSTBACK_SQLITE_BUSY_TIMEOUT_MS: must be an integer .*'5s'/,
      ],
      [{ POSTBACK_SQLITE_BUSY_TIMEOUT_MS: '99999999999' }, /POSTBACK_SQLITE_BUSY_TIMEOUT_MS: /],
    ];
    for (const [env, message] of cases) {
      const confirm = [
        'confirm',
        '--db',
        db.file,
        '--click-token',
        token(1),
        '--order-id',
        'o',
        '--value-micros',
        '1',
      ];
      const created = await run(confirm, env);
      expect(created.code, created.err).toBe(2);
      expect(created.err).toMatch(message);
      expect(existsSync(db.file)).toBe(false);
    }
    await seeded();
    const status = await run(['status', '--db', db.file], { POSTBACK_SQLITE_SYNCHRONOUS: 'fast' });
    expect(status.code, status.err).toBe(2);
    expect(status.err).toMatch(/POSTBACK_SQLITE_SYNCHRONOUS/);
  });
});

describe('commands that only read never modify the file', () => {
  it('status, jobs, job, dlq list and prune --dry-run leave a database in rollback-journal mode as it was', async () => {
    await seeded();
    // A postback file someone switched back to a rollback journal: reading must not switch it to WAL.
    const handle = new DatabaseSync(db.file);
    handle.exec('PRAGMA journal_mode = DELETE');
    handle.close();
    const before = snapshot(db.file);
    for (const args of READING) {
      const { code, err } = await run([...args, '--db', db.file]);
      expect(code, `${args.join(' ')}: ${err}`).toBe(0);
      expect(snapshot(db.file), args.join(' ')).toEqual(before);
    }
  });

  it('nor a database in WAL mode: same bytes, same time, no -wal or -shm left beside it', async () => {
    await seeded();
    const before = snapshot(db.file);
    for (const args of READING) {
      const { code, err } = await run([...args, '--db', db.file]);
      expect(code, `${args.join(' ')}: ${err}`).toBe(0);
      expect(snapshot(db.file), args.join(' ')).toEqual(before);
    }
  });

  it.skipIf(!CAN_CHATTR)(
    'and read a database in a folder they cannot write (a read-only mount): exit 0, not 3',
    async () => {
      await seeded();
      const before = snapshot(db.file);
      expect(chattr('+i', db.dir)).toBe(true);
      try {
        for (const args of READING) {
          const { code, out, err } = await run([...args, '--db', db.file]);
          expect(code, `${args.join(' ')}: ${err}`).toBe(0);
          if (args.join(' ') === 'status --json')
            expect(JSON.parse(out).counts).toMatchObject({ pending: 1, dead: 1 });
        }
        // A command that writes still cannot, and says the backend cannot be opened.
        const replay = await run(['dlq', 'replay', '--all', '--db', db.file]);
        expect(replay.code).toBe(3);
      } finally {
        chattr('-i', db.dir);
      }
      expect(snapshot(db.file)).toEqual(before);
    },
  );
});

afterEach(() => {
  // Never leave an immutable folder behind (its removal would fail).
  if (CAN_CHATTR && existsSync(db.dir)) chattr('-i', db.dir);
});
