/**
 * Versioned migrations of postback's tables, in a schema of the caller's choice. The whole upgrade is one
 * script of statements sent in one round trip, so it runs in one transaction (Postgres wraps a
 * multi-statement query in an implicit transaction, or joins the caller's open one) and works through any
 * {@link Queryable}, including the adapter of an app's own migration tool. A transaction-scoped advisory
 * lock serialises concurrent runs (two deploys starting at once); each version is applied only if its
 * row is missing from `<schema>.migrations`, so running it again is a no-op.
 */
import { SHADOW_RECORDED_REASON } from '@postback/core/store';
import { type Queryable, run } from './queryable.ts';
import { DEFAULT_SCHEMA, quoteIdent, validateSchemaName } from './schema-name.ts';

/** One schema version: its number, a name for the history table, and its DDL (`{s}` is the schema). */
interface Migration {
  version: number;
  name: string;
  sql: string;
}

// Times are epoch milliseconds (bigint) rather than timestamptz because the clock is injected: tests and
// the Dispatcher pass `now`, and the database's own clock must not disagree with it.
// Indexes are few on purpose, since every enqueue writes each of them: `jobs_due` serves claims,
// `jobs_dead` the dead-letter pages, `jobs_open` the operator's stats (oldest pending, and the nearest
// deadline among the open backlog, found by scanning just that backlog).
// `due_at` is derived by Postgres itself, so no code path can forget to maintain it: when `claim` may
// take the row — `next_attempt_at` for a sendable pending job (a refund is sendable once it has a
// deadline, i.e. its confirmation was delivered), the lease expiry for an inflight one, never otherwise.
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'jobs, lease tokens and clicks',
    sql: `
CREATE TABLE {s}.jobs (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('confirm', 'refund')),
  order_id text NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'inflight', 'delivered', 'dead', 'expired', 'cancelled')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  next_attempt_at bigint NOT NULL,
  deadline bigint,
  last_error text,
  lease_token bigint,
  lease_expires_at bigint,
  delivered_at bigint,
  campaign_id text,
  click_token text,
  value_micros bigint,
  clicked_at bigint,
  due_at bigint GENERATED ALWAYS AS (
    CASE
      WHEN state = 'pending' AND deadline IS NOT NULL THEN next_attempt_at
      WHEN state = 'inflight' THEN lease_expires_at
    END
  ) STORED,
  CONSTRAINT jobs_one_per_order_and_kind UNIQUE (order_id, kind),
  CONSTRAINT jobs_confirm_fields CHECK (
    kind <> 'confirm' OR (click_token IS NOT NULL AND value_micros IS NOT NULL AND clicked_at IS NOT NULL AND deadline IS NOT NULL)
  ),
  CONSTRAINT jobs_lease_while_inflight CHECK ((state = 'inflight') = (lease_token IS NOT NULL AND lease_expires_at IS NOT NULL))
);
CREATE INDEX jobs_due ON {s}.jobs (due_at, id) WHERE due_at IS NOT NULL;
CREATE INDEX jobs_dead ON {s}.jobs (id) WHERE state = 'dead';
CREATE INDEX jobs_open ON {s}.jobs (state, created_at) WHERE state IN ('pending', 'inflight');
CREATE SEQUENCE {s}.lease_tokens;
CREATE TABLE {s}.clicks (
  key text PRIMARY KEY,
  token text NOT NULL,
  clicked_at bigint NOT NULL
);
CREATE INDEX clicks_clicked_at ON {s}.clicks (clicked_at);
`,
  },
  // Nullable with no default: Postgres only records the column in the catalog (no table rewrite, a brief
  // lock), every existing row reads NULL ("no request may have reached the service"), and a worker of the
  // previous release, which names its columns, keeps working on the upgraded table during a rolling deploy.
  {
    version: 2,
    name: 'jobs.maybe_applied_at',
    sql: `
ALTER TABLE {s}.jobs ADD COLUMN maybe_applied_at bigint;
`,
  },
  // The operator's view. `history` holds the job's last sends (a jsonb array of core's AttemptRecords,
  // at most ATTEMPT_HISTORY_LIMIT), appended by each transition's own UPDATE; `last_status` is the HTTP
  // status of the last of them (what `listJobs({ status })` filters on). Both nullable without a default,
  // as in version 2: no rewrite, existing jobs simply have no history yet, and a worker of the previous
  // release keeps working. No new index on jobs, on purpose: every enqueue and transition would write it.
  // Listings by state read `jobs_open` or `jobs_dead`, deadlines at risk the open backlog, `prune` the
  // primary key a range at a time; a listing of every state sorts the table (an operator's read, kept
  // small by prune). `workers` keeps each worker's latest heart-beat, `workers_at` finds recent ones.
  {
    version: 3,
    name: 'operator view: jobs.history, jobs.last_status, workers',
    sql: `
ALTER TABLE {s}.jobs ADD COLUMN history jsonb, ADD COLUMN last_status integer;
CREATE TABLE {s}.workers (
  worker_id text PRIMARY KEY,
  at bigint NOT NULL,
  state text NOT NULL,
  paused_until bigint,
  pause_reason text,
  version text NOT NULL,
  host text,
  pid integer
);
CREATE INDEX workers_at ON {s}.workers (at);
`,
  },
  // Accounts (many advertisers). `account` is core's accountKey: '' for jobs without one, so it can sit in
  // the unique key; a constant default is recorded in the catalog only (no table rewrite since Postgres
  // 11), and every existing job reads '' (account null), so a single-account schema works as before. The
  // order key becomes (order_id, account, kind): the same set of columns as `ON CONFLICT (account,
  // order_id, kind)` infers, with order_id first so lookups by order id alone (listJobs) still read it.
  // Building it reads the table once under the migration's lock (prune keeps the table small).
  // `jobs_fair` serves the claim's turns across accounts: a loose index scan finds the accounts with
  // sendable pending jobs, then each account's due jobs in due order. `jobs_urgent` serves its urgent
  // tier (pending jobs by deadline). Both hold pending sendable jobs only. `jobs_due` stays for workers of
  // the previous release during a rollout (a later migration may drop it). `paused_accounts` keeps a
  // heart-beat's per-account pauses (jsonb array of core's AccountPause; NULL reads as none).
  {
    version: 4,
    name: 'accounts: jobs.account, order key (order_id, account, kind), fair-claim indexes, workers.paused_accounts',
    sql: `
ALTER TABLE {s}.jobs ADD COLUMN account text NOT NULL DEFAULT '';
ALTER TABLE {s}.jobs DROP CONSTRAINT jobs_one_per_order_and_kind,
  ADD CONSTRAINT jobs_one_per_account_order_and_kind UNIQUE (order_id, account, kind);
CREATE INDEX jobs_fair ON {s}.jobs (account, next_attempt_at, id) WHERE state = 'pending' AND deadline IS NOT NULL;
CREATE INDEX jobs_urgent ON {s}.jobs (deadline, id) WHERE state = 'pending' AND deadline IS NOT NULL;
ALTER TABLE {s}.workers ADD COLUMN paused_accounts jsonb;
`,
  },
  // Unmatched reversals. Core's `unmatched` state (a reversal the service had no conversion for) joins the
  // state CHECK, and `campaign_from` keeps where a refund's campaign came from ('answer': the service's
  // confirmation answer; 'caller'; NULL for confirms, and for refunds stored before it was kept, which a
  // 404 dead-letters rather than guess). Both CHECKs are added NOT VALID: the new state list is a superset
  // of the old one, which every existing row passed, and the new column is NULL in every row, so there is
  // nothing to check and no scan of the table while it is locked; new and updated rows are checked as
  // always. The nullable column without a default is a catalog change only.
  {
    version: 5,
    name: 'unmatched reversals: state unmatched, jobs.campaign_from',
    sql: `
ALTER TABLE {s}.jobs DROP CONSTRAINT jobs_state_check,
  ADD CONSTRAINT jobs_state_check
    CHECK (state IN ('pending', 'inflight', 'delivered', 'dead', 'expired', 'cancelled', 'unmatched')) NOT VALID,
  ADD COLUMN campaign_from text,
  ADD CONSTRAINT jobs_campaign_from_check
    CHECK (campaign_from IS NULL OR (campaign_from IN ('answer', 'caller') AND kind = 'refund')) NOT VALID,
  ADD CONSTRAINT jobs_unmatched_refunds_only CHECK (state <> 'unmatched' OR kind = 'refund') NOT VALID;
`,
  },
  // Jobs held for their campaign (core's heldAt, heldCampaignId: the service said the campaign is not on
  // s2s). Nullable without a default, as in version 2: no rewrite, every existing job reads as not held,
  // and a worker of the previous release, which names its columns, keeps working during a rollout.
  // `jobs_held` holds only open held jobs (none, usually), so `releaseHeld` and the stats' held problems
  // read those alone and every other write costs one predicate check.
  {
    version: 6,
    name: 'held jobs: jobs.held_at, jobs.held_campaign_id, jobs_held',
    sql: `
ALTER TABLE {s}.jobs ADD COLUMN held_at bigint, ADD COLUMN held_campaign_id text;
CREATE INDEX jobs_held ON {s}.jobs (account, held_campaign_id) WHERE held_at IS NOT NULL AND state IN ('pending', 'inflight');
`,
  },
  // Shadow mode (core's `OutboxShadow`): `shadow_settings` one row per scope in shadow mode (`scope_key`:
  // '*' for the whole outbox, '=' and the account key for one account), `shadow_spend` the spend readings
  // of `postback shadow` (its campaigns as jsonb). `jobs_shadow` holds only the jobs recorded in shadow
  // mode (cancelled with core's `SHADOW_RECORDED_REASON`, which the predicate repeats), so ending shadow
  // mode reads those alone. New tables and a partial index no existing row enters: nothing is rewritten.
  {
    version: 7,
    name: 'shadow mode: shadow_settings, shadow_spend, jobs_shadow',
    sql: `
CREATE TABLE {s}.shadow_settings (scope_key text PRIMARY KEY, account text NOT NULL, since bigint NOT NULL);
CREATE TABLE {s}.shadow_spend (id bigserial PRIMARY KEY, account text NOT NULL, at bigint NOT NULL, campaigns jsonb NOT NULL);
CREATE INDEX shadow_spend_at ON {s}.shadow_spend (at);
CREATE INDEX jobs_shadow ON {s}.jobs (id) WHERE state = 'cancelled' AND last_error = '${SHADOW_RECORDED_REASON}';
`,
  },
  // The ledger of every hand on the money (core's `ledger-types.ts`): rows are only inserted. A final
  // money state is written by a trigger on the job's UPDATE, so every path that moves a job there
  // (group-committed completions, fail, replay) writes its row in its own transaction, and a transition
  // that lost its fence updates nothing and writes nothing. `account` is stored as core's accountKey, as
  // in jobs. `prune` never touches the table; only the ledger's retention does (`ledger_at`).
  {
    version: 8,
    name: 'ledger: ledger, jobs_ledger trigger',
    sql: `
CREATE TABLE {s}.ledger (seq bigserial PRIMARY KEY, at bigint NOT NULL, actor text NOT NULL, kind text NOT NULL, job_id text, order_id text NOT NULL, account text NOT NULL DEFAULT '', value_micros bigint, reason text);
CREATE INDEX ledger_at ON {s}.ledger (at);
CREATE INDEX ledger_order ON {s}.ledger (order_id);
CREATE FUNCTION {s}.ledger_final_state() RETURNS trigger LANGUAGE plpgsql AS $ledger$
BEGIN
  INSERT INTO {s}.ledger (at, actor, kind, job_id, order_id, account, value_micros, reason)
  VALUES (NEW.updated_at, 'dispatcher',
    CASE WHEN NEW.state <> 'delivered' THEN NEW.state WHEN NEW.kind = 'confirm' THEN 'applied' ELSE 'reversed' END,
    NEW.id::text, NEW.order_id, NEW.account,
    CASE WHEN NEW.kind = 'confirm' THEN NEW.value_micros END,
    CASE WHEN NEW.state = 'delivered' THEN NULL ELSE NEW.last_error END);
  RETURN NULL;
END
$ledger$;
CREATE TRIGGER jobs_ledger AFTER UPDATE OF state ON {s}.jobs FOR EACH ROW
  WHEN (NEW.state IS DISTINCT FROM OLD.state AND NEW.state IN ('delivered', 'expired', 'unmatched', 'dead'))
  EXECUTE FUNCTION {s}.ledger_final_state();
`,
  },
  // The switches of held campaigns (core's `OutboxSwitches`, issue 31): one row per held problem whose
  // campaign was seen accepting s2s, until its held jobs are decided. `switch_key` is core's `switchKey`,
  // `account` the account key as in jobs. A new table: nothing is rewritten, and a worker of the
  // previous release, which never reads it, keeps working during a rollout.
  {
    version: 9,
    name: 'switches of held campaigns: held_switches',
    sql: `
CREATE TABLE {s}.held_switches (switch_key text PRIMARY KEY, account text NOT NULL, campaign_id text NOT NULL, seen_at bigint NOT NULL);
`,
  },
];

