/**
 * Enqueueing on Postgres: `confirm` and `refund` (and `withdraw`, which cancels), through the outbox's pool or inside the caller's own
 * transaction (any {@link Queryable}). Core's pure functions decide (`newConfirmJob`, `planRefund`); this
 * module persists their result, and sends `pg_notify` from the same statement so workers wake at commit.
 */
import type {
  ConfirmInput,
  ConfirmJob,
  EnqueueResult,
  RefundInput,
  RefundJob,
  RefundOutcome,
  WithdrawInput,
  WithdrawOutcome,
} from '@postback/core';
import {
  accountKey,
  checkWithdraw,
  newConfirmJob,
  planRefund,
  planWithdraw,
  validateRefundInput,
} from '@postback/core/store';
import { assertOpen, inTransaction, type PostgresOutboxContext } from './outbox-context.ts';
import { isQueryable, type PoolLike, type Queryable } from './queryable.ts';
import { rowToJob } from './rows.ts';

/**
 * The outbox's `confirm` and `refund` methods, each taking an optional transaction first.
 *
 * @example
 * ```ts
 * const { confirm, refund } = enqueueMethods(context);
 * await confirm(client, { orderId, valueMicros, click });
 * ```
 */
export function enqueueMethods(context: PostgresOutboxContext) {
  const { pool } = context;
  return {
    async confirm(...args: unknown[]): Promise<EnqueueResult<ConfirmJob>> {
      assertOpen(context);
      const [db, input] = splitArgs<ConfirmInput>(pool, args);
      return confirmIn(context, db, input);
    },

    async refund(...args: unknown[]): Promise<RefundOutcome> {
      assertOpen(context);
      const [db, input] = splitArgs<RefundInput>(pool, args);
      if (db === pool) return inTransaction(pool, (tx) => refundIn(context, tx, input));
      return refundIn(context, db, input);
    },

    /** Core's `planWithdraw` on the order's locked confirm; a cancelled one takes its waiting refund along. */
    async withdraw(input: WithdrawInput): Promise<WithdrawOutcome> {
      assertOpen(context);
      const { orderId, account } = checkWithdraw(input);
      const { sql: SQL, q, channel, refundWindowMs, now } = context;
      return inTransaction(pool, async (tx) => {
        const locked = await q(tx, SQL.lockOrder, [orderId, accountKey(account)]);
        const row = locked.rows.map(rowToJob).find((job) => job.kind === 'confirm');
        const plan = planWithdraw((row as ConfirmJob | undefined) ?? null, now());
        if (plan.outcome !== 'cancelled') return plan;
        const updated = await q(tx, SQL.cancelConfirm, [plan.job.id, plan.job.updatedAt, plan.job.lastError]);
        const cancelled = updated.rows[0];
        // The row is locked and was pending or dead with nothing sent: the update cannot miss it.
        if (cancelled === undefined) throw new Error(`order ${orderId}: withdraw lost its locked confirm`);
        await q(tx, SQL.followConfirms, [[plan.job.id], refundWindowMs, channel]);
        return { outcome: 'cancelled', job: rowToJob(cancelled) as ConfirmJob };
      });
    },
  };
}

/** `(tx, input)` or `(input)`: the transaction to enqueue in (the pool when none is given) and the input. */
function splitArgs<I>(pool: PoolLike, args: unknown[]): [Queryable, I] {
  if (args.length >= 2) {
    if (!isQueryable(args[0]))
      throw new TypeError('the first argument must be a transaction with query(text, values)');
    return [args[0], args[1] as I];
  }
  return [pool, args[0] as I];
}

async function confirmIn(
  context: PostgresOutboxContext,
  db: Queryable,
  input: ConfirmInput,
): Promise<EnqueueResult<ConfirmJob>> {
  const { sql: SQL, q, notifyGate, channel, policy, now } = context;
  const at = now();
  const job = newConfirmJob(input, { now: at, id: '0', policy });
  const notify = notifyGate.take();
  const inserted = await q(db, SQL.insertConfirm, [
    job.orderId,
    at,
    job.deadline,
    job.clickToken,
    job.valueMicros,
    job.clickedAt,
    channel,
    notify,
    accountKey(job.account),
  ]);
  const row = inserted.rows[0];
  if (!notify && row !== undefined) notifyGate.skipped();
  if (row !== undefined) return { created: true, job: rowToJob(row) as ConfirmJob };
  const existing = await q(db, SQL.byOrderAndKind, [job.orderId, accountKey(job.account), 'confirm']);
  const found = existing.rows[0];
  if (found === undefined)
    throw new Error(`order ${job.orderId}: confirm conflicted but cannot be read back`);
  return { created: false, job: rowToJob(found) as ConfirmJob };
}

async function refundIn(
  context: PostgresOutboxContext,
  db: Queryable,
  input: RefundInput,
): Promise<RefundOutcome> {
  const { sql: SQL, q, notifyGate, channel, policy, now } = context;
  const checked = validateRefundInput(input);
  // The order is its account and its order id: only that account's confirm and refund are read and locked.
  const account = accountKey(checked.account ?? null);
  // Normally one pass: the order's rows are locked. Through a connection that autocommits each
  // statement the lock does not last, so a lost race is re-planned against the new state.
  for (let pass = 0; ; pass += 1) {
    const at = now();
    const locked = await q(db, SQL.lockOrder, [checked.orderId, account]);
    const jobs = locked.rows.map(rowToJob);
    const confirmJob = (jobs.find((j) => j.kind === 'confirm') as ConfirmJob | undefined) ?? null;
    const refundJob = (jobs.find((j) => j.kind === 'refund') as RefundJob | undefined) ?? null;
    const plan = planRefund(checked, { now: at, id: '0', policy, confirm: confirmJob, refund: refundJob });
    if (plan.outcome === 'duplicate' || plan.outcome === 'not-charged' || plan.outcome === 'window-closed')
      return plan;
    if (plan.outcome === 'cancelled') {
      const updated = await q(db, SQL.cancelConfirm, [plan.job.id, plan.job.updatedAt, plan.job.lastError]);
      const row = updated.rows[0];
      if (row !== undefined) return { outcome: 'cancelled', job: rowToJob(row) as ConfirmJob };
    } else if (plan.outcome === 'updated') {
      const job = plan.job;
      const notify = notifyGate.take();
      const updated = await q(db, SQL.updateRefund, [
        job.id,
        job.campaignId,
        job.updatedAt,
        job.state,
        job.attempts,
        job.nextAttemptAt,
        job.lastError,
        channel,
        notify,
      ]);
      const row = updated.rows[0];
      if (!notify && row !== undefined) notifyGate.skipped();
      if (row !== undefined) return { outcome: 'updated', job: rowToJob(row) as RefundJob };
    } else {
      const notify = notifyGate.take();
      const inserted = await q(db, SQL.insertRefund, [
        plan.job.orderId,
        at,
        plan.job.updatedAt,
        plan.job.deadline,
        plan.job.campaignId,
        channel,
        notify,
        account,
        plan.job.campaignFrom,
      ]);
      const row = inserted.rows[0];
      if (!notify && row !== undefined) notifyGate.skipped();
      if (row !== undefined) return { outcome: 'enqueued', job: rowToJob(row) as RefundJob };
      // A concurrent refund of the same order committed first.
      const existing = (await q(db, SQL.byOrderAndKind, [checked.orderId, account, 'refund'])).rows[0];
      if (existing !== undefined) return { outcome: 'duplicate', job: rowToJob(existing) as RefundJob };
    }
    if (pass >= 3) throw new Error(`order ${checked.orderId}: refund kept racing with concurrent changes`);
  }
}
