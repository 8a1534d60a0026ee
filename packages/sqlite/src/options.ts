/**
 * Options of the SQLite outbox and click store: one zod schema per options object is the single source of
 * truth for their types, defaults and validation. Unknown keys are rejected (a typo such as `synchronus`
 * must not silently fall back to a default), and every error names the offending option.
 */

import type { DatabaseSync } from 'node:sqlite';
import { documented, windowPolicySchema } from '@postback/core/store';
import { z } from 'zod';

/**
 * SQLite `synchronous` level. `full` (default): WAL is fsynced at every commit, so an enqueue that resolved
 * survives power loss. `extra`: also fsyncs the directory after the journal is deleted (belt and braces on
 * file systems that need it). `normal`: WAL is fsynced only at checkpoints — several times faster per commit,
 * never corrupts the file, but the last commits before a power cut (not a process crash) can be lost.
 * The outbox's writes, fsync included, run on its writer thread ({@link DEFAULT_THREAD}), off the caller's
 * event loop.
 * @defaultValue `'full'`
 *
 * @example
 * ```ts
 * createSqliteOutbox({ filename, synchronous: DEFAULT_SYNCHRONOUS });
 * ```
 */
export const DEFAULT_SYNCHRONOUS = 'full' as const;

/**
 * How long a statement waits for another connection's write lock (another worker process on the same file)
 * before failing with `SQLITE_BUSY`. The wait blocks the event loop of this process: keep it short.
 * @defaultValue 5_000
 *
 * @example
 * ```ts
 * createSqliteOutbox({ filename, busyTimeoutMs: 2 * DEFAULT_BUSY_TIMEOUT_MS });
 * ```
 */
export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

/**
 * Most operations group-committed in one transaction. Calls beyond it wait for the next transaction of the
 * same flush; the cap bounds how long one transaction holds the write lock.
 * @defaultValue 1_000
 *
 * @example
 * ```ts
 * createSqliteOutbox({ filename, maxBatchSize: DEFAULT_MAX_BATCH_SIZE / 10 });
 * ```
 */
export const DEFAULT_MAX_BATCH_SIZE = 1_000;

/**
 * Whether the outbox runs its writes on a worker thread of its own (with its own connection to the file):
 * SQL and the fsync of each commit then never run on the caller's event loop, which keeps serving requests
 * and sending postbacks meanwhile. Reads (`get`, `stats`, `listDead`, …) stay on the caller's connection.
 * The thread starts at the first write. An in-memory database (`:memory:`) always writes on the calling thread.
 * `false` is for short scripts (a thread costs ~20 ms to start): every commit then fsyncs on the event loop.
 * @defaultValue true
 *
 * @example
 * ```ts
 * createSqliteOutbox({ filename, thread: !DEFAULT_THREAD }); // everything on the calling thread
 * ```
 */
export const DEFAULT_THREAD = true;

/**
 * Whether opening may write postback's schema: create the file (or fill an empty one) and migrate a file
 * of an older schema version. Tools that only read (`postback status`, `dlq list`) pass `false`: a missing,
 * empty or older file is then refused with a `DatabaseFileError` and nothing is written.
 * @defaultValue true
 *
 * @example
 * ```ts
 * createSqliteOutbox({ filename, create: !DEFAULT_CREATE }); // read an existing outbox, create nothing
 * ```
 */
export const DEFAULT_CREATE = true;

/**
 * Whether the outbox only reads the file: opened by a connection that cannot write (no journal mode set,
 * nothing created or migrated, a missing, empty or older file refused as with `create: false`), so it works
 * on a read-only file, folder or mount; every write rejects. For tools that only look (`postback status`,
 * `jobs`, `job`, `dlq list`). See "Foreign files and reading tools" in the README.
 * @defaultValue false
 *
 * @example
 * ```ts
 * createSqliteOutbox({ filename, readOnly: !DEFAULT_READ_ONLY }); // look, never write
 * ```
 */
export const DEFAULT_READ_ONLY = false;

/**
 * Whether a SQLite database that holds tables of another application (and no postback schema) may be given
 * postback's tables and switched to WAL. Off by default: such a file is refused with a `DatabaseFileError`
 * (`code: 'foreign'`) and left byte for byte as it was, journal mode included. Even when adopting, a file
 * whose `user_version` is set is refused (another tool versions its schema with it; postback would
 * overwrite it).
 * @defaultValue false
 *
 * @example
 * ```ts
 * createSqliteOutbox({ filename: 'app.db', adoptForeign: true }); // our tables beside the app's, on purpose
 * ```
 */
export const DEFAULT_ADOPT_FOREIGN = false;

const connectionShape = {
  /** @defaultValue {@link DEFAULT_SYNCHRONOUS} */
  synchronous: documented(
    z.enum(['full', 'extra', 'normal']).default(DEFAULT_SYNCHRONOUS),
    "'full' \\| 'extra' \\| 'normal'",
    `\`'${DEFAULT_SYNCHRONOUS}'\` (\`DEFAULT_SYNCHRONOUS\`)`,
    'durability of a commit, see below',
  ),
  /** @defaultValue {@link DEFAULT_BUSY_TIMEOUT_MS} */
  busyTimeoutMs: documented(
    z.number().int().nonnegative().max(2_147_483_647).default(DEFAULT_BUSY_TIMEOUT_MS),
    'integer ≥ 0',
    `\`${DEFAULT_BUSY_TIMEOUT_MS}\` (\`DEFAULT_BUSY_TIMEOUT_MS\`)`,
    "wait for another process's write lock before failing with SQLITE_BUSY",
  ),
  /** @defaultValue {@link DEFAULT_MAX_BATCH_SIZE} */
  maxBatchSize: documented(
    z.number().int().positive().max(100_000).default(DEFAULT_MAX_BATCH_SIZE),
    'integer 1–100000',
    `\`${DEFAULT_MAX_BATCH_SIZE}\` (\`DEFAULT_MAX_BATCH_SIZE\`)`,
    'most writes in one group-committed transaction',
  ),
};

