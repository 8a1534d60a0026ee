/**
 * Worker heart-beats as the `workers` table keeps them: a beat (checked by core's `checkBeat`) as the
 * values of the `beat` statement, and a row back as a beat. Postgres text cannot hold U+0000, so it is
 * kept as the escape `\u{0}`.
 */
import type { AccountPause, WorkerBeat } from '@postback/core';

const withoutNul = (text: string) => text.replaceAll('\u0000', '\\u{0}');
const textOrNull = (text: string | null) => (text === null ? null : withoutNul(text));

/**
 * A checked heart-beat as the values of the `beat` statement.
 *
 * @example
 * ```ts
 * await pool.query(sql.beat, beatValues(checkBeat(beat)));
 * ```
 */
export function beatValues(beat: WorkerBeat): unknown[] {
  const paused: AccountPause[] = beat.pausedAccounts.map((p) => ({
    ...p,
    account: textOrNull(p.account),
    reason: withoutNul(p.reason),
  }));
  return [
    withoutNul(beat.workerId),
    beat.at,
    withoutNul(beat.state),
    beat.pausedUntil,
    textOrNull(beat.pauseReason),
    withoutNul(beat.version),
    textOrNull(beat.host),
    beat.pid,
    JSON.stringify(paused),
  ];
}

/**
 * A beat as stored, back as core's {@link WorkerBeat}.
 *
 * @example
 * ```ts
 * const seen = (await pool.query(sql.workers, [since])).rows.map(rowToBeat);
 * ```
 */
export function rowToBeat(row: Record<string, unknown>): WorkerBeat {
  const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    workerId: String(row.worker_id),
    at: Number(row.at),
    state: String(row.state),
    pausedUntil: numOrNull(row.paused_until),
    pauseReason: (row.pause_reason as string | null) ?? null,
    version: String(row.version),
    host: (row.host as string | null) ?? null,
    pid: numOrNull(row.pid),
    pausedAccounts: pausedAccountsOf(row.paused_accounts),
  };
}

/** `workers.paused_accounts` back as the beat's pauses (NULL, from a beat before migration 4: none). */
function pausedAccountsOf(stored: unknown): AccountPause[] {
  if (stored === null || stored === undefined) return [];
  // pg parses jsonb; other drivers behind a Queryable may hand back its text.
  return (typeof stored === 'string' ? JSON.parse(stored) : stored) as AccountPause[];
}