/**
 * The newest schema version this release knows.
 * @example
 * ```ts
 * if ((await schemaVersion(pool)) < LATEST_SCHEMA_VERSION) throw new Error('run postback migrate');
 * ```
 */
export const LATEST_SCHEMA_VERSION: number = MIGRATIONS.at(-1)?.version ?? 0;

// Advisory-lock class id for migrations ("pb" in ASCII); the second key is hashtext(schema), so
// migrations of different schemas do not wait for each other.
const MIGRATION_LOCK_CLASS = 0x7062;

/**
 * The SQL that brings `schema` to {@link LATEST_SCHEMA_VERSION}: for apps whose migration tool takes SQL
 * files (Flyway, dbmate, node-pg-migrate). Safe to run twice and concurrently.
 *
 * @example
 * ```ts
 * await writeFile('migrations/20260101_postback.sql', migrationScript('postback'));
 * ```
 */
export function migrationScript(schema: string = DEFAULT_SCHEMA): string {
  return migrationScriptUpTo(schema, LATEST_SCHEMA_VERSION);
}

/**
 * {@link migrationScript} stopping at `version` (internal: tests build a schema of an earlier release).
 *
 * @example
 * ```ts
 * await pool.query(migrationScriptUpTo('postback', 1)); // the schema as release 1 left it
 * ```
 */
