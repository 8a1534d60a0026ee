/**
 * A worker's side of the Postgres outbox: `claim` with one `UPDATE ... RETURNING` statement whose
 * subqueries pick the jobs in core's claim order (retaken, urgent, then in turns across accounts, see
 * `accounts.ts`) and lock them with FOR UPDATE SKIP LOCKED, so no job is handed to two workers, then every later
 * transition (`complete`, `retry`, `fail`, `release`, `extendLease`) applies only while the row still
 * carries the claim's fencing token. Completions are group-committed; a confirm that ends applies its
 * order's refund rule in the same transaction. A transition that records an attempt appends it to the
 * job's history in its own UPDATE (no extra round trip, group commits included).
 */
import type { AttemptRecord, Job } from '@postback/core';
import {
  type ClaimOptions,
  type CompleteResult,
  checkClaim,
  checkComplete,
  checkExtendLease,
  checkFail,
  checkRelease,
  checkRetry,
  createBatcher,
  type FailResult,
  type RetryResult,
  truncateReason,
} from '@postback/core/store';
import { arrayLiteral, inline } from './literal.ts';
import { assertOpen, inTransaction, type PostgresOutboxContext } from './outbox-context.ts';
import type { Queryable } from './queryable.ts';
import { rowToJob, toBigintText } from './rows.ts';

/** One completion waiting for its group. */
interface Completion {
  id: string;
  token: string;
  at: number;
  campaignId: string | null;
  /** The send the service accepted, appended to the job's history in the same UPDATE (null: none). */
  attempt: AttemptRecord | null;
}

/**
 * The outbox's `claim`, `complete`, `retry`, `fail`, `release` and `extendLease` methods.
 *
 * @example
 * ```ts
 * const { claim, complete } = transitionMethods(context);
 * for (const job of await claim({ now: Date.now(), limit: 10, leaseMs: 30_000 })) await complete(job, { now: Date.now() });
 * ```
 */
