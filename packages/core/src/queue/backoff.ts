/**
 * Durable retry timing: exponential backoff with full jitter (a pure function of the attempt number and a
 * random source). The wait it gives is capped by the job's last chance (`wait-rule.ts` `capWait`), so
 * the last try still happens, where a claim can take it, inside the service's window.
 */

/** Parameters of {@link backoffDelay}. */
export interface BackoffOptions {
  /** Delay ceiling of the first retry; doubles with each attempt. */
  baseMs: number;
  /** Largest delay ceiling, however many attempts. */
  maxMs: number;
  /** Uniform random source in [0, 1). Injected so tests are deterministic. */
  random: () => number;
}

/**
 * Full-jitter exponential backoff: a uniformly random delay in [0, min(maxMs, baseMs · 2^(attempt−1))).
 * Full jitter spreads a burst of failed jobs over the whole interval, so a recovering service is not hit
 * by all of them at once.
 *
 * @param attempt - attempts made so far (1 after the first failure)
 * @example
 * ```ts
 * backoffDelay(3, { baseMs: 1_000, maxMs: 3_600_000, random: Math.random }); // somewhere in [0, 4 s)
 * ```
 */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  // 2^exponent overflows to Infinity for huge attempts (and 0·Infinity is NaN): 2^52 already exceeds any maxMs.
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(exponent, 52));
  const r = options.random();
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
  return Math.floor(unit * ceiling);
}
