/**
 * The one thing postback needs from a database connection: `query(text, values)` resolving to `{ rows }`.
 * `pg`'s `Pool`, `Client` and `PoolClient` have it as they are; any other query builder (Kysely, Drizzle,
 * Knex) is adapted in a line, which is how `confirm(tx, ...)` joins the app's own transaction whatever the
 * app uses (the idea of pg-boss's `fromKnex`).
 */

/**
 * A result with rows (the subset of `pg.QueryResult` postback reads).
 * @example
 * ```ts
 * const result: QueryResultLike = await pool.query('SELECT 1 AS one');
 * ```
 */
export interface QueryResultLike {
  rows: Array<Record<string, unknown>>;
  rowCount?: number | null;
}

/**
 * Anything that runs a parameterised SQL statement (`$1`, `$2`, ...) and resolves to its rows: a `pg`
 * `Pool`, `Client` or `PoolClient`, or a one-line adapter around a query builder's transaction.
 *
 * @example
 * ```ts
 * // Kysely
 * const db: Queryable = { query: (text, values) => trx.executeQuery(CompiledQuery.raw(text, values ?? [])) };
 * ```
 */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<QueryResultLike>;
}

/**
 * A `pg` Pool: hands out clients that must be released.
 * @example
 * ```ts
 * const pool: PoolLike = new pg.Pool({ connectionString });
 * ```
 */
export interface PoolLike extends Queryable {
  connect(): Promise<Queryable & { release(err?: Error | boolean): void }>;
  end(): Promise<void>;
}

/** Whether `value` looks like a {@link Queryable}. */
export function isQueryable(value: unknown): value is Queryable {
  return (
    typeof value === 'object' && value !== null && typeof (value as { query?: unknown }).query === 'function'
  );
}

/**
 * Raised when postback's tables are missing or older than this release: the schema was never migrated
 * (or was migrated elsewhere), or not since an upgrade that added a column. The message says how to fix it.
 *
 * @example
 * ```ts
 * try { await outbox.stats(Date.now()); }
 * catch (err) { if (err instanceof SchemaNotMigratedError) await migrate(pool, { schema: err.schema }); }
 * ```
 */
export class SchemaNotMigratedError extends Error {
  override name = 'SchemaNotMigratedError';
  readonly schema: string;

  constructor(schema: string, options: { cause?: unknown } = {}) {
    super(
      `postback tables are missing or out of date in schema "${schema}": run \`postback migrate --pg <url> --schema ${schema}\` ` +
        `or call migrate(pool, { schema: '${schema}' }) first`,
      options,
    );
    this.schema = schema;
  }
}

/**
 * Runs a statement (as the prepared statement `name` when given one: `pg`'s query config), turning "relation does not exist" (never migrated) and "column does not exist" (not
 * migrated since an upgrade; our statements name only our own columns) into a {@link SchemaNotMigratedError}.
 */
export async function run(
  db: Queryable,
  schema: string,
  text: string,
  values?: unknown[],
  name?: string,
): Promise<QueryResultLike> {
  try {
    if (name !== undefined) {
      // A named statement (pg's query config): prepared once per connection, then bound and executed.
      const named = db.query as unknown as (config: object) => Promise<QueryResultLike>;
      return await named.call(db, { name, text, values });
    }
    return values === undefined ? await db.query(text) : await db.query(text, values);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === '42P01' || code === '3F000' || code === '42703')
      throw new SchemaNotMigratedError(schema, { cause: err });
    throw err;
  }
}

/** A pooled client that reports its connection's death through `'error'` events (a `pg` PoolClient). */
export type PooledClient = Queryable & {
  release(err?: Error | boolean): void;
  on(event: string, listener: (...args: never[]) => void): unknown;
  off?(event: string, listener: (...args: never[]) => void): unknown;
};

/**
 * Checks a client out of `pool` with `onError` already listening for its `'error'` events. pg emits
 * 'error' on a checked-out client whose connection dies while no query of it runs, even in the very
 * socket read that finished connecting it (a backend terminated right after startup): attached after
 * `await pool.connect()` the listener would come a microtask late and Node would throw the event as an
 * uncaught exception. `pg.Pool` also takes a callback, called inside that read, so the listener goes on
 * there; a pool that only returns a promise gets it as soon as the promise resolves.
 *
 * @example
 * ```ts
 * const client = await connectListening(pool, (err) => { broken = err; });
 * ```
 */
export function connectListening(pool: PoolLike, onError: (err: Error) => void): Promise<PooledClient> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const take = (client: PooledClient) => {
      if (settled) return;
      settled = true;
      client.on('error', onError);
      resolve(client);
    };
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      reject(err);
    };
    const connect = pool.connect as (callback?: (err: unknown, client?: PooledClient) => void) => unknown;
    let result: unknown;
    try {
      result = connect.call(pool, (err: unknown, client?: PooledClient) => {
        if (err || client === undefined) fail(err ?? new Error('the pool gave no client'));
        else take(client);
      });
    } catch (err) {
      fail(err);
      return;
    }
    if (typeof (result as Promise<PooledClient> | undefined)?.then === 'function')
      (result as Promise<PooledClient>).then(take, fail);
  });
}
