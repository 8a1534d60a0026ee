/**
 * Thin helpers over the SQS calls the outbox makes more than once: batched visibility changes and deletes
 * (chunked by ten, reporting each entry), and recognising the errors that mean "this receipt handle no
 * longer holds the message" (the lease ran out and the message went back to the queue or to another worker).
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { SQS_MAX_BATCH_ENTRIES } from './producer.ts';

const STALE_HANDLE_CODES = new Set([
  'ReceiptHandleIsInvalid',
  'AWS.SimpleQueueService.ReceiptHandleIsInvalid',
  'MessageNotInflight',
  'AWS.SimpleQueueService.MessageNotInflight',
  'InvalidParameterValue',
]);

/**
 * Whether an SDK error (or a batch entry's `Code`) means the receipt handle is stale: the message is no
 * longer held under this lease. `InvalidParameterValue` is included because SQS answers so for a handle
 * whose visibility ran out on some queues.
 */
export function isStaleHandleError(errOrCode: unknown): boolean {
  if (typeof errOrCode === 'string') return STALE_HANDLE_CODES.has(errOrCode);
  if (typeof errOrCode !== 'object' || errOrCode === null) return false;
  const { name, Code } = errOrCode as { name?: unknown; Code?: unknown };
  return (
    (typeof name === 'string' && STALE_HANDLE_CODES.has(name)) ||
    (typeof Code === 'string' && STALE_HANDLE_CODES.has(Code))
  );
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += SQS_MAX_BATCH_ENTRIES)
    out.push(items.slice(i, i + SQS_MAX_BATCH_ENTRIES));
  return out;
}

/** The outcome of one entry of a batch: done, stale (the handle no longer holds the message), or an error. */
export type EntryOutcome = 'ok' | 'stale' | { error: string };

/**
 * Deletes messages by receipt handle with `DeleteMessageBatch`; one outcome per handle, in order.
 *
 * @example
 * ```ts
 * const [outcome] = await deleteMessages(client, queueUrl, [job.lease.token]);
 * ```
 */
export async function deleteMessages(
  client: SQSClient,
  queueUrl: string,
  handles: readonly string[],
): Promise<EntryOutcome[]> {
  const outcomes: EntryOutcome[] = [];
  for (const chunk of chunks(handles)) {
    const output = await client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: chunk.map((h, i) => ({ Id: `d${i}`, ReceiptHandle: h })),
      }),
    );
    outcomes.push(...entryOutcomes(chunk.length, 'd', output.Failed));
  }
  return outcomes;
}

/**
 * Sets the visibility timeout of messages with `ChangeMessageVisibilityBatch`; one outcome per handle.
 *
 * @example
 * ```ts
 * await changeVisibility(client, queueUrl, handles, 0); // give them back now
 * ```
 */
export async function changeVisibility(
  client: SQSClient,
  queueUrl: string,
  handles: readonly string[],
  visibilityTimeout: number,
): Promise<EntryOutcome[]> {
  const outcomes: EntryOutcome[] = [];
  for (const chunk of chunks(handles)) {
    const output = await client.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: chunk.map((h, i) => ({
          Id: `v${i}`,
          ReceiptHandle: h,
          VisibilityTimeout: visibilityTimeout,
        })),
      }),
    );
    outcomes.push(...entryOutcomes(chunk.length, 'v', output.Failed));
  }
  return outcomes;
}

function entryOutcomes(
  count: number,
  prefix: string,
  failed: ReadonlyArray<{ Id?: string; Code?: string; Message?: string }> | undefined,
): EntryOutcome[] {
  const outcomes: EntryOutcome[] = new Array(count).fill('ok');
  for (const entry of failed ?? []) {
    const index = Number(entry.Id?.slice(prefix.length));
    if (!Number.isInteger(index) || index < 0 || index >= count) continue;
    outcomes[index] = isStaleHandleError(entry.Code ?? '')
      ? 'stale'
      : { error: `${entry.Code ?? 'Failed'}: ${entry.Message ?? ''}` };
  }
  return outcomes;
}
