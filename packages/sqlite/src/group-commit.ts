/**
 * Group commit: write operations issued in the same turn of the event loop share ONE transaction, so they
 * share one fsync. With `synchronous=FULL` an fsync costs about as much as everything else in a commit put
 * together, so 64 concurrent enqueues cost about one fsync instead of 64, and each caller still resolves
 * only after the commit that holds its write — a resolved enqueue is on disk.
 *
 * Operations run in call order inside the transaction, each seeing the writes of those before it (the same
 * order twice in one batch gives `created: true` then `created: false`). An operation that throws a
 * {@link CallError} rejects only its own call (it must throw before it writes anything); any other error
 * — SQLITE_BUSY past the timeout, a full disk, a failed COMMIT — rolls the transaction back and rejects
 * every call in it.
 */
import type { DatabaseSync } from 'node:sqlite';
import { inTransaction } from './transaction.ts';

/** Wraps an error that belongs to one call only (bad input found inside the transaction). */
export class CallError {
  readonly error: unknown;
  constructor(error: unknown) {
    this.error = error;
  }
}

interface QueuedCall {
  apply: () => unknown;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/** A queue of writes committed together; see the module comment. */
export interface GroupCommit {
  /**
   * Runs `apply` inside the next shared transaction; resolves with its result once that transaction has
   * committed.
   */
  run<T>(apply: () => T): Promise<T>;
  /** Commits everything queued now, synchronously (used by `close`). */
  flush(): void;
  /** Transactions committed so far (for tests and metrics). */
  readonly commits: number;
}

/** Options of {@link createGroupCommit}. */
export interface GroupCommitOptions {
  /** Most calls in one transaction. */
  maxBatchSize: number;
}

/**
 * Creates the group-commit queue of one connection.
 *
 * @example
 * ```ts
 * const writes = createGroupCommit(db, { maxBatchSize: 1_000 });
 * const id = await writes.run(() => insert.run(values).lastInsertRowid);
 * ```
 */
export function createGroupCommit(db: DatabaseSync, options: GroupCommitOptions): GroupCommit {
  const { maxBatchSize } = options;
  let queue: QueuedCall[] = [];
  let scheduled: ReturnType<typeof setImmediate> | null = null;
  let commits = 0;

  function commitBatch(batch: QueuedCall[]): void {
    const outcomes: Array<{ ok: boolean; value: unknown }> = new Array(batch.length);
    try {
      inTransaction(db, () => {
        for (let i = 0; i < batch.length; i++) {
          try {
            outcomes[i] = { ok: true, value: (batch[i] as QueuedCall).apply() };
          } catch (error) {
            if (!(error instanceof CallError)) throw error;
            outcomes[i] = { ok: false, value: error.error };
          }
        }
      });
    } catch (error) {
      for (const call of batch) call.reject(error);
      return;
    }
    commits++;
    for (let i = 0; i < batch.length; i++) {
      const call = batch[i] as QueuedCall;
      const outcome = outcomes[i] as { ok: boolean; value: unknown };
      if (outcome.ok) call.resolve(outcome.value);
      else call.reject(outcome.value);
    }
  }

  function flush(): void {
    if (scheduled !== null) {
      clearImmediate(scheduled);
      scheduled = null;
    }
    while (queue.length > 0) {
      const batch = queue.length <= maxBatchSize ? queue : queue.slice(0, maxBatchSize);
      queue = queue.length <= maxBatchSize ? [] : queue.slice(maxBatchSize);
      commitBatch(batch);
    }
  }

  return {
    run<T>(apply: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ apply, resolve: resolve as (value: unknown) => void, reject });
        // setImmediate, not a microtask: it runs after every promise continuation of this turn, so callers
        // that re-enqueue as soon as their previous write resolved still land in one batch.
        scheduled ??= setImmediate(flush);
      });
    },
    flush,
    get commits() {
      return commits;
    },
  };
}
