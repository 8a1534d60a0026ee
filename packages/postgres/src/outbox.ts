/**
 * The transactional outbox on PostgreSQL. An order and its confirmation job commit (or roll back)
 * together: `confirm(tx, input)` / `refund(tx, input)` run inside the app's own transaction through any
 * {@link Queryable}. Workers on any number of machines claim with one `UPDATE ... WHERE id IN (SELECT ...
 * FOR UPDATE SKIP LOCKED LIMIT n) RETURNING` statement, so no job is handed to two of them; each claim
 * takes a fresh fencing token from a sequence, and every later transition applies only while the row
 * still carries that token. Enqueueing sends `pg_notify`, so idle workers that `subscribe` wake at once.
 *
 * The rules themselves (validation, deadlines, what a refund does) are core's pure functions; this module
 * only persists their results, or states the same transition as one SQL statement.
 */
import {
  type ClaimOptions,
  type ConfirmInput,
  type ConfirmJob,
  createBatcher,
  type EnqueueResult,
  type FailResult,
  JOB_STATES,
  type Job,
  type ListDeadOptions,
  newConfirmJob,
  type Outbox,
  OutboxClosedError,
  type OutboxStats,
  planRefund,
  type RefundInput,
  type RefundJob,
  type RefundOutcome,
  type RetryResult,
  truncateReason,
  validateRefundInput,
} from '@postback/core';
import { createNotifyGate, createNotifyListener, type Subscription } from './listener.ts';
import { arrayLiteral, inline } from './literal.ts';
import { DEFAULT_LIST_DEAD_LIMIT, type PostgresOutboxOptions, resolveOutboxOptions } from './options.ts';
import { connectListening, isQueryable, type PoolLike, type Queryable, run } from './queryable.ts';
import { rowToJob, toBigintText } from './rows.ts';
import { channelOf, quoteIdent } from './schema-name.ts';
import { jobStatements } from './statements.ts';

/**
 * A durable {@link Outbox} on Postgres, plus enqueueing inside the caller's transaction and wake-ups.
 *
 * @example
 * ```ts
 * const outbox: PostgresOutbox = createPostgresOutbox({ pool });
 * await outbox.confirm(tx, { orderId, valueMicros, click });
 * const stop = outbox.subscribe(() => dispatcher.wake());
 * ```
 */
export interface PostgresOutbox extends Outbox {
  /** Enqueue a confirmation through the outbox's pool (its own implicit transaction). */
  confirm(input: ConfirmInput): Promise<EnqueueResult<ConfirmJob>>;
  /**
   * Enqueue a confirmation inside the caller's transaction `tx`: it exists if and only if that
   * transaction commits. Workers are notified at commit.
   */
  confirm(tx: Queryable, input: ConfirmInput): Promise<EnqueueResult<ConfirmJob>>;
  /** Reverse an order in the outbox's own transaction. */
  refund(input: RefundInput): Promise<RefundOutcome>;
  /**
   * Reverse an order inside the caller's transaction `tx` (pass a client that is inside BEGIN: the
   * order's jobs are locked until it ends).
   */
  refund(tx: Queryable, input: RefundInput): Promise<RefundOutcome>;
  /**
   * Calls `onWake` whenever a job is enqueued or becomes due at once (LISTEN/NOTIFY), so an idle worker
   * does not wait for its next poll. Returns the unsubscribe function; its `ready` promise resolves
   * when LISTEN is in effect. Holds one pool connection while anybody is subscribed.
   */
  subscribe(onWake: () => void): Subscription;
  /** The schema holding the tables. */
  readonly schema: string;
  /** The pool the outbox runs on (yours, or the one it opened from `connectionString`). */
  readonly pool: PoolLike;
}

type Row = Record<string, unknown>;

/** The part of an EventEmitter (a `pg` Pool or client) used to hear about dead connections. */
interface EventSource {
  on(event: 'error', listener: (err: unknown) => void): unknown;
  off(event: 'error', listener: (err: unknown) => void): unknown;
}

/** One completion waiting for its group. */
interface Completion {
  id: string;
  token: string;
  at: number;
  campaignId: string | null;
}

