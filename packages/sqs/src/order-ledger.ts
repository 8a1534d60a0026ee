/**
 * The optional order ledger: a small side store that remembers, per order, the last known state of its
 * confirm job and its refund job. SQS cannot look a message up, so without it the outbox cannot tell a
 * second confirm from a first, nor give a refund the `campaign_id` its confirmation's response carried.
 * With it:
 * - `confirm()` of an order already in the ledger is a no-op (`created: false`);
 * - `refund()` may omit `campaignId`: the worker fills it in from the delivered confirmation, which FIFO
 *   ordering delivers first; a second refund is a `duplicate`; a refund of an expired confirm is
 *   `not-charged`; a refund waiting behind a confirm that ends dead or expired is cancelled;
 * - `replay()` never re-sends a dead confirm of an order that was refunded meanwhile;
 * - `getByOrder()` answers from the ledger (the state last recorded, not a live one).
 * The outbox writes it at enqueue and at each final transition (never at claim), after the SQS call that
 * made the state true, except for a delivery, which is recorded before its message is deleted (the refund
 * behind it must find it). Any key-value store will do (DynamoDB, Redis, a SQL table): two methods.
 */
import type { ConfirmJob, Job, RefundJob } from '@postback/core';

/** The last recorded jobs of one order. */
export interface OrderRecord {
  confirm: ConfirmJob | null;
  refund: RefundJob | null;
}

/**
 * Where the outbox records each order's jobs, keyed by order id and job kind. `put` replaces the job of the
 * same order and kind and must be durable when it resolves. Keep records at least as long as the return
 * window (30 days by default).
 *
 * @example
 * ```ts
 * const ledger: OrderLedger = {
 *   async get(orderId) {
 *     const [c, r] = await redis.mget(`pb:${orderId}:confirm`, `pb:${orderId}:refund`);
 *     return { confirm: c ? JSON.parse(c) : null, refund: r ? JSON.parse(r) : null };
 *   },
 *   async put(job) {
 *     await redis.set(`pb:${job.orderId}:${job.kind}`, JSON.stringify(job), 'EX', 45 * 86_400);
 *   },
 * };
 * ```
 */
export interface OrderLedger {
  get(orderId: string): Promise<OrderRecord>;
  put(job: Job): Promise<void>;
}

/**
 * An {@link OrderLedger} in process memory: for tests, demos and single-process setups only (lost on exit,
 * not shared between workers).
 *
 * @example
 * ```ts
 * const outbox = createSqsOutbox({ queueUrl, deadLetterQueueUrl, ledger: createMemoryOrderLedger() });
 * ```
 */
export function createMemoryOrderLedger(): OrderLedger {
  const confirms = new Map<string, ConfirmJob>();
  const refunds = new Map<string, RefundJob>();
  return {
    async get(orderId) {
      const confirm = confirms.get(orderId);
      const refund = refunds.get(orderId);
      return {
        confirm: confirm === undefined ? null : structuredClone(confirm),
        refund: refund === undefined ? null : structuredClone(refund),
      };
    },
    async put(job) {
      if (job.kind === 'confirm') confirms.set(job.orderId, structuredClone(job));
      else refunds.set(job.orderId, structuredClone(job));
    },
  };
}
