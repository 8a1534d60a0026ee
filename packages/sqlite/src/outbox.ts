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
  type ClaimOptions,
  type ConfirmInput,
  type ConfirmJob,
  type EnqueueResult,
  type Job,
  type ListDeadOptions,
  newConfirmJob,
  type Outbox,
  OutboxClosedError,
  type OutboxStats,
  parseOptions,
  type RefundInput,
  type RefundOutcome,
  resolveJobFilter,
  resolveStatsOptions,
  validatePruneOptions,
  validateRefundInput,
  type WindowPolicy,
} from '@postback/core';
import { type Durability, openDatabase, openReadOnlyDatabase, readDurability } from './database.ts';
import { claimArgs } from './fair-claim.ts';
import {
  attemptValues,
  checkBeat,
  checkDuration,
  checkEpoch,
  checkIds,
  checkMaybeApplied,
  checkPositiveInt,
  heldJob,
  listDeadCursor,
} from './input-checks.ts';
import { insertValues, jobsFromRows } from './job-rows.ts';
import { OUTBOX_FEATURES, type PruneBatch, type PruneCursor } from './operator-queries.ts';
import {
  DEFAULT_LIST_DEAD_LIMIT,
  MAX_LIST_DEAD_LIMIT,
  type SqliteOutboxOptions,
  sqliteOutboxOptionsSchema,
} from './options.ts';
import { createOutboxOperations, storedConfirm } from './outbox-operations.ts';
import { createLocalWriter, type OutboxWriter, readOnlyWriter } from './outbox-writer.ts';
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

    claim(options: ClaimOptions): Promise<Job[]> {
      return guard(
        () => claimArgs(options),
        (checked) => writer.write('claim', [checked]).then(jobsFromRows),
      );
    },

    complete(job, result) {
      return guard(
        () => {
          const held = heldJob(job);
          checkEpoch(result?.now, 'now');
          const done =
            result.campaignId === undefined
              ? { now: result.now }
              : { now: result.now, campaignId: result.campaignId };
          return [held, done, attemptValues(result.attempt)] as const;
        },
        ([held, done, attempt]) => writer.write('complete', [held, done, attempt]),
      );
    },

    retry(job, result) {
      return guard(
        () => {
          const held = heldJob(job);
          checkEpoch(result?.now, 'now');
          checkEpoch(result.nextAttemptAt, 'nextAttemptAt');
          const retry = {
            now: result.now,
            nextAttemptAt: result.nextAttemptAt,
            error: String(result.error),
            ...(result.countAttempt === undefined ? {} : { countAttempt: result.countAttempt }),
            ...(checkMaybeApplied(result.maybeApplied) ? { maybeApplied: true } : {}),
          };
          return [held, retry, attemptValues(result.attempt)] as const;
        },
        ([held, retry, attempt]) => writer.write('retry', [held, retry, attempt]),
      );
    },

    fail(job, result) {
      return guard(
        () => {
          const held = heldJob(job);
          checkEpoch(result?.now, 'now');
          if (result.state !== 'dead' && result.state !== 'expired') {
            throw new TypeError(`state must be 'dead' or 'expired', got ${String(result.state)}`);
          }
          const failed = {
            now: result.now,
            state: result.state,
            reason: String(result.reason),
            ...(checkMaybeApplied(result.maybeApplied) ? { maybeApplied: true } : {}),
          };
          return [held, failed, attemptValues(result.attempt)] as const;
        },
        ([held, failed, attempt]) => writer.write('fail', [held, failed, attempt]),
      );
    },

    release(jobs, now) {
      return guard(
        () => {
          if (!Array.isArray(jobs)) throw new TypeError('jobs must be an array of claimed jobs');
          const held = jobs.map((job, i) => heldJob(job, `jobs[${i}]`));
          checkEpoch(now, 'now');
          return held;
        },
        (held) => writer.write('release', [held, now]),
      );
    },

    extendLease(job, options) {
      return guard(
        () => {
          const held = heldJob(job);
          checkEpoch(options?.now, 'now');
          checkPositiveInt(options.leaseMs, 'leaseMs');
          return [held, { now: options.now, leaseMs: options.leaseMs }] as const;
        },
        ([held, lease]) => writer.write('extendLease', [held, lease]),
      );
    },

    get: (id) => read(() => ops.get(id)),

    getByOrder: (orderId, account = null) => read(() => ops.getByOrder(orderId, account)),

    stats: (now, options): Promise<OutboxStats> =>
      read(() => {
        checkEpoch(now, 'now');
        return ops.stats(now, resolveStatsOptions(options));
      }),

    listJobs: (filter) => read(() => ops.listJobs(resolveJobFilter(filter))),

    history: (id) => read(() => ops.history(id)),

    workers: (options) =>
      read(() => {
        checkEpoch(options?.now, 'now');
        checkDuration(options.sinceMs, 'sinceMs');
        return ops.workers(options.now - options.sinceMs);
      }),

    features: OUTBOX_FEATURES,

    listDead(options: ListDeadOptions = {}) {
      return read(() => {
        const limit = options.limit ?? DEFAULT_LIST_DEAD_LIMIT;
        checkPositiveInt(limit, 'limit');
        return ops.listDead(listDeadCursor(options.after), Math.min(limit, MAX_LIST_DEAD_LIMIT));
      });
    },

    replay(options, now) {
      return guard(
        () => {
          checkEpoch(now, 'now');
          if ('ids' in (options ?? {})) {
            const ids = (options as { ids: unknown }).ids;
            checkIds(ids);
            return [...(ids as string[])];
          }
          if ((options as { all?: unknown } | undefined)?.all !== true) {
            throw new TypeError('replay takes { ids: [...] } or { all: true }');
          }
          return null;
        },
        (ids) => writer.write('replay', [ids, now]),
      );
    },

    purgeDead(options = {}) {
      return guard(
        () => {
          if (options.ids === undefined) return null;
          checkIds(options.ids);
          return [...options.ids];
        },
        (ids) => writer.write('purgeDead', [ids]),
      );
    },

    prune(options) {
      return guard(
        () => {
          const { now, olderThanMs, returnWindowMs } = validatePruneOptions(options);
          return { now, cutoff: now - olderThanMs, returnWindowMs };
        },
        async (window) => {
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
