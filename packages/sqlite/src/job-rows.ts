/**
 * The `jobs` table seen from TypeScript: the row shape, its conversion to and from the core `Job` model,
 * and the prepared statements the outbox runs. Transitions are computed by the pure functions of
 * `@postback/core` (the same ones the memory outbox uses) and written back whole by {@link JobStatements.write},
 * so every store produces exactly the same fields; only the claim's write is expressed in SQL, one
 * `UPDATE … RETURNING` of the ids the claim's reads chose (see `fair-claim.ts`), in the same transaction.
 */

import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { Job, JobKind, JobState } from '@postback/core';
import { ATTEMPT_HISTORY_LIMIT, accountFromKey, accountKey } from '@postback/core/store';

/**
 * The columns a job is read with, in this order (`SELECT` and `RETURNING` name them, so the order does not
 * depend on the table's).
 */
export const ROW_COLUMNS =
  'id, kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline, last_error, ' +
  'lease_token, lease_expires_at, delivered_at, campaign_id, click_token, value_micros, clicked_at, ' +
  'maybe_applied_at, account, campaign_from, held_at, held_campaign_id';

/** One row of `jobs` as node:sqlite returns it: an object of the {@link ROW_COLUMNS}, by name. */
export interface JobRow {
  id: number;
  kind: JobKind;
  order_id: string;
  state: JobState;
  attempts: number;
  created_at: number;
  updated_at: number;
  next_attempt_at: number;
  deadline: number | null;
  last_error: string | null;
  lease_token: string | null;
  lease_expires_at: number | null;
  delivered_at: number | null;
  campaign_id: string | null;
  click_token: string | null;
  value_micros: number | null;
  clicked_at: number | null;
  maybe_applied_at: number | null;
  /** The job's `accountKey` ('' for none). */
  account: string;
  /** A refund's `campaignFrom` (null for confirms). */
  campaign_from: 'answer' | 'caller' | null;
  held_at: number | null;
  held_campaign_id: string | null;
}

/**
 * A row as a `Job`. Ids are the table's integer keys as decimal strings.
 *
 * @example
 * ```ts
 * const job = jobFromRow(statements.byId.get(1) as JobRow);
 * ```
 */
export function jobFromRow(row: JobRow): Job {
  const lease =
    row.lease_token === null || row.lease_expires_at === null
      ? null
      : { token: row.lease_token, expiresAt: row.lease_expires_at };
  const common = {
    id: String(row.id),
    orderId: row.order_id,
    account: accountFromKey(row.account),
    state: row.state,
    attempts: row.attempts,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    nextAttemptAt: row.next_attempt_at,
    deadline: row.deadline,
    lastError: row.last_error,
    lease,
    deliveredAt: row.delivered_at,
    campaignId: row.campaign_id,
    maybeAppliedAt: row.maybe_applied_at,
    heldAt: row.held_at,
    heldCampaignId: row.held_campaign_id,
  };
  if (row.kind === 'refund') return { kind: 'refund', ...common, campaignFrom: row.campaign_from } as Job;
  return {
    kind: 'confirm',
    ...common,
    clickToken: row.click_token as string,
    valueMicros: row.value_micros as number,
    clickedAt: row.clicked_at as number,
  } as Job;
}

/**
 * Rows as jobs (see {@link jobFromRow}), in the same order.
 *
 * @example
 * ```ts
 * const jobs = jobsFromRows(await writer.write('claim', [{ now, limit: 50, leaseMs: 60_000 }]));
 * ```
 */
export function jobsFromRows(rows: readonly JobRow[]): Job[] {
  return rows.map((row) => jobFromRow(row));
}

/**
 * A job id as the table's integer key, or null when the string is not one of ours (so `get('nope')` is
 * simply not found).
 */
export function rowIdOf(id: string): number | null {
  if (typeof id !== 'string' || !/^[1-9][0-9]{0,15}$/.test(id)) return null;
  const n = Number(id);
  return Number.isSafeInteger(n) ? n : null;
}

