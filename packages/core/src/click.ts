/**
 * The click: what capture produces and what a confirmation is attributed to, the rules a click token and
 * time must meet wherever they arrive (a landing URL, a cookie, an outbox), and the `ClickStore`
 * interface for keeping clicks server-side (so a click can follow a shopper across devices once they
 * log in). Implementations: memory (core), SQLite, Postgres; all pass `describeClickStore` from
 * `@postback/core/testing`.
 */
import type { EpochMs } from './policy.ts';

/**
 * Longest click token accepted. The spec gives no bound; tokens we have seen are 24–48 characters, and a
 * cap keeps a hostile landing URL from filling the queue. Capture's `tokenMaxLength` may not exceed it.
 * @defaultValue 512
 */
export const MAX_CLICK_TOKEN_LENGTH = 512;

/**
 * Characters a click token may hold: RFC 3986 unreserved characters plus `+ / =` (base64). Anything else
 * (spaces, quotes, `<`, control characters, non-ASCII) is not something the service issued. Capture
 * accepts a narrower set in landing URLs (`TOKEN_CHARACTERS`, no `+ / =`, which a query string mangles).
 */
export const CLICK_TOKEN_PATTERN: RegExp = /^[A-Za-z0-9._~+/=-]+$/;

/**
 * How far in the future a click's `clickedAt` may lie (clock skew between the capturing server and the
 * one enqueueing). Kept well below the deadline's safety margin so skew can never push a send past the
 * service's window. The outbox refuses such a click, and capture refuses a cookie holding one.
 * @defaultValue 300_000 (5 minutes)
 */
export const DEFAULT_MAX_CLOCK_SKEW_MS = 300_000;

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
