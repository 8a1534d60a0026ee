/**
 * The transactional outbox on PostgreSQL. An order and its confirmation job commit (or roll back)
 * together: `confirm(tx, input)` / `refund(tx, input)` run inside the app's own transaction through any
 * {@link Queryable}. Workers on any number of machines claim with one `UPDATE ... RETURNING` statement
 * whose subqueries lock with FOR UPDATE SKIP LOCKED, so no job is handed to two of them (taking urgent
 * deadlines first, then turns across advertiser accounts); each claim
 * takes a fresh fencing token from a sequence, and every later transition applies only while the row
 * still carries that token. Enqueueing sends `pg_notify`, so idle workers that `subscribe` wake at once.
 *
 * This file wires the Outbox methods; the work is in `enqueue.ts` (confirm, refund), `transitions.ts`
 * (claim, complete, retry, fail, release, extendLease), `operator-methods.ts` (reads, dead-letter list,
 * replay and purge), `shadow-methods.ts` (shadow mode), `switch-methods.ts` (the switches of held campaigns) and `closing.ts` (pool error reporting, close), on the state shared in
 * `outbox-context.ts`. The SQL is in `statements.ts`.
 *
 * The rules themselves (validation, deadlines, what a refund does) are core's pure functions; this module
 * only persists their results, or states the same transition as one SQL statement.
 */
import type {
  ConfirmInput,
  ConfirmJob,
  EnqueueResult,
  Outbox,
  RefundInput,
  RefundOutcome,
} from '@postback/core';
import { closeOutbox, reportPoolErrors } from './closing.ts';
import { enqueueMethods } from './enqueue.ts';
import { ledgerMethods } from './ledger-methods.ts';
import type { Subscription } from './listener.ts';
import { operatorMethods } from './operator-methods.ts';
import type { PostgresOutboxOptions } from './options.ts';
import { assertOpen, createPostgresOutboxContext } from './outbox-context.ts';
import type { PoolLike, Queryable } from './queryable.ts';
import { shadowMethods } from './shadow-methods.ts';
import { switchMethods } from './switch-methods.ts';
import { transitionMethods } from './transitions.ts';

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
  const context = createPostgresOutboxContext(options);
  const { pool, schema, listener } = context;
  const stopReportingPoolErrors = reportPoolErrors(pool, context.onError);

  const outbox = {
    schema,
    ...enqueueMethods(context),
    ...transitionMethods(context),
    ...operatorMethods(context),
    ...ledgerMethods(context),
    shadow: shadowMethods(context),
    switches: switchMethods(context),

    subscribe(onWake: () => void): Subscription {
      assertOpen(context);
      if (typeof onWake !== 'function') throw new TypeError('subscribe(onWake): onWake must be a function');
      return listener.subscribe(onWake);
    },

    async close(): Promise<void> {
      return closeOutbox(context, stopReportingPoolErrors);
    },

    // The pool may hold a connection string with a password: never print it.
    toJSON: () => ({ type: 'PostgresOutbox', schema }),
    [Symbol.for('nodejs.util.inspect.custom')]: () => `PostgresOutbox { schema: '${schema}' }`,
  };
  // Not enumerable: a pool opened from a URL holds the password, and must not show up when logged.
  Object.defineProperty(outbox, 'pool', { value: pool, enumerable: false });
  return outbox as unknown as PostgresOutbox;
}
