/**
 * Outcomes recorded in batches (group commit): the completions made while a batch is being written (a
 * Dispatcher finishing its sends, several Dispatchers on one outbox) go in the next one, one round trip
 * and one WAL flush for all of them. Each job's outcome stays conditional on its own lease token: a job
 * whose lease was lost (taken over by another worker, or completed twice) is left as it is and its
 * caller answered `false`, while the others of the batch are recorded. A batch is one transaction: it is
 * recorded whole or not at all, and every caller of a batch that failed gets its error (nothing recorded,
 * nothing doubled; the Dispatcher's lease then brings the job back as for any failed write).
 */
import type { AttemptRecord } from '@postback/core';
import { type Batcher, createBatcher } from '@postback/core/store';
import { arrayLiteral, inline } from './literal.ts';
import type { PostgresOutboxContext } from './outbox-context.ts';
import { runPreparedScript, type ScriptStep } from './prepared.ts';
import type { QueryResultLike } from './queryable.ts';

/** One completion waiting for its batch. */
export interface Completion {
  id: string;
  token: string;
  at: number;
  campaignId: string | null;
  /** The send the service accepted, appended to the job's history in the same UPDATE (null: none). */
  attempt: AttemptRecord | null;
}

/** Most completions in one batch. */
const MAX_BATCH = 500;

/**
 * How long a completion waits for those of the other jobs of its claim (`claimed-jobs.ts`) before its
 * batch is written, in ms; the batch goes as soon as the last of them has its outcome (the outbox calls
 * `flush`). A worker's sends end one at a time, so without the wait each completion was a batch, a round
 * trip and a commit of its own (issue 32: 1.0 job a batch). The job is delivered already: the wait delays
 * its record, not its send, and is far shorter than any lease.
 */
export const COMPLETION_WAIT_MS = 10;

/**
 * The outbox's completion batcher: `add(completion)` resolves to whether that job was completed (it was
 * still `inflight` under that lease token). One batch at a time, and a job given twice goes to a later
 * batch than its first call, so the second call is fenced as usual. A batch waits up to
 * {@link COMPLETION_WAIT_MS} for more, unless `flush` sends it first.
 *
 * @example
 * ```ts
 * const completions = createCompletionBatcher(context);
 * const applied = completions.add({ id, token, at: Date.now(), campaignId: null, attempt: null });
 * void completions.flush(); // nothing more to wait for
 * ```
 */
export function createCompletionBatcher(context: PostgresOutboxContext): Batcher<Completion, boolean> {
  return createBatcher((group: Completion[]) => writeCompletions(context, group), {
    maxSize: MAX_BATCH,
    windowMs: COMPLETION_WAIT_MS,
    maxInFlight: 1,
    keyOf: (c) => c.id,
  });
}

/** A checked attempt as the statements append it: its jsonb text and its HTTP status (nulls: none). */
export function attemptValues(attempt: AttemptRecord | null): [string | null, number | null] {
  return attempt === null ? [null, null] : [JSON.stringify(attempt), attempt.status];
}

/**
 * Writes a batch of completions. Both statements go in one simple-protocol message: one round trip,
 * one implicit transaction, and each statement with its own snapshot (the second must see a refund
 * committed while the first waited for the order's row lock). The protocol allows no `$n`, so values
 * are inlined as checked literals: into `EXECUTE`s of the statements prepared on that connection, or
 * into the statements themselves when `preparedStatements` is off.
 */
async function writeCompletions(context: PostgresOutboxContext, group: Completion[]): Promise<boolean[]> {
  const { pool, sql: SQL, q, channel, refundWindowMs, schema, preparedStatements } = context;
  const ids = group.map((c) => c.id);
  const steps: ScriptStep[] = [
    {
      text: SQL.completeMany,
      values: [
        arrayLiteral(ids, 'bigint'),
        arrayLiteral(
          group.map((c) => c.token),
          'bigint',
        ),
        arrayLiteral(
          group.map((c) => c.at),
          'bigint',
        ),
        arrayLiteral(
          group.map((c) => c.campaignId),
          'text',
        ),
        arrayLiteral(
          group.map((c) => attemptValues(c.attempt)[0]),
          'text',
        ),
        arrayLiteral(
          group.map((c) => attemptValues(c.attempt)[1]),
          'bigint',
        ),
      ],
    },
    { text: SQL.followConfirms, values: [arrayLiteral(ids, 'bigint'), refundWindowMs, channel] },
  ];
  for (let attempt = 1; ; attempt += 1) {
    try {
      const results = preparedStatements
        ? await runPreparedScript(pool, schema, steps)
        : ((await q(
            pool,
            steps.map((step) => inline(step.text, step.values)).join(';\n'),
          )) as unknown as QueryResultLike[]);
      const first = results[0] as { rows: Array<{ id: string }> };
      const applied = new Set(first.rows.map((row) => row.id));
      return ids.map((id) => applied.has(id));
    } catch (err) {
      // Two batches holding the same stale job in opposite order can deadlock; Postgres aborts one.
      if ((err as { code?: unknown }).code !== '40P01' || attempt >= 3) throw err;
    }
  }
}
