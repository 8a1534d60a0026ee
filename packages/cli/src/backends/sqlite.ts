/**
 * The SQLite backend of the CLI (`--db FILE`, the default): opens a durable outbox on the file, creating
 * and migrating it when missing. Two environment variables tune the connection:
 * - `POSTBACK_SQLITE_SYNCHRONOUS`: `full` (default; a resolved enqueue survives power loss), `extra`,
 *   `full-async` (as durable, the fsync off the event loop), or `normal` (faster; the last commits may be
 *   lost on a power cut, never on a crash of the process);
 * - `POSTBACK_SQLITE_BUSY_TIMEOUT_MS`: how long to wait for another process's write lock (default 5000).
 */
import { OptionsError } from '@postback/core';
import {
  createSqliteOutbox,
  DEFAULT_BUSY_TIMEOUT_MS,
  DEFAULT_SYNCHRONOUS,
  type SqliteOutboxOptions,
} from '@postback/sqlite';
import type { OpenedBackend } from './index.ts';

const ENV_OF: Record<string, string> = {
  synchronous: 'POSTBACK_SQLITE_SYNCHRONOUS',
  busyTimeoutMs: 'POSTBACK_SQLITE_BUSY_TIMEOUT_MS',
};

/**
 * Opens the outbox on `file`.
 *
 * @example
 * ```ts
 * const { outbox, describe } = await open('postback.db', process.env);
 * ```
 */
export async function open(file: string, env: Record<string, string | undefined>): Promise<OpenedBackend> {
  const options: SqliteOutboxOptions = { filename: file };
  const synchronous = env.POSTBACK_SQLITE_SYNCHRONOUS;
  if (synchronous !== undefined && synchronous !== '') {
    options.synchronous = synchronous.toLowerCase() as SqliteOutboxOptions['synchronous'];
  }
  const busy = env.POSTBACK_SQLITE_BUSY_TIMEOUT_MS;
  if (busy !== undefined && busy !== '') {
    // Left as a number-or-NaN: the options schema rejects anything but a non-negative integer, naming it.
    options.busyTimeoutMs = /^\d+$/.test(busy) ? Number(busy) : Number.NaN;
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
    describe: `sqlite ${file} (journal=${journalMode}, synchronous=${level}${
      level === DEFAULT_SYNCHRONOUS ? '' : `, default ${DEFAULT_SYNCHRONOUS}`
    }, busy timeout ${options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS} ms)`,
  };
}
