/**
 * The operator's view of the SQLite outbox in SQL: each job's attempt history, job listings with filters
 * (core's `matchesJobFilter` and `byUrgency` as a WHERE and an ORDER BY), deadlines at risk (core's
 * `isAtRisk` and `countDeadline` as one aggregate over the open-deadline index), retention (core's
 * `prunableAt` as an expression, deleted in bounded batches) and worker heart-beats. The conformance suite
 * holds these to the same answers as the memory outbox.
 */

import type { DatabaseSync, StatementSync } from 'node:sqlite';
import {
  type AccountPause,
  type AttemptRecord,
  type EpochMs,
  JOB_STATES,
  type Job,
  type OutboxFeatures,
  type WorkerBeat,
} from '@postback/core';
import type { ResolvedJobFilter, ResolvedStatsOptions } from '@postback/core/store';
import { type JobRow, jobFromRow, ROW_COLUMNS } from './job-rows.ts';

/** What the SQLite outbox keeps for operators: everything. */
export const OUTBOX_FEATURES: OutboxFeatures = Object.freeze({
  attemptHistory: true,
  listableStates: JOB_STATES,
  heartbeats: true,
  prune: true,
  fairClaims: true,
  holds: true,
  ledger: true,
});

/** Most urgent first, as core's `byUrgency`: by deadline (none last), then creation, then id. */
const URGENCY_ORDER = 'ORDER BY deadline IS NULL, deadline, created_at, id';

/** Index entries one prune batch reads (and at most the rows it deletes): a short hold of the write lock. */
export const PRUNE_BATCH_SIZE = 500;

/** The final states `prune` deletes from, each walked on `jobs_state_created` by creation. */
export const PRUNABLE_STATES = ['delivered', 'cancelled', 'expired', 'unmatched'] as const;

/** Where a prune continues: after this (created_at, id) in its state's index range. */
export interface PruneCursor {
  state: (typeof PRUNABLE_STATES)[number];
  createdAt: number;
  id: number;
}

/** Prune options as the writer takes them: `cutoff` is `now - olderThanMs`. */
export interface PruneWindow {
  now: EpochMs;
  cutoff: number;
  returnWindowMs: number;
}

/** What one prune batch did, and where the next one starts (null: this state's range is done). */
export interface PruneBatch {
  deleted: number;
  next: PruneCursor | null;
}

/**
 * Core's `prunableAt(job) <= now` over a row: old enough since its last change (`updated_at <= cutoff`),
 * past its own deadline, and for a confirm that was (or may have been) charged, past its return window
 * from the earlier of `delivered_at` and `maybe_applied_at`. The state is checked by the caller's range.
 */
const PRUNABLE = `
  updated_at <= :cutoff
  AND (deadline IS NULL OR deadline <= :now)
  AND (kind <> 'confirm'
       OR (delivered_at IS NULL AND maybe_applied_at IS NULL)
       OR min(COALESCE(delivered_at, maybe_applied_at), COALESCE(maybe_applied_at, delivered_at)) + :return_window_ms <= :now)`;

/**
 * One window of a state's final jobs, by creation: `created_at <= cutoff` bounds the range (a job is
 * never changed before it is created, so `updated_at <= cutoff` implies it), and the cursor continues
 * after the last window, so protected jobs (inside their return window) are read once per prune, not
 * once per batch.
 */
const PRUNE_WINDOW_SQL = `
  SELECT id, created_at, (${PRUNABLE}) AS prunable
    FROM jobs INDEXED BY jobs_state_created
   WHERE state = :state AND created_at <= :cutoff AND (created_at, id) > (:after_created, :after_id)
   ORDER BY created_at, id
   LIMIT :limit`;

const WORKER_COLUMNS =
  'worker_id, at, state, paused_until, pause_reason, version, host, pid, paused_accounts';

interface WorkerRow {
  worker_id: string;
  at: number;
  state: string;
  paused_until: number | null;
  pause_reason: string | null;
  version: string;
  host: string | null;
  pid: number | null;
  /** `AccountPause[]` as JSON; null for none (and on beats written before schema version 4). */
  paused_accounts: string | null;
}

