/**
 * The ledger of every hand on the money: an append-only record of each operator action that moves money
 * (replay, purge, withdraw, refund, held send/drop, shadow end) and each final money state a job ends in
 * (applied, reversed, expired, unmatched, dead). Rows are only added, never updated; `prune` never
 * removes them (they have their own retention, {@link DEFAULT_LEDGER_RETENTION_MS}).
 */
import { DEFAULT_CONFIRMATION_RETENTION_MS, type EpochMs } from '../policy.ts';

/** Operator actions, written by the tool that took them (CLI, dashboard). */
export const LEDGER_ACTION_KINDS = [
  'replay',
  'purge',
  'withdraw',
  'refund',
  'held-send',
  'held-drop',
  'shadow-end',
] as const;

/** Final money states, written by the store in the same transition that moves the job there. */
export const LEDGER_FINAL_KINDS = ['applied', 'reversed', 'expired', 'unmatched', 'dead'] as const;

/** What a ledger row records. */
export type LedgerKind = (typeof LEDGER_ACTION_KINDS)[number] | (typeof LEDGER_FINAL_KINDS)[number];

/** The actor of a final state the Dispatcher reached on its own. */
export const LEDGER_DISPATCHER_ACTOR = 'dispatcher';

/**
 * How long ledger rows are kept: the same 400 days as a charged confirmation's retention (one figure).
 * @defaultValue 400 days
 */
export const DEFAULT_LEDGER_RETENTION_MS: number = DEFAULT_CONFIRMATION_RETENTION_MS;

/** Most rows one `readLedger` returns. @defaultValue 1000 */
export const DEFAULT_LEDGER_READ_LIMIT = 1000;

/** Largest `limit` of `readLedger`. @defaultValue 10_000 */
export const MAX_LEDGER_READ_LIMIT = 10_000;

/** A row to append: who did what to which order, when, for how much, and why. */
export interface LedgerInput {
  /** Who: a CLI user, a dashboard token's name, or `dispatcher` for a final state. */
  actor: string;
  kind: LedgerKind;
  /** When it happened. */
  at: EpochMs;
  /** The job it concerns, or null for an action on an order with no job. */
  jobId: string | null;
  orderId: string;
  account: string | null;
  /** The money concerned, in integer micros, or null when unknown (a refund's value is its confirm's). */
  valueMicros: number | null;
  /** Why, redacted like a stored reason; null when none. */
  reason: string | null;
}

/** A stored ledger row: its input plus the store's sequence number (increasing in insertion order). */
export interface LedgerEntry extends LedgerInput {
  seq: number;
}

/** What `readLedger` returns: rows in insertion order, filtered. */
export interface LedgerQuery {
  /** Only rows with `at >= since`. */
  since?: EpochMs;
  orderId?: string;
  account?: string;
  /** @defaultValue {@link DEFAULT_LEDGER_READ_LIMIT} */
  limit?: number;
}
