/**
 * `createSqliteOutbox`: the durable `Outbox` on one SQLite file. Writes (enqueues, claims, transitions) are
 * group-committed — everything issued in one turn of the event loop shares one `BEGIN IMMEDIATE`
 * transaction and one fsync — and each call resolves only after its transaction is durable (fsynced by
 * SQLite at COMMIT). The writes run on the outbox's own thread by default, so neither their SQL nor their
 * fsync holds up the caller's event loop. Reads run on indexes with LIMITs, so a worker's memory does not
 * grow with the backlog.
 */

import type { DatabaseSync } from 'node:sqlite';
import {
  type AttemptRecord,
  type ConfirmInput,
  type ConfirmJob,
  type EnqueueResult,
  type Job,
  type Outbox,
  OutboxClosedError,
  type OutboxStats,
  type RefundInput,
  type RefundOutcome,
  type WindowPolicy,
  type WithdrawInput,
  type WithdrawOutcome,
} from '@postback/core';
import {
  type ClaimOptions,
  checkBeat,
  checkClaim,
  checkComplete,
  checkEpoch,
  checkExtendLease,
  checkFail,
  checkLedgerInput,
  checkListDead,
  checkOrderLookup,
  checkPurge,
  checkRelease,
  checkReleaseHeld,
  checkReplay,
  checkRetry,
  checkWithdraw,
  checkWorkersQuery,
  newConfirmJob,
  parseOptions,
  resolveJobFilter,
  resolveLedgerQuery,
  resolveStatsOptions,
  validatePruneOptions,
  validateRefundInput,
} from '@postback/core/store';
import { type Durability, openDatabase, openReadOnlyDatabase, readDurability } from './database.ts';
import { type AttemptValues, insertValues, jobsFromRows, rowIdOf } from './job-rows.ts';
import { OUTBOX_FEATURES, type PruneBatch, type PruneCursor } from './operator-queries.ts';
import { type SqliteOutboxOptions, sqliteOutboxOptionsSchema } from './options.ts';
import { createOutboxOperations, type HeldJob, storedConfirm } from './outbox-operations.ts';
import { createLocalWriter, type OutboxWriter, readOnlyWriter } from './outbox-writer.ts';
import { createSqliteShadow } from './shadow.ts';
import { createSqliteSwitches } from './switches.ts';
import { createThreadWriter } from './writer-thread/main-side.ts';

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
  /** Whether writes run on the outbox's own thread (the `thread` option; never for `:memory:`). */
  readonly threaded: boolean;
  /** Journal mode and `synchronous` level as SQLite reports them, and whether a resolved write is on disk. */
  readonly durability: Durability;
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
  const policy = Object.freeze(parsed.policy);
  const clock = parsed.now ?? Date.now;
  const filename = parsed.filename;
  // This connection migrates the file (so a bad file fails here, synchronously) and serves the reads. A
  // read-only outbox's connection cannot write (and lets SQLite tidy its WAL files when it closes).
  const reader = parsed.readOnly ? openReadOnlyDatabase(filename, parsed) : null;
  const db: DatabaseSync = reader?.db ?? openDatabase(filename, parsed);
  const ops = createOutboxOperations(db, policy);
  const inMemory = filename === ':memory:' || filename === '';
  const threaded = parsed.thread && !inMemory && !parsed.readOnly;
  const durability = Object.freeze(readDurability(db));
  const local = () => createLocalWriter(db, ops, { maxBatchSize: parsed.maxBatchSize });
  const writer: OutboxWriter = parsed.readOnly
    ? readOnlyWriter(filename)
    : threaded
      ? createThreadWriter(
          {
            filename,
            synchronous: parsed.synchronous,
            busyTimeoutMs: parsed.busyTimeoutMs,
            maxBatchSize: parsed.maxBatchSize,
            policy: { ...policy },
          },
          local,
        )
      : local();
  let closed = false;

  /**
   * Checks (or prepares) a call's input synchronously, then runs `then` with the result: bad input
   * rejects this call alone and never joins a batch.
   */
  function guard<P, T>(prepare: () => P, then: (prepared: P) => Promise<T>): Promise<T> {
    if (closed) return Promise.reject(new OutboxClosedError(`the SQLite outbox on ${filename}`));
    let prepared: P;
    try {
      prepared = prepare();
    } catch (error) {
      return Promise.reject(error);
    }
    return then(prepared);
  }

  /** Runs a read on this thread's connection (WAL: it sees every write that has resolved). */
  async function read<T>(fn: () => T): Promise<T> {
    if (closed) throw new OutboxClosedError(`the SQLite outbox on ${filename}`);
    return fn();
  }

  const outbox: SqliteOutbox = {
    filename,
    policy,
    durability,
    threaded,
    get commits() {
      return writer.commits;
    },

    confirm(input: ConfirmInput): Promise<EnqueueResult<ConfirmJob>> {
      return guard(
        // Validated and built at call time (createdAt is the time of the call, not of the commit).
        () => newConfirmJob(input, { now: clock(), id: '0', policy }),
        (job) =>
          writer.write('confirm', [insertValues(job)]).then((inserted) => storedConfirm(job, inserted)),
      );
    },

    refund(input: RefundInput): Promise<RefundOutcome> {
      return guard(
        () => validateRefundInput(input),
        (checked) => writer.write('refund', [checked, clock()]),
      );
    },

    withdraw(input: WithdrawInput): Promise<WithdrawOutcome> {
      return guard(
        () => checkWithdraw(input),
        ({ orderId, account }) => writer.write('withdraw', [orderId, account, clock()]),
      );
    },

    claim(options: ClaimOptions): Promise<Job[]> {
      return guard(
        () => checkClaim(options),
        (checked) => writer.write('claim', [checked]).then(jobsFromRows),
      );
    },

    complete(job, result) {
      return guard(
        () => checkComplete(job, result),
        (c) => writer.write('complete', [held(c.job), c.result, attemptValues(c.attempt)]),
      );
    },

    retry(job, result) {
      return guard(
        () => checkRetry(job, result),
        (c) => writer.write('retry', [held(c.job), c.result, attemptValues(c.attempt)]),
      );
    },

    fail(job, result) {
      return guard(
        () => checkFail(job, result),
        (c) => writer.write('fail', [held(c.job), c.result, attemptValues(c.attempt)]),
      );
    },

    release(jobs, now) {
      return guard(
        () => checkRelease(jobs, now),
        (c) => writer.write('release', [c.jobs.map(held), c.now]),
      );
    },

    extendLease(job, options) {
      return guard(
        () => checkExtendLease(job, options),
        (c) => writer.write('extendLease', [held(c.job), { now: c.now, leaseMs: c.leaseMs }]),
      );
    },

    releaseHeld(options) {
      return guard(
        () => checkReleaseHeld(options),
        (checked) => writer.write('releaseHeld', [checked]),
      );
    },

    get: (id) => read(() => ops.get(id)),

    getByOrder: (orderId, account = null) =>
      read(() => {
        const order = checkOrderLookup(orderId, account);
        return ops.getByOrder(order.orderId, order.account);
      }),

    stats: (now, options): Promise<OutboxStats> =>
      read(() => ops.stats(checkEpoch(now, 'now'), resolveStatsOptions(options))),

    listJobs: (filter) => read(() => ops.listJobs(resolveJobFilter(filter))),

    history: (id) => read(() => ops.history(id)),

    workers: (options) => read(() => ops.workers(checkWorkersQuery(options))),

    features: OUTBOX_FEATURES,

    shadow: createSqliteShadow({ writer, ops, guard, read }),

    switches: createSqliteSwitches({ writer, ops, guard, read }),

    listDead: (options) =>
      read(() => {
        const { limit, after } = checkListDead(options);
        return ops.listDead(listDeadCursor(after), limit);
      }),

    replay(options, now) {
      return guard(
        () => checkReplay(options, now),
        (c) => writer.write('replay', [c.ids, c.now]),
      );
    },

    purgeDead(options) {
      return guard(
        () => checkPurge(options),
        (ids) => writer.write('purgeDead', [ids]),
      );
    },

    prune(options) {
      return guard(
        () => {
          const { now, olderThanMs, returnWindowMs, ledgerRetentionMs } = validatePruneOptions(options);
          return { now, cutoff: now - olderThanMs, returnWindowMs, ledgerBefore: now - ledgerRetentionMs };
        },
        async ({ ledgerBefore, ...window }) => {
          await writer.write('pruneLedger', [ledgerBefore]);
          // Batches in separate transactions: other writes (claims, enqueues) run between them.
          let pruned = 0;
          let cursor: PruneCursor | null = null;
          do {
            if (closed) throw new OutboxClosedError(`the SQLite outbox on ${filename}`);
            const batch: PruneBatch = await writer.write('prune', [window, cursor]);
            pruned += batch.deleted;
            cursor = batch.next;
          } while (cursor !== null);
          return pruned;
        },
      );
    },

    appendLedger(entry) {
      return guard(
        () => checkLedgerInput(entry),
        (row) => writer.write('appendLedger', [row]),
      );
    },

    readLedger: (query) => read(() => ops.readLedger(resolveLedgerQuery(query))),

    beat(beat) {
      return guard(
        () => checkBeat(beat),
        (checked) => writer.write('beat', [checked]),
      );
    },

    async close() {
      if (closed) return;
      closed = true;
      // Everything already accepted is committed before the file is closed.
      await writer.close();
      if (reader === null) db.close();
      else reader.close();
    },
  };
  return outbox;
}

/** What a transition sends the writer of a claimed job: its id and lease, as plain data. */
function held(job: Job): HeldJob {
  return {
    id: job.id,
    lease: job.lease === null ? null : { token: job.lease.token, expiresAt: Number(job.lease.expiresAt) },
  };
}

/** A checked attempt as the write appends it: its JSON text and its HTTP status (null: none). */
function attemptValues(attempt: AttemptRecord | null): AttemptValues | null {
  return attempt === null ? null : { json: JSON.stringify(attempt), status: attempt.status };
}

/** The row id after which `listDead` pages (0 from the start); a TypeError for an id not of this outbox. */
function listDeadCursor(after: string | undefined): number {
  if (after === undefined) return 0;
  const id = rowIdOf(after);
  if (id === null) {
    throw new TypeError(`after must be the id of a job of this outbox, got ${JSON.stringify(after)}`);
  }
  return id;
}
