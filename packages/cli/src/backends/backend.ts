/**
 * What every backend module shares with the code that chooses one: the backend flags, what opening one
 * gives, and the error for a wrong choice of flags. Kept apart from `index.ts`, which loads the backend
 * modules, so that no backend module imports its loader (no import cycle).
 */
import type { ClickStore, Outbox } from '@postback/core';

/** The backend flags every queue command accepts. */
export interface BackendFlags {
  db?: string;
  pg?: string;
  sqs?: string;
  /** `--pg`: the schema (`--schema`, or `POSTBACK_PG_SCHEMA` through the flag's fallback); ignored otherwise. */
  schema?: string;
  /** `--sqs`: the long-poll wait of a claim (`worker --sqs-wait-seconds`); ignored otherwise. */
  sqsWaitSeconds?: number;
  /** `false`: open only an outbox that exists and is current; never create or migrate (reading commands). */
  create?: boolean;
  /**
   * `true`: only read — a connection that cannot write, so a file on a read-only mount (or that this
   * process may not write) is read, and no file is ever modified (`status`, `jobs`, `job`, `dlq list`).
   * Implies `create: false`. SQLite only; the other backends read as they always do.
   */
  readOnly?: boolean;
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
  /**
   * Opens the backend's click store (the `clicks` table beside the jobs), for retention sweeps; the caller
   * closes it. Absent for backends without one (SQS).
   */
  clicks?: () => ClickStore;
}

/** Thrown when no or more than one backend flag is given. */
export class BackendFlagError extends Error {
  override name = 'BackendFlagError';
}
