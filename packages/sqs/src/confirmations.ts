/**
 * Enqueueing confirmations on SQS: one with `SendMessage`, many with `SendMessageBatch`. With an order
 * ledger, a second confirm of an order is a no-op (`created: false`); without one SQS cannot tell.
 */
import { randomUUID } from 'node:crypto';
import type { ConfirmJob, EnqueueResult } from '@postback/core';
import { newConfirmJob } from '@postback/core/store';
import { SqsOutboxError } from './errors.ts';
import { messageFor, type SqsOutboxContext } from './outbox-context.ts';
import { sendMessage, sendMessageBatch } from './producer.ts';

/** The outcome of one input of `SqsOutbox.confirmMany`, in input order. */
export type ConfirmManyResult =
  | { ok: true; job: ConfirmJob; messageId: string }
  | { ok: false; error: Error };

/**
 * The Outbox's `confirm()` on SQS.
 *
 * @example
 * ```ts
 * const { created, job } = await confirmOnSqs(context, { orderId: 'A-1001', valueMicros: 1_000_000, click });
 * ```
 */
export async function confirmOnSqs(
  context: SqsOutboxContext,
  confirmInput: unknown,
): Promise<EnqueueResult<ConfirmJob>> {
  const { client, queueUrl, ledger, policy, now } = context;
  const job = newConfirmJob(confirmInput, { now: now(), id: randomUUID(), policy });
  if (ledger !== undefined) {
    const { confirm } = await ledger.get(job.orderId, job.account);
    if (confirm !== null) return { created: false, job: confirm } satisfies EnqueueResult<ConfirmJob>;
  }
  await sendMessage(client, queueUrl, messageFor(context, job));
  // Recorded after the send: a failed send must leave the order free to be confirmed again.
  await ledger?.put(job);
  return { created: true, job } satisfies EnqueueResult<ConfirmJob>;
}

/**
 * `confirmMany()` on SQS: each input gets its own result, in input order.
 *
 * @example
 * ```ts
 * const results = await confirmManyOnSqs(context, inputs);
 * ```
 */
export async function confirmManyOnSqs(
  context: SqsOutboxContext,
  inputs: readonly unknown[],
): Promise<ConfirmManyResult[]> {
  const { client, queueUrl, ledger, policy, now, options } = context;
  const results: Array<ConfirmManyResult | undefined> = new Array(inputs.length);
  const jobs: Array<{ index: number; job: ConfirmJob }> = [];
  const at = now();
  inputs.forEach((entry, index) => {
    try {
      jobs.push({ index, job: newConfirmJob(entry, { now: at, id: randomUUID(), policy }) });
    } catch (err) {
      results[index] = { ok: false, error: err instanceof Error ? err : new Error(String(err)) };
    }
  });
  const outcomes = await sendMessageBatch(
    client,
    queueUrl,
    jobs.map(({ job }) => messageFor(context, job)),
    { maxBatchBytes: options.maxBatchBytes, attempts: options.sendAttempts },
  );
  jobs.forEach(({ index, job }, i) => {
    const outcome = outcomes[i];
    results[index] =
      outcome?.ok === true
        ? { ok: true, job, messageId: outcome.messageId }
        : {
            ok: false,
            error: new SqsOutboxError('send_failed', `order ${job.orderId}: ${outcome?.error ?? 'not sent'}`),
          };
  });
  if (ledger !== undefined) {
    for (const result of results) if (result?.ok === true) await ledger.put(result.job);
  }
  return results as ConfirmManyResult[];
}
