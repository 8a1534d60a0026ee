/**
 * The time windows every postback obeys, and their defaults: the one source of truth for them.
 *
 * - A confirmation is accepted by the service for 7 days after the click (spec, "Limits").
 * - A confirm job's deadline is the click time + that window − a safety margin, so a request sent at
 *   the deadline still arrives inside the window despite clock skew and network time.
 * - A reversal is accepted inside the return window, whose length the spec does not give. By default we do
 *   not guess it (`returnWindowMs: null`, open-ended): a reversal is sent and the service decides, its
 *   "window closed" answer ending the job. The kit keeps trying a reversal (and keeps a delivered
 *   confirmation to reverse it) for `confirmationRetentionMs` after the charge. A configured window is the
 *   only thing that ends a reversal without a request.
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
 * With no return window configured, how long after a charge the kit keeps trying its reversal, and keeps
 * the delivered confirmation so a refund still finds it and its campaign. Not in the spec: our choice,
 * documented in the README (longer than any return window a shop is likely to offer).
 * @defaultValue 34_560_000_000 (400 days)
 */
export const DEFAULT_CONFIRMATION_RETENTION_MS = 400 * DAY_MS;

/**
 * One window of a {@link WindowPolicy}: a non-negative safe integer of milliseconds.
 */
const windowMs = z.int({ error: 'must be a non-negative safe integer of milliseconds' }).min(0, {
  error: 'must be a non-negative safe integer of milliseconds',
});

/**
 * Schema of the `policy` option every store takes (memory, SQLite, Postgres, SQS): the one source of
 * truth for the windows' validation and defaults. Strict: unknown keys are refused (a misspelt
 * `returnWindowMS` must not silently leave the window open-ended), each window is a non-negative safe
 * integer of milliseconds (`returnWindowMs` may be null: open-ended), and the safety margin is shorter than the confirmation window (reported on the
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
    /**
     * How long after the charge the service accepts a reversal, when the shop knows it; null: open-ended
     * (the service decides, and its "window closed" answer ends the reversal).
     * @defaultValue null
     */
    returnWindowMs: windowMs.nullable().default(null),
    /** @defaultValue {@link DEFAULT_CONFIRMATION_RETENTION_MS} */
    confirmationRetentionMs: windowMs.default(DEFAULT_CONFIRMATION_RETENTION_MS),
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

/**
 * How long after the charge a reversal may be sent: the return window − safety margin when one is
 * configured, else `confirmationRetentionMs` (the service decides inside it).
 *
 * @example
 * ```ts
 * refundSpanOf(resolvePolicy({ returnWindowMs: 14 * DAY_MS })); // 14 days minus 1 hour
 * ```
 */
export function refundSpanOf(policy: WindowPolicy = DEFAULT_WINDOW_POLICY): number {
  return policy.returnWindowMs === null
    ? policy.confirmationRetentionMs
    : policy.returnWindowMs - policy.safetyMarginMs;
}

/**
 * The last moment a reversal may be sent: charge time + {@link refundSpanOf} the policy.
 *
 * @example
 * ```ts
 * refundDeadlineOf(confirm.deliveredAt, policy);
 * ```
 */
export function refundDeadlineOf(chargedAt: EpochMs, policy: WindowPolicy = DEFAULT_WINDOW_POLICY): EpochMs {
  return chargedAt + refundSpanOf(policy);
}
