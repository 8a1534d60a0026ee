/**
 * The optional side store of delivered confirmations. SQS cannot look a message up, so a refund enqueued
 * before its confirmation was delivered cannot learn the `campaign_id` the confirmation's response carried.
 * With a store, the worker records each delivered confirmation here before deleting its message; the refund,
 * which FIFO ordering delivers only after that, reads its campaign and its return window's start from it.
 * Any key-value store will do (DynamoDB, Redis, a SQL table): the interface is two methods.
 */
import type { EpochMs } from '@postback/core';

/** What is kept per delivered confirmation. */
export interface ConfirmationRecord {
  /** The campaign the service attributed the conversion to (null if its response did not say). */
  campaignId: string | null;
  /** When the service accepted the confirmation: the start of the return window. */
  deliveredAt: EpochMs;
}

/**
 * Where delivered confirmations are recorded, keyed by order id. `put` must be durable when it resolves.
 *
 * @example
 * ```ts
 * const store: ConfirmationStore = {
 *   get: async (orderId) => JSON.parse((await redis.get(`pb:${orderId}`)) ?? 'null'),
 *   put: async (orderId, record) => { await redis.set(`pb:${orderId}`, JSON.stringify(record), 'EX', 90 * 86400); },
 * };
 * ```
 */
export interface ConfirmationStore {
  get(orderId: string): Promise<ConfirmationRecord | null>;
  put(orderId: string, record: ConfirmationRecord): Promise<void>;
}

/**
 * A {@link ConfirmationStore} in process memory: for tests and single-process setups only (lost on exit,
 * not shared between workers).
 *
 * @example
 * ```ts
 * const outbox = createSqsOutbox({ queueUrl, confirmationStore: createMemoryConfirmationStore() });
 * ```
 */
export function createMemoryConfirmationStore(): ConfirmationStore {
  const records = new Map<string, ConfirmationRecord>();
  return {
    async get(orderId) {
      const record = records.get(orderId);
      return record === undefined ? null : { ...record };
    },
    async put(orderId, record) {
      records.set(orderId, { ...record });
    },
  };
}
