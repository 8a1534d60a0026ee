/**
 * How jobs and times are shown by the queue commands: one stable JSON shape per job (`--json`) and
 * short human-readable text otherwise. Times in JSON are ISO 8601 UTC strings; in text, ISO plus a
 * relative "in 3h"/"5m ago".
 */
import type { Job } from '@postback/core';

/** A job as `--json` output shows it. The click token is left out: an operator never needs it to act on a job. */
export interface JobView {
  id: string;
  kind: Job['kind'];
  orderId: string;
  state: Job['state'];
  attempts: number;
  createdAt: string;
  updatedAt: string;
  deadline: string | null;
  campaignId: string | null;
  /** The last error, or for dead/expired jobs the reason. */
  reason: string | null;
}

/** ISO 8601 UTC string of epoch milliseconds, or null. */
export function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

/**
 * The stable JSON view of a job.
 *
 * @example
 * ```ts
 * io.stdout(`${JSON.stringify(jobView(job))}\n`);
 * ```
 */
export function jobView(job: Job): JobView {
  return {
    id: job.id,
    kind: job.kind,
    orderId: job.orderId,
    state: job.state,
    attempts: job.attempts,
    createdAt: iso(job.createdAt) as string,
    updatedAt: iso(job.updatedAt) as string,
    deadline: iso(job.deadline),
    campaignId: job.campaignId,
    reason: job.lastError,
  };
}

/**
 * A duration as a short human string: `45s`, `12m`, `3h`, `2d`.
 *
 * @example
 * ```ts
 * shortDuration(90 * 60_000); // '1h'
 * ```
 */
export function shortDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 60_000) return `${Math.round(abs / 1000)}s`;
  if (abs < 3_600_000) return `${Math.floor(abs / 60_000)}m`;
  if (abs < 86_400_000) return `${Math.floor(abs / 3_600_000)}h`;
  return `${Math.floor(abs / 86_400_000)}d`;
}

/** `2026-01-02T03:04:05.000Z (in 3h)` or `(... 5m ago)` relative to `now`. */
export function when(ms: number, now: number): string {
  const rel = ms >= now ? `in ${shortDuration(ms - now)}` : `${shortDuration(now - ms)} ago`;
  return `${new Date(ms).toISOString()} (${rel})`;
}

/** One line describing a job for text output. */
export function jobLine(job: Job): string {
  const reason = job.lastError === null ? '' : `  ${job.lastError}`;
  return `${job.id}  ${job.kind.padEnd(7)}  order ${job.orderId}  attempts ${job.attempts}${reason}`;
}
