/**
 * `createSqliteOutbox`: the durable `Outbox` on one SQLite file. Writes (enqueues, claims, transitions) are
 * group-committed — everything issued in one turn of the event loop shares one `BEGIN IMMEDIATE`
 * transaction and one fsync — and each call resolves only after its transaction is durable (fsynced by
 * SQLite at COMMIT, or with `synchronous: 'full-async'` by an fdatasync of the WAL off the event loop).
 * Reads run on indexes with LIMITs, so a worker's memory does not grow with the backlog.
 */

import type { DatabaseSync } from 'node:sqlite';
import {
  type ClaimOptions,
  type ConfirmInput,
  type ConfirmJob,
  cancelWaitingRefund,
  completeJob,
  type EnqueueResult,
  type EpochMs,
  extendJobLease,
  failJob,
  followDeliveredConfirm,
  holdsLease,
  JOB_STATES,
  type Job,
  JobValidationError,
  type ListDeadOptions,
  newConfirmJob,
  type Outbox,
  type OutboxStats,
  planRefund,
  type RefundInput,
  type RefundJob,
  type RefundOutcome,
  releaseJob,
  replayJob,
  retryJob,
  type StateCounts,
  validateRefundInput,
  type WindowPolicy,
} from '@postback/core';
import { type Durability, openDatabase, openWalSync, readDurability } from './database.ts';
import { CallError, createGroupCommit } from './group-commit.ts';
import {
  asJobRow,
  insertValues,
  jobFromRow,
  prepareJobStatements,
  rowIdOf,
  writeValues,
} from './job-rows.ts';
import {
  DEFAULT_LIST_DEAD_LIMIT,
  MAX_LIST_DEAD_LIMIT,
  parseOptions,
  policyOption,
  type SqliteOutboxOptions,
  sqliteOutboxOptionsSchema,
} from './options.ts';

/**
 * A SQLite outbox: the `Outbox` interface plus what operators of a file need.
 *
 * @example
 * ```ts
 * const outbox: SqliteOutbox = createSqliteOutbox({ filename: 'postback.db' });
 * console.log(outbox.durability); // { journalMode: 'wal', synchronous: 'full', durableOnResolve: true }
 * ```
 */
export interface SqliteOutbox extends Outbox {
  /** The database file (as given). */
  readonly filename: string;
  /** The windows this outbox stamps deadlines with. */
  readonly policy: Readonly<WindowPolicy>;
  /** Transactions committed by this outbox so far (each one fsync with `synchronous: 'full'`). */
  readonly commits: number;
  /** Journal mode and `synchronous` level as SQLite reports them, and whether a resolved write is on disk. */
  readonly durability: Durability;
}

/**
 * The outbox was closed; no more calls are accepted (calls queued before `close()` were committed).
 *
 * @example
 * ```ts
 * await outbox.close();
 * await outbox.confirm(input).catch((err) => err instanceof OutboxClosedError); // true
 * ```
 */
export class OutboxClosedError extends Error {
  override name = 'OutboxClosedError';
  constructor(filename: string) {
    super(`the SQLite outbox on ${filename} is closed`);
  }
}

function jobsOf(rows: readonly unknown[]): Job[] {
  return rows.map((row) => jobFromRow(asJobRow(row)));
}

function checkEpoch(value: unknown, field: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(
      `${field} must be a non-negative integer of epoch milliseconds, got ${String(value)}`,
    );
  }
}

function checkPositiveInt(value: unknown, field: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`${field} must be a positive integer, got ${String(value)}`);
  }
}

/** A transition must be given the job as `claim` returned it; anything else is refused before any write. */
function checkClaimed(job: unknown, field = 'job'): void {
  const candidate = job as { id?: unknown; lease?: unknown } | null;
  const lease = candidate?.lease as { token?: unknown } | null | undefined;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.id !== 'string' ||
    lease === undefined
  ) {
    throw new TypeError(`${field} must be a job as returned by claim()`);
  }
  if (lease !== null && typeof lease.token !== 'string')
    throw new TypeError(`${field}.lease.token must be a string`);
}

function checkIds(ids: unknown): void {
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
    throw new TypeError('ids must be an array of job id strings');
  }
}

/**
 * Opens (creating and migrating if needed) a durable outbox on a SQLite file.
 *
 * @example
 * ```ts
 * import { createSqliteOutbox } from '@postback/sqlite';
 *
 * const outbox = createSqliteOutbox({ filename: 'postback.db' });
 * await outbox.confirm({ orderId: 'ord_1042', valueMicros: 12_340_000, click });
 * ```
 */
