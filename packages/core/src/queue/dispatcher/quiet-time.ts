/**
 * The others' utilization, measured while the Dispatcher has nothing of its own under way (no send, no
 * outcome being recorded): whatever keeps the event loop busy then is not its work, but for the answers
 * of its claims (a claim mostly waits: on SQS a long poll of up to 20 s, which must not hide all quiet
 * time; its answer is one burst per batch of jobs). The adaptive
 * pace (`pace.ts`) reads it first: while it sends one job at a time with a gap between, the gaps are quiet
 * time, and a loop idle in them says the load was the Dispatcher's own (on SQS, the AWS SDK's calls),
 * however costly each send was; pages kept busy in them say it was theirs. A Dispatcher that is never
 * quiet (sending at full speed) is read by its measured work per send instead (`own-work.ts`).
 */

/** Least quiet time in a sample (ms) for its utilization to be read as the others'. */
export const MIN_QUIET_MS = 10;

/** The quiet time of one Dispatcher. */
export interface QuietTime {
  /** One of the Dispatcher's own pieces of work began (a send with its record). */
  begin(): void;
  /** One ended. */
  end(): void;
  /**
   * The loop's utilization (0..1) over the quiet time since the last take, null when that was under
   * {@link MIN_QUIET_MS} or the runtime cannot say; then starts counting again.
   */
  take(): number | null;
}

/**
 * Creates the meter, quiet at first. `activeMs` is the loop's busy time so far (ms; null: unknown in this
 * runtime), `clock` a monotonic clock (ms).
 *
 * @example
 * ```ts
 * const quiet = createQuietTime(() => performance.eventLoopUtilization().active, () => performance.now());
 * quiet.begin(); // a send starts
 * quiet.end();
 * quiet.take(); // 0.02: the loop was idle while nothing of ours was under way
 * ```
 */
export function createQuietTime(activeMs: () => number | null, clock: () => number): QuietTime {
  let working = 0;
  let quietSince = clock();
  let activeSince = activeMs();
  let quietMs = 0;
  let quietActiveMs = 0;
  /** Adds the quiet time from its start to now. */
  const close = () => {
    const now = clock();
    const active = activeMs();
    quietMs += now - quietSince;
    if (active !== null && activeSince !== null) quietActiveMs += active - activeSince;
    quietSince = now;
    activeSince = active;
  };
  return {
    begin() {
      if (working === 0) close();
      working += 1;
    },
    end() {
      working = Math.max(0, working - 1);
      if (working === 0) {
        quietSince = clock();
        activeSince = activeMs();
      }
    },
    take() {
      if (working === 0) close();
      const read = activeSince === null || quietMs < MIN_QUIET_MS ? null : quietActiveMs / quietMs;
      quietMs = 0;
      quietActiveMs = 0;
      return read === null ? null : Math.min(1, Math.max(0, read));
    },
  };
}
