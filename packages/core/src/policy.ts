/**
 * The time windows every postback obeys, and their defaults: the one source of truth for them.
 *
 * - A confirmation is accepted by the service for 7 days after the click (spec, "Limits").
 * - A confirm job's deadline is the click time + that window − a safety margin, so a request sent at
 *   the deadline still arrives inside the window despite clock skew and network time.
 * - A reversal is accepted inside the return window, whose length the spec does not give: we default to
 *   30 days after the confirmation, and make it an option.
 */

/** Milliseconds since the Unix epoch. */
export type EpochMs = number;

/** One day in milliseconds. */
export const DAY_MS = 86_400_000;

/**
 * How long after the click the service accepts a confirmation (spec: 7 days).
 * @defaultValue 604_800_000 (7 days)
 */
export const DEFAULT_CONFIRM_WINDOW_MS = 7 * DAY_MS;

/**
 * How long before the end of the confirmation window we stop sending.
 * @defaultValue 3_600_000 (1 hour)
 */
export const DEFAULT_SAFETY_MARGIN_MS = 3_600_000;

/**
 * How long after a confirmation it may be reversed. Not in the spec: our choice, documented in the README.
 * @defaultValue 2_592_000_000 (30 days)
 */
export const DEFAULT_RETURN_WINDOW_MS = 30 * DAY_MS;

/** The windows a store uses to stamp deadlines on the jobs it creates. */
export interface WindowPolicy {
  /** @defaultValue {@link DEFAULT_CONFIRM_WINDOW_MS} */
  confirmWindowMs: number;
  /** @defaultValue {@link DEFAULT_SAFETY_MARGIN_MS} */
  safetyMarginMs: number;
  /** @defaultValue {@link DEFAULT_RETURN_WINDOW_MS} */
  returnWindowMs: number;
}

/** The default {@link WindowPolicy}. */
export const DEFAULT_WINDOW_POLICY: Readonly<WindowPolicy> = Object.freeze({
  confirmWindowMs: DEFAULT_CONFIRM_WINDOW_MS,
  safetyMarginMs: DEFAULT_SAFETY_MARGIN_MS,
  returnWindowMs: DEFAULT_RETURN_WINDOW_MS,
});

/**
 * Fills in the defaults of a partial policy and checks it: every value a non-negative safe integer, and
 * the safety margin shorter than the confirmation window.
 *
 * @example
 * ```ts
 * const policy = resolvePolicy({ returnWindowMs: 14 * DAY_MS });
 * ```
 */
export function resolvePolicy(partial: Partial<WindowPolicy> = {}): WindowPolicy {
  const policy = { ...DEFAULT_WINDOW_POLICY, ...partial };
  for (const [key, value] of Object.entries(policy)) {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(
        `${key} must be a non-negative safe integer of milliseconds, got ${String(value)}`,
      );
    }
  }
  if (policy.safetyMarginMs >= policy.confirmWindowMs) {
    throw new RangeError('safetyMarginMs must be shorter than confirmWindowMs');
  }
  return policy;
}

/**
 * The last moment a confirmation for a click may be sent: click time + window − safety margin.
 *
 * @example
 * ```ts
 * deadlineOf(click.clickedAt); // 7 days minus 1 hour after the click
 * ```
 */
export function deadlineOf(clickedAt: EpochMs, policy: WindowPolicy = DEFAULT_WINDOW_POLICY): EpochMs {
  return clickedAt + policy.confirmWindowMs - policy.safetyMarginMs;
}

/** The last moment a reversal may be sent: confirmation time + return window − safety margin. */
export function refundDeadlineOf(
  confirmedAt: EpochMs,
  policy: WindowPolicy = DEFAULT_WINDOW_POLICY,
): EpochMs {
  return confirmedAt + policy.returnWindowMs - policy.safetyMarginMs;
}