const COLUMNS =
  'kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline, last_error, ' +
  'lease_token, lease_expires_at, delivered_at, campaign_id, click_token, value_micros, clicked_at, ' +
  'maybe_applied_at, account, campaign_from';

/** Where the order id and the account sit in {@link InsertValues}. */
export const INSERT_ORDER_ID = 1;
export const INSERT_ACCOUNT = 17;

/**
 * A claim candidate (`alias`) that is not a refund waiting for its order's confirm: core's `isClaimable`
 * rule, kept at the moment of the claim for every tier (a refund given its campaign may exist before its
 * order's confirm is enqueued; from then on it waits for that confirm, even with an expired lease). The
 * order is the candidate's account and order id: one seek of `jobs_order_account_kind`.
 */
const notWaitingRefund = (alias: string) => `(${alias}.kind = 'confirm' OR NOT EXISTS (
            SELECT 1 FROM jobs AS c
             WHERE c.order_id = ${alias}.order_id AND c.account = ${alias}.account AND c.kind = 'confirm'
               AND c.state IN ('pending', 'inflight')))`;

/** A candidate not of an excluded account (`:excluded`: a JSON array of account keys). */
const notExcluded = (alias: string) => `${alias}.account NOT IN (SELECT value FROM json_each(:excluded))`;

/**
 * Tier 0 of the claim (core's `accounts.ts`): inflight jobs whose lease ran out, by lease expiry, read on
 * `jobs_lease` in its order (a seek that finds nothing in the usual case).
 */
const RETAKEN_SQL = `
  SELECT l.id FROM jobs AS l INDEXED BY jobs_lease
   WHERE l.state = 'inflight' AND l.lease_expires_at <= :now
     AND ${notExcluded('l')} AND ${notWaitingRefund('l')}
   ORDER BY l.lease_expires_at, l.id
   LIMIT :limit`;

/**
 * Tier 1: due pending jobs whose deadline is at or before `:urgent_until` (now + urgentWithinMs), nearest
 * deadline first whatever their account, read on `jobs_open_deadline` in its order up to that bound.
 */
const URGENT_SQL = `
  SELECT u.id FROM jobs AS u INDEXED BY jobs_open_deadline
   WHERE u.state IN ('pending', 'inflight') AND u.deadline <= :urgent_until
     AND u.state = 'pending' AND u.next_attempt_at <= :now
     AND ${notExcluded('u')} AND ${notWaitingRefund('u')}
   ORDER BY u.deadline, u.id
   LIMIT :limit`;

/** An account's first due, not urgent pending job (core's tier 2), by `jobs_account_due` in due order. */
const firstDueOf = (account: string) => `(
      SELECT a.id FROM jobs AS a INDEXED BY jobs_account_due
       WHERE a.state = 'pending' AND a.deadline IS NOT NULL AND a.account = ${account}
         AND a.next_attempt_at <= :now AND a.deadline > :urgent_until AND ${notWaitingRefund('a')}
       ORDER BY a.next_attempt_at, a.id LIMIT 1)`;

/**
 * The quiet tier (core's `accounts.ts` item 3), before the turns: of the `:scan` (core's `QUIET_SCAN`)
 * newest pending jobs created after `:quiet_since` (now - `QUIET_WITHIN_MS`), read on `jobs_state_created`
 * from its newest end, the accounts; of each, its first due job (one seek of `jobs_account_due`: due, not
 * urgent, not a refund waiting for its confirm) if it too is young and never attempted, the account not
 * excluded and holding at most `:max_pending` (core's `QUIET_MAX_PENDING`) pending jobs (a count of at
 * most that many + 1 entries of the same index), oldest first, at most `:limit`: one job an account, and
 * an account's first job is found through its newest, so the jobs that waited longest are not the ones
 * the scan's bound leaves out. The scan counts rows read, not rows kept: young jobs of accounts with a
 * backlog cost a claim at most `:scan` rows and seeks.
 */
