/**
 * The `Outbox` interface and what it takes and returns: the contract between the code that says "confirm
 * this order" (or "reverse it"), the stores that keep the jobs durable (memory, SQLite, Postgres, SQS), and
 * the `Dispatcher` that delivers them. Retry logic is written once, in the Dispatcher, against this
 * interface; each store only persists (core's `call-checks.ts` checks what a call is given). Besides the
 * jobs, operators read each job's attempt history, job listings with filters, deadlines at risk and worker
 * heart-beats; what a store cannot keep by its nature it says in {@link OutboxFeatures}, so a CLI or
 * dashboard can say "this backend does not keep that" instead of showing nothing.
 */
import type { ClickStamp } from '../click.ts';
import type { EpochMs } from '../policy.ts';
import type { HeldProblem, ReleaseHeldOptions } from './held-types.ts';
import type { AttemptRecord, ConfirmJob, Job, JobKind, JobState, RefundJob } from './job-types.ts';
import type { LedgerEntry, LedgerInput, LedgerQuery } from './ledger-types.ts';
import type { OutboxShadow } from './shadow-types.ts';
import type { OutboxSwitches } from './switch-types.ts';

/** Page size of `listJobs` when none is given. @defaultValue 100 */
export const DEFAULT_LIST_JOBS_LIMIT = 100;
/** Largest page `listJobs` returns. @defaultValue 1000 */
export const MAX_LIST_JOBS_LIMIT = 1000;

/** Page size of `listDead` when none is given. @defaultValue 100 */
export const DEFAULT_LIST_DEAD_LIMIT = 100;

/** Largest page `listDead` returns; a larger `limit` is cut to it. @defaultValue 10_000 */
export const MAX_LIST_DEAD_LIMIT = 10_000;

/** How close a deadline must be for an open job to count as "at risk". @defaultValue 24 hours */
export const DEFAULT_AT_RISK_WITHIN_MS = 24 * 3_600_000;

/** What the app passes to confirm an order. Validated at enqueue; nothing malformed reaches a store. */
export interface ConfirmInput {
  orderId: string;
  /** The advertiser account (see {@link JobFields.account}). @defaultValue none (null) */
  account?: string | null;
  /** Order value: a non-negative safe integer of micros (use `toMicros("12.34")` for decimal strings). */
  valueMicros: number;
  /** The click the order is attributed to. */
  click: ClickStamp;
}

/** What the app passes to reverse an order. */
export interface RefundInput {
  orderId: string;
  /** The account of the order's confirmation (see {@link JobFields.account}). @defaultValue none (null) */
  account?: string | null;
  /**
   * The campaign to reverse in. Optional when this outbox delivered (or will deliver) the confirmation,
   * whose response carries it; required otherwise.
   */
  campaignId?: string;
}

/** Result of enqueueing a confirmation: `created: false` means the order was already there (a no-op). */
export interface EnqueueResult<J extends Job = Job> {
  created: boolean;
  /** The job as stored (the existing one when `created` is false). */
  job: J;
}

/**
 * Result of a refund request:
 * - `enqueued`: a reversal job was created; it is sent after its confirmation is delivered.
 * - `duplicate`: a reversal for this order already exists (returned as `job`); nothing changed.
 * - `cancelled`: the confirmation had not been sent (pending or dead): it is now `cancelled`, nothing was
 *   charged and nothing needs reversing.
 * - `not-charged`: the confirmation had already ended without charge (`expired` or `cancelled`) and
 *   none of its requests may have reached the service.
 * - `updated`: the order's reversal had no campaign to reverse in (the confirmation's answer carried none,
 *   or was lost) and the caller gave one: it is stored, and a dead reversal is `pending` again, due now.
 * - `window-closed`: a return window is configured (`policy.returnWindowMs`) and it closed before now,
 *   counted from the confirmation's charge: nothing is written and nothing will be sent (`job` is the
 *   confirm). With no window configured (the default) this never happens: the service decides.
 */
export type RefundOutcome =
  | { outcome: 'enqueued'; job: RefundJob }
  | { outcome: 'duplicate'; job: RefundJob }
  | { outcome: 'cancelled'; job: ConfirmJob }
  | { outcome: 'not-charged'; job: ConfirmJob }
  | { outcome: 'updated'; job: RefundJob }
  | { outcome: 'window-closed'; job: ConfirmJob };

/** What the app passes to withdraw an order's confirmation (see {@link Outbox.withdraw}). */
export interface WithdrawInput {
  orderId: string;
  /** The account of the order's confirmation (see {@link JobFields.account}). @defaultValue none (null) */
  account?: string | null;
}