export function migrationScriptUpTo(schema: string, version: number): string {
  const name = validateSchemaName(schema);
  const s = quoteIdent(name);
  const lockKey = `hashtext(${quoteLiteral(name)})`;
  const steps = MIGRATIONS.filter((m) => m.version <= version).map(
    (m) => `DO $postback$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM ${s}.migrations WHERE version = ${m.version}) THEN
${m.sql.replaceAll('{s}', s).trim()}
    INSERT INTO ${s}.migrations (version, name) VALUES (${m.version}, ${quoteLiteral(m.name)});
  END IF;
END
$postback$;`,
  );
  return [
    `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_CLASS}, ${lockKey});`,
    `CREATE SCHEMA IF NOT EXISTS ${s};`,
    `CREATE TABLE IF NOT EXISTS ${s}.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());`,
    ...steps,
  ].join('\n');
}

function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * Options of {@link migrate}.
 * @example
 * ```ts
 * const options: MigrateOptions = { schema: 'shop_postback' };
 * ```
 */
export interface MigrateOptions {
  /** @defaultValue {@link DEFAULT_SCHEMA} */
  schema?: string;
}

/**
 * What {@link migrate} did.
 * @example
 * ```ts
 * const { from, to }: MigrateResult = await migrate(pool);
 * ```
 */