const QUIET_SQL = `
  WITH young AS (
    SELECT DISTINCT newest.account FROM (
      SELECT y.account FROM jobs AS y INDEXED BY jobs_state_created
       WHERE y.state = 'pending' AND y.created_at > :quiet_since
       ORDER BY y.created_at DESC, y.id DESC
       LIMIT :scan) AS newest
  )
  SELECT q.id FROM young JOIN jobs AS q ON q.id = ${firstDueOf('young.account')}
   WHERE q.attempts = 0 AND q.created_at > :quiet_since AND ${notExcluded('q')}
     AND (SELECT count(*) FROM (
            SELECT 1 FROM jobs AS p INDEXED BY jobs_account_due
             WHERE p.state = 'pending' AND p.deadline IS NOT NULL AND p.account = q.account
             LIMIT :max_pending + 1)) <= :max_pending
   ORDER BY q.created_at, q.id
   LIMIT :limit`;

/** The first account with claimable pending jobs whose key is `bound` (a loose index scan: one seek). */
const nextAccount = (bound: string) => `(
      SELECT w.account FROM jobs AS w INDEXED BY jobs_account_due
       WHERE w.state = 'pending' AND w.deadline IS NOT NULL AND w.account ${bound}
       ORDER BY w.account LIMIT 1)`;

/**
 * Tier 2, the accounts: up to `:walk` accounts with claimable pending jobs in key order, after `:after`
 * ({@link WALK_FROM_START_SQL}: from the first, '' — jobs without account — sorting first), each with the
 * id and due time of its first due job (null when none is due). One statement walks them all: a
 * recursive CTE taking one seek of `jobs_account_due` per distinct account however many jobs each holds,
 * and one seek for its first job. The CTE runs as a co-routine whose queue is first in, first out, so
 * the accounts come in key order without a sort, and only as many as the caller reads are walked.
 */
const walkSql = (anchor: string) => `
  WITH RECURSIVE walk(account, n) AS (
    SELECT ${nextAccount(anchor)}, 1
    UNION ALL
    SELECT ${nextAccount('> walk.account')}, n + 1 FROM walk WHERE walk.account IS NOT NULL AND n < :walk
  )
  SELECT walk.account, f.id, f.next_attempt_at AS due
    FROM walk LEFT JOIN jobs AS f ON f.id = ${firstDueOf('walk.account')}
   WHERE walk.account IS NOT NULL`;
const WALK_AFTER_SQL = walkSql('> :after');
const WALK_FROM_START_SQL = walkSql(">= ''");

/**
 * Tier 2, one account's jobs: its due, not urgent pending jobs in due order (`next_attempt_at`, then id)
 * after a position (-1, 0 from the start), read on `jobs_account_due` in its order.
 */
const ACCOUNT_DUE_SQL = `
  SELECT a.id, a.next_attempt_at AS due FROM jobs AS a INDEXED BY jobs_account_due
   WHERE a.state = 'pending' AND a.deadline IS NOT NULL AND a.account = :account
     AND a.next_attempt_at >= :after_due AND (a.next_attempt_at > :after_due OR a.id > :after_id)
     AND a.next_attempt_at <= :now AND a.deadline > :urgent_until
     AND ${notWaitingRefund('a')}
   ORDER BY a.next_attempt_at, a.id
   LIMIT :limit`;

/**
 * The claim's write: the chosen jobs (`:ids`, a JSON array of row ids, sought by primary key) become
 * inflight with a fresh random lease token and one more attempt, as core's `claimJob` makes them.
 * Retaking an inflight job (its lease ran out) marks it maybe applied at its last `updated_at`: SET
 * expressions read the row as it was before this UPDATE. The claim's reads and this write run in one
 * write transaction, so no other connection can claim between them.
 */
