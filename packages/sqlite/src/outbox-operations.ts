/**
 * What the SQLite outbox does to its file, as synchronous operations on one connection: the bodies of the
 * outbox's methods once their input has been checked. The outbox runs the writes inside its group commit,
 * on the calling thread or on its own thread (`thread` option); the arguments and results are plain data,
 * so the same operations serve both (they cross a `postMessage` unchanged).
 */

import type { DatabaseSync } from 'node:sqlite';
import {
  type ConfirmJob,
  type EnqueueResult,
  type EpochMs,
  JOB_STATES,
  type Job,
  JobValidationError,
  type OutboxStats,
  type RefundInput,
  type RefundJob,
  type RefundOutcome,
  type WindowPolicy,
  type WithdrawOutcome,
  type WorkerBeat,
} from '@postback/core';
import {
  accountKey,
  type CheckedClaim,
  completeJob,
  extendJobLease,
  type FailResult,
  failJob,
  finalLedgerRow,
  holdsLease,
  type LedgerEntry,
  type LedgerInput,
  planRefund,
  planWithdraw,
  type ReleaseHeldOptions,
  type ResolvedJobFilter,
  type ResolvedLedgerQuery,
  type ResolvedStatsOptions,
  type RetryResult,
  refundAfterConfirm,
  releaseJob,
  replayJob,
  retryJob,
  type StateCounts,
} from '@postback/core/store';
import { createFairClaim } from './fair-claim.ts';
import { CallError } from './group-commit.ts';
import { createHeldQueries } from './held-queries.ts';
import {
  type AttemptValues,
  INSERT_ACCOUNT,
  INSERT_ORDER_ID,
  type InsertValues,
  insertValues,
  type JobRow,
  jobFromRow,
  prepareJobStatements,
  rowIdOf,
  writeValues,
} from './job-rows.ts';
import { createLedgerQueries } from './ledger-queries.ts';
import {
  createOperatorQueries,
  type PruneBatch,
  type PruneCursor,
  type PruneWindow,
} from './operator-queries.ts';
import { createShadowOperations } from './shadow-operations.ts';
import { createSwitchOperations } from './switch-operations.ts';

/** What `confirm` answers: the id of the job it inserted, or the job already stored for the order. */
export type InsertedConfirm = { created: true; id: string } | { created: false; job: ConfirmJob };

/**
 * The outbox's answer to `confirm` from the job the caller built and what the operation answered.
 *
 * @example
 * ```ts
 * storedConfirm(job, { created: true, id: '7' }); // { created: true, job: { ...job, id: '7' } }
 * ```
 */
export function storedConfirm(built: ConfirmJob, inserted: InsertedConfirm): EnqueueResult<ConfirmJob> {
  return inserted.created ? { created: true, job: { ...built, id: inserted.id } } : inserted;
}

/** What a transition needs of a claimed job: its id and the lease it was claimed with. */
export type HeldJob = Pick<Job, 'id' | 'lease'>;
/** Arguments of `complete`, as the outbox interface takes them (the attempt as its checked values). */
type CompleteResult = { now: EpochMs; campaignId?: string | null };
/** Arguments of `retry` and `fail` as they reach the writer: the attempt travels as {@link AttemptValues}. */
type Transitioned<R> = Omit<R, 'attempt'>;

function jobsOf(rows: readonly unknown[]): Job[] {
  return rows.map((row) => jobFromRow(row as JobRow));
}

/**
 * The operations of an outbox on the connection `db` (prepared once). Writes must run inside a
 * transaction (the group commit's); reads may run anywhere.
 *
 * @example
 * ```ts
 * const ops = createOutboxOperations(db, resolvePolicy({}));
 * const changed = inTransaction(db, () => ops.complete(job, { now: Date.now() }));
 * ```
 */
