/**
 * The optional order ledger: a small side store that remembers, per order, the last known state of its
 * confirm job and its refund job. SQS cannot look a message up, so without it the outbox cannot tell a
 * second confirm from a first, nor give a refund the `campaign_id` its confirmation's response carried.
 * With it:
 * - `confirm()` of an order already in the ledger is a no-op (`created: false`);
 * - `refund()` follows core's `planRefund` on the recorded jobs: it may omit `campaignId` (the worker fills it
 *   in from the delivered confirmation, which FIFO ordering delivers first); a second refund is a
 *   `duplicate`, or `updated` when it gives the campaign a waiting or dead refund lacked; a refund of a
 *   confirm that ended expired never charged is `not-charged`; a refund waiting behind its confirm follows
 *   core's `refundAfterConfirm` when it comes up (cancelled only if the confirm was never charged);
 * - the job keeps `maybeAppliedAt` between receives: a retry that may have been applied, and a receive
 *   whose worker died (the message was received more often than the recorded outcomes explain);
 * - `replay()` never re-sends a dead confirm of an order that was refunded meanwhile;
 * - `getByOrder()` answers from the ledger (the state last recorded, not a live one).
 * The outbox writes it at enqueue, at every outcome of a receive (delivery, failure, retry, release,
 * hand-back) and at every heart-beat, never at the receive itself; `attempts` in a record is the receive
 * count it explains. A delivery and a failure are recorded before their message is deleted (the refund
 * behind must find them); a retry, a release and a hand-back before the message can be received again.
 * Any key-value store will do (DynamoDB, Redis, a SQL table): two methods.
 */
import type { ConfirmJob, EpochMs, Job, RefundJob } from '@postback/core';

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

/**
 * The job the ledger records under the same id as a received body (null without a ledger, or when the
 * record is of another job: an order confirmed again after its record was dropped).
 *
 * @example
 * ```ts
 * const recorded = recordOf(await ledger.get(body.orderId), body);
 * ```
 */
export function recordOf(record: OrderRecord | null, job: Pick<Job, 'kind' | 'id'>): Job | null {
  const recorded = record === null ? null : job.kind === 'confirm' ? record.confirm : record.refund;
  return recorded !== null && recorded.id === job.id ? recorded : null;
}

/**
 * When a request of a received job may first have reached the service: the earliest of what the body
 * carries (a replayed job), what the ledger recorded (a retry or failure that said so), and a lease that
 * ran out. The ledger records, in `attempts`, the receive count at every outcome this outbox records (retry,
 * release, hand-back, failure, delivery; 0 at enqueue and replay) and at every heart-beat (state
 * `inflight`: that receive is under way, its outcome not known yet). A message received more often than
 * the record explains was held by a receiver that recorded no outcome: its visibility ran out, as core's
 * `claimJob` treats an `inflight` job whose lease ran out. The time kept is the record's `updatedAt`: the
 * dead receiver's last heart-beat, or if it sent none the last outcome before its receive (earlier than
 * the receive itself, so a refund's window counted from it never ends after the service's).
 *
 * @example
 * ```ts
 * const maybeAppliedAt = maybeAppliedAtOf(body.maybeAppliedAt, recorded, receiveCount - 1);
 * ```
 */
export function maybeAppliedAtOf(
  carried: EpochMs | null,
  recorded: Job | null,
  receivesBefore: number,
): EpochMs | null {
  const known = [carried, recorded?.maybeAppliedAt ?? null];
  const explained =
    recorded === null ? 0 : recorded.state === 'inflight' ? recorded.attempts - 1 : recorded.attempts;
  if (recorded !== null && receivesBefore > explained) known.push(recorded.updatedAt);
  const times = known.filter((t): t is EpochMs => t !== null);
  return times.length === 0 ? null : Math.min(...times);
}