const CLAIM_SQL = `
  UPDATE jobs
     SET state = 'inflight',
         attempts = attempts + 1,
         updated_at = :now,
         lease_token = lower(hex(randomblob(16))),
         lease_expires_at = :expires_at,
         maybe_applied_at = COALESCE(maybe_applied_at, CASE WHEN state = 'inflight' THEN updated_at END)
   WHERE id IN (SELECT value FROM json_each(:ids))
  RETURNING ${ROW_COLUMNS}`;

/**
 * A transition written back whole. The lease token in the WHERE clause is the fencing check at the storage
 * level, in addition to the check the caller made on the row it read in the same transaction. Positional
 * parameters (see {@link writeValues}): named ones cost about 4 µs more per transition, one per delivered
 * job. When the transition records an attempt (?14, a JSON object already cut by core's `appendAttempt`),
 * the same UPDATE appends it to `history`, dropping the oldest beyond {@link ATTEMPT_HISTORY_LIMIT} (one
 * at a time: the array never holds more), and keeps its status in `last_status`: the history is never
 * read into JavaScript on the delivery path, and a transition without an attempt leaves both as they were.
 */
const WRITE_SQL = `
  UPDATE jobs
     SET state = ?1, attempts = ?2, updated_at = ?3, next_attempt_at = ?4, deadline = ?5, last_error = ?6,
         lease_token = ?7, lease_expires_at = ?8, delivered_at = ?9, campaign_id = ?10, maybe_applied_at = ?11,
         campaign_from = ?16,
         history = CASE
           WHEN ?14 IS NULL THEN history
           WHEN json_array_length(history) >= ${ATTEMPT_HISTORY_LIMIT}
             THEN json_insert(json_remove(history, '$[0]'), '$[#]', json(?14))
           ELSE json_insert(COALESCE(history, '[]'), '$[#]', json(?14))
         END,
         last_status = CASE WHEN ?14 IS NULL THEN last_status ELSE ?15 END,
         held_at = ?17, held_campaign_id = ?18
   WHERE id = ?12 AND lease_token IS ?13`;

/** Prepared statements of the outbox, prepared once per connection. */
export interface JobStatements {
  insert: StatementSync;
  byId: StatementSync;
  byOrderKind: StatementSync;
  byOrder: StatementSync;
  write: StatementSync;
  /** Tier 0 of the claim: ids of jobs whose lease ran out. */
  retaken: StatementSync;
  /** Tier 1 of the claim: ids of due jobs whose deadline is near. */
  urgent: StatementSync;
  /** Quiet accounts' first jobs, before the turns: ids, oldest first. */
  quiet: StatementSync;
  /** Tier 2 of the claim: accounts with claimable jobs and the first due job of each, after a key or from the first. */
  walkAfter: StatementSync;
  walkFromStart: StatementSync;
  /** Tier 2 of the claim: one account's due jobs after a position. */
  accountDue: StatementSync;
  /** Claims the jobs of `:ids`. */
  claim: StatementSync;
  countByState: StatementSync;
  oldestPending: StatementSync;
  nearestDeadline: StatementSync;
  deadPage: StatementSync;
  deleteDead: StatementSync;
  deleteDeadById: StatementSync;
}

/**
 * Prepares every statement of the outbox.
 *
 * @example
 * ```ts
 * const statements = prepareJobStatements(db);
 * ```
 */
