/**
 * Schema migrations on files written by earlier versions: a file with jobs in it is brought to the current
 * version when an outbox opens it, and its jobs keep working under the new rules.
 */
import { readFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { type TempDatabase, tempDatabase } from '../test/temp-files.ts';
import { createSqliteOutbox, type SqliteOutbox } from './outbox.ts';
import { SCHEMA_VERSION } from './schema.ts';

/** The schema as version 1 of @postback/sqlite wrote it (frozen: files in the field look like this). */
const SCHEMA_V1 = `
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
  CREATE UNIQUE INDEX jobs_order_kind ON jobs (order_id, kind);
  CREATE INDEX jobs_due ON jobs (next_attempt_at) WHERE state = 'pending' AND deadline IS NOT NULL;
  CREATE INDEX jobs_lease ON jobs (lease_expires_at) WHERE state = 'inflight';
  CREATE INDEX jobs_state_created ON jobs (state, created_at);
  CREATE INDEX jobs_open_deadline ON jobs (deadline) WHERE state IN ('pending', 'inflight');
  CREATE INDEX jobs_dead ON jobs (id) WHERE state = 'dead';
  CREATE TABLE clicks (
    key        TEXT    NOT NULL PRIMARY KEY,
    token      TEXT    NOT NULL,
    clicked_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX clicks_clicked_at ON clicks (clicked_at);
  PRAGMA user_version = 1;
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

/** A version-1 file in WAL mode holding: a pending confirm, an inflight one whose worker died, a dead one. */
function versionOneFile(): string {
  temp = tempDatabase();
  const db = new DatabaseSync(temp.filename);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(SCHEMA_V1);
  const insert = db.prepare(
    `INSERT INTO jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline,
       last_error, lease_token, lease_expires_at, click_token, value_micros, clicked_at)
     VALUES ('confirm', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'tok_v1', 5000000, ?)`,
  );
  const deadline = T0 + 6 * DAY;
  insert.run('ord_pending', 'pending', 0, T0, T0, T0, deadline, null, null, null, T0 - DAY);
  insert.run('ord_died', 'inflight', 1, T0, T0 + 500, T0, deadline, null, 'lease-v1', T0 + 30_500, T0 - DAY);
  insert.run('ord_dead', 'dead', 1, T0, T0 + 700, T0, deadline, 'HTTP 422', null, null, T0 - DAY);
  db.close();
  return temp.filename;
}

function open(filename: string, at: number): SqliteOutbox {
  const outbox = createSqliteOutbox({ filename, now: () => at, thread: false });
  opened.push(outbox);
  return outbox;
}

describe('a file of schema version 1', () => {
  it('is migrated on open: maybe_applied_at added, every job kept with maybeAppliedAt null', async () => {
    const filename = versionOneFile();
    const outbox = open(filename, T0 + DAY);
    const raw = new DatabaseSync(filename, { readOnly: true });
    expect(raw.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
    const columns = raw.prepare('PRAGMA table_info(jobs)').all() as Array<{ name: string }>;
    expect(columns.map((c) => c.name)).toContain('maybe_applied_at');
    raw.close();
    for (const orderId of ['ord_pending', 'ord_died', 'ord_dead']) {
      const [job] = await outbox.getByOrder(orderId);
      expect(job).toMatchObject({ orderId, maybeAppliedAt: null });
    }
    expect((await outbox.stats(T0 + DAY)).counts).toMatchObject({ pending: 1, inflight: 1, dead: 1 });
  });

  it("keeps working after the migration: the dead worker's job is retaken maybe applied, refunds follow the new rules", async () => {
    const outbox = open(versionOneFile(), T0 + DAY);
    const claimed = await outbox.claim({ now: T0 + DAY, limit: 10, leaseMs: 30_000 });
    // The retaken job goes first (its lease ran out), then the pending one.
    expect(claimed.map((j) => [j.orderId, j.maybeAppliedAt])).toEqual([
      ['ord_died', T0 + 500], // its worker held it since T0 + 500 and may have sent it
      ['ord_pending', null],
    ]);
    const died = claimed[0];
    if (died === undefined) throw new Error('unreachable');
    const at = T0 + DAY;
    expect(await outbox.fail(died, { now: at, state: 'dead', reason: 'HTTP 422' })).toBe(true);
    expect(await outbox.refund({ orderId: 'ord_died', campaignId: 'cmp_1' })).toMatchObject({
      outcome: 'enqueued',
    });
    // The dead job from version 1 was never maybe applied: its refund still cancels it.
    expect(await outbox.refund({ orderId: 'ord_dead' })).toMatchObject({ outcome: 'cancelled' });
  });

  it('opens a second time without migrating again', async () => {
    const filename = versionOneFile();
    await open(filename, T0).close();
    opened.splice(0);
    const again = open(filename, T0);
    expect((await again.getByOrder('ord_pending')).length).toBe(1);
  });
});

/** A version-2 file (version 1 plus `maybe_applied_at`) holding a dead job, a delivered one and a pending one. */
function versionTwoFile(): string {
  const filename = versionOneFile();
  const db = new DatabaseSync(filename);
  db.exec('ALTER TABLE jobs ADD COLUMN maybe_applied_at INTEGER; PRAGMA user_version = 2');
  db.prepare(
    "UPDATE jobs SET state = 'delivered', lease_token = NULL, lease_expires_at = NULL, delivered_at = ? WHERE order_id = 'ord_died'",
  ).run(T0 + 600);
  db.close();
  return filename;
}

describe('a file of schema version 2', () => {
  it('is migrated on open: history, last_status, the workers table; every job kept with an empty history', async () => {
    const filename = versionTwoFile();
    const outbox = open(filename, T0 + DAY);
    const raw = new DatabaseSync(filename, { readOnly: true });
    expect(raw.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
    const columns = (raw.prepare('PRAGMA table_info(jobs)').all() as Array<{ name: string }>).map(
      (c) => c.name,
    );
    expect(columns).toEqual(expect.arrayContaining(['maybe_applied_at', 'history', 'last_status']));
    const tables = raw.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all();
    expect(tables).toContainEqual({ name: 'workers' });
    raw.close();
    const jobs = await outbox.listJobs();
    expect(jobs.map((j) => [j.orderId, j.state])).toEqual([
      ['ord_pending', 'pending'],
      ['ord_died', 'delivered'],
      ['ord_dead', 'dead'],
    ]);
    for (const job of jobs) expect(await outbox.history(job.id)).toEqual([]);
    expect((await outbox.listJobs({ states: ['dead'], reason: /422/ })).map((j) => j.orderId)).toEqual([
      'ord_dead',
    ]);
  });

  it('keeps working: a job of the old file records its attempts, replays, is listed by status and pruned', async () => {
    const at = T0 + DAY;
    const outbox = open(versionTwoFile(), at);
    const [dead] = await outbox.listJobs({ states: ['dead'] });
    expect(await outbox.replay({ ids: [dead?.id ?? ''] }, at)).toBe(1);
    const claimed = await outbox.claim({ now: at, limit: 10, leaseMs: 30_000 });
    expect(claimed.map((j) => j.orderId)).toEqual(['ord_pending', 'ord_dead']);
    const attempt = { startedAt: at, durationMs: 80, outcome: 'transient', status: 503, detail: '503' };
    for (const job of claimed) {
      expect(await outbox.retry(job, { now: at, nextAttemptAt: at, error: '503', attempt })).toBe(true);
    }
    expect((await outbox.listJobs({ status: 503 })).map((j) => j.orderId)).toEqual([
      'ord_pending',
      'ord_dead',
    ]);
    expect(await outbox.history(dead?.id ?? '')).toEqual([attempt]);
    // The delivered job of the old file is past its deadline and its return window a year later.
    const later = T0 + 365 * DAY;
    expect(await outbox.prune({ now: later, olderThanMs: DAY, returnWindowMs: 30 * DAY })).toBe(1);
    expect(await outbox.getByOrder('ord_died')).toEqual([]);
  });

  it('is refused, unmigrated, by a reading tool (create: false)', () => {
    const filename = versionTwoFile();
    const before = readFileSync(filename);
    expect(() => createSqliteOutbox({ filename, create: false, thread: false })).toThrow(
      expect.objectContaining({ code: 'needs_migration' }),
    );
    expect(readFileSync(filename).equals(before)).toBe(true);
    const raw = new DatabaseSync(filename, { readOnly: true });
    expect(raw.prepare('PRAGMA user_version').get()).toEqual({ user_version: 2 });
    raw.close();
  });
});

/** A version-3 file (version 2 plus history, last_status and workers) with a worker's beat in it. */
function versionThreeFile(): string {
  const filename = versionTwoFile();
  const db = new DatabaseSync(filename);
  db.exec(`
    UPDATE jobs SET campaign_id = 'cmp_v3' WHERE order_id = 'ord_died';
    ALTER TABLE jobs ADD COLUMN history TEXT;
    ALTER TABLE jobs ADD COLUMN last_status INTEGER;
    CREATE TABLE workers (
      worker_id     TEXT    NOT NULL PRIMARY KEY,
      at            INTEGER NOT NULL,
      state         TEXT    NOT NULL,
      paused_until  INTEGER,
      pause_reason  TEXT,
      version       TEXT    NOT NULL,
      host          TEXT,
      pid           INTEGER
    ) WITHOUT ROWID;
    CREATE INDEX workers_at ON workers (at);
    PRAGMA user_version = 3;
  `);
  db.prepare("INSERT INTO workers VALUES ('w-v3', ?, 'running', NULL, NULL, '0.3.0', 'shop-1', 4242)").run(
    T0 + DAY - 1_000,
  );
  db.close();
  return filename;
}

describe('a file of schema version 3 (before accounts)', () => {
  it('is migrated on open: account column and order key, fair-claim index, paused accounts; every job has account null', async () => {
    const filename = versionThreeFile();
    const outbox = open(filename, T0 + DAY);
    const raw = new DatabaseSync(filename, { readOnly: true });
    expect(raw.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
    const indexes = (
      raw
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'jobs'")
        .all() as Array<{
        name: string;
      }>
    ).map((row) => row.name);
    expect(indexes).toEqual(expect.arrayContaining(['jobs_order_account_kind', 'jobs_account_due']));
    expect(indexes).not.toContain('jobs_order_kind');
    expect(raw.prepare('SELECT DISTINCT account FROM jobs').all()).toEqual([{ account: '' }]);
    raw.close();
    const jobs = await outbox.listJobs();
    expect(jobs.map((j) => [j.orderId, j.account])).toEqual([
      ['ord_pending', null],
      ['ord_died', null],
      ['ord_dead', null],
    ]);
    expect((await outbox.listJobs({ account: null })).length).toBe(3);
    expect(await outbox.listJobs({ account: 'shop-a' })).toEqual([]);
    const [worker] = await outbox.workers({ now: T0 + DAY, sinceMs: DAY });
    expect(worker).toMatchObject({ workerId: 'w-v3', pid: 4242, pausedAccounts: [] });
  });

  it('keeps working as before with account null: enqueue is idempotent, jobs are claimed, delivered and refunded', async () => {
    const at = T0 + DAY;
    const outbox = open(versionThreeFile(), at);
    const click = { token: 'tok_v3', clickedAt: T0 };
    // The old order is found without an account; the same order id in an account is another order.
    const again = await outbox.confirm({ orderId: 'ord_pending', valueMicros: 5_000_000, click });
    expect(again).toMatchObject({ created: false, job: { orderId: 'ord_pending', account: null } });
    expect((await outbox.getByOrder('ord_pending')).map((j) => j.state)).toEqual(['pending']);
    expect(await outbox.getByOrder('ord_pending', 'shop-a')).toEqual([]);
    const other = await outbox.confirm({ orderId: 'ord_pending', account: 'shop-a', valueMicros: 1, click });
    expect(other).toMatchObject({ created: true, job: { account: 'shop-a' } });

    const claimed = await outbox.claim({ now: at, limit: 10, leaseMs: 30_000 });
    // The fresh order of 'shop-a' first (a quiet account's first job), then the old one in its turn.
    expect(claimed.map((j) => [j.orderId, j.account])).toEqual([
      ['ord_pending', 'shop-a'],
      ['ord_pending', null],
    ]);
    for (const job of claimed) {
      expect(await outbox.complete(job, { now: at, campaignId: 'cmp_new' })).toBe(true);
    }
    // The delivered job of the old file is refunded in the campaign it was delivered in.
    expect(await outbox.refund({ orderId: 'ord_died' })).toMatchObject({
      outcome: 'enqueued',
      job: { account: null, campaignId: 'cmp_v3' },
    });
    // The dead job of the old file: its refund cancels it, as before accounts.
    expect(await outbox.refund({ orderId: 'ord_dead' })).toMatchObject({ outcome: 'cancelled' });
    const [refund] = await outbox.claim({ now: at, limit: 10, leaseMs: 30_000 });
    expect(refund).toMatchObject({ kind: 'refund', orderId: 'ord_died', account: null });
    expect(await outbox.complete(refund as NonNullable<typeof refund>, { now: at })).toBe(true);
    expect((await outbox.getByOrder('ord_died')).map((j) => [j.kind, j.state])).toEqual([
      ['confirm', 'delivered'],
      ['refund', 'delivered'],
    ]);
  });
});

describe('a file of schema version 5 (before held jobs)', () => {
  it('is migrated on open: held columns (null on every job) and jobs_held; its jobs can then be held and released', async () => {
    temp = tempDatabase();
    const filename = temp.filename;
    const at = T0 + DAY;
    const before = open(filename, at);
    await before.confirm({
      orderId: 'ord_v5',
      valueMicros: 7_000_000,
      click: { token: 'tok_v5', clickedAt: T0 },
    });
    await before.close();
    const db = new DatabaseSync(filename);
    db.exec(`
      DROP TABLE held_switches;
      DROP TABLE ledger;
      DROP INDEX jobs_shadow;
      DROP TABLE shadow_spend;
      DROP TABLE shadow_settings;
      DROP INDEX jobs_held;
      ALTER TABLE jobs DROP COLUMN held_campaign_id;
      ALTER TABLE jobs DROP COLUMN held_at;
      PRAGMA user_version = 5;
    `);
    db.close();
    const outbox = open(filename, at);
    const raw = new DatabaseSync(filename, { readOnly: true });
    expect(raw.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
    expect(raw.prepare("SELECT name FROM sqlite_schema WHERE name = 'jobs_held'").all()).toHaveLength(1);
    raw.close();
    const [job] = await outbox.getByOrder('ord_v5');
    expect(job).toMatchObject({ state: 'pending', heldAt: null, heldCampaignId: null });
    const [claimed] = await outbox.claim({ now: at, limit: 1, leaseMs: 30_000 });
    const error = 'campaign cmp_v5 is not on s2s';
    const hold = { campaignId: 'cmp_v5' };
    expect(
      await outbox.retry(claimed as NonNullable<typeof claimed>, {
        now: at,
        nextAttemptAt: at + DAY,
        error,
        hold,
      }),
    ).toBe(true);
    expect((await outbox.stats(at)).held).toEqual([
      {
        account: null,
        campaignId: 'cmp_v5',
        count: 1,
        valueMicros: 7_000_000,
        reason: error,
        since: at,
        earliestDeadline: claimed?.deadline,
      },
    ]);
    expect(await outbox.releaseHeld({ now: at + 1, campaignId: 'cmp_v5' })).toBe(1);
    expect(await outbox.claim({ now: at + 1, limit: 1, leaseMs: 30_000 })).toHaveLength(1);
  });
});