const clockSchema = z
  .custom<() => number>((value) => typeof value === 'function', {
    message: 'expected a function returning epoch milliseconds',
  })
  .optional();

const filenameSchema = z.string().min(1, 'expected a file path (or ":memory:")');

/**
 * Schema of {@link SqliteOutboxOptions}: the single source of truth for the outbox's options.
 *
 * @example
 * ```ts
 * sqliteOutboxOptionsSchema.parse({ filename: 'postback.db' }).synchronous; // 'full'
 * ```
 */
export const sqliteOutboxOptionsSchema = z.strictObject({
  /** Path of the database file; created (with its schema) when missing. */
  filename: documented(
    filenameSchema,
    'string',
    '— (required)',
    'database file; created and migrated when missing (`":memory:"` works but is not durable)',
  ),
  /** Windows used to stamp deadlines; defaults from `@postback/core`. */
  policy: documented(
    windowPolicySchema.describe('the windows this outbox stamps deadlines with'),
    'Partial<WindowPolicy>',
    'core defaults (7-day confirm window, 1 h safety margin, open-ended return window, 400-day confirmation retention)',
    'windows used to stamp deadlines',
  ),
  /** Clock for `createdAt`/`updatedAt` of enqueued jobs. @defaultValue `Date.now` */
  now: documented(
    clockSchema,
    '() => number',
    '`Date.now`',
    'clock for `createdAt`/`updatedAt` of enqueued jobs and input validation',
  ),
  /** @defaultValue {@link DEFAULT_THREAD} */
  thread: documented(
    z.boolean().default(DEFAULT_THREAD),
    'boolean',
    `\`${DEFAULT_THREAD}\` (\`DEFAULT_THREAD\`)`,
    "run the writes on the outbox's own worker thread (see below); `:memory:` never does",
  ),
  /** @defaultValue {@link DEFAULT_CREATE} */
  create: documented(
    z.boolean().default(DEFAULT_CREATE),
    'boolean',
    `\`${DEFAULT_CREATE}\` (\`DEFAULT_CREATE\`)`,
    'may create a missing or empty file and migrate an older one; `false` for tools that only read (see [Foreign files](#foreign-files-and-reading-tools))',
  ),
  /** @defaultValue {@link DEFAULT_ADOPT_FOREIGN} */
  adoptForeign: documented(
    z.boolean().default(DEFAULT_ADOPT_FOREIGN),
    'boolean',
    `\`${DEFAULT_ADOPT_FOREIGN}\` (\`DEFAULT_ADOPT_FOREIGN\`)`,
    "may add our tables (and WAL) to another application's SQLite database (see [Foreign files](#foreign-files-and-reading-tools))",
  ),
  /** @defaultValue {@link DEFAULT_READ_ONLY} */
  readOnly: documented(
    z.boolean().default(DEFAULT_READ_ONLY),
    'boolean',
    `\`${DEFAULT_READ_ONLY}\` (\`DEFAULT_READ_ONLY\`)`,
    'only read: a connection that cannot write, works on a read-only file, folder or mount; every write rejects (see [Foreign files](#foreign-files-and-reading-tools))',
  ),
  ...connectionShape,
});

/**
 * Schema of {@link SqliteClickStoreOptions}: the single source of truth for the click store's options.
 *
 * @example
 * ```ts
 * sqliteClickStoreOptionsSchema.parse({ filename: 'postback.db' }).busyTimeoutMs; // 5000
 * ```
 */
export const sqliteClickStoreOptionsSchema = z
  .strictObject({
    /** Path of the database file (may be the outbox's file). Give this or `database`. */
    filename: filenameSchema.optional(),
    /** An open `DatabaseSync` to share; the store neither changes its pragmas nor closes it. */
    database: z
      .custom<DatabaseSync>((value) => typeof value === 'object' && value !== null && 'prepare' in value, {
        message: 'expected a node:sqlite DatabaseSync',
      })
      .optional(),
    /** The confirmation window decides when a click expires; defaults from `@postback/core`. */
    policy: windowPolicySchema,
    ...connectionShape,
  })
  .refine((o) => (o.filename === undefined) !== (o.database === undefined), {
    message: 'give exactly one of filename or database',
    path: ['filename'],
  });

/**
 * Options of `createSqliteOutbox` (input form: defaults may be omitted).
 *
 * @example
 * ```ts
 * const options: SqliteOutboxOptions = { filename: 'postback.db', policy: { returnWindowMs: 14 * DAY_MS } };
 * ```
 */
export type SqliteOutboxOptions = z.input<typeof sqliteOutboxOptionsSchema>;
/**
 * Options of `createSqliteClickStore` (input form: defaults may be omitted).
 *
 * @example
 * ```ts
 * const options: SqliteClickStoreOptions = { filename: 'postback.db' };
 * ```
 */
export type SqliteClickStoreOptions = z.input<typeof sqliteClickStoreOptionsSchema>;
