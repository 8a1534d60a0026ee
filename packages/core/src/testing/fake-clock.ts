/**
 * A controllable clock for tests: the suites hand its `now` to the code under test and move time with
 * `advance`, so leases, backoff and deadlines are tested without waiting.
 */
import type { EpochMs } from '../policy.ts';

/** A clock that only moves when told to. */
export interface FakeClock {
  /** The current fake time. Pass it wherever code takes a `now` function. */
  now: () => EpochMs;
  /** Moves the clock forward by `ms` and returns the new time. */
  advance(ms: number): EpochMs;
  /** Sets the clock to `at` (never backwards). */
  set(at: EpochMs): EpochMs;
}

/**
 * Creates a {@link FakeClock} starting at `start` (a fixed date by default, so test output is stable).
 *
 * @example
 * ```ts
 * const clock = createFakeClock();
 * const outbox = createMemoryOutbox({ now: clock.now });
 * clock.advance(60_000);
 * ```
 */
export function createFakeClock(start: EpochMs = Date.UTC(2026, 0, 15, 12, 0, 0)): FakeClock {
  let t = start;
  return {
    now: () => t,
    advance(ms) {
      if (!(ms >= 0)) throw new RangeError(`a fake clock only moves forward, got ${ms}`);
      t += ms;
      return t;
    },
    set(at) {
      if (at < t) throw new RangeError(`a fake clock only moves forward: ${at} < ${t}`);
      t = at;
      return t;
    },
  };
}
