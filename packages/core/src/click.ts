/**
 * The click: what capture produces and what a confirmation is attributed to, and the `ClickStore`
 * interface for keeping clicks server-side (so a click can follow a shopper across devices once they
 * log in). Implementations: memory (core), SQLite, Postgres; all pass `describeClickStore` from
 * `@postback/core/testing`.
 */
import type { EpochMs } from './policy.ts';

/** A captured ad click: the token from the landing URL and when it arrived (the start of the 7-day window). */
export interface ClickStamp {
  /** The click token exactly as it arrived in the landing URL's query parameter. */
  token: string;
  /** When the click was captured, in epoch milliseconds. */
  clickedAt: EpochMs;
}

/**
 * Server-side clicks keyed by a visitor or customer id. A click older than the confirmation window is
 * never returned (it could no longer be confirmed) and may be deleted by `sweep`.
 */
export interface ClickStore {
  /**
   * Remember `click` for `key`. A click of another token replaces the kept one (attribution, first or
   * last click wins, is decided by the caller). The same token put again keeps the earlier of the two
   * times: a landing URL opened again is the same ad click, and its window does not restart.
   */
  put(key: string, click: ClickStamp): Promise<void>;
  /** The click kept for `key`, or null when there is none or it is older than the window at `now`. */
  get(key: string, now: EpochMs): Promise<ClickStamp | null>;
  /** Forget the click of `key` (e.g. once the order is confirmed, or on the shopper's request). */
  delete(key: string): Promise<void>;
  /** Delete every click older than the window at `now`; returns how many were deleted. */
  sweep(now: EpochMs): Promise<number>;
  close(): Promise<void>;
}
