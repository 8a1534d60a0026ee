/**
 * The one rule every wait answers to (backoff, a pause of a scope, a hold's probe, the pace, a learned
 * rate): whatever holds a job back yields to its deadline. A job gets a real try — a claim that can
 * actually take it and a send that starts before the deadline — no later than its *last chance*,
 * `deadline − (send duration + claim latency)`; a job whose deadline has passed unsent is overdue and
 * expired at once, never left `pending`. Pure functions, beside `jobs.ts`'s rules, so every store and
 * every mechanism of the Dispatcher applies the same arithmetic.
 */
import type { EpochMs } from '../policy.ts';
import type { Job } from './job-types.ts';
import { truncateReason } from './jobs.ts';

/**
 * The timing a last chance must leave room for: how long a send may take, and how long a job that has
 * come due may wait before a claim takes it.
 */
export interface WaitTiming {
  /** Longest a send may take (the Dispatcher's `sendTimeoutMs`). */
  sendMs: number;
  /**
   * Longest between a job coming due and a claim taking it (the Dispatcher's `pollIntervalMs`; 0 for a
   * wait inside a process that already holds the job, such as the pace).
   */
  claimLatencyMs: number;
}

/**
 * The timing of a Dispatcher with default options (`sendTimeoutMs` 30 s, `pollIntervalMs` 1 s).
 * @defaultValue `{ sendMs: 30_000, claimLatencyMs: 1_000 }`
 */
export const DEFAULT_WAIT_TIMING: Readonly<WaitTiming> = Object.freeze({
  sendMs: 30_000,
  claimLatencyMs: 1_000,
});

/**
 * The timing of a Dispatcher's options.
 *
 * @example
 * ```ts
 * const timing = waitTimingOf({ sendTimeoutMs: 30_000, pollIntervalMs: 1_000 });
 * ```
 */
export function waitTimingOf(options: { sendTimeoutMs: number; pollIntervalMs: number }): WaitTiming {
  return { sendMs: options.sendTimeoutMs, claimLatencyMs: options.pollIntervalMs };
}

/** How far before its deadline a job's last chance lies. */
export function lastChanceLeadMs(timing: WaitTiming): number {
  return Math.max(0, timing.sendMs) + Math.max(0, timing.claimLatencyMs);
}

/**
 * The latest time a job may come due and still get a real try: `deadline − (sendMs + claimLatencyMs)`.
 * `null` for a job without a deadline (a refund waiting for its confirmation): nothing caps its waits.
 *
 * @example
 * ```ts
 * lastChanceAt({ deadline: 100_000 }, { sendMs: 30_000, claimLatencyMs: 1_000 }); // 69_000
 * ```
 */
export function lastChanceAt(job: Pick<Job, 'deadline'>, timing: WaitTiming): EpochMs | null {
  return job.deadline === null ? null : job.deadline - lastChanceLeadMs(timing);
}

/** When a wait ends, as the rule allows; see {@link capWait}. */
export interface CappedWait {
  /** When the job may go next (when it comes due). */
  at: EpochMs;
  /** The wait was cut to the job's last chance: the try at `at` is its last real one. */
  lastChance: boolean;
}

/**
 * Caps a wanted wait (a job wants to go next at `wantedAt`; asked at `now`) by the job's last chance:
 * - no deadline, or `wantedAt` at or before the last chance: `{ at: wantedAt, lastChance: false }`;
 * - otherwise, while the last chance is still ahead: `{ at: lastChanceAt, lastChance: true }`;
 * - otherwise `null`: the last chance was spent (the job went at or after it) and no real try remains
 *   before the deadline — the caller expires the job instead of retrying into its deadline.
 *
 * A pause that holds back a job the caller must still send (a probe) uses {@link probeBy} instead.
 *
 * @example
 * ```ts
 * const next = capWait(job, now + delay, timing, now);
 * if (next === null) await expire(job);
 * else await outbox.retry(job, { now, nextAttemptAt: next.at, error });
 * ```
 */
export function capWait(
  job: Pick<Job, 'deadline'>,
  wantedAt: EpochMs,
  timing: WaitTiming,
  now: EpochMs,
): CappedWait | null {
  const last = lastChanceAt(job, timing);
  if (last === null || wantedAt <= last) return { at: wantedAt, lastChance: false };
  if (now < last) return { at: last, lastChance: true };
  return null;
}

