/**
 * Opens the Outbox a command works on, from its flags: `--db FILE` (SQLite, the default backend),
 * `--pg URL` (PostgreSQL) or `--sqs QUEUE_URL` (Amazon SQS). Each backend module is imported only when
 * chosen, so a command never loads a driver it does not use.
 */
import type { Outbox } from '@postback/core';

/** The backend flags every queue command accepts. */
export interface BackendFlags {
  db?: string;
  pg?: string;
  sqs?: string;
}

/** An opened backend: the outbox, plus whatever the worker needs to wake up early (LISTEN/NOTIFY). */
export interface OpenedBackend {
  outbox: Outbox;
  /** Human-readable name for messages (never contains credentials). */
  describe: string;
  /**
   * Wakes the worker early when jobs arrive (Postgres LISTEN/NOTIFY): pass as the Dispatcher's `wake`
   * option. Returns the unsubscribe function. Absent for backends that only poll.
   */
  wake?: (wakeUp: () => void) => () => void;
}

/** Thrown when no or more than one backend flag is given. */
export class BackendFlagError extends Error {
  override name = 'BackendFlagError';
}

/**
 * Opens the backend named by exactly one of `--db`, `--pg`, `--sqs`.
 *
 * @example
 * ```ts
 * const { outbox } = await openBackend({ db: 'postback.db' });
 * ```
 */
export async function openBackend(
  flags: BackendFlags,
  env: Record<string, string | undefined> = {},
): Promise<OpenedBackend> {
  const given = (['db', 'pg', 'sqs'] as const).filter((k) => flags[k] !== undefined);
  if (given.length !== 1) {
    throw new BackendFlagError('give exactly one of --db FILE, --pg URL or --sqs QUEUE_URL');
  }
  if (flags.db !== undefined) return (await import('./sqlite.ts')).open(flags.db, env);
  if (flags.pg !== undefined) return (await import('./postgres.ts')).open(flags.pg, env);
  return (await import('./sqs.ts')).open(flags.sqs as string, env);
}
