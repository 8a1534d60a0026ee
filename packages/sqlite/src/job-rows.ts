/**
 * The `jobs` table seen from TypeScript: the row shape, its conversion to and from the core `Job` model,
 * and the prepared statements the outbox runs. Transitions are computed by the pure functions of
 * `@postback/core` (the same ones the memory outbox uses) and written back whole by {@link JobStatements.write},
 * so every store produces exactly the same fields; only claim is expressed in SQL, because it must be one
 * atomic `UPDATE … RETURNING`.
 */

import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { ATTEMPT_HISTORY_LIMIT, type Job, type JobKind, type JobState } from '@postback/core';

/**
 * The columns a job is read with, in this order (`SELECT` and `RETURNING` name them, so the order does not
 * depend on the table's).
 */
export const ROW_COLUMNS =
  'id, kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline, last_error, ' +
  'lease_token, lease_expires_at, delivered_at, campaign_id, click_token, value_micros, clicked_at, ' +
  'maybe_applied_at';

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
  };
  if (row.kind === 'refund') return { kind: 'refund', ...common } as Job;
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
  'maybe_applied_at';

/**
 * The claim, in one statement: up to `limit` due jobs — pending ones whose `next_attempt_at` has come (the
 * partial index `jobs_due` holds only those with a deadline, so refunds waiting for their confirmation
 * are never even read), and inflight ones whose lease ran out — oldest `next_attempt_at` first, then oldest
 * job (the order of the memory outbox; the index gives it without sorting the backlog) — become inflight with a
 * fresh random lease token and one more attempt. The NOT EXISTS checks keep the refund-ordering rule at the
 * moment of the claim for both kinds of candidates (a refund given its campaign may exist before its
 * order's confirm is enqueued; from then on it waits for that confirm, even with an expired lease).
 * Retaking an inflight job (its lease ran out) marks it maybe applied at its last `updated_at`, as core's
 * `claimJob` does: SET expressions read the row as it was before this UPDATE.
 */
const CLAIM_SET = `
  UPDATE jobs
     SET state = 'inflight',
         attempts = attempts + 1,
         updated_at = :now,
         lease_token = lower(hex(randomblob(16))),
         lease_expires_at = :expires_at,
         maybe_applied_at = COALESCE(maybe_applied_at, CASE WHEN state = 'inflight' THEN updated_at END)`;

/** Up to `limit` claimable pending jobs, oldest due first (read on `jobs_due` in its order, no sorting). */
const DUE_IDS = `
         SELECT j.id, j.next_attempt_at AS due
           FROM jobs AS j INDEXED BY jobs_due
          WHERE j.state = 'pending' AND j.deadline IS NOT NULL AND j.next_attempt_at <= :now
            AND (j.kind = 'confirm' OR NOT EXISTS (
                  SELECT 1 FROM jobs AS c
                   WHERE c.order_id = j.order_id AND c.kind = 'confirm' AND c.state IN ('pending', 'inflight')))
          ORDER BY j.next_attempt_at, j.id
          LIMIT :limit`;

const CLAIM_SQL = `${CLAIM_SET}
   WHERE id IN (
     SELECT id FROM (
       SELECT id, due FROM (${DUE_IDS})
       UNION ALL
       SELECT id, due FROM (
         SELECT l.id, l.next_attempt_at AS due
           FROM jobs AS l INDEXED BY jobs_lease
          WHERE l.state = 'inflight' AND l.lease_expires_at <= :now
            AND (l.kind = 'confirm' OR NOT EXISTS (
                  SELECT 1 FROM jobs AS c
                   WHERE c.order_id = l.order_id AND c.kind = 'confirm' AND c.state IN ('pending', 'inflight')))
          ORDER BY l.next_attempt_at, l.id
          LIMIT :limit)
       ORDER BY due, id
       LIMIT :limit))
  RETURNING ${ROW_COLUMNS}`;

/**
 * The claim when no lease has run out (see {@link JobStatements.expiredLease}): the same jobs in the same
 * order as {@link CLAIM_SQL}, whose second branch would be empty, without merging the two branches (two
 * temporary sorts, a large part of a claim's fixed cost).
 */
const CLAIM_DUE_SQL = `${CLAIM_SET}
   WHERE id IN (SELECT id FROM (${DUE_IDS}))
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
         history = CASE
           WHEN ?14 IS NULL THEN history
           WHEN json_array_length(history) >= ${ATTEMPT_HISTORY_LIMIT}
             THEN json_insert(json_remove(history, '$[0]'), '$[#]', json(?14))
           ELSE json_insert(COALESCE(history, '[]'), '$[#]', json(?14))
         END,
         last_status = CASE WHEN ?14 IS NULL THEN last_status ELSE ?15 END
   WHERE id = ?12 AND lease_token IS ?13`;

/** Prepared statements of the outbox, prepared once per connection. */
export interface JobStatements {
  insert: StatementSync;
  byId: StatementSync;
  byOrderKind: StatementSync;
  byOrder: StatementSync;
  write: StatementSync;
  /** Claims due pending jobs and jobs whose lease ran out, oldest due first. */
  claim: StatementSync;
  /** Whether any lease has run out at `now` (a row, or undefined): one index seek. */
  expiredLease: StatementSync;
  /** {@link JobStatements.claim} when `expiredLease` found none: due pending jobs only. */
  claimDue: StatementSync;
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
      `INSERT INTO jobs (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (order_id, kind) DO NOTHING`,
    ),
    byId: db.prepare(`SELECT ${ROW_COLUMNS} FROM jobs WHERE id = ?`),
    byOrderKind: db.prepare(`SELECT ${ROW_COLUMNS} FROM jobs WHERE order_id = ? AND kind = ?`),
    byOrder: db.prepare(`SELECT ${ROW_COLUMNS} FROM jobs WHERE order_id = ? ORDER BY kind`),
    write: db.prepare(WRITE_SQL),
    claim: db.prepare(CLAIM_SQL),
    expiredLease: db.prepare(
      "SELECT 1 FROM jobs INDEXED BY jobs_lease WHERE state = 'inflight' AND lease_expires_at <= ? LIMIT 1",
    ),
    claimDue: db.prepare(CLAIM_DUE_SQL),
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
  ];
}