/**
 * Creates a Postgres outbox. Run {@link migrate} (or `postback migrate`) once before using it: the outbox
 * never changes the schema by itself.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { createPostgresOutbox, migrate } from '@postback/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * await migrate(pool);
 * const outbox = createPostgresOutbox({ pool });
 *
 * const client = await pool.connect();
 * await client.query('BEGIN');
 * await client.query('INSERT INTO orders (id, total) VALUES ($1, $2)', [orderId, total]);
 * await outbox.confirm(client, { orderId, valueMicros: 12_340_000, click });
 * await client.query('COMMIT');
 * client.release();
 * ```
 */
export function createPostgresOutbox(options: PostgresOutboxOptions): PostgresOutbox {
  const { pool, ownsPool, schema, policy, now, onError, reconnectMs, reconnectMaxMs, notifyCoalesceMs } =
    resolveOutboxOptions(options);
  const s = quoteIdent(schema);
  const SQL = jobStatements(s);
  const channel = channelOf(schema);
  // A refund that follows its confirm is due this long after the confirm was (or may have been) applied.
  const refundWindowMs = policy.returnWindowMs - policy.safetyMarginMs;
  const listener = createNotifyListener({ pool, channel, onError, reconnectMs, reconnectMaxMs });
  // A pooled connection that dies while idle (its backend terminated, a failover) makes pg's pool emit
  // 'error'; with no listener Node throws it as an uncaught exception and the worker dies. It is reported
  // instead: the pool has already dropped that connection, and the next query opens a new one.
  const poolEvents = pool as Partial<EventSource>;
  const onPoolError = (err: unknown) => onError(err);
  poolEvents.on?.('error', onPoolError);
  const notifyGate = createNotifyGate(notifyCoalesceMs, () => {
    pool.query('SELECT pg_notify($1, $2)', [channel, '']).catch(onError);
  });
  let closed = false;

  const assertOpen = () => {
    if (closed) throw new OutboxClosedError(`the Postgres outbox in schema ${schema}`);
  };
  const q = (db: Queryable, text: string, values?: unknown[]) => run(db, schema, text, values);

  /**
   * Runs `work` in a transaction of its own on one pooled connection. A connection that dies while we
   * hold it emits 'error' (even between statements, when no query would see it): we listen, and give it
   * back with that error so pg destroys it instead of pooling a dead connection.
   */
  const inTransaction = async <T>(work: (db: Queryable) => Promise<T>): Promise<T> => {
    let broken: Error | undefined;
    const onClientError = (err: Error) => {
      broken ??= err;
    };
    const client = await connectListening(pool, onClientError);
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackErr) {
        broken = rollbackErr as Error;
      }
      throw err;
    } finally {
      client.release(broken);
      client.off?.('error', onClientError);
    }
  };

  /**
   * Writes a group of completions. Both statements go in one simple-protocol message: one round trip,
   * one implicit transaction, and each statement with its own snapshot (the second must see a refund
   * committed while the first waited for the order's row lock). The protocol allows no `$n`, so values
   * are inlined as checked literals.
   */
  const writeCompletions = async (group: Completion[]): Promise<boolean[]> => {
    const ids = group.map((c) => c.id);
    const script = [
      inline(SQL.completeMany, [
        arrayLiteral(ids, 'bigint'),
        arrayLiteral(
          group.map((c) => c.token),
          'bigint',
        ),
        arrayLiteral(
          group.map((c) => c.at),
          'bigint',
        ),
        arrayLiteral(
          group.map((c) => c.campaignId),
          'text',
        ),
      ]),
      inline(SQL.followConfirms, [arrayLiteral(ids, 'bigint'), refundWindowMs, channel]),
    ].join(';\n');
    for (let attempt = 1; ; attempt += 1) {
      try {
        const results = (await q(pool, script)) as unknown;
        const first = (Array.isArray(results) ? results[0] : results) as { rows: Array<{ id: string }> };
        const applied = new Set(first.rows.map((row) => row.id));
        return ids.map((id) => applied.has(id));
      } catch (err) {
        // Two groups holding the same stale job in opposite order can deadlock; Postgres aborts one.
        if ((err as { code?: unknown }).code !== '40P01' || attempt >= 3) throw err;
      }
    }
  };
  // Group commit: completions made in the same turn (a Dispatcher finishing a batch of sends) are written
  // together, one round trip and one WAL flush for N. One group at a time, and a job given twice goes to a
  // later group than its first call, so the second call is fenced as usual.
  const completions = createBatcher(writeCompletions, {
    maxSize: 500,
    windowMs: 0,
    maxInFlight: 1,
    keyOf: (c) => c.id,
  });

  /** The job's id and lease token as stored, or null when the job cannot hold a lease here. */
  const fence = (job: Job): [string, string] | null => {
    const id = toBigintText(job?.id);
    const token = toBigintText(job?.lease?.token);
    return id === null || token === null ? null : [id, token];
  };

  const splitArgs = <I>(args: unknown[]): [Queryable, I] => {
    if (args.length >= 2) {
      if (!isQueryable(args[0]))
        throw new TypeError('the first argument must be a transaction with query(text, values)');
      return [args[0], args[1] as I];
    }
    return [pool, args[0] as I];
  };

  const confirm = async (db: Queryable, input: ConfirmInput): Promise<EnqueueResult<ConfirmJob>> => {
    const at = now();
    const job = newConfirmJob(input, { now: at, id: '0', policy });
    const notify = notifyGate.take();
    const inserted = await q(db, SQL.insertConfirm, [
      job.orderId,
      at,
      job.deadline,
      job.clickToken,
      job.valueMicros,
      job.clickedAt,
      channel,
      notify,
    ]);
    const row = inserted.rows[0];
    if (!notify && row !== undefined) notifyGate.skipped();
    if (row !== undefined) return { created: true, job: rowToJob(row) as ConfirmJob };
    const existing = await q(db, SQL.byOrderAndKind, [job.orderId, 'confirm']);
    const found = existing.rows[0];
    if (found === undefined)
      throw new Error(`order ${job.orderId}: confirm conflicted but cannot be read back`);
    return { created: false, job: rowToJob(found) as ConfirmJob };
  };

  const refund = async (db: Queryable, input: RefundInput): Promise<RefundOutcome> => {
    const checked = validateRefundInput(input);
    // Normally one pass: the order's rows are locked. Through a connection that autocommits each
    // statement the lock does not last, so a lost race is re-planned against the new state.
    for (let pass = 0; ; pass += 1) {
      const at = now();
      const locked = await q(db, SQL.lockOrder, [checked.orderId]);
      const jobs = locked.rows.map(rowToJob);
      const confirmJob = (jobs.find((j) => j.kind === 'confirm') as ConfirmJob | undefined) ?? null;
      const refundJob = (jobs.find((j) => j.kind === 'refund') as RefundJob | undefined) ?? null;
      const plan = planRefund(checked, { now: at, id: '0', policy, confirm: confirmJob, refund: refundJob });
      if (plan.outcome === 'duplicate' || plan.outcome === 'not-charged') return plan;
      if (plan.outcome === 'cancelled') {
        const updated = await q(db, SQL.cancelConfirm, [plan.job.id, plan.job.updatedAt, plan.job.lastError]);
        const row = updated.rows[0];
        if (row !== undefined) return { outcome: 'cancelled', job: rowToJob(row) as ConfirmJob };
      } else if (plan.outcome === 'updated') {
        const job = plan.job;
        const notify = notifyGate.take();
        const updated = await q(db, SQL.updateRefund, [
          job.id,
          job.campaignId,
          job.updatedAt,
          job.state,
          job.attempts,
          job.nextAttemptAt,
          job.lastError,
          channel,
          notify,
        ]);
        const row = updated.rows[0];
        if (!notify && row !== undefined) notifyGate.skipped();
        if (row !== undefined) return { outcome: 'updated', job: rowToJob(row) as RefundJob };
      } else {
        const notify = notifyGate.take();
        const inserted = await q(db, SQL.insertRefund, [
          plan.job.orderId,
          at,
          plan.job.updatedAt,
          plan.job.deadline,
          plan.job.campaignId,
          channel,
          notify,
        ]);
        const row = inserted.rows[0];
        if (!notify && row !== undefined) notifyGate.skipped();
        if (row !== undefined) return { outcome: 'enqueued', job: rowToJob(row) as RefundJob };
        // A concurrent refund of the same order committed first.
        const existing = (await q(db, SQL.byOrderAndKind, [checked.orderId, 'refund'])).rows[0];
        if (existing !== undefined) return { outcome: 'duplicate', job: rowToJob(existing) as RefundJob };
      }
      if (pass >= 3) throw new Error(`order ${checked.orderId}: refund kept racing with concurrent changes`);
    }
  };

  /** A confirm changed state: apply the order's refund rule in the same transaction, new snapshot. */
  const transitionWithFollowUp = async (
    text: string,
    values: unknown[],
    followUp: (db: Queryable, kind: string) => Promise<unknown>,
  ): Promise<boolean> =>
    inTransaction(async (db) => {
      const result = await q(db, text, values);
      const kind = result.rows[0]?.kind;
      if (kind === undefined) return false;
      await followUp(db, String(kind));
      return true;
    });

  const outbox = {
    schema,

    async confirm(...args: unknown[]): Promise<EnqueueResult<ConfirmJob>> {
      assertOpen();
      const [db, input] = splitArgs<ConfirmInput>(args);
      return confirm(db, input);
    },

    async refund(...args: unknown[]): Promise<RefundOutcome> {
      assertOpen();
      const [db, input] = splitArgs<RefundInput>(args);
      if (db === pool) return inTransaction((tx) => refund(tx, input));
      return refund(db, input);
    },

    async claim({ now: at, limit, leaseMs }: ClaimOptions): Promise<Job[]> {
      assertOpen();
      if (!Number.isSafeInteger(limit) || limit < 1)
        throw new RangeError(`claim limit must be a positive integer, got ${limit}`);
      if (!Number.isSafeInteger(leaseMs) || leaseMs < 1)
        throw new RangeError(`claim leaseMs must be a positive integer, got ${leaseMs}`);
      const result = await q(pool, SQL.claim, [at, limit, leaseMs]);
      return result.rows
        .map(rowToJob)
        .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || Number(BigInt(a.id) - BigInt(b.id)));
    },

    async complete(job: Job, result: { now: number; campaignId?: string | null }): Promise<boolean> {
      assertOpen();
      const ids = fence(job);
      if (ids === null) return false;
      if (!Number.isSafeInteger(result.now))
        throw new RangeError(`complete now must be an integer of epoch ms, got ${result.now}`);
      const campaignId = result.campaignId ?? null;
      if (campaignId !== null && typeof campaignId !== 'string')
        throw new TypeError('complete campaignId must be a string or null');
      return completions.add({ id: ids[0], token: ids[1], at: result.now, campaignId });
    },

    async retry(job: Job, result: RetryResult): Promise<boolean> {
      assertOpen();
      const ids = fence(job);
      if (ids === null) return false;
      const values = [
        ...ids,
        result.now,
        result.nextAttemptAt,
        result.countAttempt !== false,
        truncateReason(String(result.error)),
        result.maybeApplied === true,
      ];
      return ((await q(pool, SQL.retry, values)).rowCount ?? 0) > 0;
    },

    async fail(job: Job, result: FailResult): Promise<boolean> {
      assertOpen();
      if (result.state !== 'dead' && result.state !== 'expired')
        throw new RangeError(`fail state must be dead or expired, got ${String(result.state)}`);
      const ids = fence(job);
      if (ids === null) return false;
      const values = [
        ...ids,
        result.now,
        result.state,
        truncateReason(String(result.reason)),
        result.maybeApplied === true,
      ];
      return transitionWithFollowUp(SQL.fail, values, async (db, kind) => {
        if (kind === 'confirm') await q(db, SQL.followConfirms, [[ids[0]], refundWindowMs, channel]);
      });
    },

    async release(jobs: readonly Job[], at: number): Promise<void> {
      assertOpen();
      const fenced = jobs.map(fence).filter((f): f is [string, string] => f !== null);
      if (fenced.length === 0) return;
      await q(pool, SQL.release, [fenced.map((f) => f[0]), fenced.map((f) => f[1]), at, channel]);
    },

    async extendLease(job: Job, options: { now: number; leaseMs: number }): Promise<boolean> {
      assertOpen();
      const ids = fence(job);
      if (ids === null) return false;
      if (!Number.isSafeInteger(options.leaseMs) || options.leaseMs < 1)
        throw new RangeError(`leaseMs must be a positive integer, got ${options.leaseMs}`);
      return ((await q(pool, SQL.extendLease, [...ids, options.now, options.leaseMs])).rowCount ?? 0) > 0;
    },

    async get(id: string): Promise<Job | null> {
      assertOpen();
      const dbId = toBigintText(id);
      if (dbId === null) return null;
      const row = (await q(pool, SQL.get, [dbId])).rows[0];
      return row === undefined ? null : rowToJob(row);
    },

    async getByOrder(orderId: string): Promise<Job[]> {
      assertOpen();
      return (await q(pool, SQL.getByOrder, [orderId])).rows.map(rowToJob);
    },

    async stats(_now: number): Promise<OutboxStats> {
      assertOpen();
      const [counts, oldest, nearest] = await Promise.all([
        q(pool, SQL.counts),
        q(pool, SQL.oldestPending),
        q(pool, SQL.nearestDeadline),
      ]);
      const byState = Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as OutboxStats['counts'];
      for (const row of counts.rows) byState[row.state as keyof typeof byState] = Number(row.n);
      const oldestAt = oldest.rows[0]?.at;
      const near = nearest.rows[0];
      return {
        counts: byState,
        oldestPendingAt: oldestAt === null || oldestAt === undefined ? null : Number(oldestAt),
        nearestDeadline:
          near === undefined
            ? null
            : {
                id: String(near.id),
                orderId: String(near.order_id),
                kind: near.kind as Job['kind'],
                deadline: Number(near.deadline),
              },
      };
    },

    async listDead(options: ListDeadOptions = {}): Promise<Job[]> {
      assertOpen();
      const limit = options.limit ?? DEFAULT_LIST_DEAD_LIMIT;
      if (!Number.isSafeInteger(limit) || limit < 1)
        throw new RangeError(`listDead limit must be a positive integer, got ${limit}`);
      let after = '0';
      if (options.after !== undefined) {
        const cursor = toBigintText(options.after);
        if (cursor === null)
          throw new RangeError(
            `listDead after must be a job id of this outbox, got ${JSON.stringify(options.after)}`,
          );
        after = cursor;
      }
      return (await q(pool, SQL.listDead, [after, limit])).rows.map(rowToJob);
    },

    async replay(selection: { ids: readonly string[] } | { all: true }, at: number): Promise<number> {
      assertOpen();
      const ids =
        'all' in selection && selection.all === true
          ? null
          : idList((selection as { ids: readonly string[] }).ids);
      if (ids !== null && ids.length === 0) return 0;
      const result = await q(pool, SQL.replay, [at, ids, channel]);
      return result.rows.filter((row: Row) => row.next_state === 'pending').length;
    },

    async purgeDead(options: { ids?: readonly string[] } = {}): Promise<number> {
      assertOpen();
      const ids = options.ids === undefined ? null : idList(options.ids);
      if (ids !== null && ids.length === 0) return 0;
      return (await q(pool, SQL.purgeDead, [ids])).rowCount ?? 0;
    },

    subscribe(onWake: () => void): Subscription {
      assertOpen();
      if (typeof onWake !== 'function') throw new TypeError('subscribe(onWake): onWake must be a function');
      return listener.subscribe(onWake);
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      notifyGate.close();
      await listener.close();
      try {
        if (ownsPool) await pool.end();
      } finally {
        poolEvents.off?.('error', onPoolError);
      }
    },

    // The pool may hold a connection string with a password: never print it.
    toJSON: () => ({ type: 'PostgresOutbox', schema }),
    [Symbol.for('nodejs.util.inspect.custom')]: () => `PostgresOutbox { schema: '${schema}' }`,
  };
  // Not enumerable: a pool opened from a URL holds the password, and must not show up when logged.
  Object.defineProperty(outbox, 'pool', { value: pool, enumerable: false });
  return outbox as unknown as PostgresOutbox;
}

function idList(ids: readonly string[]): string[] {
  return ids.map(toBigintText).filter((id): id is string => id !== null);
}
