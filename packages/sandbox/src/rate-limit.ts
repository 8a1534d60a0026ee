/**
 * The rate-limit fault: at most N `/v1` requests per second per API key, over any sliding second of the
 * sandbox clock. A request over the limit is refused (429 with `Retry-After`), applies nothing and does
 * not count against the limit. Advancing the sandbox clock frees the window, so tests need not wait.
 */
import { HttpProblem } from './problem.ts';

/** One key's window: the times of its last admitted requests (a ring of at most `limit`). */
interface KeyWindow {
  stamps: number[];
  /** Index of the oldest stamp once the ring is full. */
  head: number;
  /** Refused until then (epoch ms): set when the 429 asked for a fixed wait (`retry_after_s`). */
  blockedUntil: number;
}

/**
 * Counts requests per key and refuses those over `limit` per second.
 *
 * @example
 * ```ts
 * const limiter = new RateLimiter(2, null);
 * limiter.admit('key', 0); limiter.admit('key', 10); // null, null
 * limiter.admit('key', 20)?.status; // 429
 * ```
 */
export class RateLimiter {
  readonly limit: number;
  readonly retryAfterS: number | null;
  #windows = new Map<string, KeyWindow>();

  /**
   * @param limit requests admitted per key in any sliding second
   * @param retryAfterS the wait a 429 asks for; the key is then refused for that long. `null`: the whole
   *   seconds until the key's window frees (at least 1), with no further penalty.
   */
  constructor(limit: number, retryAfterS: number | null) {
    this.limit = limit;
    this.retryAfterS = retryAfterS;
  }

  /** `null` when the request of `key` at `now` is admitted (and counted), else the 429 to answer. */
  admit(key: string, now: number): HttpProblem | null {
    let w = this.#windows.get(key);
    if (w === undefined) {
      w = { stamps: [], head: 0, blockedUntil: Number.NEGATIVE_INFINITY };
      this.#windows.set(key, w);
    }
    if (now < w.blockedUntil) return this.#refusal(Math.ceil((w.blockedUntil - now) / 1000));
    if (w.stamps.length < this.limit) {
      w.stamps.push(now);
      return null;
    }
    const oldest = w.stamps[w.head] as number;
    if (now - oldest >= 1000) {
      w.stamps[w.head] = now;
      w.head = (w.head + 1) % this.limit;
      return null;
    }
    if (this.retryAfterS !== null) {
      w.blockedUntil = now + this.retryAfterS * 1000;
      return this.#refusal(this.retryAfterS);
    }
    return this.#refusal(Math.max(1, Math.ceil((oldest + 1000 - now) / 1000)));
  }

  #refusal(retryAfterS: number): HttpProblem {
    return new HttpProblem(
      429,
      `rate limit exceeded: at most ${this.limit} requests per second per API key; retry after ${retryAfterS} s`,
      { 'retry-after': String(retryAfterS) },
    );
  }
}
