/**
 * Outcomes are recorded together: while the run loop runs, a finished send waits (at most `recordDelayMs`)
 * until the loop claims again, no send is left in flight, or `stop()`; then every waiting outcome
 * is handed to the outbox in the same turn as that claim, so a store with group commit records a whole
 * batch of outcomes and the next claim in one transaction (one fsync) instead of one per turn in which a
 * response arrived.
 */

/** The gate outcomes wait at; see {@link createRecordBatch}. */
export interface RecordBatch {
  /** Resolves when the outcome of a finished send may be recorded. */
  next(): Promise<void>;
  /** Lets every waiting outcome go to the outbox now. */
  flush(): void;
}

/**
 * Creates the gate: an outcome waits at most `delayMs`. `gathering()` says whether a claim is coming to
 * share a commit with: without the run loop (`runOnce`, `drain`) or while stopping, outcomes are recorded
 * at once.
 */
export function createRecordBatch(delayMs: number, gathering: () => boolean): RecordBatch {
  let waiting: { promise: Promise<void>; release: () => void; timer: ReturnType<typeof setTimeout> } | null =
    null;
  const flush = (): void => {
    if (waiting === null) return;
    clearTimeout(waiting.timer);
    waiting.release();
    waiting = null;
  };
  return {
    next() {
      if (!gathering()) return Promise.resolve();
      if (waiting === null) {
        let release = () => {};
        const promise = new Promise<void>((resolve) => {
          release = resolve;
        });
        const timer = setTimeout(flush, delayMs);
        timer.unref?.();
        waiting = { promise, release, timer };
      }
      return waiting.promise;
    },
    flush,
  };
}
