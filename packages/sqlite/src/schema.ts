/**
 * The database schema and its migrations, versioned with `PRAGMA user_version`. One schema per file holds
 * both tables (jobs and clicks), so an outbox and a click store may share one file and either may migrate it.
 *
 * Indexes are chosen so that no operation reads more than it returns (a worker's memory and each claim's
 * time must not grow with a backlog of a million jobs):
 * - `jobs_order_account_kind` (UNIQUE order_id, account, kind): idempotent enqueue, one confirm and one
 *   refund per order (an order is its account and order id).
 * - `jobs_account_due` (account, next_attempt_at) over claimable pending jobs only: the claim walks the
 *   accounts with claimable jobs one seek each and reads each account's due jobs in due order, `limit`
 *   entries at most. Refunds waiting for their confirmation have no deadline yet and stay out of this
 *   index, so a pile of waiting refunds is never scanned by claims.
 * - `jobs_lease` (lease_expires_at) over inflight jobs: reclaiming jobs of a worker that died.
 * - `jobs_state_created` (state, created_at): counts by state and the oldest pending job.
 * - `jobs_open_deadline` (deadline) over pending and inflight jobs: the nearest deadline, and the claim's
 *   urgent jobs (deadline within `urgentWithinMs`), nearest first.
 * - `jobs_dead` (id) over dead jobs: `listDead` pages by id, replay, purge.
 * - `jobs_held` (account, held_campaign_id) over open held jobs: `releaseHeld` and the held problems of
 *   `stats`.
 * - `jobs_shadow` (id) over jobs recorded in shadow mode: ending shadow mode (migration 7).
 * `listJobs` (an operator's read, not a worker's) has no index of its own: see migration 3.
 */
import type { DatabaseSync } from 'node:sqlite';
import { SHADOW_RECORDED_REASON } from '@postback/core/store';
import { inTransaction } from './transaction.ts';

