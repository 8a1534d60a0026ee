/**
 * A worker's side of the Postgres outbox: `claim` with one `UPDATE ... RETURNING` statement whose
 * subqueries pick the jobs in core's claim order (retaken, urgent, then in turns across accounts, see
 * `accounts.ts`) and lock them with FOR UPDATE SKIP LOCKED, so no job is handed to two workers, then every later
 * transition (`complete`, `retry`, `fail`, `release`, `extendLease`) applies only while the row still
 * carries the claim's fencing token. Completions are group-committed (`outcome-batch.ts`), and these statements run prepared (`prepared.ts`); a confirm that ends applies its
 * order's refund rule in the same transaction. A transition that records an attempt appends it to the
 * job's history in its own UPDATE (no extra round trip, group commits included).
 */
import type { Job } from '@postback/core';
import {
  accountKey,
  type ClaimOptions,
  type CompleteResult,
  checkClaim,
  checkComplete,
  checkExtendLease,
  checkFail,
  checkRelease,
  checkReleaseHeld,
  checkRetry,
  type FailResult,
  type ReleaseHeldOptions,
  type RetryResult,
  truncateReason,
} from '@postback/core/store';
import { createClaimedJobs } from './claimed-jobs.ts';
import { arrayLiteral } from './literal.ts';
import { assertOpen, inTransaction, type PostgresOutboxContext } from './outbox-context.ts';
import { attemptValues, createCompletionBatcher } from './outcome-batch.ts';
import { runPreparedScript } from './prepared.ts';
import type { Queryable } from './queryable.ts';
import { rowToJob, toBigintText } from './rows.ts';

/**
 * The outbox's `claim`, `complete`, `retry`, `fail`, `release`, `releaseHeld` and `extendLease` methods.
 *
 * @example
 * ```ts
 * const { claim, complete } = transitionMethods(context);
 * for (const job of await claim({ now: Date.now(), limit: 10, leaseMs: 30_000 })) await complete(job, { now: Date.now() });
 * ```
 */
