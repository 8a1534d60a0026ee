/**
 * What the store contract says of jobs held for their campaign (the service said it is not on s2s): which
 * held jobs `Outbox.releaseHeld` releases, and how `Outbox.stats` reports them. A job is held by
 * `Outbox.retry` with `RetryResult.hold` (in `outbox-types.ts`); the rules are core's `isReleasable`,
 * `releaseHeldJob` and `heldProblemsOf`.
 */
import type { EpochMs } from '../policy.ts';

/**
 * Which held jobs `Outbox.releaseHeld` makes due at `now`: every held job, or those of `account`
 * (`null`: jobs without one) and of `campaignId` (`null`: held without a known campaign).
 */
export interface ReleaseHeldOptions {
  now: EpochMs;
  /** @defaultValue every account */
  account?: string | null;
  /** @defaultValue every campaign, known or not */
  campaignId?: string | null;
}

/**
 * Jobs held for one problem: one account's jobs held for one campaign (or for a campaign the service's
 * answer did not name), as `Outbox.stats` reports them.
 */
export interface HeldProblem {
  account: string | null;
  /** The campaign the service's answer named (`cmp_…`), or null when none was named. */
  campaignId: string | null;
  /** Open jobs held. */
  count: number;
  /** Their order value in micros (reversals count 0: they carry none). */
  valueMicros: number;
  /** The service's words (the `lastError` of one of them). */
  reason: string;
  /** When the first of them was held. */
  since: EpochMs;
  /** The earliest deadline among them (null: none has one), what a decision on them must come before. */
  earliestDeadline: EpochMs | null;
}
