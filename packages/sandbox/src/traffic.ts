/**
 * Marketplace traffic the sandbox cannot observe for real and so takes from the control API: segment
 * pageviews (7-day window, 100-view threshold) and placement requests (24-hour liveness window).
 */
import type { SandboxState } from './state.ts';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/**
 * Segments are listed only with at least this many pageviews over the last 7 days (spec, "Limits").
 * @defaultValue 100
 * @example
 * ```ts
 * await control.recordPageviews('runners', SEGMENT_MIN_PAGEVIEWS); // now listed
 * ```
 */
export const SEGMENT_MIN_PAGEVIEWS = 100;

/**
 * The window segment pageviews are summed over (spec: 7 days).
 * @example
 * ```ts
 * sandbox.advance(SEGMENT_WINDOW_MS); // the views recorded before have expired
 * ```
 */
export const SEGMENT_WINDOW_MS = 7 * DAY_MS;

/**
 * A placement is live when it received a request within this window (spec: 24 hours).
 * @example
 * ```ts
 * sandbox.advance(LIVENESS_WINDOW_MS); // the placement is no longer live
 * ```
 */
export const LIVENESS_WINDOW_MS = DAY_MS;

/**
 * A click may be confirmed for this long after it happened (spec: 7 days).
 * @example
 * ```ts
 * sandbox.advance(CONFIRM_WINDOW_MS + 1); // confirmations of earlier clicks get 422
 * ```
 */
export const CONFIRM_WINDOW_MS = 7 * DAY_MS;

/**
 * Pageviews per label in the window `(now − 7 days, now]`, only labels reaching the threshold,
 * sorted by label for a stable listing.
 */
export function listedSegments(
  state: SandboxState,
  now: number,
): Array<{ label: string; pageviews_7d: number }> {
  const since = now - SEGMENT_WINDOW_MS;
  const totals = new Map<string, number>();
  for (const entry of state.pageviews) {
    if (entry.at > since && entry.at <= now)
      totals.set(entry.label, (totals.get(entry.label) ?? 0) + entry.count);
  }
  return [...totals]
    .filter(([, views]) => views >= SEGMENT_MIN_PAGEVIEWS)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([label, pageviews_7d]) => ({ label, pageviews_7d }));
}
