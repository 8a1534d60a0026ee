/**
 * The worker and the service's rate limits: `--max-requests-per-second` and its per-account twin as the
 * Dispatcher's `maxRequestsPerSecond`, and what a `--drain` run does when a 429 paused delivery (all of it,
 * or the accounts whose jobs were the only ones due): it waits the pause out — the service's `Retry-After`
 * — and goes on, instead of ending paused as it does when the key or the address was refused.
 */
import type { AccountPause } from '@postback/core';

/** The `paused` event of all delivery, as the worker keeps it. */
export interface GlobalPause {
  status: number | null;
  reason: string;
  until: number;
}

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
 * How long a drain that found nothing to send waits for a 429's pause to end (ms), or null when no pause
 * of a 429 holds it back (nothing due, or a refused key or address: the drain ends).
 */
export async function rateLimitWait(
  pause: GlobalPause | null,
  dispatcher: { paused(): boolean; pausedAccounts(): Promise<readonly AccountPause[]> },
  now: number,
): Promise<number | null> {
  if (dispatcher.paused()) return pause?.status === 429 ? Math.max(1, pause.until - now) : null;
  const limited = (await dispatcher.pausedAccounts()).filter((p) => p.status === 429);
  if (limited.length === 0) return null;
  return Math.max(1, Math.min(...limited.map((p) => p.until)) - now);
}
