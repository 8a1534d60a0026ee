/**
 * One batcher for every batched write of the stores: callers add one item each and get their own item's
 * result, while the store handles items a batch at a time (Postgres completions in one transaction, SQS
 * deletes ten per `DeleteMessageBatch`). An item waits at most `windowMs` for others (0: until the end of
 * this turn of the event loop, so calls made together, such as responses arriving together, share a batch)
 * or until `maxSize` are waiting. `maxInFlight: 1` makes it a group commit: one batch at a time, and what
 * arrives meanwhile forms the next. Runtime-agnostic: timers only, no `node:` imports.
 */

/** Handles one batch and returns one result per item, in order. */
export type BatchHandler<T, R> = (items: T[]) => Promise<R[]>;

/** How a {@link Batcher} groups items. */
export interface BatcherOptions<T> {
  /** Most items in one batch. */
  maxSize: number;
  /** How long the first waiting item waits for others, in ms; 0 waits until the end of this turn. */
  windowMs: number;
  /**
   * Most batches handled at once; what waits beyond it goes in a batch when one finishes.
   * @defaultValue `Infinity`
   */
  maxInFlight?: number;
  /**
   * Items of the same key never share a batch: a second one goes to a later batch (with `maxInFlight: 1`,
   * handled strictly after the first, so it sees the first's result).
   */
  keyOf?: (item: T) => string;
}

/** The batcher returned by {@link createBatcher}. */
export interface Batcher<T, R> {
  /** Queues one item; resolves with its result, or rejects with the error of its whole batch. */
  add(item: T): Promise<R>;
  /** Sends everything waiting now and resolves once every batch (those it sent too) has settled. */
  flush(): Promise<void>;
}

type Entry<T, R> = { item: T; resolve: (result: R) => void; reject: (err: unknown) => void };

/** Runs `run` after `ms`, or at the end of this turn for 0 (`setImmediate` where there is one); returns a cancel. */
function later(run: () => void, ms: number): () => void {
  const host = globalThis as {
    setImmediate?: (run: () => void) => unknown;
    clearImmediate?: (handle: unknown) => void;
  };
  if (ms === 0 && host.setImmediate !== undefined && host.clearImmediate !== undefined) {
    const handle = host.setImmediate(run);
    const clear = host.clearImmediate;
    return () => clear(handle);
  }
  const timer = setTimeout(run, ms);
  return () => clearTimeout(timer);
}

/**
 * Creates a batcher.
 *
 * @example
 * ```ts
 * const deletes = createBatcher((handles: string[]) => deleteBatch(handles), { maxSize: 10, windowMs: 5 });
 * const deleted = await deletes.add(receiptHandle);
 * const completions = createBatcher(writeAll, { maxSize: 500, windowMs: 0, maxInFlight: 1, keyOf: (c) => c.id });
 * ```
 */
export function createBatcher<T, R>(handler: BatchHandler<T, R>, options: BatcherOptions<T>): Batcher<T, R> {
  const maxInFlight = options.maxInFlight ?? Number.POSITIVE_INFINITY;
  let waiting: Array<Entry<T, R>> = [];
  let cancelTimer: (() => void) | null = null;
  const inFlight = new Set<Promise<void>>();

  /** Takes the next batch: up to `maxSize` waiting items, no two of one key; the rest keep waiting. */
  function takeBatch(): Array<Entry<T, R>> {
    if (options.keyOf === undefined) {
      const batch = waiting.slice(0, options.maxSize);
      waiting = waiting.slice(options.maxSize);
      return batch;
    }
    const batch: Array<Entry<T, R>> = [];
    const rest: Array<Entry<T, R>> = [];
    const keys = new Set<string>();
    for (const entry of waiting) {
      const key = options.keyOf(entry.item);
      if (batch.length < options.maxSize && !keys.has(key)) {
        keys.add(key);
        batch.push(entry);
      } else {
        rest.push(entry);
      }
    }
    waiting = rest;
    return batch;
  }

  function send(): void {
    cancelTimer?.();
    cancelTimer = null;
    if (waiting.length === 0 || inFlight.size >= maxInFlight) return;
    const batch = takeBatch();
    const run = handler(batch.map((entry) => entry.item)).then(
      (results) => {
        batch.forEach((entry, i) => {
          entry.resolve(results[i] as R);
        });
      },
      (err: unknown) => {
        for (const entry of batch) entry.reject(err);
      },
    );
    inFlight.add(run);
    void run.finally(() => {
      inFlight.delete(run);
      schedule();
    });
    schedule();
  }

  /** Sends a full batch now, or starts the wait of the first waiting item. */
  function schedule(): void {
    if (waiting.length === 0 || inFlight.size >= maxInFlight) return;
    if (waiting.length >= options.maxSize) send();
    else cancelTimer ??= later(send, options.windowMs);
  }

  return {
    add(item) {
      return new Promise<R>((resolve, reject) => {
        waiting.push({ item, resolve, reject });
        schedule();
      });
    },
    async flush() {
      while (waiting.length > 0 || inFlight.size > 0) {
        while (waiting.length > 0 && inFlight.size < maxInFlight) send();
        await Promise.allSettled([...inFlight]);
      }
    },
  };
}