/** The operator-view statements of one connection (those built per filter shape are cached). */
export function createOperatorQueries(db: DatabaseSync) {
  const history = db.prepare('SELECT history FROM jobs WHERE id = ?');
  const pruneWindow = db.prepare(PRUNE_WINDOW_SQL);
  const deleteJob = db.prepare('DELETE FROM jobs WHERE id = ?');
  const upsertWorker = db.prepare(
    `INSERT INTO workers (${WORKER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (worker_id) DO UPDATE SET at = excluded.at, state = excluded.state,
       paused_until = excluded.paused_until, pause_reason = excluded.pause_reason,
       version = excluded.version, host = excluded.host, pid = excluded.pid,
       paused_accounts = excluded.paused_accounts`,
  );
  const recentWorkers = db.prepare(
    `SELECT ${WORKER_COLUMNS} FROM workers INDEXED BY workers_at WHERE at >= ? ORDER BY at DESC`,
  );
  const forgetWorkers = db.prepare('DELETE FROM workers WHERE at < ?');
  const listStatements = new Map<string, StatementSync>();
  const riskStatements = new Map<number, StatementSync>();

  /** The listing statement of a filter's shape (which criteria it has; values are bound). */
  function listStatement(filter: ResolvedJobFilter, paged: boolean): StatementSync {
    const where: string[] = [];
    if (filter.states !== null) where.push(`state IN (${filter.states.map(() => '?').join(', ')})`);
    if (filter.kind !== null) where.push('kind = ?');
    if (filter.orderId !== null) where.push('order_id = ?');
    if (filter.accountKey !== null) where.push('account = ?');
    if (filter.reason !== null) where.push('last_error IS NOT NULL');
    if (filter.status !== null) where.push('last_status = ?');
    if (filter.deadlineBefore !== null) where.push('deadline <= ?');
    if (filter.updatedBefore !== null) where.push('updated_at <= ?');
    const sql =
      `SELECT ${ROW_COLUMNS} FROM jobs` +
      (where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`) +
      ` ${URGENCY_ORDER}${paged ? ' LIMIT ? OFFSET ?' : ''}`;
    let statement = listStatements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      listStatements.set(sql, statement);
    }
    return statement;
  }

  function listValues(filter: ResolvedJobFilter): Array<string | number> {
    const values: Array<string | number> = [...(filter.states ?? [])];
    if (filter.kind !== null) values.push(filter.kind);
    if (filter.orderId !== null) values.push(filter.orderId);
    if (filter.accountKey !== null) values.push(filter.accountKey);
    if (filter.status !== null) values.push(filter.status);
    if (filter.deadlineBefore !== null) values.push(filter.deadlineBefore);
    if (filter.updatedBefore !== null) values.push(filter.updatedBefore);
    return values;
  }

  /** Open jobs at risk and per bucket, in one read of `jobs_open_deadline` up to the widest bound. */
  function riskStatement(buckets: number): StatementSync {
    let statement = riskStatements.get(buckets);
    if (statement === undefined) {
      const counts = ['at_risk', ...Array.from({ length: buckets }, (_, i) => `b${i}`)]
        .map((name) => `COUNT(*) FILTER (WHERE deadline <= ?) AS ${name}`)
        .join(', ');
      statement = db.prepare(
        `SELECT ${counts} FROM jobs INDEXED BY jobs_open_deadline ` +
          "WHERE state IN ('pending', 'inflight') AND deadline <= ?",
      );
      riskStatements.set(buckets, statement);
    }
    return statement;
  }

  return {
    /** Statements whose plans the query-plan test reads. */
    statements: {
      history,
      pruneWindow,
      deleteJob,
      recentWorkers,
      forgetWorkers,
      listStatement,
      riskStatement,
    },

    /** A job's attempts, oldest first (empty for an unknown id or a job never sent). */
    history(rowId: number): AttemptRecord[] {
      const row = history.get(rowId) as { history: string | null } | undefined;
      return row?.history == null ? [] : (JSON.parse(row.history) as AttemptRecord[]);
    },

    /**
     * One page of jobs matching `filter`, most urgent first. Everything but `reason` is SQL with LIMIT and
     * OFFSET; a `reason` (a JavaScript RegExp) is tested on the rows as SQL yields them in order, the
     * offset and limit counted among those it matches, and the read stops at the page's last job. With
     * states or an order id the rows come from those indexes; otherwise the table is read once. Either
     * way the sort is SQLite's (for a page it keeps only `offset + limit` rows), and JavaScript holds one
     * page: an operator's listing costs time with a large file, never a worker's memory.
     */
    listJobs(filter: ResolvedJobFilter): Job[] {
      const values = listValues(filter);
      const reason = filter.reason;
      if (reason === null) {
        const rows = listStatement(filter, true).all(...values, filter.limit, filter.offset);
        return rows.map((row) => jobFromRow(row as unknown as JobRow));
      }
      const page: Job[] = [];
      let skip = filter.offset;
      for (const row of listStatement(filter, false).iterate(...values)) {
        const jobRow = row as unknown as JobRow;
        if (!reason.test(jobRow.last_error as string)) continue;
        if (skip > 0) {
          skip -= 1;
          continue;
        }
        page.push(jobFromRow(jobRow));
        if (page.length === filter.limit) break;
      }
      return page;
    },

    /** Open jobs at risk within `atRiskWithinMs` of `now`, and the cumulative deadline buckets. */
    deadlineRisk(now: EpochMs, options: ResolvedStatsOptions): { atRisk: number; buckets: number[] } {
      const bounds = [options.atRiskWithinMs, ...options.deadlineBucketsMs].map((ms) => now + ms);
      const row = riskStatement(options.deadlineBucketsMs.length).get(
        ...bounds,
        Math.max(...bounds),
      ) as Record<string, number>;
      return {
        atRisk: row.at_risk ?? 0,
        buckets: options.deadlineBucketsMs.map((_, i) => row[`b${i}`] ?? 0),
      };
    },

    /**
     * Deletes the prunable jobs among the next {@link PRUNE_BATCH_SIZE} of `cursor`'s state (from the
     * start of the first state when null). Runs inside one write transaction; the caller runs batches in
     * separate ones, so a large prune never holds the write lock for long.
     */
    pruneBatch(window: PruneWindow, cursor: PruneCursor | null): PruneBatch {
      const at = cursor ?? { state: PRUNABLE_STATES[0], createdAt: Number.MIN_SAFE_INTEGER, id: 0 };
      const rows = pruneWindow.all({
        state: at.state,
        cutoff: window.cutoff,
        now: window.now,
        return_window_ms: window.returnWindowMs,
        after_created: at.createdAt,
        after_id: at.id,
        limit: PRUNE_BATCH_SIZE,
      }) as Array<{ id: number; created_at: number; prunable: number }>;
      let deleted = 0;
      for (const row of rows) if (row.prunable === 1) deleted += Number(deleteJob.run(row.id).changes);
      // Heart-beats of workers gone for longer than the retention go with the first batch (not counted).
      if (cursor === null) forgetWorkers.run(window.cutoff);
      const last = rows.at(-1);
      if (last !== undefined && rows.length === PRUNE_BATCH_SIZE) {
        return { deleted, next: { state: at.state, createdAt: last.created_at, id: last.id } };
      }
      const following = PRUNABLE_STATES[PRUNABLE_STATES.indexOf(at.state) + 1];
      return {
        deleted,
        next:
          following === undefined ? null : { state: following, createdAt: Number.MIN_SAFE_INTEGER, id: 0 },
      };
    },

    /** Records a worker's latest heart-beat (one row per worker, replaced). */
    beat(beat: WorkerBeat): void {
      upsertWorker.run(
        beat.workerId,
        beat.at,
        beat.state,
        beat.pausedUntil,
        beat.pauseReason,
        beat.version,
        beat.host,
        beat.pid,
        beat.pausedAccounts.length === 0 ? null : JSON.stringify(beat.pausedAccounts),
      );
    },

    /** The latest beat of every worker seen at or after `since`, newest first. */
    workers(since: EpochMs): WorkerBeat[] {
      return (recentWorkers.all(since) as unknown as WorkerRow[]).map((row) => ({
        workerId: row.worker_id,
        at: row.at,
        state: row.state,
        pausedUntil: row.paused_until,
        pauseReason: row.pause_reason,
        version: row.version,
        host: row.host,
        pid: row.pid,
        pausedAccounts:
          row.paused_accounts === null ? [] : (JSON.parse(row.paused_accounts) as AccountPause[]),
      }));
    },
  };
}

/** The operator-view queries of one connection; see {@link createOperatorQueries}. */
export type OperatorQueries = ReturnType<typeof createOperatorQueries>;
