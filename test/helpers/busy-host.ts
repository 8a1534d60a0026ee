/**
 * A busy host for the adaptive pace: while on, the event loop is kept busy in bursts (a synchronous spin of
 * `busyMs` every `everyMs`), as a shop serving pages keeps it. The Dispatcher in the same process reads
 * the load and slows down; a test checks that its waits still answer to the deadlines.
 */

/** A switchable busy host; see {@link createBusyHost}. */
export interface BusyHost {
  /** Starts the bursts (does nothing when already on). */
  start(): void;
  /** Stops them (does nothing when off). */
  stop(): void;
  /** Whether the bursts are on. */
  readonly on: boolean;
  /** Milliseconds of event loop held by the bursts so far. */
  readonly busyMs: number;
}

/**
 * Creates a busy host, off.
 *
 * @example
 * ```ts
 * const host = createBusyHost({ busyMs: 12, everyMs: 20 });
 * host.start(); // the event loop is busy 60 % of the time
 * host.stop();
 * ```
 */
export function createBusyHost(options: { busyMs: number; everyMs: number }): BusyHost {
  let timer: ReturnType<typeof setInterval> | undefined;
  let busyMs = 0;
  const burst = () => {
    const started = performance.now();
    while (performance.now() - started < options.busyMs) {
      // a page being rendered: the loop is held
    }
    busyMs += performance.now() - started;
  };
  return {
    start() {
      timer ??= setInterval(burst, options.everyMs);
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
    get on() {
      return timer !== undefined;
    },
    get busyMs() {
      return busyMs;
    },
  };
}