export interface MigrateResult {
  schema: string;
  /** Version before the run (0 for a fresh schema). */
  from: number;
  /** Version after the run. */
  to: number;
}

/**
 * Creates or upgrades postback's tables in `schema`. Takes a `pg` Pool or Client, or any
 * {@link Queryable} (an adapter of the app's own migration tool, inside its transaction). Safe to run
 * twice and from several processes at once.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { migrate } from '@postback/postgres';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const { from, to } = await migrate(pool, { schema: 'postback' });
 * ```
 */
export async function migrate(db: Queryable, options: MigrateOptions = {}): Promise<MigrateResult> {
  const schema = validateSchemaName(options.schema ?? DEFAULT_SCHEMA);
  const from = await currentVersion(db, schema);
  await db.query(migrationScript(schema));
  const to = await currentVersion(db, schema);
  return { schema, from, to };
}

/**
 * The schema's current version: 0 when it was never migrated.
 *
 * @example
 * ```ts
 * if ((await schemaVersion(pool, 'postback')) < LATEST_SCHEMA_VERSION) await migrate(pool);
 * ```
 */
export async function schemaVersion(db: Queryable, schema: string = DEFAULT_SCHEMA): Promise<number> {
  return currentVersion(db, validateSchemaName(schema));
}

async function currentVersion(db: Queryable, schema: string): Promise<number> {
  const exists = await db.query('SELECT to_regclass($1) IS NOT NULL AS present', [
    `${quoteIdent(schema)}.migrations`,
  ]);
  if (exists.rows[0]?.present !== true) return 0;
  const result = await run(
    db,
    schema,
    `SELECT coalesce(max(version), 0)::int AS version FROM ${quoteIdent(schema)}.migrations`,
  );
  return Number(result.rows[0]?.version ?? 0);
}
