/**
 * Group commit for per-job transitions: calls made in the same turn of the event loop (a Dispatcher
 * finishing a batch of sends, `Promise.all` over jobs) are written by one statement in one transaction,
 * so N completions cost one round trip and one WAL flush instead of N. Each caller still gets its own
 * answer. One group is written at a time; calls arriving meanwhile form the next one. A job given twice
 * goes to a later group than its first call, so the second call is fenced as usual.
 */

/** Queues items and writes them in groups. */
export interface GroupCommit<T, R> {
  /** Resolves with this item's result once its group is durable. */
  add(item: T): Promise<R>;
}

/**
 * Creates a group committer. `flush` writes one group and returns one result per item, in order.
 *
 * @example
 * ```ts
 * const completes = createGroupCommit((jobs: Job[]) => writeAll(jobs), { maxSize: 200, keyOf: (j) => j.id });
 * const applied = await completes.add(job);
 * ```
 */
export function createGroupCommit<T, R>(
  flush: (items: T[]) => Promise<R[]>,
  options: { maxSize: number; keyOf: (item: T) => string },
): GroupCommit<T, R> {
  type Entry = { item: T; resolve: (r: R) => void; reject: (e: unknown) => void };
  let queue: Entry[] = [];
  let scheduled = false;
  let flushing = false;

  const schedule = () => {
    if (scheduled || flushing || queue.length === 0) return;
    scheduled = true;
    setImmediate(drain);
  };

  // One group in flight at a time: what arrives meanwhile forms the next group, and a job given twice
  // is written strictly after its first call, so the second sees the first's result (fenced).
  const drain = () => {
    scheduled = false;
    const group: Entry[] = [];
    const rest: Entry[] = [];
    const keys = new Set<string>();
    for (const entry of queue) {
      const key = options.keyOf(entry.item);
      if (group.length < options.maxSize && !keys.has(key)) {
        keys.add(key);
        group.push(entry);
      } else {
        rest.push(entry);
      }
    }
    queue = rest;
    flushing = true;
    flush(group.map((e) => e.item))
      .then(
        (results) => {
          for (const [i, entry] of group.entries()) entry.resolve(results[i] as R);
        },
        (err: unknown) => {
          for (const entry of group) entry.reject(err);
        },
      )
      .finally(() => {
        flushing = false;
        schedule();
      });
  };

  return {
    add(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        schedule();
      });
    },
  };
}