/**
 * Result of {@link Outbox.withdraw}, with the order's confirm job as it now stands:
 * - `cancelled`: it had not been sent (`pending`, or `dead` with no request that may have reached the
 *   service): it is now `cancelled`, will never be sent, and nothing was charged.
 * - `may-have-charged`: it was delivered, is being sent, or a request of it may have reached the service:
 *   left as it is (it may be charged; a pending one is still delivered). Reversing it is a `refund`.
 * - `not-charged`: it had already ended without charge (`expired` or `cancelled`).
 * - `not-found`: this outbox holds no confirmation of the order.
 */
export type WithdrawOutcome =
  | { outcome: 'cancelled' | 'may-have-charged' | 'not-charged'; job: ConfirmJob }
  | { outcome: 'not-found'; job: null };

/**
 * What {@link Outbox.retry} records. `maybeApplied: true` says a request of this attempt may have reached
 * the service (see {@link JobFields.maybeAppliedAt}); the store keeps the first such time.
 */
export interface RetryResult {
  now: EpochMs;
  nextAttemptAt: EpochMs;
  error: string;
  countAttempt?: boolean;
  maybeApplied?: boolean;
  /** The send this retry follows, appended to the job's history (none when the job was not sent). */
  attempt?: AttemptRecord;
  /**
   * The job is held for a problem of its campaign (the service said it is not on s2s), not retried for one
   * of its own: it stays `pending` until `nextAttemptAt` (its next probe), its attempt is not counted
   * (whatever `countAttempt` says), `heldAt` is set (kept when already set) and `heldCampaignId` is
   * `campaignId` (the campaign the answer named, or null). Stores whose `features.holds` is false refuse it.
   * Without `hold`, a retry clears the held fields.
   */
  hold?: { campaignId: string | null };
}

/** What {@link Outbox.fail} records; `maybeApplied` as in {@link RetryResult}. */
export interface FailResult {
  now: EpochMs;
  /** `unmatched`: refund jobs only (the service had no such conversion). */
  state: 'dead' | 'expired' | 'unmatched';
  reason: string;
  maybeApplied?: boolean;
  /**
   * The service's answer shows that no request of this job was ever applied, earlier ones included (a
   * confirmation answered 404: the service does not know its click, so no conversion of it exists):
   * `maybeAppliedAt` is cleared, and a refund of the order answers `not-charged`. Wins over `maybeApplied`.
   */
  neverApplied?: boolean;
  /** The send that ended the job, appended to its history (none when it expired unsent). */
  attempt?: AttemptRecord;
}

/** What {@link Outbox.complete} records. */
export interface CompleteResult {
  now: EpochMs;
  /** For a confirm: the campaign its response attributed the conversion to. */
  campaignId?: string | null;
  /** The send the service accepted, appended to the job's history. */
  attempt?: AttemptRecord;
}

/** Options of {@link Outbox.claim}. */
export interface ClaimOptions {
  /** Current time (injected so tests control it). */
  now: EpochMs;
  /** At most this many jobs. */
  limit: number;
  /** How long the claim holds before another worker may take the job. */
  leaseMs: number;
  /**
   * Jobs of these accounts are not claimed (accounts whose key was refused: their jobs wait, uncounted).
   * `null` stands for jobs without an account. @defaultValue none
   */
  excludeAccounts?: readonly (string | null)[];
  /**
   * Due jobs whose deadline is within this of `now` are claimed first, nearest deadline first; the rest in
   * turns across accounts (see `accounts.ts`). @defaultValue `DEFAULT_URGENT_WITHIN_MS` (1 hour)
   */
  urgentWithinMs?: number;
}

/** Counts of jobs by state. */
export type StateCounts = Record<JobState, number>;

/** What operators look at: `postback status`, metrics. */
export interface OutboxStats {
  counts: StateCounts;
  /** Creation time of the oldest pending job, or null. */
  oldestPendingAt: EpochMs | null;
  /** The pending or inflight job with the nearest deadline, or null. */
  nearestDeadline: { id: string; orderId: string; kind: JobKind; deadline: EpochMs } | null;
  /** Open (`pending`, `inflight`) jobs whose deadline is within `atRiskWithinMs` of now. */
  atRisk: { count: number; withinMs: number };
  /** Open jobs by time left to their deadline, one per bound asked for in `deadlineBucketsMs`. */
  deadlineBuckets: OutboxDeadlineBucket[];
  /** Open jobs held for their campaign, one per account and campaign, oldest first ([]: none, or no holds). */
  held: HeldProblem[];
}

