/**
 * The job model: what a job is (a confirmation or a reversal of one order), the states it goes through,
 * and the history of its sends. The `Outbox` interface that keeps jobs is in `outbox-types.ts`; the rules
 * that move a job between states are in `jobs.ts` and `refund-rules.ts`.
 *
 * Job states (see DESIGN.md):
 * ```
 * pending ──claim──► inflight ──ok──────────► delivered
 *    ▲                  │ ──transient──► pending (next attempt ≤ deadline)
 *    │                  │ ──campaign not on s2s──► pending, held (probed again; attempt not counted)
 *    │                  │ ──permanent──► dead      (reason kept; replayable)
 *    └──replay── dead   │ ──deadline passed──► expired
 *                       │ ──404 on a reversal──► unmatched (the service had no such conversion)
 *  pending ──refund before send──► cancelled
 * ```
 */
import type { EpochMs, WindowPolicy } from '../policy.ts';

/** What a factory needs besides the input: the clock, the windows, and the id the store assigns. */
export interface JobContext {
  now: EpochMs;
  /** Store-assigned unique id for the new job. */
  id: string;
  /** @defaultValue `DEFAULT_WINDOW_POLICY` */
  policy?: WindowPolicy;
  /** @defaultValue `DEFAULT_MAX_CLOCK_SKEW_MS` */
  maxClockSkewMs?: number;
}

/** The two things a shop asks the service to do with an order. */
export type JobKind = 'confirm' | 'refund';

/**
 * Where a job is in its life. `delivered`, `expired`, `cancelled` and `unmatched` are final; `dead` can be
 * replayed. `unmatched` (refund jobs only): the service answered that it had no such conversion to
 * reverse (a 404 with its `detail`, the campaign taken from its own confirmation answer).
 */
export type JobState = 'pending' | 'inflight' | 'delivered' | 'dead' | 'expired' | 'cancelled' | 'unmatched';

/** Every job state, in lifecycle order. */
export const JOB_STATES: readonly JobState[] = [
  'pending',
  'inflight',
  'delivered',
  'dead',
  'expired',
  'cancelled',
  'unmatched',
];

/** Fields every job has, whatever its kind. */
export interface JobFields {
  /** Store-assigned unique id (opaque string). */
  id: string;
  /** The advertiser's order id: the idempotency key at the service. One confirm and one refund per order. */
  orderId: string;
  /**
   * The advertiser account the job is delivered for (an opaque reference chosen by the app, e.g. a shop
   * id; never a key), or null for none. An order is identified by its account and its order id together.
   * The Dispatcher asks its `apiKeyFor(account)` for the key to send it with.
   */
  account: string | null;
  state: JobState;
  /** Delivery attempts begun (incremented durably at claim; undone when an attempt is not the job's fault). */
  attempts: number;
  createdAt: EpochMs;
  updatedAt: EpochMs;
  /** Earliest time the job may be claimed again. */
  nextAttemptAt: EpochMs;
  /**
   * Last moment the job may be sent. Never null for a confirm; null for a refund still waiting for its
   * confirmation to be delivered (its return window starts at that delivery).
   */
  deadline: EpochMs | null;
  /** Last error, or for `dead`/`expired` jobs the reason (the service's `detail`). Never holds secrets. */
  lastError: string | null;
  /** Set while `inflight`: who holds the job and until when. A transition with a stale lease is refused. */
  lease: { token: string; expiresAt: EpochMs } | null;
  /** When the service accepted the job. */
  deliveredAt: EpochMs | null;
  /**
   * Confirm: the campaign the service attributed the conversion to (from its response), once delivered.
   * Refund: the campaign to reverse in (given by the caller, or copied from the delivered confirmation).
   */
  campaignId: string | null;
  /**
   * When a request of this job may first have reached the service without our reading a clear answer (the
   * answer was lost, the send timed out after it left, the worker died mid-send), or null. Once set, the
   * job is never treated as "never charged": a refund of its order is sent, not cancelled, whatever state
   * the job ends in. A refund that follows such a confirmation counts its return window from this time.
   */
  maybeAppliedAt: EpochMs | null;
  /**
   * When the job was first held for a problem of its campaign rather than of the job (the service said
   * the campaign is not on s2s), or null: a held job stays `pending`, its attempts uncounted, probed again
   * on a schedule. Kept across probes; cleared by any other outcome (delivered, retried, dead, expired).
   */
  heldAt: EpochMs | null;
  /** While held: the campaign the service's answer named (`cmp_…`), or null when it named none. */
  heldCampaignId: string | null;
}

/** A confirmation of a sale: POST /v1/conversions/s2s. */
export interface ConfirmJob extends JobFields {
  kind: 'confirm';
  clickToken: string;
  /** Order value in integer micros. */
  valueMicros: number;
  clickedAt: EpochMs;
}

/**
 * Where a refund's campaign came from: `answer`, the service's own confirmation answer (copied from the
 * delivered confirm); `caller`, a person or the app (`refund({ campaignId })`); null, none yet (or a job
 * stored before this was kept).
 */
export type CampaignSource = 'answer' | 'caller' | null;

/** A reversal of a confirmed sale: POST /v1/conversions/s2s/refund. */
export interface RefundJob extends JobFields {
  kind: 'refund';
  /**
   * Where `campaignId` came from. A 404 on a reversal whose campaign came from the service's answer ends
   * it `unmatched` (the service had no such conversion); from a caller, it may be a typo: `dead`.
   */
  campaignFrom: CampaignSource;
}

/** Any job. Narrow on `kind`. */
export type Job = ConfirmJob | RefundJob;

/** How many attempts each job keeps in its history; older ones are dropped first. @defaultValue 20 */
export const ATTEMPT_HISTORY_LIMIT = 20;

/** Longest `detail` an attempt keeps (characters); longer details are cut with an ellipsis. @defaultValue 500 */
export const ATTEMPT_DETAIL_MAX_CHARS = 500;

/**
 * How one send of a job ended:
 * - `delivered`: the service accepted it (any 2xx);
 * - `auth`, `misconfigured`: refused for the key or the address (delivery paused; the attempt is not counted);
 * - `window-closed`: the service said the window has closed (the job expired);
 * - `held`: the service said the campaign is not on s2s (the job is held, its attempt not counted);
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
  | 'held'
  | 'rate-limited'
  | 'unmatched'
  | 'transient'
  | 'permanent'
  | 'stopped'
  | (string & {});

/** One send of a job, as the Dispatcher recorded it. Never holds the API key or the click token. */
export interface AttemptRecord {
  /** When the request began. */
  startedAt: EpochMs;
  /** How long the request took (milliseconds). */
  durationMs: number;
  outcome: AttemptOutcome;
  /** HTTP status of the service's last answer, or null when there was none (timeout, reset, refused). */
  status: number | null;
  /** The service's `detail` or the error, redacted and cut to {@link ATTEMPT_DETAIL_MAX_CHARS}; null when delivered. */
  detail: string | null;
}
