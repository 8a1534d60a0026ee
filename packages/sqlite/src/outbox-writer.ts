/**
 * Where the outbox's writes run. Both writers take an operation of {@link createOutboxOperations} by name
 * with plain-data arguments and resolve with its result once the group-committed transaction holding it is
 * durable: {@link createLocalWriter} on the calling thread's connection, `createThreadWriter` on a
 * connection of the outbox's own worker thread.
 */

import type { DatabaseSync } from 'node:sqlite';
import { createGroupCommit } from './group-commit.ts';
import type { OutboxOperations, WriteOperation } from './outbox-operations.ts';

/** Runs write operations in group-committed transactions; see the module comment. */
export interface OutboxWriter {
  /** Runs `ops[op](...args)` in the next shared transaction; resolves once it is durable. */
  write<K extends WriteOperation>(
    op: K,
    args: Parameters<OutboxOperations[K]>,
  ): Promise<ReturnType<OutboxOperations[K]>>;
  /** Transactions committed so far. */
  readonly commits: number;
  /** Commits everything accepted, waits until it is durable, then lets go of the connection. */
  close(): Promise<void>;
}

/**
 * A writer on the calling thread: the group commit runs on `db` between turns of this event loop.
 *
 * @example
 * ```ts
 * const writer = createLocalWriter(db, createOutboxOperations(db, policy), { maxBatchSize: 1_000 });
 * const jobs = await writer.write('claim', [{ now: Date.now(), limit: 50, leaseMs: 30_000 }]);
 * ```
 */
export function createLocalWriter(
  db: DatabaseSync,
  ops: OutboxOperations,
  options: { maxBatchSize: number },
): OutboxWriter {
  const writes = createGroupCommit(db, { maxBatchSize: options.maxBatchSize });
  return {
    write(op, args) {
      const operation = ops[op] as (...values: typeof args) => ReturnType<OutboxOperations[typeof op]>;
      return writes.run(() => operation(...args));
    },
    get commits() {
      return writes.commits;
    },
    async close() {
      writes.flush();
    },
  };
}

/**
 * The writer of a read-only outbox (the `readOnly` option): every write rejects, naming the file.
 *
 * @example
 * ```ts
 * await readOnlyWriter('postback.db').write('claim', [claimOptions]); // rejects: opened read-only
 * ```
 */
export function readOnlyWriter(filename: string): OutboxWriter {
  return {
    write: () =>
      Promise.reject(
        new Error(`the SQLite outbox on ${filename} was opened read-only (readOnly: true): it cannot write`),
      ),
    commits: 0,
    close: async () => {},
  };
}
