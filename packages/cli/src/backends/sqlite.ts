/**
 * The SQLite backend of the CLI (`--db FILE`, the default): opens a durable outbox on the file, creating
 * and migrating it when missing (unless the caller only reads: `create: false`). A file that is not a
 * postback database (another application's SQLite database, or no SQLite file at all) is refused and left
 * untouched; `adoptForeign` (for `migrate`) puts our tables into one on purpose. `:memory:`, an empty name
 * and `file:` URIs are refused as usage errors: a job "created" in memory is lost when the command exits.
 * Two environment variables tune the connection:
 * - `POSTBACK_SQLITE_SYNCHRONOUS`: `full` (default; a resolved enqueue survives power loss), `extra`, or
 *   `normal` (faster; the last commits may be lost on a power cut, never on a crash of the process);
 * - `POSTBACK_SQLITE_BUSY_TIMEOUT_MS`: how long to wait for another process's write lock (default 5000).
 */
import { OptionsError } from '@postback/core';
import {
  createSqliteClickStore,
  createSqliteOutbox,
  DEFAULT_BUSY_TIMEOUT_MS,
  DEFAULT_SYNCHRONOUS,
  type SqliteOutboxOptions,
} from '@postback/sqlite';
import { BackendFlagError, type OpenedBackend } from './backend.ts';

const ENV_OF: Record<string, string> = {
  synchronous: 'POSTBACK_SQLITE_SYNCHRONOUS',
  busyTimeoutMs: 'POSTBACK_SQLITE_BUSY_TIMEOUT_MS',
};

/** How a command may treat the file it opens (see {@link open}). */
export interface SqliteOpenAccess {
  /**
   * Whether the command may create the file (or fill an empty one) and migrate an older one: `confirm`,
   * `enqueue`, `refund`, `worker`, `migrate`. Commands that only read (`status`, `dlq list`) pass `false`.
   * @defaultValue true
   */
  create?: boolean;
  /** Whether another application's SQLite database may be given our tables (`migrate` on request). @defaultValue false */
  adoptForeign?: boolean;
  /** Whether the command only reads: the file is opened by a connection that cannot write. @defaultValue false */
  readOnly?: boolean;
}

/**
 * Refuses a `--db` value that is not a file on disk: `:memory:` (or an empty name, or a `file:` URI, which
 * may name an in-memory database too) would answer "created" and lose the job when the process exits.
 *
 * @example
 * ```ts
 * checkDbPath(':memory:'); // throws BackendFlagError (exit 2)
 * ```
 */
export function checkDbPath(file: string): void {
  if (file.trim() === '' || file === ':memory:' || /^file:/i.test(file)) {
    const shown = file.trim() === '' ? 'an empty name' : `'${file}'`;
    throw new BackendFlagError(
      `--db needs the path of a database file, not ${shown}: an in-memory database is gone when the command exits, ` +
        'with every job it reported created. Give a file such as --db postback.db',
    );
  }
}

/**
 * Opens the outbox on `file`.
 *
 * @example
 * ```ts
 * const { outbox, describe } = await open('postback.db', process.env);
 * const reading = await open('postback.db', process.env, { create: false }); // status, dlq list
 * ```
 */
export async function open(
  file: string,
  env: Record<string, string | undefined>,
  access: SqliteOpenAccess = {},
): Promise<OpenedBackend> {
  checkDbPath(file);
  const options: SqliteOutboxOptions = {
    filename: file,
    ...(access.create === undefined ? {} : { create: access.create }),
    ...(access.adoptForeign === undefined ? {} : { adoptForeign: access.adoptForeign }),
    ...(access.readOnly === undefined ? {} : { readOnly: access.readOnly }),
  };
  const synchronous = env.POSTBACK_SQLITE_SYNCHRONOUS;
  if (synchronous !== undefined && synchronous !== '') {
    options.synchronous = synchronous.toLowerCase() as SqliteOutboxOptions['synchronous'];
  }
  const busy = env.POSTBACK_SQLITE_BUSY_TIMEOUT_MS;
  if (busy !== undefined && busy !== '') {
    // Digits only (the schema checks the range); anything else is named with what was given.
    if (!/^\d+$/.test(busy))
      throw new OptionsError(
        ENV_OF.busyTimeoutMs as string,
        `must be an integer of milliseconds, got '${busy}'`,
      );
    options.busyTimeoutMs = Number(busy);
  }
  let outbox: ReturnType<typeof createSqliteOutbox>;
  try {
    outbox = createSqliteOutbox(options);
  } catch (error) {
    // Name the variable the user set, not the option it feeds.
    const variable = error instanceof OptionsError ? ENV_OF[error.field] : undefined;
    if (variable === undefined) throw error;
    throw new OptionsError(variable, (error as OptionsError).message.replace(/^Invalid option [^:]+: /, ''));
  }
  const { journalMode, synchronous: level } = outbox.durability;
  return {
    outbox,
    clicks: () =>
      createSqliteClickStore({
        filename: file,
        ...(options.synchronous === undefined ? {} : { synchronous: options.synchronous }),
        ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
      }),
    describe: `sqlite ${file} (journal=${journalMode}, synchronous=${level}${
      level === DEFAULT_SYNCHRONOUS ? '' : `, default ${DEFAULT_SYNCHRONOUS}`
    }, busy timeout ${options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS} ms)`,
  };
}
