/**
 * The `Date` header of every answer, from the sandbox clock rather than the host's: a client comparing
 * its own clock with the service's `Date` (a clock-skew check) sees the skew a test set by moving the
 * sandbox clock.
 */

let cachedSecond = Number.NaN;
let cachedText = '';

/**
 * An epoch-ms time as an HTTP date (RFC 7231 IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`), computed once
 * per second: every answer carries one.
 *
 * @example
 * ```ts
 * httpDate(Date.UTC(1994, 10, 6, 8, 49, 37)); // 'Sun, 06 Nov 1994 08:49:37 GMT'
 * ```
 */
export function httpDate(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedText = new Date(second * 1000).toUTCString();
  }
  return cachedText;
}