export function transitionMethods(context: PostgresOutboxContext) {
  const { pool, sql: SQL, q, channel, refundWindowMs } = context;
  /** The account key served last by this outbox's claims in turns: the next claim's turns start after it. */
  let cursor: string | null = null;
  // Group commit: completions made in the same turn (a Dispatcher finishing a batch of sends) are written
  // together, one round trip and one WAL flush for N. One group at a time, and a job given twice goes to a
  // later group than its first call, so the second call is fenced as usual.
  const completions = createBatcher((group: Completion[]) => writeCompletions(context, group), {
    maxSize: 500,
    windowMs: 0,
    maxInFlight: 1,
    keyOf: (c) => c.id,
  });

  /** A confirm changed state: apply the order's refund rule in the same transaction, new snapshot. */
  const transitionWithFollowUp = async (
    text: string,
    values: unknown[],
    followUp: (db: Queryable, kind: string) => Promise<unknown>,
  ): Promise<boolean> =>
    inTransaction(pool, async (db) => {
      const result = await q(db, text, values);
      const kind = result.rows[0]?.kind;
      if (kind === undefined) return false;
      await followUp(db, String(kind));
      return true;
    });

  return {
    async claim(options: ClaimOptions): Promise<Job[]> {
      assertOpen(context);
      const { now: at, limit, leaseMs, excludeKeys, urgentWithinMs } = checkClaim(options);
      const result = await q(pool, SQL.claim, [at, limit, leaseMs, excludeKeys, urgentWithinMs, cursor]);
      // In claim order: retaken, urgent, then in turns; the cursor moves to the last account served in turns.
      const rows = [...result.rows].sort((a, b) => Number(a.claim_order) - Number(b.claim_order));
      const lastInTurns = rows.findLast((row) => Number(row.claim_order) > Number(row.claim_first));
      if (lastInTurns !== undefined) cursor = String(lastInTurns.account);
      return rows.map(rowToJob);
    },

    async complete(job: Job, result: CompleteResult): Promise<boolean> {
      assertOpen(context);
      const checked = checkComplete(job, result);
      const ids = fence(checked.job);
      if (ids === null) return false;
      const { now: at, campaignId = null } = checked.result;
      return completions.add({ id: ids[0], token: ids[1], at, campaignId, attempt: checked.attempt });
    },

    async retry(job: Job, result: RetryResult): Promise<boolean> {
      assertOpen(context);
      const { job: held, result: retry, attempt } = checkRetry(job, result);
      const ids = fence(held);
      if (ids === null) return false;
      const values = [
        ...ids,
        retry.now,
        retry.nextAttemptAt,
        retry.countAttempt !== false,
        truncateReason(retry.error),
        retry.maybeApplied === true,
        ...attemptValues(attempt),
      ];
      return ((await q(pool, SQL.retry, values)).rowCount ?? 0) > 0;
    },

    async fail(job: Job, result: FailResult): Promise<boolean> {
      assertOpen(context);
      const { job: held, result: failed, attempt } = checkFail(job, result);
      const ids = fence(held);
      if (ids === null) return false;
      const values = [
        ...ids,
        failed.now,
        failed.state,
        truncateReason(failed.reason),
        failed.maybeApplied === true,
        ...attemptValues(attempt),
      ];
      return transitionWithFollowUp(SQL.fail, values, async (db, kind) => {
        if (kind === 'confirm') await q(db, SQL.followConfirms, [[ids[0]], refundWindowMs, channel]);
      });
    },

    async release(jobs: readonly Job[], now: number): Promise<void> {
      assertOpen(context);
      const checked = checkRelease(jobs, now);
      const fenced = checked.jobs.map(fence).filter((f): f is [string, string] => f !== null);
      if (fenced.length === 0) return;
      await q(pool, SQL.release, [fenced.map((f) => f[0]), fenced.map((f) => f[1]), checked.now, channel]);
    },

    async extendLease(job: Job, options: { now: number; leaseMs: number }): Promise<boolean> {
      assertOpen(context);
      const checked = checkExtendLease(job, options);
      const ids = fence(checked.job);
      if (ids === null) return false;
      return ((await q(pool, SQL.extendLease, [...ids, checked.now, checked.leaseMs])).rowCount ?? 0) > 0;
    },
  };
}

/** A checked attempt as the statements append it: its jsonb text and its HTTP status (nulls: none). */
function attemptValues(attempt: AttemptRecord | null): [string | null, number | null] {
  return attempt === null ? [null, null] : [JSON.stringify(attempt), attempt.status];
}

/** The job's id and lease token as stored, or null when the job cannot hold a lease here. */
function fence(job: Job): [string, string] | null {
  const id = toBigintText(job?.id);
  const token = toBigintText(job?.lease?.token);
  return id === null || token === null ? null : [id, token];
}

/**
 * Writes a group of completions. Both statements go in one simple-protocol message: one round trip,
 * one implicit transaction, and each statement with its own snapshot (the second must see a refund
 * committed while the first waited for the order's row lock). The protocol allows no `$n`, so values
 * are inlined as checked literals.
 */
async function writeCompletions(context: PostgresOutboxContext, group: Completion[]): Promise<boolean[]> {
  const { pool, sql: SQL, q, channel, refundWindowMs } = context;
  const ids = group.map((c) => c.id);
  const script = [
    inline(SQL.completeMany, [
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
    ]),
    inline(SQL.followConfirms, [arrayLiteral(ids, 'bigint'), refundWindowMs, channel]),
  ].join(';\n');
  for (let attempt = 1; ; attempt += 1) {
    try {
      const results = (await q(pool, script)) as unknown;
      const first = (Array.isArray(results) ? results[0] : results) as { rows: Array<{ id: string }> };
      const applied = new Set(first.rows.map((row) => row.id));
      return ids.map((id) => applied.has(id));
    } catch (err) {
      // Two groups holding the same stale job in opposite order can deadlock; Postgres aborts one.
      if ((err as { code?: unknown }).code !== '40P01' || attempt >= 3) throw err;
    }
  }
}