/** Page through dead jobs (with their reasons), oldest first. */
export interface ListDeadOptions {
  /** @defaultValue {@link DEFAULT_LIST_DEAD_LIMIT}; at most {@link MAX_LIST_DEAD_LIMIT} */
  limit?: number;
  /** Opaque cursor: the `id` of the last job of the previous page. */
  after?: string;
}

/**
 * A durable store of postback jobs. Implementations: memory (core), SQLite, Postgres, SQS. All pass the
 * conformance suite `describeOutbox` from `@postback/core/testing`.
 *
 * Rules every implementation keeps:
 * - `confirm` of an order already confirmed is a no-op (`created: false`), whatever its state.
 * - A refund never overtakes its confirmation: a refund job is not claimable while the same order's
 *   confirm job is `pending` or `inflight`. When that confirm ends, the waiting refund follows it by core's
 *   `refundAfterConfirm`: delivered or maybe applied, the refund takes its campaign (unless given) and
 *   deadline; ended never charged (`dead`, `expired`, no request that may have reached the service), the
 *   refund is `cancelled`.
 * - A claim that retakes an `inflight` job whose lease ran out sets `maybeAppliedAt` (if unset) to the
 *   job's `updatedAt`: its worker may have sent it before it died.
 * - `claim` returns due jobs (`pending` with `nextAttemptAt <= now`, or `inflight` whose lease ran out),
 *   marks them `inflight` with a fresh lease token and increments `attempts`, durably, before returning.
 *   Two concurrent claims never return the same job with the same lease. It takes them in the order of
 *   `accounts.ts` (retaken, then urgent by deadline, then in turns across accounts) unless
 *   `features.fairClaims` is false, and never a job of `excludeAccounts`.
 * - An order is identified by its account and order id: the same order id in two accounts is two orders.
 * - Transitions (`complete`, `retry`, `fail`, `release`, `extendLease`) take the job as claimed and apply
 *   only if its lease token still matches; they return false (and change nothing) otherwise.
 */
export interface Outbox {
  /** Enqueue a confirmation (validated; throws `JobValidationError` naming the field). */
  confirm(input: ConfirmInput): Promise<EnqueueResult<ConfirmJob>>;
  /** Reverse an order: cancels an unsent confirmation, or enqueues a reversal. See {@link RefundOutcome}. */
  refund(input: RefundInput): Promise<RefundOutcome>;
  /**
   * Withdraw an order's confirmation (the shopper withdrew consent): cancels it if none of its requests may
   * have reached the service, else leaves it and says so; never sends anything. See {@link WithdrawOutcome}.
   * Throws `JobValidationError` naming the field; an SQS outbox cannot take a message back and throws.
   */
  withdraw(input: WithdrawInput): Promise<WithdrawOutcome>;

  /** Claim due jobs for delivery. */
  claim(options: ClaimOptions): Promise<Job[]>;
  /** The service accepted the job. For a confirm, `campaignId` is the one its response returned. */
  complete(job: Job, result: CompleteResult): Promise<boolean>;
  /**
   * A transient failure: back to `pending` until `nextAttemptAt` (which the caller has capped by the
   * deadline). `countAttempt: false` undoes the attempt counted at claim (auth pauses, shutdown).
   */
  retry(job: Job, result: RetryResult): Promise<boolean>;
  /** A permanent failure (`dead`, replayable) or a passed deadline (`expired`), with its reason. */
  fail(job: Job, result: FailResult): Promise<boolean>;
  /** Give claimed jobs back (graceful shutdown): `pending`, due now, the attempt not counted. */
  release(jobs: readonly Job[], now: EpochMs): Promise<void>;
  /** Extend a lease while a send is still in flight. */
  extendLease(job: Job, options: { now: EpochMs; leaseMs: number }): Promise<boolean>;
  /**
   * Makes held `pending` jobs (see {@link RetryResult.hold}) due at `now` (never later than they were),
   * keeping their held fields until their next outcome: the campaign's problem is fixed. Returns how
   * many. Resolves 0 when `features.holds` is false.
   */
  releaseHeld(options: ReleaseHeldOptions): Promise<number>;

