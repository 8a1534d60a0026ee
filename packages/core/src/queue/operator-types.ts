/**
 * What an operator reads from an outbox besides the job itself: each job's attempt history, job listings
 * with filters, deadlines at risk, worker heart-beats and retention. Every store implements these as part
 * of the `Outbox` interface (see `types.ts`); what a store cannot keep by its nature it says in
 * {@link OutboxFeatures}, so a CLI or dashboard can say "this backend does not keep that" instead of
 * showing nothing.
 */
import type { EpochMs } from '../policy.ts';
import type { JobKind, JobState } from './types.ts';

/** How many attempts each job keeps in its history; older ones are dropped first. @defaultValue 20 */
export const ATTEMPT_HISTORY_LIMIT = 20;

/** Longest `detail` an attempt keeps (characters); longer details are cut with an ellipsis. @defaultValue 500 */
export const ATTEMPT_DETAIL_MAX_CHARS = 500;

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

/**
 * How one send of a job ended:
 * - `delivered`: the service accepted it (any 2xx);
 * - `auth`, `misconfigured`: refused for the key or the address (delivery paused; the attempt is not counted);
 * - `window-closed`: the service said the window has closed (the job expired);
 * - `transient`: a failure worth retrying (5xx, 429, a timeout, a reset);
 * - `permanent`: a 4xx that retrying cannot fix (the job is dead);
 * - `stopped`: the worker stopped while the request was under way (it may have been applied).
 * Stores keep unknown values as they are, so later versions may add outcomes.
 */
export type AttemptOutcome =
  | 'delivered'
  | 'auth'
  | 'misconfigured'
  | 'window-closed'
  | 'transient'
  | 'permanent'
  | 'stopped'
  | (string & {});

/** One send of a job, as the Dispatcher recorded it. Never holds the API key or the click token. */
export interface AttemptRecord {
  /** When the request began. */
  startedAt: EpochMs;
  /** How long the send took, quick retries included (milliseconds). */
  durationMs: number;
  outcome: AttemptOutcome;
  /** HTTP status of the service's last answer, or null when there was none (timeout, reset, refused). */
  status: number | null;
  /** The service's `detail` or the error, redacted and cut to {@link ATTEMPT_DETAIL_MAX_CHARS}; null when delivered. */
  detail: string | null;
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
 * What `Outbox.prune` deletes. Only final jobs are ever pruned (`delivered`, `cancelled`, `expired`), and
 * never before their own deadline: see `prunableAt` for the whole rule.
 */
export interface PruneOptions {
  now: EpochMs;
  /** Final jobs last changed more than this long ago are deleted. */
  olderThanMs: number;
  /**
   * A delivered confirmation is kept at least until its return window closes (from `deliveredAt`, or
   * `maybeAppliedAt` when earlier), so a refund still finds it and its campaign.
   */
  returnWindowMs: number;
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
}