export function createSqliteOutbox(options: SqliteOutboxOptions): SqliteOutbox {
  const parsed = parseOptions(sqliteOutboxOptionsSchema, options);
  const policy = Object.freeze(policyOption(parsed.policy));
  const clock = parsed.now ?? Date.now;
  const filename = parsed.filename;
  const db: DatabaseSync = openDatabase(filename, parsed);
  const wal = parsed.synchronous === 'full-async' ? openWalSync(filename) : null;
  const sql = prepareJobStatements(db);
  const durability = Object.freeze(readDurability(db, wal !== null));
  const writes = createGroupCommit(db, {
    maxBatchSize: parsed.maxBatchSize,
    ...(wal === null ? {} : { syncCommitted: wal.sync }),
  });
  let closed = false;

  /** Runs a write in the next group commit. */
  function write<T>(apply: () => T): Promise<T> {
    if (closed) return Promise.reject(new OutboxClosedError(filename));
    return writes.run(apply);
  }

  /**
   * Checks (or prepares) a call's input synchronously, then runs `then` with the result: bad input
   * rejects this call alone and never joins a batch.
   */
  function guard<P, T>(prepare: () => P, then: (prepared: P) => Promise<T>): Promise<T> {
    if (closed) return Promise.reject(new OutboxClosedError(filename));
    let prepared: P;
    try {
      prepared = prepare();
    } catch (error) {
      return Promise.reject(error);
    }
    return then(prepared);
  }

  function load(id: number): Job | null {
    const row = sql.byId.get(id);
    return row === undefined ? null : jobFromRow(asJobRow(row));
  }

  function loadByOrder<K extends Job['kind']>(orderId: string, kind: K): Extract<Job, { kind: K }> | null {
    const row = sql.byOrderKind.get(orderId, kind);
    return row === undefined ? null : (jobFromRow(asJobRow(row)) as Extract<Job, { kind: K }>);
  }

  function store(job: Job, expectedToken: string | null): boolean {
    return sql.write.run(...writeValues(job, expectedToken)).changes === 1;
  }

  function insert<J extends Job>(job: J): J | null {
    const { changes, lastInsertRowid } = sql.insert.run(...insertValues(job));
    return changes === 0 ? null : { ...job, id: String(lastInsertRowid) };
  }

  /** Applies `transition` to the stored job if `claimed` still holds its lease; returns the new job or null. */
  function transition(claimed: Job, transitionFn: (stored: Job) => Job): Job | null {
    const id = rowIdOf(claimed?.id);
    if (id === null) return null;
    const stored = load(id);
    if (stored === null || !holdsLease(stored, claimed)) return null;
    const next = transitionFn(stored);
    return store(next, stored.lease?.token ?? null) ? next : null;
  }

  /** After a confirm ends, its waiting refund follows: takes campaign and deadline, or is cancelled. */
  function settleRefundOf(confirm: ConfirmJob): void {
    const refund = loadByOrder(confirm.orderId, 'refund');
    if (refund === null) return;
    let next: RefundJob = refund;
    if (confirm.state === 'delivered') next = followDeliveredConfirm(refund, confirm, policy);
    else if (confirm.state === 'dead' || confirm.state === 'expired')
      next = cancelWaitingRefund(refund, confirm.state, confirm.updatedAt);
    if (next !== refund) store(next, refund.lease?.token ?? null);
  }

  function replayOne(stored: Job, now: EpochMs): boolean {
    const orderHasRefund = stored.kind === 'confirm' && loadByOrder(stored.orderId, 'refund') !== null;
    const next = replayJob(stored, { now, orderHasRefund });
    if (next === stored) return false;
    store(next, null);
    if (next.kind === 'confirm' && next.state === 'expired') settleRefundOf(next);
    return next.state === 'pending';
  }

  const outbox: SqliteOutbox = {
    filename,
    policy,
    durability,
    get commits() {
      return writes.commits;
    },

    confirm(input: ConfirmInput): Promise<EnqueueResult<ConfirmJob>> {
      return guard(
        // Validated and built at call time (createdAt is the time of the call, not of the commit).
        () => newConfirmJob(input, { now: clock(), id: '0', policy }),
        (job) =>
          write(() => {
            const created = insert(job);
            if (created !== null) return { created: true, job: created };
            return { created: false, job: loadByOrder(job.orderId, 'confirm') as ConfirmJob };
          }),
      );
    },

    refund(input: RefundInput): Promise<RefundOutcome> {
      return guard(
        () => validateRefundInput(input),
        (checked) =>
          write((): RefundOutcome => {
            const now = clock();
            const confirm = loadByOrder(checked.orderId, 'confirm');
            const refund = loadByOrder(checked.orderId, 'refund');
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
            return outcome;
          }),
      );
    },

    claim(options: ClaimOptions): Promise<Job[]> {
      return guard(
        () => {
          checkEpoch(options?.now, 'now');
          checkPositiveInt(options.limit, 'limit');
          checkPositiveInt(options.leaseMs, 'leaseMs');
        },
        () =>
          write(() => {
            const { now, limit, leaseMs } = options;
            // One UPDATE … RETURNING producing the fields of core's `claimJob` (inflight, attempts + 1,
            // updatedAt, fresh lease): no other connection can claim between the read and the write.
            // Most claims find no lease run out: they skip that half of the statement and its merge. The
            // check and the claim run in one write transaction at the same `now`, so they see the same leases.
            const claim = sql.expiredLease.get(now) === undefined ? sql.claimDue : sql.claim;
            const jobs = jobsOf(claim.all({ now, limit, expires_at: now + leaseMs }));
            // RETURNING order is unspecified: hand them out oldest-due first.
            jobs.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || Number(a.id) - Number(b.id));
            return jobs;
          }),
      );
    },

    complete(job, result) {
      return guard(
        () => {
          checkClaimed(job);
          checkEpoch(result?.now, 'now');
        },
        () =>
          write(() => {
            const next = transition(job, (stored) => completeJob(stored, result));
            if (next?.kind === 'confirm') settleRefundOf(next);
            return next !== null;
          }),
      );
    },

    retry(job, result) {
      return guard(
        () => {
          checkClaimed(job);
          checkEpoch(result?.now, 'now');
          checkEpoch(result.nextAttemptAt, 'nextAttemptAt');
        },
        () =>
          write(
            () =>
              transition(job, (stored) => retryJob(stored, { ...result, error: String(result.error) })) !==
              null,
          ),
      );
    },

    fail(job, result) {
      return guard(
        () => {
          checkClaimed(job);
          checkEpoch(result?.now, 'now');
          if (result.state !== 'dead' && result.state !== 'expired') {
            throw new TypeError(`state must be 'dead' or 'expired', got ${String(result.state)}`);
          }
        },
        () =>
          write(() => {
            const next = transition(job, (stored) =>
              failJob(stored, { ...result, reason: String(result.reason) }),
            );
            if (next?.kind === 'confirm') settleRefundOf(next);
            return next !== null;
          }),
      );
    },

    release(jobs, now) {
      return guard(
        () => {
          if (!Array.isArray(jobs)) throw new TypeError('jobs must be an array of claimed jobs');
          for (const [i, job] of jobs.entries()) checkClaimed(job, `jobs[${i}]`);
          checkEpoch(now, 'now');
        },
        () =>
          write(() => {
            for (const job of jobs) transition(job, (stored) => releaseJob(stored, now));
          }),
      );
    },

    extendLease(job, options) {
      return guard(
        () => {
          checkClaimed(job);
          checkEpoch(options?.now, 'now');
          checkPositiveInt(options.leaseMs, 'leaseMs');
        },
        () => write(() => transition(job, (stored) => extendJobLease(stored, options)) !== null),
      );
    },

    async get(id) {
      if (closed) throw new OutboxClosedError(filename);
      const rowId = rowIdOf(id);
      return rowId === null ? null : load(rowId);
    },

    async getByOrder(orderId) {
      if (closed) throw new OutboxClosedError(filename);
      return jobsOf(sql.byOrder.all(orderId));
    },

    async stats(_now): Promise<OutboxStats> {
      if (closed) throw new OutboxClosedError(filename);
      const counts = Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as StateCounts;
      for (const row of sql.countByState.all() as unknown as Array<{ state: keyof StateCounts; n: number }>) {
        counts[row.state] = row.n;
      }
      const oldest = sql.oldestPending.get() as { at: number | null };
      const nearest = sql.nearestDeadline.get() as
        | { id: number; order_id: string; kind: Job['kind']; deadline: number }
        | undefined;
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
      };
    },

    async listDead(options: ListDeadOptions = {}) {
      if (closed) throw new OutboxClosedError(filename);
      const limit = options.limit ?? DEFAULT_LIST_DEAD_LIMIT;
      checkPositiveInt(limit, 'limit');
      let after = 0;
      if (options.after !== undefined) {
        const id = rowIdOf(options.after);
        if (id === null)
          throw new TypeError(
            `after must be the id of a job of this outbox, got ${JSON.stringify(options.after)}`,
          );
        after = id;
      }
      return jobsOf(sql.deadPage.all(after, Math.min(limit, MAX_LIST_DEAD_LIMIT)));
    },

    replay(options, now) {
      return guard(
        () => {
          if ('ids' in (options ?? {})) checkIds((options as { ids: unknown }).ids);
          else if ((options as { all?: unknown } | undefined)?.all !== true) {
            throw new TypeError('replay takes { ids: [...] } or { all: true }');
          }
          checkEpoch(now, 'now');
        },
        () =>
          write(() => {
            let replayed = 0;
            if ('ids' in options) {
              for (const id of new Set(options.ids)) {
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
          }),
      );
    },

    purgeDead(options = {}) {
      if (options.ids !== undefined) {
        try {
          checkIds(options.ids);
        } catch (error) {
          return Promise.reject(error);
        }
      }
      return write(() => {
        if (options.ids === undefined) return Number(sql.deleteDead.run().changes);
        let deleted = 0;
        for (const id of new Set(options.ids)) {
          const rowId = rowIdOf(id);
          if (rowId !== null) deleted += Number(sql.deleteDeadById.run(rowId).changes);
        }
        return deleted;
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      // Everything already accepted is committed before the file is closed.
      await writes.drain();
      wal?.close();
      db.close();
    },
  };
  return outbox;
}
