/**
 * What the store contract says of shadow mode, the migration tool from pixel to s2s: an account (or the
 * whole outbox) in shadow mode has each confirmation and reversal recorded as it would be sent, and sends
 * nothing. The switch is a persisted setting (`OutboxShadow.start` / `end`), so `postback shadow end`
 * reaches a running worker; the rules are core's `shadow-rules.ts`.
 */
import type { EpochMs } from '../policy.ts';
import type { Job } from './job-types.ts';

/** Where shadow mode is on: one account (`null`: jobs without one), or the whole outbox. */
export type ShadowScope = { account: string | null } | { all: true };

/** One scope in shadow mode, as the store keeps it. */
export interface ShadowSetting {
  /** `all`: every job of the outbox; `account`: the jobs of `account`. */
  scope: 'all' | 'account';
  /** The account (null: jobs without one, or the whole outbox when `scope` is `all`). */
  account: string | null;
  /** When shadow mode began for this scope. */
  since: EpochMs;
}

/**
 * The decision on orders recorded in shadow mode (or held for their campaign) when the campaign starts
 * taking s2s: `send` them (inside their windows: one whose deadline passed is recorded expired, never sent
 * late) or `drop` them (the pixel billed them: ended not sent, with a reason).
 */
export type SwitchDecision = 'send' | 'drop';

/** What `OutboxShadow.end` does with the jobs recorded under the scope it ends. */
export interface ShadowEndOptions {
  now: EpochMs;
  /**
   * Recorded jobs created at or after this time are sent (the shop turned its pixel off then); the others
   * are dropped. `null`: none is sent (the default: the pixel billed them all).
   */
  sendCreatedFrom: EpochMs | null;
}

/** One recorded job as `OutboxShadow.end` decided it, and what it became. */
export interface ShadowDecided {
  decision: SwitchDecision;
  /** The job as it is now: `pending` (to be sent), `cancelled` (dropped) or `expired` (too late to send). */
  job: Job;
}

/** What `OutboxShadow.end` did. */
export interface ShadowEndResult {
  /** Whether the scope was in shadow mode. */
  ended: boolean;
  /** Every recorded job of the scope (and no longer in shadow mode by another setting), decided. */
  decided: ShadowDecided[];
}

/** One reading of the service's spend for an account's campaigns (`GET /v1/campaigns`, a read key). */
export interface SpendReading {
  /** The account whose key read it (null: the default key). */
  account: string | null;
  at: EpochMs;
  /** Each campaign listed with a readable spend, in micros. */
  campaigns: ReadonlyArray<{ campaignId: string; spendMicros: number }>;
}

/**
 * Shadow mode in a store: its settings, the fenced recording of a claimed job, the end of shadow mode
 * with its decision, and the spend readings the report compares with. A store without it (SQS: see its
 * README) leaves `Outbox.shadow` undefined.
 */
export interface OutboxShadow {
  /** Turns shadow mode on for `scope` from `now` (a scope already on keeps its `since`). */
  start(scope: ShadowScope, now: EpochMs): Promise<ShadowSetting>;
  /** Every scope in shadow mode, oldest first. */
  settings(): Promise<ShadowSetting[]>;
  /**
   * Records a claimed job as shadow-recorded (core's `shadowRecordJob`): `recorded` when its account is
   * in shadow mode at this moment (read in the same transaction as the write); `not-shadowed` when it is
   * not (the caller sends it), changing nothing; `lost` when `job` no longer holds its lease.
   */
  record(job: Job, options: { now: EpochMs }): Promise<'recorded' | 'not-shadowed' | 'lost'>;
  /**
   * Ends shadow mode for `scope` and, in the same transaction, decides every shadow-recorded job no
   * other setting still covers (core's `decideAtShadowEnd` and `endShadowJob`).
   */
  end(scope: ShadowScope, options: ShadowEndOptions): Promise<ShadowEndResult>;
  /** Keeps a spend reading (for `postback shadow report`'s per-day spend). */
  noteSpend(reading: SpendReading): Promise<void>;
  /** The spend readings taken at or after `since`, oldest first. */
  spend(options: { since: EpochMs }): Promise<SpendReading[]>;
}
