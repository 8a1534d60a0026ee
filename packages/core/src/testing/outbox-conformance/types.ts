/** The public types of the `Outbox` conformance suite: what a backend's factory gets and returns. */
import type { EpochMs, WindowPolicy } from '../../policy.ts';
import type { Outbox } from '../../queue/outbox-types.ts';

/** What the suite gives a backend's factory: the clock to stamp jobs with and the windows to use. */
export interface OutboxFactoryContext {
  /** The suite's fake clock. Use it wherever the store reads the time (creation stamps, validation). */
  now: () => EpochMs;
  /** The windows the store must stamp deadlines with. */
  policy: WindowPolicy;
}

/** A backend's outbox for one test, and how to dispose of what it created (files, schemas, queues). */
export interface OutboxUnderTest {
  outbox: Outbox;
  /** Runs after `outbox.close()`. */
  cleanup?: () => Promise<void> | void;
}

/** Builds a fresh, empty outbox for one test. */
export type OutboxFactory = (context: OutboxFactoryContext) => Promise<OutboxUnderTest> | OutboxUnderTest;

/**
 * Abilities a backend may lack by its nature; the tests that need one are skipped with the given reason.
 * - `lookup`: `get` and `getByOrder` (SQS has no lookup by id or key). Without it the suite checks state
 *   through `claim` and the transitions' results only.
 * - `cancelPendingConfirm`: a refund cancels a confirm not yet sent (`pending` or `dead`) instead of
 *   enqueueing a reversal behind it, and `withdraw` cancels one (SQS cannot take a message back: its
 *   `withdraw` throws).
 * - `exactStats`: `stats` counts exactly (SQS counts are approximate).
 * - `listDead`: `listDead` with paging.
 * - `uncountedAttempts`: `release` and `retry({ countAttempt: false })` give back the attempt counted at
 *   claim (SQS's `ApproximateReceiveCount` only grows).
 * - `retryError`: the error of a `retry` is kept and shows as `lastError` at the next claim (SQS keeps no
 *   per-message state).
 * - `maybeAppliedState`: `maybeAppliedAt` is kept on the job between claims: set by
 *   `retry({ maybeApplied: true })` and by a claim that retakes an expired lease, it shows at the next
 *   claim and governs a later `fail` and `refund` of the order. (`fail({ maybeApplied: true })` followed by
 *   a refund is tested without it: every store must send that reversal.)
 * - `attemptHistory`: `history` keeps each job's attempts (SQS keeps no per-message state).
 * - `listJobs`: `listJobs` lists jobs of every state (SQS can list only its dead letters).
 * - `prune`: `prune` deletes old final jobs (SQS deletes a message once it is final).
 * - `heartbeats`: `beat` and `workers` keep workers' heart-beats.
 * - `fairClaims`: `claim` takes urgent jobs first, then turns across accounts (SQS: the queue decides).
 * - `holds`: `retry({ hold })` holds a job for its campaign, `releaseHeld` releases held jobs and `stats`
 *   reports them (`features.holds`). Without it the suite checks that a hold is refused and
 *   `releaseHeld` resolves 0.
 * - `shadow`: `Outbox.shadow` (shadow mode: settings, recording, its end, spend readings). Without it the
 *   suite checks that `shadow` is undefined.
 * - `ledger`: `appendLedger`, `readLedger` and the final-state rows the store writes in its transitions
 *   (`features.ledger`). Without it the suite checks that `readLedger` answers `[]`.
 */
export type OutboxCapability =
  | 'lookup'
  | 'cancelPendingConfirm'
  | 'exactStats'
  | 'listDead'
  | 'uncountedAttempts'
  | 'retryError'
  | 'maybeAppliedState'
  | 'attemptHistory'
  | 'listJobs'
  | 'prune'
  | 'heartbeats'
  | 'fairClaims'
  | 'holds'
  | 'shadow'
  | 'ledger';

/** Options of {@link describeOutbox}. */
export interface DescribeOutboxOptions {
  /** Capabilities the backend cannot provide, each with the reason shown in the skipped test's name. */
  unsupported?: Partial<Record<OutboxCapability, string>>;
  /** Per-test timeout in milliseconds. @defaultValue 15_000 */
  timeoutMs?: number;
}