  /** One job by id, or null. */
  get(id: string): Promise<Job | null>;
  /** The jobs of one order of `account` (at most a confirm and a refund). @defaultValue account: null */
  getByOrder(orderId: string, account?: string | null): Promise<Job[]>;
  /** Counts by state, oldest pending, nearest deadline, deadlines at risk. */
  stats(now: EpochMs, options?: StatsOptions): Promise<OutboxStats>;
  /** Jobs matching `filter`, most urgent first (see {@link JobFilter}). Throws `JobValidationError` on a bad filter. */
  listJobs(filter?: JobFilter): Promise<Job[]>;
  /**
   * The last sends (at most `ATTEMPT_HISTORY_LIMIT`, 20) of a job, oldest first (empty for an unknown id, or when
   * `features.attemptHistory` is false). Replay keeps the history.
   */
  history(id: string): Promise<AttemptRecord[]>;
  /** Dead jobs with their reasons. */
  listDead(options?: ListDeadOptions): Promise<Job[]>;
  /**
   * Put dead jobs back to `pending`, due now, attempts reset. Only jobs whose deadline has not passed are
   * replayed; the others become `expired`. A dead confirm whose order has a refund job becomes `cancelled`
   * instead (the order was returned while the confirm was dead: sending it would charge a sale nobody
   * reverses). Returns how many were replayed (put back to `pending`).
   */
  replay(options: { ids: readonly string[] } | { all: true }, now: EpochMs): Promise<number>;
  /** Delete dead jobs (all, or the given ids). Returns how many were deleted. */
  purgeDead(options?: { ids?: readonly string[] }): Promise<number>;
  /** Delete old final jobs (see {@link PruneOptions}); dead jobs are never pruned. Returns how many. */
  prune(options: PruneOptions): Promise<number>;
  /**
   * Add a row to the ledger (`ledger-types.ts`): an operator action, written by the tool that took it.
   * Final money states are written by the store itself, in the transition. Rows are never updated. Throws
   * `JobValidationError` naming the field on a bad row; the reason is redacted like a stored reason.
   * Returns the stored row. Where `features.ledger` is false (SQS), it rejects with the store's unsupported
   * error after checking the row: tools check `features.ledger` and say the backend keeps no ledger.
   */
  appendLedger(entry: LedgerInput): Promise<LedgerEntry>;
  /** Ledger rows in insertion order, filtered; `[]` where `features.ledger` is false. */
  readLedger(query?: LedgerQuery): Promise<LedgerEntry[]>;
  /** Record a worker's heart-beat (one row per `workerId`, replaced). A no-op when `features.heartbeats` is false. */
  beat(beat: WorkerBeat): Promise<void>;
  /** The latest heart-beat of every worker seen within `sinceMs` of `now`, newest first. */
  workers(options: { now: EpochMs; sinceMs: number }): Promise<WorkerBeat[]>;
  /** What this store keeps for operators. */
  readonly features: OutboxFeatures;
  /** Shadow mode, persisted so a command reaches running workers (`shadow-types.ts`); none on SQS. */
  readonly shadow?: OutboxShadow;
  /** The switches of held campaigns, awaiting a decision (`switch-types.ts`); none on SQS. */
  readonly switches?: OutboxSwitches;

  /** Release resources (file handles, connections). */
  close(): Promise<void>;
}

/**
 * Which jobs `listJobs` returns. Every given criterion must hold. Jobs come most urgent first: by
 * deadline (jobs without one last), then creation time, then id.
 */
export interface JobFilter {
  /** Only jobs in these states (all states when absent or empty). */
  states?: readonly JobState[];
  kind?: JobKind;
  orderId?: string;
  /** Only jobs of this account; `null`: only jobs without one. @defaultValue every account */
  account?: string | null;
  /** Only jobs whose `lastError` matches (a JavaScript regular expression, applied by the store). */
  reason?: RegExp;
  /** Only jobs whose last recorded attempt ended with this HTTP status. */
  status?: number;
  /** Only jobs with a deadline at or before this time (e.g. `now + 24 h`: "closes its window within 24 h"). */
  deadlineBefore?: EpochMs;
  /** Only jobs last changed at or before this time (e.g. `now - 1 h`: "older than an hour"). */
  updatedBefore?: EpochMs;
  /** @defaultValue {@link DEFAULT_LIST_JOBS_LIMIT}; at most {@link MAX_LIST_JOBS_LIMIT} */
  limit?: number;
  /** Jobs to skip, for paging. @defaultValue 0 */
  offset?: number;
}

