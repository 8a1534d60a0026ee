/**
 * How the Dispatcher waits: the run loop for a change (a send finished, a claim came back, `wake()`,
 * `stop()`) without a timer, or for up to a poll interval, cut short by the same changes (a wake-up that
 * comes while the loop is busy is kept, so the next wait returns at once); the heart-beats and `stop()`
 * on a timer that an abort cuts short.
 */

/**
 * Waits `ms` on a real timer; resolves early (never rejects) when `signal` aborts.
 *
 * @example
 * ```ts
 * await sleep(1_000, controller.signal);
 * ```
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    // Node clamps longer timers to 1 ms; keep them long instead.
    const timer = setTimeout(done, Math.min(Math.max(0, ms), 2_147_483_647));
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The loop's waits; see {@link createWakeUps}. */
export interface WakeUps {
  /** Ends the current wait, or the next one if the loop is not waiting. */
  wakeUp(): void;
  /** Waits, without a timer, until the next {@link wakeUp}. */
  nextChange(): Promise<void>;
  /** Sleeps up to `ms`, or less when woken. */
  idle(ms: number): Promise<void>;
  /** Whether the loop sleeps in {@link idle} now. */
  readonly idling: boolean;
}

/** Creates the waits. */
export function createWakeUps(): WakeUps {
  let idleController: AbortController | null = null;
  let pending = false;
  let changeWaiters: Array<() => void> = [];

  /** A wake-up came since the last wait: consume it. */
  const consumed = (): boolean => {
    if (!pending) return false;
    pending = false;
    return true;
  };

  return {
    wakeUp() {
      pending = true;
      idleController?.abort();
      const waiters = changeWaiters;
      changeWaiters = [];
      for (const resolve of waiters) resolve();
    },

    async nextChange() {
      if (consumed()) return;
      await new Promise<void>((resolve) => changeWaiters.push(resolve));
      pending = false;
    },

    async idle(ms) {
      if (consumed()) return;
      const controller = new AbortController();
      idleController = controller;
      try {
        await sleep(ms, controller.signal);
      } finally {
        if (idleController === controller) idleController = null;
        pending = false;
      }
    },

    get idling() {
      return idleController !== null;
    },
  };
}
