/**
 * Coalesces single calls into batch requests: `complete()` is called once per job, but SQS deletes up to
 * ten messages per `DeleteMessageBatch`. Items wait at most `windowMs` (or until ten are waiting) and each
 * caller gets its own entry's result.
 */

/** A function that handles a batch and returns one result per item, in order. */
export type BatchHandler<In, Out> = (items: readonly In[]) => Promise<Out[]>;

/** The batcher returned by {@link createMicroBatcher}. */
export interface MicroBatcher<In, Out> {
  /** Queue one item; resolves with its result (or rejects when the whole batch failed). */
  add(item: In): Promise<Out>;
  /** Send whatever is waiting now and wait for every batch in flight. */
  flush(): Promise<void>;
}

/**
 * Builds a batcher.
 *
 * @example
 * ```ts
 * const deletes = createMicroBatcher((handles) => deleteBatch(handles), { maxSize: 10, windowMs: 5 });
 * const deleted = await deletes.add(receiptHandle);
 * ```
 */
export function createMicroBatcher<In, Out>(
  handler: BatchHandler<In, Out>,
  options: { maxSize: number; windowMs: number },
): MicroBatcher<In, Out> {
  let waiting: Array<{ item: In; resolve: (out: Out) => void; reject: (err: unknown) => void }> = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  const inFlight = new Set<Promise<void>>();

  function send(): void {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    if (waiting.length === 0) return;
    const batch = waiting;
    waiting = [];
    const run = handler(batch.map((entry) => entry.item)).then(
      (results) => {
        batch.forEach((entry, i) => {
          entry.resolve(results[i] as Out);
        });
      },
      (err: unknown) => {
        for (const entry of batch) entry.reject(err);
      },
    );
    inFlight.add(run);
    void run.finally(() => inFlight.delete(run));
  }

  return {
    add(item) {
      return new Promise<Out>((resolve, reject) => {
        waiting.push({ item, resolve, reject });
        if (waiting.length >= options.maxSize) send();
        else if (timer === null) timer = setTimeout(send, options.windowMs);
      });
    },
    async flush() {
      send();
      await Promise.allSettled([...inFlight]);
    },
  };
}