/** Options of `Outbox.stats`. */
export interface StatsOptions {
  /** Open (`pending` or `inflight`) jobs whose deadline is within this of `now` count as at risk. @defaultValue {@link DEFAULT_AT_RISK_WITHIN_MS} */
  atRiskWithinMs?: number;
  /**
   * Upper bounds (milliseconds from `now`) for {@link OutboxDeadlineBucket}s of open jobs by time left to
   * their deadline, ascending. @defaultValue none (no buckets)
   */
  deadlineBucketsMs?: readonly number[];
}

/** Open jobs whose deadline is at most `withinMs` from now (cumulative, like a Prometheus `le` bucket). */
export interface OutboxDeadlineBucket {
  withinMs: number;
  count: number;
}

/**
 * What `Outbox.prune` deletes. Only final jobs are ever pruned (`delivered`, `cancelled`, `expired`,
 * `unmatched`), and never before their own deadline: see `prunableAt` for the whole rule.
 */
export interface PruneOptions {
  now: EpochMs;
  /** Final jobs last changed more than this long ago are deleted. */
  olderThanMs: number;
  /**
   * A delivered confirmation is kept at least this long after its charge (from `deliveredAt`, or
   * `maybeAppliedAt` when earlier), so a refund still finds it and its campaign: the configured return
   * window, or, when the window is open-ended, the policy's `confirmationRetentionMs`.
   */
  returnWindowMs: number;
  /**
   * Ledger rows older than this are deleted; `prune` never removes a younger one, whatever `olderThanMs` says.
   * @defaultValue `DEFAULT_LEDGER_RETENTION_MS` (400 days)
   */
  ledgerRetentionMs?: number;
}

/** A worker's latest heart-beat: is anyone delivering, and is it paused? */
export interface WorkerBeat {
  /** Stable for one worker process (e.g. `host:pid:random`). */
  workerId: string;
  /** When the beat was recorded. */
  at: EpochMs;
  /** The Dispatcher's state: `idle`, `running`, `paused`, `probing`, `stopping` (or `stopped`, last beat). */
  state: string;
  /** While paused: when the next probe is due. */
  pausedUntil: EpochMs | null;
  /** While paused: why (redacted). */
  pauseReason: string | null;
  /** The postback version the worker runs. */
  version: string;
  host: string | null;
  pid: number | null;
  /** Accounts whose key was refused (401/403) or is unknown: their jobs wait. Empty when none. */
  pausedAccounts: readonly AccountPause[];
}

/**
 * Why a Dispatcher paused a scope: `auth`, its key was refused (401/403) or none is known;
 * `misconfigured`, the answers are not the service's (base URL, proxy); `rate-limited`, the service
 * answered 429; `systematic-refusal`, the same refusal met every job (reserved: issue 30 item 8).
 */
export type PauseCause = 'auth' | 'misconfigured' | 'rate-limited' | 'systematic-refusal';

/** One account's delivery paused: its key was refused (401/403) or the key resolver has none for it. */
export interface AccountPause {
  /** The account (null: jobs without one). */
  account: string | null;
  /** When the pause began. */
  since: EpochMs;
  /** When one of its jobs next probes the key. */
  until: EpochMs;
  /** Why (redacted): the service's answer, or "no API key for account …". */
  reason: string;
  /** HTTP status that paused it, or null (no key known). */
  status: number | null;
  /** Why (absent in beats of older workers). */
  cause?: PauseCause;
}

/**
 * What a store keeps for operators; `false` where it cannot by its nature (an SQS queue keeps no
 * per-message state and cannot be listed). Tools say so instead of showing an empty answer.
 */
export interface OutboxFeatures {
  /** `history` returns the attempts of every job. */
  attemptHistory: boolean;
  /** The states `listJobs` can list (SQS: only `dead`, from its dead-letter queue). */
  listableStates: readonly JobState[];
  /** `beat` and `workers` keep heart-beats. */
  heartbeats: boolean;
  /** `prune` deletes old final jobs. */
  prune: boolean;
  /**
   * `claim` takes jobs in the order of `accounts.ts` (retaken, urgent, then in turns across accounts).
   * False for SQS, whose queue decides the order (fair queues spread it by message group, the account).
   */
  fairClaims: boolean;
  /**
   * `retry` takes `hold`, `releaseHeld` works and `stats` reports `held` (SQS: as far as a queue can, see
   * its README). False: the Dispatcher dead-letters a job whose campaign is not on s2s, as before holds existed.
   */
  holds: boolean;
  /**
   * The store keeps the ledger (`appendLedger`, `readLedger`, final-state rows). False for SQS: its order
   * ledger is a key-value store with no way to list rows by time, account or order.
   */
  ledger: boolean;
}