export function transitionMethods(context: PostgresOutboxContext) {
  const { pool, sql: SQL, qp, channel, refundWindowMs } = context;
  /** The account key served last by this outbox's claims in turns: the next claim's turns start after it. */
  let cursor: string | null = null;
  // Group commit (outcome-batch.ts): completions made while a batch is written go in the next one, and
  // a completion waits a little for those of the other jobs of its claim.
  const completions = createCompletionBatcher(context);
  const out = createClaimedJobs();
  /** `id` has its outcome, given at `at`: once no other job of its claim is out, what waits is written. */
  const settled = (id: string, at: number) => {
    if (!out.settled(id, at)) void completions.flush();
  };

  /** A confirm changed state: apply the order's refund rule in the same transaction, new snapshot. */
  const transitionWithFollowUp = async (
    text: string,
    values: unknown[],
    followUp: (db: Queryable, kind: string) => Promise<unknown>,
  ): Promise<boolean> =>
    inTransaction(pool, async (db) => {
      const result = await qp(db, text, values);
      const kind = result.rows[0]?.kind;
      if (kind === undefined) return false;
      await followUp(db, String(kind));
      return true;
    });

  return {
    async claim(options: ClaimOptions): Promise<Job[]> {
      assertOpen(context);
      const { now: at, limit, leaseMs, excludeKeys, urgentWithinMs } = checkClaim(options);
      const values = [at, limit, leaseMs, excludeKeys, urgentWithinMs, cursor];
      const result = context.preparedStatements
        ? (
            await runPreparedScript(pool, context.schema, [
              {
                text: SQL.claim,
                values: [at, limit, leaseMs, arrayLiteral(excludeKeys, 'text'), urgentWithinMs, cursor],
              },
            ])
          )[0]!
        : await context.q(pool, SQL.claim, values);
      // In claim order: retaken, urgent, then in turns; the cursor moves to the last account served in turns.
      const rows = [...result.rows].sort((a, b) => Number(a.claim_order) - Number(b.claim_order));
      const lastInTurns = rows.findLast((row) => Number(row.claim_order) > Number(row.claim_first));
      if (lastInTurns !== undefined) cursor = String(lastInTurns.account);
      const jobs = rows.map(rowToJob);
      out.claimed(
        jobs.map((job) => job.id),
        at + leaseMs,
      );
      return jobs;
    },

    async complete(job: Job, result: CompleteResult): Promise<boolean> {
      assertOpen(context);
      const checked = checkComplete(job, result);
      const ids = fence(checked.job);
      if (ids === null) return false;
      const { now: at, campaignId = null } = checked.result;
      const othersOut = out.settled(ids[0], at);
      const applied = completions.add({
        id: ids[0],
        token: ids[1],
        at,
        campaignId,
        attempt: checked.attempt,
      });
      if (!othersOut) void completions.flush();
      return applied;
    },

    async retry(job: Job, result: RetryResult): Promise<boolean> {
      assertOpen(context);
      const { job: held, result: retry, attempt } = checkRetry(job, result);
      const ids = fence(held);
      if (ids === null) return false;
      settled(ids[0], retry.now);
      const values = [
        ...ids,
        retry.now,
        retry.nextAttemptAt,
        retry.countAttempt !== false && retry.hold === undefined,
        truncateReason(retry.error),
        retry.maybeApplied === true,
        ...attemptValues(attempt),
        retry.hold !== undefined,
        retry.hold?.campaignId ?? null,
      ];
      return ((await qp(pool, SQL.retry, values)).rowCount ?? 0) > 0;
    },

    async fail(job: Job, result: FailResult): Promise<boolean> {
      assertOpen(context);
      const { job: held, result: failed, attempt } = checkFail(job, result);
      const ids = fence(held);
      if (ids === null) return false;
      settled(ids[0], failed.now);
      const values = [
        ...ids,
        failed.now,
        failed.state,
        truncateReason(failed.reason),
        failed.maybeApplied === true,
        ...attemptValues(attempt),
        failed.neverApplied === true,
      ];
      return transitionWithFollowUp(SQL.fail, values, async (db, kind) => {
        if (kind === 'confirm') await qp(db, SQL.followConfirms, [[ids[0]], refundWindowMs, channel]);
      });
    },

    async release(jobs: readonly Job[], now: number): Promise<void> {
      assertOpen(context);
      const checked = checkRelease(jobs, now);
      const fenced = checked.jobs.map(fence).filter((f): f is [string, string] => f !== null);
      if (fenced.length === 0) return;
      for (const [id] of fenced) settled(id, checked.now);
      await qp(pool, SQL.release, [fenced.map((f) => f[0]), fenced.map((f) => f[1]), checked.now, channel]);
    },

    async releaseHeld(options: ReleaseHeldOptions): Promise<number> {
      assertOpen(context);
      const { now: at, account, campaignId } = checkReleaseHeld(options);
      const values = [
        at,
        account === undefined,
        account === undefined ? '' : accountKey(account),
        campaignId === undefined,
        campaignId ?? null,
      ];
      const released = (await qp(pool, SQL.releaseHeld, values)).rowCount ?? 0;
      // Workers listening wake to claim them now, as after an enqueue.
      if (released > 0) await qp(pool, SQL.notify, [channel]);
      return released;
    },

    async extendLease(job: Job, options: { now: number; leaseMs: number }): Promise<boolean> {
      assertOpen(context);
      const checked = checkExtendLease(job, options);
      const ids = fence(checked.job);
      if (ids === null) return false;
      return ((await qp(pool, SQL.extendLease, [...ids, checked.now, checked.leaseMs])).rowCount ?? 0) > 0;
    },
  };
}

/** The job's id and lease token as stored, or null when the job cannot hold a lease here. */
function fence(job: Job): [string, string] | null {
  const id = toBigintText(job?.id);
  const token = toBigintText(job?.lease?.token);
  return id === null || token === null ? null : [id, token];
}
