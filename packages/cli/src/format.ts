/**
 * How jobs and times are shown by the queue commands: one stable JSON shape per job (`--json`) and
 * short human-readable text otherwise. Times in JSON are ISO 8601 UTC strings; in text, ISO plus a
 * relative "in 3h"/"5m ago".
 *
 * Whatever a command prints comes partly from outside: the service's `detail` in a reason, an order id,
 * a file's line, a flag's value. Text output passes every such field through {@link printable} (most
 * simply with the {@link text} template tag), so a newline cannot forge a row and an escape sequence
 * cannot reach the terminal; JSON output goes through {@link jsonText}, still JSON that parses to the
 * same values.
 */
import { escapeControls, type Job } from '@postback/core';

/**
 * The text with every control character written as a `\u{…}` escape: core's `escapeControls`, the
 * notation of stored reasons, so it prints on one line and cannot move the cursor, clear the screen or
 * reverse the text.
 *
 * @example
 * ```ts
 * printable('late\n| 99 | delivered'); // 'late\\u{a}| 99 | delivered'
 * ```
 */
export const printable: (value: string) => string = escapeControls;

/**
 * Template tag for one piece of text output: the literal parts are kept, every interpolated value is
 * made {@link printable}. Every text renderer of the CLI builds its lines with it.
 *
 * @example
 * ```ts
 * io.stdout(text`created confirm job ${job.id} for order ${job.orderId}\n`);
 * ```
 */
export function text(strings: TemplateStringsArray, ...values: unknown[]): string {
  let out = strings[0] ?? '';
  for (const [i, value] of values.entries()) out += printable(String(value)) + (strings[i + 1] ?? '');
  return out;
}

/** Characters that JSON.stringify leaves raw but a terminal would act on. */
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `JSON.stringify(value)` with the characters it leaves raw (DEL, C1, separators, bidi controls) written
 * as `\uXXXX` escapes too: the same JSON value, safe to print on a terminal.
 *
 * @example
 * ```ts
 * io.stdout(`${jsonText({ jobs: jobs.map(jobView) })}\n`);
 * ```
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(value).replace(
    JSON_UNSAFE,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

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

/**
 * `2026-01-02T03:04:05.000Z (in 3h)` or `(... 5m ago)` relative to `now`.
 *
 * @example
 * ```ts
 * when(Date.now() + 3 * 3_600_000, Date.now()); // '2026-...Z (in 3h)'
 * ```
 */
export function when(ms: number, now: number): string {
  const rel = ms >= now ? `in ${shortDuration(ms - now)}` : `${shortDuration(now - ms)} ago`;
  return `${new Date(ms).toISOString()} (${rel})`;
}

/**
 * One line describing a job for text output; every field {@link printable}.
 *
 * @example
 * ```ts
 * io.stdout(`${jobs.map(jobLine).join('\n')}\n`);
 * ```
 */
export function jobLine(job: Job): string {
  const reason = job.lastError === null ? '' : text`  ${job.lastError}`;
  return text`${job.id}  ${job.kind.padEnd(7)}  order ${job.orderId}  attempts ${job.attempts}` + reason;
}