const MIGRATIONS: readonly string[] = [
  // 1: jobs and clicks.
  `
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
  `,
  // 2: when a request of the job may first have reached the service without a clear answer (core's
  // `maybeAppliedAt`). Nullable with no default: an ALTER that touches no existing row, so migrating a
  // file with a million jobs is instant, and their value (null, never sent unclearly) is what they had.
  `
  ALTER TABLE jobs ADD COLUMN maybe_applied_at INTEGER;
  `,
  // 3: the operator's view. `history` is the job's last attempts (a JSON array, core's `AttemptRecord`s,
  // bounded to ATTEMPT_HISTORY_LIMIT), appended by the transition's own UPDATE; `last_status` the HTTP
  // status of the last of them (what `listJobs({ status })` filters on). Both nullable without a default:
  // no existing row is touched, and a job of a version-2 file simply has no history yet. No index on jobs
  // for `listJobs`: one on the deadline would be written by every enqueue and every transition (their
  // UPDATE sets `deadline`), about as much as the whole transition again; operator listings read the
  // table instead (see `operator-queries.ts`). `workers` keeps each worker's latest heart-beat
  // (`workers_at`: those seen recently, newest first).
  `
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
  `,
  // 4: advertiser accounts. A job's `account` (core's `accountKey`: '' for none), added NOT NULL with a
  // constant default, which SQLite stores in the schema rather than in each row: existing rows are not
  // rewritten and read as '' (no account), exactly the single-account jobs they were. An order is its
  // account and order id: the unique key becomes (order_id, account, kind) — order id first, so lookups
  // by order id alone (operators' listings across accounts) still search it; every lookup of the outbox
  // binds all three. `jobs_account_due` serves the fair claim: the distinct accounts with claimable jobs
  // (a loose index scan, one seek per account) and each account's due jobs in due order; it replaces
  // `jobs_due`, whose order (due first, whatever the account) no claim reads any more. Building the two
  // indexes reads the table once, in the migration's transaction. `workers.paused_accounts` keeps each
  // worker's paused accounts (core's `AccountPause[]` as JSON; null on beats of older workers: none).
  `
  ALTER TABLE jobs ADD COLUMN account TEXT NOT NULL DEFAULT '';
  DROP INDEX jobs_order_kind;
  CREATE UNIQUE INDEX jobs_order_account_kind ON jobs (order_id, account, kind);
  DROP INDEX jobs_due;
  CREATE INDEX jobs_account_due ON jobs (account, next_attempt_at) WHERE state = 'pending' AND deadline IS NOT NULL;
  ALTER TABLE workers ADD COLUMN paused_accounts TEXT;
  `,
  // 5: the `unmatched` state (a reversal the service had no conversion for) and a refund's
  // `campaign_from` (core's `campaignFrom`: 'answer' or 'caller'; null for confirms and for refunds stored
  // before it was kept, which a 404 dead-letters rather than guess). SQLite cannot change a CHECK in
  // place, so the table is rebuilt (its documented procedure: create, copy, drop, rename) in the
  // migration's transaction: the file's rows are copied once (2 s per 500,000 jobs measured), ids
  // included, and the AUTOINCREMENT sequence is carried over so no id is ever handed out twice.
  `
  CREATE TABLE jobs_v5 (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    kind             TEXT    NOT NULL CHECK (kind IN ('confirm', 'refund')),
    order_id         TEXT    NOT NULL,
    state            TEXT    NOT NULL CHECK (state IN ('pending', 'inflight', 'delivered', 'dead', 'expired', 'cancelled', 'unmatched')),
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
    maybe_applied_at INTEGER,
    history          TEXT,
    last_status      INTEGER,
    account          TEXT    NOT NULL DEFAULT '',
    campaign_from    TEXT    CHECK (campaign_from IN ('answer', 'caller')),
    CHECK (kind = 'refund' OR (click_token IS NOT NULL AND value_micros IS NOT NULL AND clicked_at IS NOT NULL AND deadline IS NOT NULL)),
    CHECK ((state = 'inflight') = (lease_token IS NOT NULL AND lease_expires_at IS NOT NULL)),
    CHECK (kind = 'refund' OR (state <> 'unmatched' AND campaign_from IS NULL))
  );
  INSERT INTO jobs_v5 (id, kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline,
      last_error, lease_token, lease_expires_at, delivered_at, campaign_id, click_token, value_micros, clicked_at,
      maybe_applied_at, history, last_status, account)
    SELECT id, kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline,
      last_error, lease_token, lease_expires_at, delivered_at, campaign_id, click_token, value_micros, clicked_at,
      maybe_applied_at, history, last_status, account FROM jobs;
  DELETE FROM sqlite_sequence WHERE name = 'jobs_v5';
  INSERT INTO sqlite_sequence (name, seq) SELECT 'jobs_v5', seq FROM sqlite_sequence WHERE name = 'jobs';
  DROP TABLE jobs;
  ALTER TABLE jobs_v5 RENAME TO jobs;
  CREATE UNIQUE INDEX jobs_order_account_kind ON jobs (order_id, account, kind);
  CREATE INDEX jobs_account_due ON jobs (account, next_attempt_at) WHERE state = 'pending' AND deadline IS NOT NULL;
  CREATE INDEX jobs_lease ON jobs (lease_expires_at) WHERE state = 'inflight';
  CREATE INDEX jobs_state_created ON jobs (state, created_at);
  CREATE INDEX jobs_open_deadline ON jobs (deadline) WHERE state IN ('pending', 'inflight');
  CREATE INDEX jobs_dead ON jobs (id) WHERE state = 'dead';
  `,
  // 6: jobs held for their campaign (core's `heldAt`, `heldCampaignId`: the service said the campaign is
  // not on s2s). Nullable with no default: no existing row is touched, and none of them was held.
  // `jobs_held` (account, held_campaign_id) holds only open held jobs, so `releaseHeld` and the stats'
  // `held` read those and nothing else; every other job costs it one predicate check per write.
  `
  ALTER TABLE jobs ADD COLUMN held_at INTEGER;
  ALTER TABLE jobs ADD COLUMN held_campaign_id TEXT;
  CREATE INDEX jobs_held ON jobs (account, held_campaign_id) WHERE held_at IS NOT NULL AND state IN ('pending', 'inflight');
  `,
  // 7: shadow mode (core's `OutboxShadow`). `shadow_settings` holds one row per scope in shadow mode
  // (`scope_key`: '*' for the whole outbox, '=' and the account key for one account); `shadow_spend` the
  // spend readings of `postback shadow` (one row per reading, its campaigns as JSON). `jobs_shadow` holds
  // only the jobs recorded in shadow mode (cancelled with core's `SHADOW_RECORDED_REASON`, which the
  // predicate repeats: a job leaves the index with any other outcome), so ending shadow mode reads those
  // and nothing else. New tables and a partial index that no existing row enters: nothing is rewritten.
  `
  CREATE TABLE shadow_settings (
    scope_key TEXT    NOT NULL PRIMARY KEY,
    account   TEXT    NOT NULL,
    since     INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE shadow_spend (
    id        INTEGER PRIMARY KEY,
    account   TEXT    NOT NULL,
    at        INTEGER NOT NULL,
    campaigns TEXT    NOT NULL
  );
  CREATE INDEX shadow_spend_at ON shadow_spend (at);
  CREATE INDEX jobs_shadow ON jobs (id) WHERE state = 'cancelled' AND last_error = '${SHADOW_RECORDED_REASON}';
  `,
  // 8: the ledger of every hand on the money (core's `ledger-types.ts`): one row per operator action and
  // per final money state, only ever inserted (by the transition's own transaction for a final state).
  // `prune` deletes jobs, never these rows; only the ledger's own retention does (`ledger_at`). A new
  // table: nothing existing is rewritten.
  `
  CREATE TABLE ledger (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    at           INTEGER NOT NULL,
    actor        TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    job_id       TEXT,
    order_id     TEXT    NOT NULL,
    account      TEXT,
    value_micros INTEGER,
    reason       TEXT
  );
  CREATE INDEX ledger_at ON ledger (at);
  CREATE INDEX ledger_order ON ledger (order_id);
  `,
  // 9: the switches of held campaigns (core's `OutboxSwitches`, issue 31): one row per held problem whose
  // campaign was seen accepting s2s, awaiting a decision on its held jobs. `switch_key` is core's
  // `switchKey` (the account key and the campaign); `account` is the account key, as in jobs. A new table:
  // nothing existing is rewritten.
  `
  CREATE TABLE held_switches (
    switch_key  TEXT    NOT NULL PRIMARY KEY,
    account     TEXT    NOT NULL,
    campaign_id TEXT    NOT NULL,
    seen_at     INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
];

/**
 * The schema version this code writes (`PRAGMA user_version`).
 *
 * @example
 * ```ts
 * db.prepare('PRAGMA user_version').get(); // { user_version: SCHEMA_VERSION }
 * ```
 */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * The file was written by a newer version of `@postback/sqlite`; this one refuses to touch it.
 *
 * @example
 * ```ts
 * try { createSqliteOutbox({ filename }); }
 * catch (err) { if (err instanceof SchemaVersionError) console.error(`upgrade: file is v${err.found}`); }
 * ```
 */
export class SchemaVersionError extends Error {
  override name = 'SchemaVersionError';
  readonly found: number;
  constructor(found: number) {
    super(
      `database schema version ${found} is newer than this @postback/sqlite understands (${SCHEMA_VERSION}); upgrade the package`,
    );
    this.found = found;
  }
}

function userVersion(db: DatabaseSync): number {
  const row = db.prepare('PRAGMA user_version').get() as { user_version: number };
  return row.user_version;
}

/**
 * Brings the file to {@link SCHEMA_VERSION}. The version is read again inside `BEGIN IMMEDIATE`, so two
 * processes opening a fresh file at once migrate it once.
 *
 * @example
 * ```ts
 * migrate(new DatabaseSync('postback.db'));
 * ```
 */
export function migrate(db: DatabaseSync): void {
  const seen = userVersion(db);
  if (seen === SCHEMA_VERSION) return;
  if (seen > SCHEMA_VERSION) throw new SchemaVersionError(seen);
  inTransaction(db, () => {
    const current = userVersion(db);
    if (current > SCHEMA_VERSION) throw new SchemaVersionError(current);
    for (let version = current; version < SCHEMA_VERSION; version++) {
      db.exec(MIGRATIONS[version] as string);
    }
    // PRAGMA does not take parameters; the value is our own integer.
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  });
}