export function prepareJobStatements(db: DatabaseSync): JobStatements {
  return {
    // Positional parameters and run() (changes + lastInsertRowid) instead of named ones and RETURNING:
    // enqueue is the hot path, and both cost measurable time per row.
    insert: db.prepare(
      `INSERT INTO jobs (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (order_id, account, kind) DO NOTHING`,
    ),
    byId: db.prepare(`SELECT ${ROW_COLUMNS} FROM jobs WHERE id = ?`),
    byOrderKind: db.prepare(
      `SELECT ${ROW_COLUMNS} FROM jobs WHERE order_id = ? AND account = ? AND kind = ?`,
    ),
    byOrder: db.prepare(`SELECT ${ROW_COLUMNS} FROM jobs WHERE order_id = ? AND account = ? ORDER BY kind`),
    write: db.prepare(WRITE_SQL),
    retaken: db.prepare(RETAKEN_SQL),
    urgent: db.prepare(URGENT_SQL),
    quiet: db.prepare(QUIET_SQL),
    walkAfter: db.prepare(WALK_AFTER_SQL),
    walkFromStart: db.prepare(WALK_FROM_START_SQL),
    accountDue: db.prepare(ACCOUNT_DUE_SQL),
    claim: db.prepare(CLAIM_SQL),
    countByState: db.prepare(
      'SELECT state, COUNT(*) AS n FROM jobs INDEXED BY jobs_state_created GROUP BY state',
    ),
    oldestPending: db.prepare("SELECT MIN(created_at) AS at FROM jobs WHERE state = 'pending'"),
    nearestDeadline: db.prepare(
      "SELECT id, order_id, kind, deadline FROM jobs INDEXED BY jobs_open_deadline WHERE state IN ('pending', 'inflight') " +
        'AND deadline IS NOT NULL ORDER BY deadline LIMIT 1',
    ),
    deadPage: db.prepare(
      `SELECT ${ROW_COLUMNS} FROM jobs INDEXED BY jobs_dead WHERE state = 'dead' AND id > ? ORDER BY id LIMIT ?`,
    ),
    deleteDead: db.prepare("DELETE FROM jobs WHERE state = 'dead'"),
    deleteDeadById: db.prepare("DELETE FROM jobs WHERE state = 'dead' AND id = ?"),
  };
}

/** Positional parameters inserting a new job, in the order of `COLUMNS`: kind, order_id, state, … */
export type InsertValues = Array<string | number | null>;

/** Positional parameters inserting a new job, in the order of `COLUMNS` (its `id` is assigned by the table). */
export function insertValues(job: Job): InsertValues {
  const confirm = job.kind === 'confirm' ? job : null;
  return [
    job.kind,
    job.orderId,
    job.state,
    job.attempts,
    job.createdAt,
    job.updatedAt,
    job.nextAttemptAt,
    job.deadline,
    job.lastError,
    job.lease?.token ?? null,
    job.lease?.expiresAt ?? null,
    job.deliveredAt,
    job.campaignId,
    confirm?.clickToken ?? null,
    confirm?.valueMicros ?? null,
    confirm?.clickedAt ?? null,
    job.maybeAppliedAt,
    accountKey(job.account),
    job.kind === 'refund' ? job.campaignFrom : null,
  ];
}

/** An attempt as the write appends it: core's `AttemptRecord` as JSON (already cut), and its HTTP status. */
export interface AttemptValues {
  json: string;
  status: number | null;
}

/**
 * Positional parameters writing a job back after a transition, in the order of {@link JobStatements.write}:
 * the mutable columns, then the id and the lease token the stored row must still hold (null for jobs that
 * were not inflight), then the attempt to append to its history (nulls for none).
 */
export function writeValues(
  job: Job,
  expectedToken: string | null,
  attempt: AttemptValues | null = null,
): Array<string | number | null> {
  return [
    job.state,
    job.attempts,
    job.updatedAt,
    job.nextAttemptAt,
    job.deadline,
    job.lastError,
    job.lease?.token ?? null,
    job.lease?.expiresAt ?? null,
    job.deliveredAt,
    job.campaignId,
    job.maybeAppliedAt,
    Number(job.id),
    expectedToken,
    attempt?.json ?? null,
    attempt?.status ?? null,
    job.kind === 'refund' ? job.campaignFrom : null,
    job.heldAt,
    job.heldCampaignId,
  ];
}
