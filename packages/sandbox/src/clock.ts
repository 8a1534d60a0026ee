/**
 * The sandbox clock: the injected real clock plus an offset that only moves forward, so the 7-day,
 * 24-hour and return-window rules can be tested in milliseconds instead of days.
 */

/**
 * A clock that can be advanced but never set back (records are stamped with it; going back would let a
 * conversion be confirmed before its click).
 *
 * @example
 * ```ts
 * const clock = new SandboxClock(Date.now);
 * clock.advance(8 * 86_400_000); // eight days later
 * ```
 */
export class SandboxClock {
  #base: () => number;
  #offsetMs = 0;
  constructor(base: () => number) {
    this.#base = base;
  }
  /** Current sandbox time in epoch milliseconds. */
  now(): number {
    return this.#base() + this.#offsetMs;
  }
  /** Moves the clock forward by `ms` (a non-negative safe integer) and returns the new time. */
  advance(ms: number): number {
    if (!Number.isSafeInteger(ms) || ms < 0)
      throw new RangeError('advance must be a non-negative safe integer of ms');
    this.#offsetMs += ms;
    return this.now();
  }
  /** Back to the real clock (used by reset). */
  reset(): void {
    this.#offsetMs = 0;
  }
}
