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
 * hand-back, parking of an excluded account's job) and at every heart-beat (and when a parked job is handed
 * to a claim, which is one), never at the receive itself; `attempts` in a record is the receive
 * count it explains. A delivery and a failure are recorded before their message is deleted (the refund
 * behind must find them); a retry, a release and a hand-back before the message can be received again.
 * Any key-value store will do (DynamoDB, Redis, a SQL table): two methods.
 *
 * An order is its account and its order id (core's `accounts.ts`): the outbox keys the ledger by
 * {@link orderLedgerKey}, which is the order id itself for a job without an account (today's key, so a
 * ledger written before accounts existed keeps working) and account + U+001F + order id otherwise (neither
 * may hold a control character, so no two orders share a key). A record written before accounts existed
 * has no `account` field: it reads as account null.
 */
import type { ConfirmJob, EpochMs, Job, RefundJob } from '@postback/core';

/** The last recorded jobs of one order. */
export interface OrderRecord {
  confirm: ConfirmJob | null;
  refund: RefundJob | null;
}

/**
 * Where the outbox records each order's jobs, keyed by the order's `key` ({@link orderLedgerKey}: the order
 * id for jobs without an account) and job kind. `put` replaces the job of the same key and kind and must
 * be durable when it resolves. Keep records at least as long as the return window (without one configured, the policy's
 * `confirmationRetentionMs`: 400 days by default).
 *
 * @example
 * ```ts
 * const ledger: OrderLedger = {
 *   async get(key) {
 *     const [c, r] = await redis.mget(`pb:${key}:confirm`, `pb:${key}:refund`);
 *     return { confirm: c ? JSON.parse(c) : null, refund: r ? JSON.parse(r) : null };
 *   },
 *   async put(job, key) {
 *     await redis.set(`pb:${key}:${job.kind}`, JSON.stringify(job), 'EX', 45 * 86_400);
 *   },
 * };
 * ```
 */
export interface OrderLedger {
  /** The jobs recorded under `key` (see {@link orderLedgerKey}). */
  get(key: string): Promise<OrderRecord>;
  /** Records `job` under `key` (its {@link orderLedgerKey}), replacing the job of the same key and kind. */
  put(job: Job, key: string): Promise<void>;
}

/**
 * The ledger key of an order: the order id itself when it has no account (the key every earlier version
 * used), else the account and the order id joined by U+001F (a control character neither may hold).
 *
 * @example
 * ```ts
 * orderLedgerKey('A-1001', null); // 'A-1001'
 * orderLedgerKey('A-1001', 'shop-17'); // 'shop-17\u001fA-1001'
 * ```
 */
export function orderLedgerKey(orderId: string, account: string | null): string {
  return account === null ? orderId : `${account}\u001f${orderId}`;
}

/** The ledger as the outbox uses it: by order (account and order id), records read with their account. */
export interface OrderBook {
  get(orderId: string, account: string | null): Promise<OrderRecord>;
  put(job: Job): Promise<void>;
}

/**
 * A job as a ledger gave it back: a record written before accounts existed has no `account` (null), and a
 * record of another order (a ledger that ignores the key it is given) is dropped rather than mistaken
 * for this order's.
 */
function ofOrder<J extends Job>(
  job: J | null | undefined,
  orderId: string,
  account: string | null,
): J | null {
  if (job === null || job === undefined) return null;
  const read = { ...job, account: job.account ?? null };
  return read.orderId === orderId && read.account === account ? read : null;
}

/**
 * Wraps an {@link OrderLedger} as the outbox uses it (keys by {@link orderLedgerKey}).
 *
 * @example
 * ```ts
 * const book = orderBookOf(createMemoryOrderLedger());
 * const { confirm } = await book.get('A-1001', 'shop-17');
 * ```
 */
export function orderBookOf(ledger: OrderLedger): OrderBook {
  return {
    async get(orderId, account) {
      const record = await ledger.get(orderLedgerKey(orderId, account));
      return {
        confirm: ofOrder(record.confirm, orderId, account),
        refund: ofOrder(record.refund, orderId, account),
      };
    },
    put: (job) => ledger.put(job, orderLedgerKey(job.orderId, job.account)),
  };
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
    async get(key) {
      const confirm = confirms.get(key);
      const refund = refunds.get(key);
      return {
        confirm: confirm === undefined ? null : structuredClone(confirm),
        refund: refund === undefined ? null : structuredClone(refund),
      };
    },
    async put(job, key) {
      if (job.kind === 'confirm') confirms.set(key, structuredClone(job));
      else refunds.set(key, structuredClone(job));
    },
  };
}

/**
 * The job the ledger records under the same id as a received body (null without a ledger, or when the
 * record is of another job: an order confirmed again after its record was dropped).
 *
 * @example
 * ```ts
 * const recorded = recordOf(await book.get(body.orderId, body.account), body);
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
