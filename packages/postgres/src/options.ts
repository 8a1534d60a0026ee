/**
 * The options of the Postgres outbox and click store: one zod schema each, the single source of truth for
 * their types, defaults and validation (unknown keys rejected, bad values named by an `OptionsError`).
 */
import { type EpochMs, OptionsError, type WindowPolicy } from '@postback/core';
import { parseOptions, windowPolicySchema } from '@postback/core/store';
import pg from 'pg';
import { z } from 'zod';
import type { PoolLike } from './queryable.ts';
import { DEFAULT_SCHEMA, validateSchemaName } from './schema-name.ts';

/**
 * Connections of the pool the outbox opens itself (from `connectionString`). One more is held while
 * anybody `subscribe`s (the LISTEN connection).
 * @defaultValue 10
 * @example
 * ```ts
 * createPostgresOutbox({ connectionString: url, poolSize: DEFAULT_POOL_SIZE * 2 });
 * ```
 */
export const DEFAULT_POOL_SIZE = 10;

/**
 * Shortest delay before re-opening a lost LISTEN connection (polling keeps delivering meanwhile). Each
 * attempt waits this long plus a random share that doubles with every failure in a row, up to
 * {@link DEFAULT_RECONNECT_MAX_MS}.
 * @defaultValue 1000
 * @example
 * ```ts
 * createPostgresOutbox({ pool, reconnectMs: DEFAULT_RECONNECT_MS * 5 });
 * ```
 */
export const DEFAULT_RECONNECT_MS = 1000;

/**
 * Longest delay before re-opening a lost LISTEN connection, however many attempts failed in a row: a
 * database that is down for long is retried about twice a minute per worker, and a worker notices its
 * return within this long (its polling delivers meanwhile anyway).
 * @defaultValue 30000
 * @example
 * ```ts
 * createPostgresOutbox({ pool, reconnectMaxMs: 5_000 }); // hear about new jobs sooner after an outage
 * ```
 */
export const DEFAULT_RECONNECT_MAX_MS = 30_000;

/**
 * Enqueues within this many milliseconds of the last one that notified do not notify inside their own
 * transaction; one trailing NOTIFY follows instead. A NOTIFY takes a lock held through its transaction's
 * commit, so notifying on every enqueue would serialise concurrent order commits (measured: about half
 * the throughput). `0` notifies on every enqueue.
 * @defaultValue 25
 * @example
 * ```ts
 * createPostgresOutbox({ pool, notifyCoalesceMs: 0 }); // lowest latency, for low enqueue rates
 * ```
 */
export const DEFAULT_NOTIFY_COALESCE_MS = 25;

/**
 * Whether the worker's statements (claim, complete, retry, fail, release, extendLease) run as prepared
 * statements on each pooled connection: Postgres parses the claim (a long statement) once per connection
 * and reuses its plan, instead of parsing and planning it at every call (measured: half the server's CPU
 * per claim of 10). Turn it off behind a pooler that does not keep a session's prepared statements across
 * transactions (PgBouncer in transaction mode before 1.21), or with a pool whose `query()` takes text only.
 * @defaultValue true
 * @example
 * ```ts
 * createPostgresOutbox({ pool, preparedStatements: DEFAULT_PREPARED_STATEMENTS && !behindPgBouncer });
 * ```
 */
export const DEFAULT_PREPARED_STATEMENTS = true;

const poolSchema = z.custom<PoolLike>(
  (v) =>
    typeof v === 'object' &&
    v !== null &&
    typeof (v as PoolLike).query === 'function' &&
    typeof (v as PoolLike).connect === 'function',
  'must be a pg.Pool (an object with query() and connect())',
);

const connectionSchema = {
  /** A `pg.Pool` the app already has. The outbox never ends it. One of `pool` / `connectionString`. */
  pool: poolSchema.optional(),
  /** A `postgres://` URL; the outbox opens (and on `close` ends) its own pool. */
  connectionString: z.string().min(1).optional(),
  /** @defaultValue {@link DEFAULT_POOL_SIZE} (only with `connectionString`) */
  poolSize: z.number().int().min(1).max(1000).optional(),
  /** @defaultValue {@link DEFAULT_SCHEMA} */
  schema: z.string().optional(),
};

