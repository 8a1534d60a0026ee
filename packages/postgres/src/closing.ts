/**
 * The Postgres outbox's pool-level error reporting and its `close()`: idle connections that die are
 * reported to `onError` instead of crashing the process, and closing stops the notify gate and listener,
 * ends a pool the outbox opened itself, and only then stops listening for the pool's errors.
 */
import type { PostgresOutboxContext } from './outbox-context.ts';
import type { PoolLike } from './queryable.ts';

/** The part of an EventEmitter (a `pg` Pool or client) used to hear about dead connections. */
interface EventSource {
  on(event: 'error', listener: (err: unknown) => void): unknown;
  off(event: 'error', listener: (err: unknown) => void): unknown;
}

/**
 * Reports the pool's 'error' events to `onError`; returns the function that stops reporting them.
 * A pooled connection that dies while idle (its backend terminated, a failover) makes pg's pool emit
 * 'error'; with no listener Node throws it as an uncaught exception and the worker dies. It is reported
 * instead: the pool has already dropped that connection, and the next query opens a new one.
 *
 * @example
 * ```ts
 * const stopReporting = reportPoolErrors(pool, (err) => logger.warn(err));
 * ```
 */
export function reportPoolErrors(pool: PoolLike, onError: (err: unknown) => void): () => void {
  const poolEvents = pool as Partial<EventSource>;
  const onPoolError = (err: unknown) => onError(err);
  poolEvents.on?.('error', onPoolError);
  return () => {
    poolEvents.off?.('error', onPoolError);
  };
}

/**
 * Closes the outbox once (later calls resolve at once): every method then throws `OutboxClosedError`.
 *
 * @example
 * ```ts
 * await closeOutbox(context, stopReportingPoolErrors);
 * ```
 */
export async function closeOutbox(context: PostgresOutboxContext, stopReporting: () => void): Promise<void> {
  if (context.closed) return;
  context.closed = true;
  context.notifyGate.close();
  await context.listener.close();
  try {
    if (context.ownsPool) await context.pool.end();
  } finally {
    stopReporting();
  }
}
