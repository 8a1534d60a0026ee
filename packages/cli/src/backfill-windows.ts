/**
 * What a backfill (`postback enqueue`) can still deliver: each confirmation row is inside its window while
 * its deadline — the one the kit stamps on the job, core's `deadlineOf` (click + 7 days − the safety
 * margin) — is still ahead, and lost once it has passed (the worker expires it unsent). Counted with the
 * rows' value in micros, the same way whether the rows are enqueued or only read (`--dry-run`).
 */
import { formatMicros } from '@postback/client';

/** Rows and their value. */
export interface RowsAndValue {
  rows: number;
  valueMicros: number;
}

/** The confirmation rows of a file by their window at the time of the run. */
export interface WindowSummary {
  /** Deadline still ahead: the worker can deliver them. */
  open: RowsAndValue;
  /** Deadline passed: never sent; the worker marks them expired. */
  lost: RowsAndValue;
}

/** An empty summary. */
export function emptyWindows(): WindowSummary {
  return { open: { rows: 0, valueMicros: 0 }, lost: { rows: 0, valueMicros: 0 } };
}

/**
 * Counts one confirmation row: lost when its deadline is before `now` (nothing is sent after it).
 *
 * @example
 * ```ts
 * countWindow(summary, deadlineOf(clickedAt), 1_990_000, Date.now());
 * ```
 */
export function countWindow(
  summary: WindowSummary,
  deadline: number,
  valueMicros: number,
  now: number,
): void {
  const bucket = deadline < now ? summary.lost : summary.open;
  bucket.rows += 1;
  bucket.valueMicros += valueMicros;
}

/**
 * The summary as a line of text, money through the client's exact `formatMicros`.
 *
 * @example
 * ```ts
 * windowsLine(summary); // 'windows: 12 confirmation(s) inside their window (worth 123.45), 3 already past it (worth 9.00): lost, never sent'
 * ```
 */
export function windowsLine(summary: WindowSummary): string {
  const { open, lost } = summary;
  return (
    `windows: ${open.rows} confirmation(s) inside their window (worth ${formatMicros(open.valueMicros)}), ` +
    `${lost.rows} already past it (worth ${formatMicros(lost.valueMicros)})${lost.rows > 0 ? ': lost, never sent' : ''}`
  );
}
