/**
 * The worker and the service's rate limits: `--max-requests-per-second` and its per-account twin as the
 * Dispatcher's `maxRequestsPerSecond`, and what a `--drain` run learns of a 429's pause (of all delivery,
 * or of the accounts whose jobs were the only ones due): when it ends, so the run can wait it out — the
 * service's `Retry-After` — within its bound, or end with its own exit code (see `worker-drain-exit.ts`).
 */
import type { AccountPause } from '@postback/core';

/** The `paused` event of all delivery, as the worker keeps it. */
export interface GlobalPause {
  status: number | null;
  reason: string;
  until: number;
  /** The Dispatcher's cause (`auth`, `rate-limited`, ...), when its event names one. */
  cause?: string;
}

/**
 * Whether a pause is a 429's: its cause says so, or (a pause that names no cause) its status is 429.
 *
 * @example
 * ```ts
 * isRateLimit({ status: 429, reason: 'Ad service answered 429: slow down' }); // true
 * ```
 */
export function isRateLimit(pause: { status: number | null; cause?: unknown }): boolean {
  if (pause.cause === undefined || pause.cause === null) return pause.status === 429;
  return RATE_LIMIT_CAUSES.has(pause.cause);
}

/** The names a Dispatcher gives the cause of a 429's pause (`rate-limited` in its events). */
const RATE_LIMIT_CAUSES = new Set<unknown>(['rate-limited', 'rate-limit']);

/**
 * The Dispatcher's `maxRequestsPerSecond` from the worker's flags (nothing when neither is given).
 *
 * @example
 * ```ts
 * maxRequestsPerSecond({ 'max-requests-per-second': 50 }); // { maxRequestsPerSecond: { total: 50 } }
 * ```
 */
export function maxRequestsPerSecond(values: {
  'max-requests-per-second'?: number | undefined;
  'max-requests-per-second-per-account'?: number | undefined;
}): { maxRequestsPerSecond?: { total?: number; perAccount?: number } } {
  const total = values['max-requests-per-second'];
  const perAccount = values['max-requests-per-second-per-account'];
  if (total === undefined && perAccount === undefined) return {};
  return {
    maxRequestsPerSecond: {
      ...(total === undefined ? {} : { total }),
      ...(perAccount === undefined ? {} : { perAccount }),
    },
  };
}

/**
 * When the pause of a 429 that holds a drain back ends (epoch ms), or null when none does (nothing
 * paused, or a refused key or address: the drain ends). With all delivery paused, the global pause's;
 * else the earliest end among the accounts paused by a 429.
 *
 * @example
 * ```ts
 * const until = await rateLimitedUntil(pause, dispatcher); // 1767225600000
 * ```
 */
export async function rateLimitedUntil(
  pause: GlobalPause | null,
  dispatcher: { paused(): boolean; pausedAccounts(): Promise<readonly AccountPause[]> },
): Promise<number | null> {
  if (dispatcher.paused()) return pause !== null && isRateLimit(pause) ? pause.until : null;
  let earliest: number | null = null;
  for (const p of await dispatcher.pausedAccounts())
    if (isRateLimit(p) && (earliest === null || p.until < earliest)) earliest = p.until;
  return earliest;
}
