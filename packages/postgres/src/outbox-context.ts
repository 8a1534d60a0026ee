/**
 * What every part of the Postgres outbox shares: the pool, the parsed options, the statements for its
 * schema, the LISTEN/NOTIFY machinery, and whether it was closed. `createPostgresOutbox` builds it once;
 * the enqueue, transition and operator modules take it as their first argument.
 */
import { type EpochMs, OutboxClosedError, type WindowPolicy } from '@postback/core';
import { refundSpanOf } from '@postback/core/store';
import { createNotifyGate, createNotifyListener, type NotifyGate, type NotifyListener } from './listener.ts';
import { type PostgresOutboxOptions, resolveOutboxOptions } from './options.ts';
import { statementName } from './prepared.ts';
import { connectListening, type PoolLike, type Queryable, type QueryResultLike, run } from './queryable.ts';
import { channelOf, quoteIdent } from './schema-name.ts';
import { type JobStatements, jobStatements } from './statements.ts';

/** The state and settings shared by the parts of one Postgres outbox. */
export interface PostgresOutboxContext {
  readonly pool: PoolLike;
  /** Whether `close()` ends the pool (it was opened here from `connectionString`). */
  readonly ownsPool: boolean;
  readonly schema: string;
  readonly policy: WindowPolicy;
  readonly now: () => EpochMs;
  readonly onError: (err: unknown) => void;
  /** The outbox's statements for its schema. */
  readonly sql: JobStatements;
  /** The schema's LISTEN/NOTIFY channel. */
  readonly channel: string;
  /**
   * A refund that follows its confirm may be sent until this long after the confirm was (or may have been)
   * applied: core's `refundSpanOf` (the return window less the margin, or the confirmation retention).
   */
  readonly refundWindowMs: number;
  readonly listener: NotifyListener;
  readonly notifyGate: NotifyGate;
  /** Runs one statement in the outbox's schema (a missing table becomes `SchemaNotMigratedError`). */
  readonly q: (db: Queryable, text: string, values?: unknown[]) => Promise<QueryResultLike>;
  /**
   * Runs one of the worker's statements on the outbox's own pool or one of its clients: as a prepared
   * statement when `preparedStatements` is on, otherwise as `q` does.
   */
  readonly qp: (db: Queryable, text: string, values: unknown[]) => Promise<QueryResultLike>;
  /** Whether the worker's statements run prepared (the option `preparedStatements`). */
  readonly preparedStatements: boolean;
  /** Set by `close()`. */
  closed: boolean;
}

/**
 * Parses the options (opening the pool when given a URL) and sets up the notify listener and gate.
 *
 * @example
 * ```ts
 * const context = createPostgresOutboxContext({ pool, schema: 'postback' });
 * ```
 */
export function createPostgresOutboxContext(options: PostgresOutboxOptions): PostgresOutboxContext {
  const {
    pool,
    ownsPool,
    schema,
    policy,
    now,
    onError,
    reconnectMs,
    reconnectMaxMs,
    notifyCoalesceMs,
    preparedStatements,
  } = resolveOutboxOptions(options);
  const channel = channelOf(schema);
  return {
    pool,
    ownsPool,
    schema,
    policy,
    now,
    onError,
    sql: jobStatements(quoteIdent(schema)),
    channel,
    refundWindowMs: refundSpanOf(policy),
    listener: createNotifyListener({ pool, channel, onError, reconnectMs, reconnectMaxMs }),
    notifyGate: createNotifyGate(notifyCoalesceMs, () => {
      pool.query('SELECT pg_notify($1, $2)', [channel, '']).catch(onError);
    }),
    q: (db, text, values) => run(db, schema, text, values),
    qp: (db, text, values) =>
      run(db, schema, text, values, preparedStatements ? statementName('pbq', text) : undefined),
    preparedStatements,
    closed: false,
  };
}

/**
 * Throws core's `OutboxClosedError` once `close()` was called: every Outbox method checks it first.
 *
 * @example
 * ```ts
 * assertOpen(context); // OutboxClosedError: the Postgres outbox in schema postback is closed
 * ```
 */
export function assertOpen(context: PostgresOutboxContext): void {
  if (context.closed) throw new OutboxClosedError(`the Postgres outbox in schema ${context.schema}`);
}

/**
 * Runs `work` in a transaction of its own on one pooled connection (`begin` opens it: pass
 * `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY` for several reads of one snapshot). A connection that dies while we
 * hold it emits 'error' (even between statements, when no query would see it): we listen, and give it
 * back with that error so pg destroys it instead of pooling a dead connection.
 *
 * @example
 * ```ts
 * const outcome = await inTransaction(context.pool, (tx) => refundIn(context, tx, input));
 * ```
 */
export async function inTransaction<T>(
  pool: PoolLike,
  work: (db: Queryable) => Promise<T>,
  begin = 'BEGIN',
): Promise<T> {
  let broken: Error | undefined;
  const onClientError = (err: Error) => {
    broken ??= err;
  };
  const client = await connectListening(pool, onClientError);
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    // A prepared statement gone from the session (DISCARD ALL): pg would keep believing it is there, so
    // the connection goes, as pg's own pool.query does with a connection whose query failed.
    if ((err as { code?: unknown }).code === '26000') broken ??= err as Error;
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
}
