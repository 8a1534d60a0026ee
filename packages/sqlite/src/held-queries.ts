/**
 * Jobs held for their campaign (core's `RetryResult.hold`) in SQL: `releaseHeld` as one UPDATE and the
 * held problems of `stats` as one aggregate, both read on `jobs_held`, which holds only open held jobs.
 * The conformance suite holds them to the answers of core's `isReleasable`, `releaseHeldJob` and
 * `heldProblemsOf`.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { EpochMs, HeldProblem } from '@postback/core';
import { accountFromKey, accountKey, byHeldSince, type ReleaseHeldOptions } from '@postback/core/store';

/**
 * Core's `releaseHeldJob` on every pending held job of the selection: due now (or as it was, if sooner),
 * `updated_at` now; the held columns stay until the job's next outcome. `:any_account` and `:any_campaign`
 * are 1 when the selection leaves that criterion out.
 */
export const RELEASE_HELD_SQL = `
  UPDATE jobs INDEXED BY jobs_held
     SET next_attempt_at = MIN(next_attempt_at, :now), updated_at = :now
   WHERE held_at IS NOT NULL AND state IN ('pending', 'inflight') AND state = 'pending'
     AND (:any_account = 1 OR account = :account)
     AND (:any_campaign = 1 OR held_campaign_id IS :campaign)`;

/**
 * One row per account and held campaign: the count, the value (reversals carry none), the first hold and
 * (SQLite's bare column of a MIN aggregate) the reason of the job held first; the earliest deadline by a
 * subquery (a second MIN would leave the bare column's row unspecified).
 */
export const HELD_PROBLEMS_SQL = `
  SELECT account, held_campaign_id, COUNT(*) AS n, TOTAL(value_micros) AS value, MIN(held_at) AS since,
         last_error,
         (SELECT MIN(d.deadline) FROM jobs AS d INDEXED BY jobs_held
           WHERE d.held_at IS NOT NULL AND d.state IN ('pending', 'inflight')
             AND d.account = jobs.account AND d.held_campaign_id IS jobs.held_campaign_id) AS earliest_deadline
    FROM jobs INDEXED BY jobs_held
   WHERE held_at IS NOT NULL AND state IN ('pending', 'inflight')
   GROUP BY account, held_campaign_id`;

interface ProblemRow {
  account: string;
  held_campaign_id: string | null;
  n: number;
  value: number;
  since: number;
  last_error: string | null;
  earliest_deadline: number | null;
}

/** The held-job statements of one connection. */
export function createHeldQueries(db: DatabaseSync) {
  const release = db.prepare(RELEASE_HELD_SQL);
  const problems = db.prepare(HELD_PROBLEMS_SQL);
  return {
    /** Releases the held jobs of a checked selection (inside a write transaction); returns how many. */
    releaseHeld(options: ReleaseHeldOptions): number {
      const { now, account, campaignId } = options;
      return Number(
        release.run({
          now: now as EpochMs,
          any_account: account === undefined ? 1 : 0,
          account: account === undefined ? '' : accountKey(account),
          any_campaign: campaignId === undefined ? 1 : 0,
          campaign: campaignId ?? null,
        }).changes,
      );
    },

    /** The held problems, oldest hold first (core's `heldProblemsOf`). */
    heldProblems(): HeldProblem[] {
      return (problems.all() as unknown as ProblemRow[])
        .map((row) => ({
          account: accountFromKey(row.account),
          campaignId: row.held_campaign_id,
          count: row.n,
          valueMicros: row.value,
          reason: row.last_error ?? '',
          since: row.since,
          earliestDeadline: row.earliest_deadline,
        }))
        .sort(byHeldSince);
    },
  };
}