export function createOutboxOperations(db: DatabaseSync, policy: Readonly<WindowPolicy>) {
  const sql = prepareJobStatements(db);
  const operator = createOperatorQueries(db);
  const holds = createHeldQueries(db);
  const fairClaim = createFairClaim(sql);
  const ledger = createLedgerQueries(db);

  /** Stores `next` and, when it enters a final money state, its ledger row, in the caller's transaction. */
  function storeWithLedger(
    stored: Job,
    next: Job,
    token: string | null,
    attempt: AttemptValues | null = null,
  ) {
    if (!store(next, token, attempt)) return false;
    const row = finalLedgerRow(stored, next, next.updatedAt);
    if (row !== null) ledger.insert(row);
    return true;
  }

  function load(id: number): Job | null {
    const row = sql.byId.get(id);
    return row === undefined ? null : jobFromRow(row as unknown as JobRow);
  }

  /** The job of `kind` of the order (`orderId` of the account stored as `key`), or null. */
  function loadByOrder<K extends Job['kind']>(
    key: string,
    orderId: string,
    kind: K,
  ): Extract<Job, { kind: K }> | null {
    const row = sql.byOrderKind.get(orderId, key, kind);
    return row === undefined ? null : (jobFromRow(row as unknown as JobRow) as Extract<Job, { kind: K }>);
  }

  function store(job: Job, expectedToken: string | null, attempt: AttemptValues | null = null): boolean {
    return sql.write.run(...writeValues(job, expectedToken, attempt)).changes === 1;
  }

  /** Inserts a row; returns its new id, or null when the order already has a job of that kind. */
  function insertRow(values: InsertValues): string | null {
    const { changes, lastInsertRowid } = sql.insert.run(...values);
    return changes === 0 ? null : String(lastInsertRowid);
  }

  function insert<J extends Job>(job: J): J | null {
    const id = insertRow(insertValues(job));
    return id === null ? null : { ...job, id };
  }

  /**
   * Applies `transition` to the stored job if `claimed` still holds its lease, appending `attempt` to its
   * history in the same UPDATE; returns the new job or null.
   */
  function transition(
    claimed: HeldJob,
    transitionFn: (stored: Job) => Job,
    attempt: AttemptValues | null = null,
  ): Job | null {
    const id = rowIdOf(claimed?.id);
    if (id === null) return null;
    const stored = load(id);
    if (stored === null || !holdsLease(stored, claimed)) return null;
    const next = transitionFn(stored);
    return storeWithLedger(stored, next, stored.lease?.token ?? null, attempt) ? next : null;
  }

  /**
   * After a confirm ends, its waiting refund follows by core's `refundAfterConfirm`: delivered or maybe
   * applied, it takes the campaign and deadline; ended never charged, it is cancelled.
   */
  function settleRefundOf(confirm: ConfirmJob): void {
    const refund = loadByOrder(accountKey(confirm.account), confirm.orderId, 'refund');
    if (refund === null) return;
    const next = refundAfterConfirm(refund, confirm, policy);
    if (next !== refund) store(next, refund.lease?.token ?? null);
  }

  function replayOne(stored: Job, now: EpochMs): boolean {
    const orderHasRefund =
      stored.kind === 'confirm' && loadByOrder(accountKey(stored.account), stored.orderId, 'refund') !== null;
    const next = replayJob(stored, { now, orderHasRefund });
    if (next === stored) return false;
    storeWithLedger(stored, next, null);
    if (next.kind === 'confirm' && next.state === 'expired') settleRefundOf(next);
    return next.state === 'pending';
  }

  const shadow = createShadowOperations(db, {
    transition: (claimed, apply) => {
      const next = transition(claimed, apply);
      if (next?.kind === 'confirm') settleRefundOf(next);
      return next;
    },
    update: (job) => {
      store(job, null);
      if (job.kind === 'confirm') settleRefundOf(job);
    },
    hasRefund: (job) => loadByOrder(accountKey(job.account), job.orderId, 'refund') !== null,
  });

  const switches = createSwitchOperations(db, {
    update: (before, after) => {
      storeWithLedger(before, after, null);
      if (after.kind === 'confirm') settleRefundOf(after);
    },
  });

  return {
    ...shadow,
    ...switches,
    /**
     * Inserts a built confirm job (given as its `insertValues`, which cross threads cheaper than the job)
     * and answers with its new id, or answers with the stored job of the same order. Only the id: the
     * caller holds the rest of the job it built, so a new job does not cross back whole (`storedConfirm`).
     */
    confirm(values: InsertValues): InsertedConfirm {
      const id = insertRow(values);
      if (id !== null) return { created: true, id };
      const key = values[INSERT_ACCOUNT] as string;
      return {
        created: false,
        job: loadByOrder(key, values[INSERT_ORDER_ID] as string, 'confirm') as ConfirmJob,
      };
    },

    /** Plans and applies a checked refund at `now`; a refund whose campaign cannot be known is a `CallError`. */
    refund(checked: RefundInput, now: EpochMs): RefundOutcome {
      const key = accountKey(checked.account ?? null);
      const confirm = loadByOrder(key, checked.orderId, 'confirm');
      const refund = loadByOrder(key, checked.orderId, 'refund');
      let outcome: RefundOutcome;
      try {
        outcome = planRefund(checked, { now, id: '0', policy, confirm, refund });
      } catch (error) {
        // Only this call's input is wrong (no campaign can be known): the rest of the batch commits.
        if (error instanceof JobValidationError) throw new CallError(error);
        throw error;
      }
      if (outcome.outcome === 'enqueued') {
        return { outcome: 'enqueued', job: insert(outcome.job) as RefundJob };
      }
      if (outcome.outcome === 'cancelled') store(outcome.job, confirm?.lease?.token ?? null);
      // A refund with no campaign given one (a dead one is pending again): neither is inflight.
      if (outcome.outcome === 'updated') store(outcome.job, refund?.lease?.token ?? null);
      return outcome;
    },

    /** Core's `planWithdraw` on the order's confirm at `now`; a cancelled one takes its waiting refund along. */
    withdraw(orderId: string, account: string | null, now: EpochMs): WithdrawOutcome {
      const confirm = loadByOrder(accountKey(account), orderId, 'confirm');
      const outcome = planWithdraw(confirm, now);
      if (outcome.outcome === 'cancelled') {
        store(outcome.job, confirm?.lease?.token ?? null);
        settleRefundOf(outcome.job);
      }
      return outcome;
    },

    /**
     * Claims up to `limit` due jobs in the order of core's `accounts.ts` (see `fair-claim.ts`) and answers
     * with their rows (`jobFromRow` makes them jobs): plain data that crosses from the writer thread as it
     * is. The rows carry the fields of core's `claimJob` (inflight, attempts + 1, updatedAt, fresh lease).
     */
    claim(args: CheckedClaim): JobRow[] {
      return fairClaim(args);
    },

    complete(job: HeldJob, result: CompleteResult, attempt: AttemptValues | null = null): boolean {
      const next = transition(job, (stored) => completeJob(stored, result), attempt);
      if (next?.kind === 'confirm') settleRefundOf(next);
      return next !== null;
    },

    retry(job: HeldJob, result: Transitioned<RetryResult>, attempt: AttemptValues | null = null): boolean {
      // A confirm back to pending leaves its waiting refund waiting: nothing to settle.
      return transition(job, (stored) => retryJob(stored, result), attempt) !== null;
    },

    fail(job: HeldJob, result: Transitioned<FailResult>, attempt: AttemptValues | null = null): boolean {
      const next = transition(job, (stored) => failJob(stored, result), attempt);
      if (next?.kind === 'confirm') settleRefundOf(next);
      return next !== null;
    },

    release(jobs: readonly HeldJob[], now: EpochMs): void {
      for (const job of jobs) transition(job, (stored) => releaseJob(stored, now));
    },

    extendLease(job: HeldJob, options: { now: EpochMs; leaseMs: number }): boolean {
      return transition(job, (stored) => extendJobLease(stored, options)) !== null;
    },

    /** Makes the held jobs of a checked selection due now; returns how many. */
    releaseHeld(options: ReleaseHeldOptions): number {
      return holds.releaseHeld(options);
    },

    /** Replays the dead jobs of `ids` (checked), or every dead job when `ids` is null. */
    replay(ids: readonly string[] | null, now: EpochMs): number {
      let replayed = 0;
      if (ids !== null) {
        for (const id of new Set(ids)) {
          const rowId = rowIdOf(id);
          const stored = rowId === null ? null : load(rowId);
          if (stored?.state === 'dead' && replayOne(stored, now)) replayed++;
        }
        return replayed;
      }
      // Page through the dead jobs by id: every job handled leaves `dead`, memory stays one page.
      let after = 0;
      for (;;) {
        const page = jobsOf(sql.deadPage.all(after, 500));
        if (page.length === 0) return replayed;
        for (const stored of page) if (replayOne(stored, now)) replayed++;
        after = Number((page[page.length - 1] as Job).id);
      }
    },

    /** Deletes the dead jobs of `ids` (checked), or every dead job when `ids` is null. */
    purgeDead(ids: readonly string[] | null): number {
      if (ids === null) return Number(sql.deleteDead.run().changes);
      let deleted = 0;
      for (const id of new Set(ids)) {
        const rowId = rowIdOf(id);
        if (rowId !== null) deleted += Number(sql.deleteDeadById.run(rowId).changes);
      }
      return deleted;
    },

    get(id: string): Job | null {
      const rowId = rowIdOf(id);
      return rowId === null ? null : load(rowId);
    },

    getByOrder(orderId: string, account: string | null = null): Job[] {
      return jobsOf(sql.byOrder.all(orderId, accountKey(account)));
    },

    /**
     * Deletes the prunable final jobs of one batch (see `pruneBatch` of the operator queries); the
     * outbox runs batches in separate transactions until `next` is null.
     */
    prune(window: PruneWindow, cursor: PruneCursor | null): PruneBatch {
      return operator.pruneBatch(window, cursor);
    },

    /** Appends a checked ledger row. */
    appendLedger(row: LedgerInput): LedgerEntry {
      return ledger.insert(row);
    },

    /** Ledger rows by a resolved query, in insertion order. */
    readLedger(query: ResolvedLedgerQuery): LedgerEntry[] {
      return ledger.read(query);
    },

    /** Deletes the ledger rows older than `before` (the ledger's own retention, never `prune`'s). */
    pruneLedger(before: EpochMs): number {
      return ledger.deleteBefore(before);
    },

    /** Records a worker's heart-beat (checked). */
    beat(beat: WorkerBeat): void {
      operator.beat(beat);
    },

    /** The last sends of a job, oldest first; empty for an id not of this outbox. */
    history(id: string) {
      const rowId = rowIdOf(id);
      return rowId === null ? [] : operator.history(rowId);
    },

    /** A page of jobs by a checked filter, most urgent first. */
    listJobs(filter: ResolvedJobFilter): Job[] {
      return operator.listJobs(filter);
    },

    /** The workers seen at or after `since`, newest first. */
    workers(since: EpochMs): WorkerBeat[] {
      return operator.workers(since);
    },

    stats(now: EpochMs, options: ResolvedStatsOptions): OutboxStats {
      const counts = Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as StateCounts;
      for (const row of sql.countByState.all() as unknown as Array<{ state: keyof StateCounts; n: number }>) {
        counts[row.state] = row.n;
      }
      const oldest = sql.oldestPending.get() as { at: number | null };
      const nearest = sql.nearestDeadline.get() as
        | { id: number; order_id: string; kind: Job['kind']; deadline: number }
        | undefined;
      const risk = operator.deadlineRisk(now, options);
      return {
        counts,
        oldestPendingAt: oldest.at,
        nearestDeadline:
          nearest === undefined
            ? null
            : {
                id: String(nearest.id),
                orderId: nearest.order_id,
                kind: nearest.kind,
                deadline: nearest.deadline,
              },
        atRisk: { count: risk.atRisk, withinMs: options.atRiskWithinMs },
        deadlineBuckets: options.deadlineBucketsMs.map((withinMs, i) => ({
          withinMs,
          count: risk.buckets[i] ?? 0,
        })),
        held: holds.heldProblems(),
      };
    },

    /** One page of dead jobs with ids above `after`. */
    listDead(after: number, limit: number): Job[] {
      return jobsOf(sql.deadPage.all(after, limit));
    },
  };
}

/** The operations of one connection; see {@link createOutboxOperations}. */
export type OutboxOperations = ReturnType<typeof createOutboxOperations>;

/** Names of the operations that write (they run inside a group-committed transaction). */
export type WriteOperation =
  | 'confirm'
  | 'refund'
  | 'withdraw'
  | 'claim'
  | 'complete'
  | 'retry'
  | 'fail'
  | 'release'
  | 'extendLease'
  | 'releaseHeld'
  | 'replay'
  | 'purgeDead'
  | 'prune'
  | 'appendLedger'
  | 'pruneLedger'
  | 'beat'
  | 'shadowStart'
  | 'shadowRecord'
  | 'shadowEnd'
  | 'noteSpend'
  | 'switchNote'
  | 'switchDecide';