/**
 * The latest time a scope holding `job` back (a pause, a learned rate) must let one request of it go —
 * its last chance, or `now` when that has come — `null` for a job without a deadline. A pause ends no
 * later than the earliest of these over the jobs it holds back ({@link earliestProbeBy}).
 *
 * @example
 * ```ts
 * const until = Math.min(wantedUntil, probeBy(job, timing, now) ?? wantedUntil);
 * ```
 */
export function probeBy(job: Pick<Job, 'deadline'>, timing: WaitTiming, now: EpochMs): EpochMs | null {
  const last = lastChanceAt(job, timing);
  return last === null ? null : Math.max(now, last);
}

/**
 * The earliest {@link probeBy} over some jobs (`null` when none has a deadline).
 *
 * @example
 * ```ts
 * const probeAt = earliestProbeBy(heldBack, timing, now) ?? wantedUntil;
 * ```
 */
export function earliestProbeBy(
  jobs: Iterable<Pick<Job, 'deadline'>>,
  timing: WaitTiming,
  now: EpochMs,
): EpochMs | null {
  let earliest: EpochMs | null = null;
  for (const job of jobs) {
    const by = probeBy(job, timing, now);
    if (by !== null && (earliest === null || by < earliest)) earliest = by;
  }
  return earliest;
}

/**
 * Whether a job must go now whatever holds it back (a pace, a learned rate, a pause): its last chance
 * has come and its deadline has not passed.
 *
 * @example
 * ```ts
 * if (mustGoNow(job, timing, now)) send(job); // no pace or rate delays it further
 * ```
 */
export function mustGoNow(job: Pick<Job, 'deadline'>, timing: WaitTiming, now: EpochMs): boolean {
  const last = lastChanceAt(job, timing);
  return last !== null && last <= now && job.deadline !== null && now <= job.deadline;
}

/**
 * Whether a job is overdue at `now`: open and unsent (`pending`, or `inflight` with a lapsed lease) with
 * a deadline that has passed (`now > deadline`, the same test a send makes before it goes). An overdue
 * job is expired at once ({@link expireOverdueJob}), whatever pause or rate holds its scope back.
 *
 * @example
 * ```ts
 * const overdue = jobs.filter((job) => isOverdue(job, now));
 * ```
 */
export function isOverdue(job: Pick<Job, 'state' | 'deadline' | 'lease'>, now: EpochMs): boolean {
  if (job.deadline === null || !(now > job.deadline)) return false;
  if (job.state === 'pending') return true;
  return job.state === 'inflight' && job.lease !== null && job.lease.expiresAt <= now;
}

/**
 * The reason stored on a job expired because its deadline passed unsent.
 *
 * @example
 * ```ts
 * overdueReason(job); // "deadline 2026-01-22T11:00:00.000Z passed before the job could be sent; last error: HTTP 503"
 * ```
 */
export function overdueReason(job: Pick<Job, 'deadline' | 'lastError'>): string {
  const when = job.deadline === null ? 'unknown' : new Date(job.deadline).toISOString();
  const last = job.lastError === null ? '' : `; last error: ${job.lastError}`;
  return truncateReason(`deadline ${when} passed before the job could be sent${last}`);
}

/**
 * An overdue job ({@link isOverdue}) as a store records it: `expired`, with {@link overdueReason}, lease
 * and hold cleared. An `inflight` job whose lease lapsed may have been sent by the worker that held it:
 * it is marked maybe applied, as a claim that retakes it would (`maybeAppliedAt` ← its `updatedAt`).
 * Returns the job unchanged when it is not overdue.
 *
 * @example
 * ```ts
 * for (const job of open) if (isOverdue(job, now)) await db.update(expireOverdueJob(job, now));
 * ```
 */
export function expireOverdueJob<J extends Job>(stored: J, now: EpochMs): J {
  if (!isOverdue(stored, now)) return stored;
  return {
    ...stored,
    state: 'expired',
    updatedAt: now,
    lastError: overdueReason(stored),
    lease: null,
    heldAt: null,
    heldCampaignId: null,
    maybeAppliedAt: stored.maybeAppliedAt ?? (stored.state === 'inflight' ? stored.updatedAt : null),
  };
}
