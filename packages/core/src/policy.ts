/**
 * The time windows every postback obeys, and their defaults: the one source of truth for them.
 *
 * - A confirmation is accepted by the service for 7 days after the click (spec, "Limits").
 * - A confirm job's deadline is the click time + that window − a safety margin, so a request sent at
 *   the deadline still arrives inside the window despite clock skew and network time.
 * - A reversal is accepted inside the return window, whose length the spec does not give: we default to
 *   30 days after the confirmation, and make it an option.
 */
import { z } from 'zod';

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

/**
 * One window of a {@link WindowPolicy}: a non-negative safe integer of milliseconds.
 */
const windowMs = z.int({ error: 'must be a non-negative safe integer of milliseconds' }).min(0, {
  error: 'must be a non-negative safe integer of milliseconds',
});

/**
 * Schema of the `policy` option every store takes (memory, SQLite, Postgres, SQS): the one source of
 * truth for the windows' validation and defaults. Strict: unknown keys are refused (a misspelt
 * `returnWindowMS` must not silently leave the 30-day default), each window is a non-negative safe
 * integer of milliseconds, and the safety margin is shorter than the confirmation window (reported on the
 * policy itself). Absent windows — or an absent policy — take the `DEFAULT_*` values, so the output is a
 * whole {@link WindowPolicy}.
 *
 * @example
 * ```ts
 * const storeOptionsSchema = z.strictObject({ policy: windowPolicySchema });
 * parseOptions(storeOptionsSchema, {}).policy; // DEFAULT_WINDOW_POLICY's values
 * parseOptions(storeOptionsSchema, { policy: { returnWindowMs: 14 * DAY_MS } }).policy.confirmWindowMs; // 7 days
 * ```
 */
export const windowPolicySchema = z
  .strictObject({
    /** @defaultValue {@link DEFAULT_CONFIRM_WINDOW_MS} */
    confirmWindowMs: windowMs.default(DEFAULT_CONFIRM_WINDOW_MS),
    /** @defaultValue {@link DEFAULT_SAFETY_MARGIN_MS} */
    safetyMarginMs: windowMs.default(DEFAULT_SAFETY_MARGIN_MS),
    /** @defaultValue {@link DEFAULT_RETURN_WINDOW_MS} */
    returnWindowMs: windowMs.default(DEFAULT_RETURN_WINDOW_MS),
  })
  .refine((policy) => policy.safetyMarginMs < policy.confirmWindowMs, {
    error: 'safetyMarginMs must be shorter than confirmWindowMs',
  })
  .prefault({});

/** The windows a store uses to stamp deadlines on the jobs it creates (see {@link windowPolicySchema}). */
export type WindowPolicy = z.output<typeof windowPolicySchema>;

/** The default {@link WindowPolicy}. */
export const DEFAULT_WINDOW_POLICY: Readonly<WindowPolicy> = Object.freeze(windowPolicySchema.parse({}));

/**
 * Fills in the defaults of a partial policy and checks it with {@link windowPolicySchema}, for code that
 * builds a policy itself (an options object takes `windowPolicySchema` in its own schema instead).
 *
 * @throws {RangeError} naming the bad window, or the margin not shorter than the window.
 * @example
 * ```ts
 * const policy = resolvePolicy({ returnWindowMs: 14 * DAY_MS });
 * ```
 */
export function resolvePolicy(partial: Partial<WindowPolicy> = {}): WindowPolicy {
  const result = windowPolicySchema.safeParse(partial);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new RangeError([...(issue?.path ?? []), issue?.message ?? 'invalid policy'].join(' '));
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