const outboxOptionsSchema = z.strictObject({
  ...connectionSchema,
  /** Windows used to stamp deadlines. @defaultValue DEFAULT_WINDOW_POLICY */
  policy: windowPolicySchema,
  /** Clock for `createdAt` and validation. @defaultValue Date.now */
  now: z
    .custom<() => EpochMs>((v) => typeof v === 'function', 'must be a function returning epoch ms')
    .optional(),
  /**
   * Connection errors that no call of yours would see: of the LISTEN connection (it reconnects by itself)
   * and the pool's `'error'` events (an idle connection that died), which would otherwise crash the
   * process as unhandled. @defaultValue console.error
   */
  onError: z.custom<(err: unknown) => void>((v) => typeof v === 'function', 'must be a function').optional(),
  /** @defaultValue {@link DEFAULT_RECONNECT_MS} */
  reconnectMs: z.number().int().min(1).max(3_600_000).optional(),
  /** At least `reconnectMs`. @defaultValue {@link DEFAULT_RECONNECT_MAX_MS} */
  reconnectMaxMs: z.number().int().min(1).max(3_600_000).optional(),
  /** @defaultValue {@link DEFAULT_NOTIFY_COALESCE_MS} */
  notifyCoalesceMs: z.number().int().min(0).max(60_000).optional(),
  /** @defaultValue {@link DEFAULT_PREPARED_STATEMENTS} */
  preparedStatements: z.boolean().optional(),
});

/**
 * Options of `createPostgresOutbox`. Give exactly one of `pool` and `connectionString`.
 * @example
 * ```ts
 * const options: PostgresOutboxOptions = { pool, schema: 'postback', policy: { returnWindowMs: 14 * DAY_MS } };
 * ```
 */
export type PostgresOutboxOptions = z.input<typeof outboxOptionsSchema>;

const clickStoreOptionsSchema = z.strictObject({
  ...connectionSchema,
  /** Windows; clicks older than `confirmWindowMs` are never returned. @defaultValue DEFAULT_WINDOW_POLICY */
  policy: windowPolicySchema,
});

/**
 * Options of `createPostgresClickStore`. Give exactly one of `pool` and `connectionString`.
 * @example
 * ```ts
 * const options: PostgresClickStoreOptions = { connectionString: process.env.DATABASE_URL };
 * ```
 */
export type PostgresClickStoreOptions = z.input<typeof clickStoreOptionsSchema>;

/** The connection a store uses, and whether it owns (and so ends) the pool. */
export interface ResolvedConnection {
  pool: PoolLike;
  ownsPool: boolean;
  schema: string;
}

function resolveConnection(options: {
  pool?: PoolLike;
  connectionString?: string;
  poolSize?: number;
  schema?: string;
}): ResolvedConnection {
  const schema = validateSchemaName(options.schema ?? DEFAULT_SCHEMA);
  if ((options.pool === undefined) === (options.connectionString === undefined)) {
    throw new OptionsError('pool', 'give exactly one of pool and connectionString');
  }
  if (options.pool !== undefined) {
    if (options.poolSize !== undefined)
      throw new OptionsError('poolSize', 'only applies with connectionString');
    return { pool: options.pool, ownsPool: false, schema };
  }
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  return { pool, ownsPool: true, schema };
}

/** Validated outbox options with defaults applied. */
export interface ResolvedOutboxOptions extends ResolvedConnection {
  policy: WindowPolicy;
  now: () => EpochMs;
  onError: (err: unknown) => void;
  reconnectMs: number;
  reconnectMaxMs: number;
  notifyCoalesceMs: number;
  preparedStatements: boolean;
}

/** Validates outbox options (throws `OptionsError`) and opens the pool when given a URL. */
export function resolveOutboxOptions(input: PostgresOutboxOptions): ResolvedOutboxOptions {
  const options = parseOptions(outboxOptionsSchema, input);
  const reconnectMs = options.reconnectMs ?? DEFAULT_RECONNECT_MS;
  const reconnectMaxMs = options.reconnectMaxMs ?? Math.max(DEFAULT_RECONNECT_MAX_MS, reconnectMs);
  if (reconnectMaxMs < reconnectMs)
    throw new OptionsError('reconnectMaxMs', `must be at least reconnectMs (${reconnectMs})`);
  return {
    ...resolveConnection(options),
    policy: options.policy,
    now: options.now ?? Date.now,
    onError: options.onError ?? ((err) => console.error('postback: connection error:', err)),
    reconnectMs,
    reconnectMaxMs,
    notifyCoalesceMs: options.notifyCoalesceMs ?? DEFAULT_NOTIFY_COALESCE_MS,
    preparedStatements: options.preparedStatements ?? DEFAULT_PREPARED_STATEMENTS,
  };
}

/** Validated click store options with defaults applied. */
export interface ResolvedClickStoreOptions extends ResolvedConnection {
  confirmWindowMs: number;
}

/** Validates click store options (throws `OptionsError`) and opens the pool when given a URL. */
export function resolveClickStoreOptions(input: PostgresClickStoreOptions): ResolvedClickStoreOptions {
  const options = parseOptions(clickStoreOptionsSchema, input);
  return { ...resolveConnection(options), confirmWindowMs: options.policy.confirmWindowMs };
}
