/**
 * Sending messages: `SendMessage` for one, `SendMessageBatch` for many. Batches hold at most ten entries
 * and at most `maxBatchBytes` of payload (body plus attributes, as SQS counts them); entries that fail
 * inside a batch are sent again on their own merit (server-side faults only) and every entry's outcome is
 * reported separately, so one bad message never hides the fate of the other nine.
 */
import {
  type MessageAttributeValue,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/** SQS's limit of entries per batch request. */
export const SQS_MAX_BATCH_ENTRIES = 10;

/** A message ready to send. `groupId`/`deduplicationId` are for FIFO queues only. */
export interface OutgoingMessage {
  body: string;
  attributes: Record<string, MessageAttributeValue>;
  groupId?: string;
  deduplicationId?: string;
  /** Standard queues only: seconds before the message can be received (0–900). */
  delaySeconds?: number;
}

/** The outcome of one message of a batch. */
export type SendOutcome = { ok: true; messageId: string } | { ok: false; error: string };

const encoder = new TextEncoder();

/** The size SQS counts for a message: body, plus each attribute's name, type and value. */
export function messageSize(message: OutgoingMessage): number {
  let size = encoder.encode(message.body).length;
  for (const [name, value] of Object.entries(message.attributes)) {
    size += encoder.encode(name).length + encoder.encode(value.DataType ?? '').length;
    size += encoder.encode(value.StringValue ?? '').length + (value.BinaryValue?.length ?? 0);
  }
  return size;
}

/**
 * Splits messages (by index) into batches of at most ten entries and `maxBytes` bytes, keeping their order.
 * A message bigger than `maxBytes` on its own is returned in `tooLarge` instead.
 *
 * @example
 * ```ts
 * const { batches, tooLarge } = splitIntoBatches(messages, 262_144);
 * ```
 */
export function splitIntoBatches(
  messages: readonly OutgoingMessage[],
  maxBytes: number,
): { batches: number[][]; tooLarge: number[] } {
  const batches: number[][] = [];
  const tooLarge: number[] = [];
  let current: number[] = [];
  let bytes = 0;
  messages.forEach((message, index) => {
    const size = messageSize(message);
    if (size > maxBytes) {
      tooLarge.push(index);
      return;
    }
    if (current.length === SQS_MAX_BATCH_ENTRIES || bytes + size > maxBytes) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(index);
    bytes += size;
  });
  if (current.length > 0) batches.push(current);
  return { batches, tooLarge };
}

function toEntry(id: string, message: OutgoingMessage): SendMessageBatchRequestEntry {
  return {
    Id: id,
    MessageBody: message.body,
    MessageAttributes: message.attributes,
    ...(message.groupId === undefined ? {} : { MessageGroupId: message.groupId }),
    ...(message.deduplicationId === undefined ? {} : { MessageDeduplicationId: message.deduplicationId }),
    ...(message.delaySeconds === undefined ? {} : { DelaySeconds: message.delaySeconds }),
  };
}

function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

/**
 * Sends one message; resolves with its `MessageId`. SDK errors (after the SDK's retries) are thrown.
 *
 * @example
 * ```ts
 * const id = await sendMessage(client, queueUrl, { body, attributes: {} });
 * ```
 */
export async function sendMessage(
  client: SQSClient,
  queueUrl: string,
  message: OutgoingMessage,
): Promise<string> {
  const { Id: _id, ...entry } = toEntry('single', message);
  const output = await client.send(new SendMessageCommand({ QueueUrl: queueUrl, ...entry }));
  return output.MessageId ?? '';
}

/**
 * Sends many messages with `SendMessageBatch` and reports each one's outcome, in input order. Entries that
 * failed for a server-side reason (or whose whole request failed) are sent again, up to `attempts` times;
 * entries SQS rejected as the sender's fault are not.
 *
 * @example
 * ```ts
 * const outcomes = await sendMessageBatch(client, queueUrl, messages, { maxBatchBytes: 262_144, attempts: 3 });
 * ```
 */
export async function sendMessageBatch(
  client: SQSClient,
  queueUrl: string,
  messages: readonly OutgoingMessage[],
  options: { maxBatchBytes: number; attempts: number },
): Promise<SendOutcome[]> {
  const outcomes: Array<SendOutcome | undefined> = new Array(messages.length);
  const { batches, tooLarge } = splitIntoBatches(messages, options.maxBatchBytes);
  for (const index of tooLarge) {
    outcomes[index] = { ok: false, error: `message is larger than ${options.maxBatchBytes} bytes` };
  }
  for (const batch of batches) {
    let remaining = batch;
    for (let attempt = 1; remaining.length > 0; attempt += 1) {
      const last = attempt >= options.attempts;
      try {
        const output = await client.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: remaining.map((index) => toEntry(`m${index}`, messages[index] as OutgoingMessage)),
          }),
        );
        for (const ok of output.Successful ?? []) {
          outcomes[Number(ok.Id?.slice(1))] = { ok: true, messageId: ok.MessageId ?? '' };
        }
        const retry: number[] = [];
        for (const failed of output.Failed ?? []) {
          const index = Number(failed.Id?.slice(1));
          if (!failed.SenderFault && !last) retry.push(index);
          else
            outcomes[index] = {
              ok: false,
              error: `${failed.Code ?? 'Failed'}: ${failed.Message ?? 'no message'}`,
            };
        }
        remaining = retry;
      } catch (err) {
        if (last) {
          for (const index of remaining) outcomes[index] = { ok: false, error: describeError(err) };
          remaining = [];
        }
      }
    }
  }
  return outcomes.map((outcome) => outcome ?? { ok: false, error: 'no result from SQS for this entry' });
}
