/**
 * Migration 5 on a file written by version 4: the jobs table is rebuilt for the `unmatched` state and a
 * refund's `campaign_from`, every job and id kept, and the id sequence carried over.
 */
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { type TempDatabase, tempDatabase } from '../test/temp-files.ts';
import { createSqliteOutbox, type SqliteOutbox } from './outbox.ts';
import { SCHEMA_VERSION } from './schema.ts';

/** The jobs table as version 4 of @postback/sqlite left it (frozen: files in the field look like this). */
const SCHEMA_V4 = `
  CREATE TABLE jobs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    kind             TEXT    NOT NULL CHECK (kind IN ('confirm', 'refund')),
    order_id         TEXT    NOT NULL,
    state            TEXT    NOT NULL CHECK (state IN ('pending', 'inflight', 'delivered', 'dead', 'expired', 'cancelled')),
    attempts         INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    next_attempt_at  INTEGER NOT NULL,
    deadline         INTEGER,
    last_error       TEXT,
    lease_token      TEXT,
    lease_expires_at INTEGER,
    delivered_at     INTEGER,
    campaign_id      TEXT,
    click_token      TEXT,
    value_micros     INTEGER,
    clicked_at       INTEGER,
    CHECK (kind = 'refund' OR (click_token IS NOT NULL AND value_micros IS NOT NULL AND clicked_at IS NOT NULL AND deadline IS NOT NULL)),
    CHECK ((state = 'inflight') = (lease_token IS NOT NULL AND lease_expires_at IS NOT NULL))
  );
  ALTER TABLE jobs ADD COLUMN maybe_applied_at INTEGER;
  ALTER TABLE jobs ADD COLUMN history TEXT;
  ALTER TABLE jobs ADD COLUMN last_status INTEGER;
  ALTER TABLE jobs ADD COLUMN account TEXT NOT NULL DEFAULT '';
  CREATE UNIQUE INDEX jobs_order_account_kind ON jobs (order_id, account, kind);
  CREATE INDEX jobs_account_due ON jobs (account, next_attempt_at) WHERE state = 'pending' AND deadline IS NOT NULL;
  CREATE INDEX jobs_lease ON jobs (lease_expires_at) WHERE state = 'inflight';
  CREATE INDEX jobs_state_created ON jobs (state, created_at);
  CREATE INDEX jobs_open_deadline ON jobs (deadline) WHERE state IN ('pending', 'inflight');
  CREATE INDEX jobs_dead ON jobs (id) WHERE state = 'dead';
  CREATE TABLE clicks (key TEXT NOT NULL PRIMARY KEY, token TEXT NOT NULL, clicked_at INTEGER NOT NULL) WITHOUT ROWID;
  CREATE INDEX clicks_clicked_at ON clicks (clicked_at);
  CREATE TABLE workers (
    worker_id TEXT NOT NULL PRIMARY KEY, at INTEGER NOT NULL, state TEXT NOT NULL, paused_until INTEGER,
    pause_reason TEXT, version TEXT NOT NULL, host TEXT, pid INTEGER, paused_accounts TEXT
  ) WITHOUT ROWID;
  CREATE INDEX workers_at ON workers (at);
  PRAGMA user_version = 4;
`;

const T0 = Date.UTC(2026, 0, 15, 12);
const DAY = 86_400_000;
let temp: TempDatabase | undefined;
const opened: SqliteOutbox[] = [];

afterEach(async () => {
  for (const outbox of opened.splice(0)) await outbox.close();
  temp?.cleanup();
  temp = undefined;
});

/** A version-4 file: a delivered confirm and its pending refund (ids 7, 8), the sequence at 40 (jobs pruned). */
function versionFourFile(): string {
  temp = tempDatabase();
  const db = new DatabaseSync(temp.filename);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(SCHEMA_V4);
  db.prepare(
    `INSERT INTO jobs (id, kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline,
       delivered_at, campaign_id, click_token, value_micros, clicked_at, account)
     VALUES (7, 'confirm', 'ord_v4', 'delivered', 1, ?, ?, ?, ?, ?, 'cmp_v4', 'tok_v4', 5000000, ?, 'shop-a')`,
  ).run(T0, T0, T0, T0 + 6 * DAY, T0, T0 - DAY);
  db.prepare(
    `INSERT INTO jobs (id, kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline,
       campaign_id, account)
     VALUES (8, 'refund', 'ord_v4', 'pending', 0, ?, ?, ?, ?, 'cmp_v4', 'shop-a')`,
  ).run(T0, T0, T0, T0 + 30 * DAY);
  db.exec("UPDATE sqlite_sequence SET seq = 40 WHERE name = 'jobs'");
  db.close();
  return temp.filename;
}

function open(filename: string, at: number): SqliteOutbox {
  const outbox = createSqliteOutbox({ filename, now: () => at, thread: false });
  opened.push(outbox);
  return outbox;
}

describe('a file of schema version 4 (before unmatched)', () => {
  it('is migrated on open: every job kept, its refund with no known campaign source, the id sequence carried over', async () => {
    const filename = versionFourFile();
    const outbox = open(filename, T0 + DAY);
    expect((await outbox.get('7'))?.state).toBe('delivered');
    expect(await outbox.get('8')).toMatchObject({ kind: 'refund', campaignId: 'cmp_v4', campaignFrom: null });
    const raw = new DatabaseSync(filename, { readOnly: true });
    expect(raw.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
    const indexes = raw
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'jobs' ORDER BY name")
      .all()
      .map((row) => (row as { name: string }).name);
    expect(indexes).toEqual(
      expect.arrayContaining([
        'jobs_account_due',
        'jobs_dead',
        'jobs_lease',
        'jobs_open_deadline',
        'jobs_order_account_kind',
        'jobs_state_created',
      ]),
    );
    expect(raw.prepare("SELECT name FROM sqlite_schema WHERE name LIKE 'jobs_v%'").all()).toEqual([]);
    raw.close();
    const { job } = await outbox.confirm({
      orderId: 'ord_new',
      valueMicros: 1,
      click: { token: 'tok_new', clickedAt: T0 },
    });
    expect(Number(job.id)).toBe(41); // never an id handed out before the migration
  });

  it('keeps working: the old refund is claimed and can end unmatched, a new one keeps its campaign source', async () => {
    const at = T0 + DAY;
    const outbox = open(versionFourFile(), at);
    const [refund] = await outbox.claim({ now: at, limit: 10, leaseMs: 30_000 });
    expect(refund).toMatchObject({ id: '8', kind: 'refund' });
    const unmatched = { now: at, state: 'unmatched' as const, reason: 'no such conversion' };
    expect(await outbox.fail(refund as NonNullable<typeof refund>, unmatched)).toBe(true);
    expect((await outbox.stats(at)).counts.unmatched).toBe(1);
    const caller = await outbox.refund({ orderId: 'ord_other', account: 'shop-a', campaignId: 'cmp_x' });
    expect(
      (await outbox.get(caller.job.id))?.kind === 'refund' && (await outbox.get(caller.job.id)),
    ).toMatchObject({
      campaignFrom: 'caller',
    });
  });
});
