/**
 * The message operations of the SQS emulator over its state (`emulator-state.ts`): send with FIFO group
 * and deduplication checks, receive with visibility timeouts, long polling and redrive, delete, change
 * visibility, and batches of these with per-entry failures and injected faults.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  type Attrs,
  type EmulatedMessage,
  type EmulatorState,
  type Queue,
  SqsFault,
} from './emulator-state.ts';

const TWELVE_HOURS_MS = 43_200_000;
const DEDUP_INTERVAL_MS = 300_000;
const FIFO_ID = /^[\x21-\x7e]{1,128}$/;

function md5(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}

function size(body: string, attributes: Attrs | undefined): number {
  let n = Buffer.byteLength(body);
  for (const [name, v] of Object.entries(attributes ?? {}))
    n += Buffer.byteLength(name) + Buffer.byteLength(v.DataType) + Buffer.byteLength(v.StringValue ?? '');
  return n;
}

/** Puts a raw message in a queue, bypassing the SDK (e.g. a malformed body from another producer). */
export function injectMessage(
  state: EmulatorState,
  url: string,
  body: string,
  options: { groupId?: string; attributes?: Attrs } = {},
): string {
  const queue = state.queue(url);
  const id = randomUUID();
  queue.messages.push({
    id,
    body,
    attributes: options.attributes ?? {},
    sentAt: state.now(),
    groupId: options.groupId,
    visibleAt: state.now(),
    receiveCount: 0,
    receiptHandle: null,
    receivedAt: 0,
    seq: state.seq++,
  });
  state.wake();
  return id;
}

/** Applies `apply` to each entry of a batch request, collecting the entries that succeeded and failed. */
export function batch(
  state: EmulatorState,
  operation: string,
  input: Record<string, unknown>,
  apply: (queue: Queue, entry: Record<string, unknown>) => Record<string, unknown>,
  checkSize = false,
): unknown {
  const queue = state.queue(input.QueueUrl);
  const entries = (input.Entries as Array<Record<string, unknown>> | undefined) ?? [];
  if (entries.length === 0)
    throw new SqsFault('EmptyBatchRequest', 'no entries', 'AWS.SimpleQueueService.EmptyBatchRequest');
  if (entries.length > 10)
    throw new SqsFault(
      'TooManyEntriesInBatchRequest',
      'more than 10 entries',
      'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
    );
  const ids = new Set(entries.map((e) => e.Id));
  if (ids.size !== entries.length)
    throw new SqsFault(
      'BatchEntryIdsNotDistinct',
      'ids not distinct',
      'AWS.SimpleQueueService.BatchEntryIdsNotDistinct',
    );
  if (checkSize) {
    const total = entries.reduce(
      (n, e) => n + size(String(e.MessageBody ?? ''), e.MessageAttributes as Attrs | undefined),
      0,
    );
    if (total > state.maxPayloadBytes)
      throw new SqsFault(
        'BatchRequestTooLong',
        `batch of ${total} bytes`,
        'AWS.SimpleQueueService.BatchRequestTooLong',
      );
  }
  const fault = state.entryFaults.get(operation);
  const Successful: unknown[] = [];
  const Failed: unknown[] = [];
  for (const entry of entries) {
    const injected = fault?.(entry) ?? null;
    if (injected !== null) {
      Failed.push({
        Id: entry.Id,
        Code: injected.code,
        SenderFault: injected.senderFault,
        Message: injected.message ?? injected.code,
      });
      continue;
    }
    try {
      Successful.push({ Id: entry.Id, ...apply(queue, entry) });
    } catch (err) {
      if (!(err instanceof SqsFault)) throw err;
      Failed.push({ Id: entry.Id, Code: err.code, SenderFault: true, Message: err.message });
    }
  }
  return { Successful, Failed };
}

export function send(
  state: EmulatorState,
  queue: Queue,
  input: Record<string, unknown>,
  maxBytes: number,
): Record<string, unknown> {
  const body = input.MessageBody;
  if (typeof body !== 'string' || body.length === 0)
    throw new SqsFault('InvalidParameterValue', 'MessageBody is required');
  const attributes = (input.MessageAttributes as Attrs | undefined) ?? {};
  if (size(body, attributes) > maxBytes)
    throw new SqsFault('InvalidParameterValue', `message longer than ${maxBytes} bytes`);
  const groupId = input.MessageGroupId as string | undefined;
  const dedupId = input.MessageDeduplicationId as string | undefined;
  if (queue.fifo) {
    if (groupId === undefined || !FIFO_ID.test(groupId))
      throw new SqsFault(
        'InvalidParameterValue',
        'MessageGroupId is required and must be 1-128 printable ASCII characters',
      );
    if (dedupId === undefined || !FIFO_ID.test(dedupId))
      throw new SqsFault(
        'InvalidParameterValue',
        'MessageDeduplicationId is required and must be 1-128 printable ASCII characters',
      );
    const seen = queue.dedup.get(dedupId);
    if (seen !== undefined && state.now() - seen.at < DEDUP_INTERVAL_MS) {
      return { MessageId: seen.messageId, MD5OfMessageBody: md5(body), SequenceNumber: String(state.seq) };
    }
  } else if (dedupId !== undefined) {
    throw new SqsFault('InvalidParameterValue', 'MessageDeduplicationId is only for FIFO queues');
  }
  const id = randomUUID();
  if (queue.fifo && dedupId !== undefined) queue.dedup.set(dedupId, { messageId: id, at: state.now() });
  const delay = Number(input.DelaySeconds ?? 0) * 1000;
  queue.messages.push({
    id,
    body,
    attributes,
    sentAt: state.now(),
    groupId,
    visibleAt: state.now() + delay,
    receiveCount: 0,
    receiptHandle: null,
    receivedAt: 0,
    seq: state.seq++,
  });
  state.wake();
  return {
    MessageId: id,
    MD5OfMessageBody: md5(body),
    ...(queue.fifo ? { SequenceNumber: String(state.seq) } : {}),
  };
}

function available(state: EmulatorState, queue: Queue, limit: number): EmulatedMessage[] {
  const now = state.now();
  const out: EmulatedMessage[] = [];
  const blocked = new Set<string>();
  if (queue.fifo) {
    for (const m of queue.messages)
      if (m.groupId !== undefined && m.visibleAt > now && m.receiptHandle !== null) blocked.add(m.groupId);
  }
  for (const m of [...queue.messages].sort((a, b) => a.seq - b.seq)) {
    if (out.length >= limit) break;
    if (queue.fifo && m.groupId !== undefined) {
      if (blocked.has(m.groupId)) continue;
      if (m.visibleAt > now) {
        // A delayed message keeps the rest of its group behind it.
        blocked.add(m.groupId);
        continue;
      }
    } else if (m.visibleAt > now) continue;
    out.push(m);
  }
  return out;
}

export async function receive(state: EmulatorState, input: Record<string, unknown>): Promise<unknown> {
  const queue = state.queue(input.QueueUrl);
  const max = Number(input.MaxNumberOfMessages ?? 1);
  if (!(max >= 1 && max <= 10))
    throw new SqsFault('InvalidParameterValue', 'MaxNumberOfMessages must be 1-10');
  const waitMs = Math.min(Number(input.WaitTimeSeconds ?? 0) * 1000, state.maxLongPollMs);
  const visibilityMs = Number(input.VisibilityTimeout ?? queue.attributes.VisibilityTimeout) * 1000;
  let found = take(state, queue, max, visibilityMs);
  if (found.length === 0 && waitMs > 0) {
    await state.waitForWake(waitMs);
    found = take(state, queue, max, visibilityMs);
  }
  const wantAll = ((input.MessageAttributeNames as string[] | undefined) ?? []).length > 0;
  return {
    Messages: found.map((m) => ({
      MessageId: m.id,
      ReceiptHandle: m.receiptHandle,
      MD5OfBody: md5(m.body),
      Body: m.body,
      Attributes: {
        ApproximateReceiveCount: String(m.receiveCount),
        SentTimestamp: String(m.sentAt),
        ...(m.groupId ? { MessageGroupId: m.groupId } : {}),
      },
      ...(wantAll && Object.keys(m.attributes).length > 0 ? { MessageAttributes: m.attributes } : {}),
    })),
  };
}

function take(state: EmulatorState, queue: Queue, max: number, visibilityMs: number): EmulatedMessage[] {
  const redrive = queue.attributes.RedrivePolicy
    ? (JSON.parse(queue.attributes.RedrivePolicy) as {
        deadLetterTargetArn: string;
        maxReceiveCount: number;
      })
    : null;
  const taken: EmulatedMessage[] = [];
  for (const m of available(state, queue, Number.POSITIVE_INFINITY)) {
    if (taken.length >= max) break;
    if (redrive !== null && m.receiveCount >= Number(redrive.maxReceiveCount)) {
      const target = [...state.queues.values()].find((q) => q.arn === redrive.deadLetterTargetArn);
      queue.messages = queue.messages.filter((x) => x !== m);
      if (target !== undefined)
        target.messages.push({ ...m, receiptHandle: null, visibleAt: state.now(), seq: state.seq++ });
      continue;
    }
    m.receiveCount += 1;
    m.receiptHandle = `rh-${randomUUID()}`;
    m.receivedAt = state.now();
    m.visibleAt = state.now() + visibilityMs;
    taken.push(m);
  }
  return taken;
}

function holder(queue: Queue, handle: string): EmulatedMessage {
  const message = queue.messages.find((m) => m.receiptHandle === handle);
  if (message === undefined)
    throw new SqsFault('ReceiptHandleIsInvalid', `The receipt handle "${handle}" is not valid.`);
  return message;
}

export function deleteMessage(state: EmulatorState, queue: Queue, handle: string): void {
  const message = holder(queue, handle);
  if (message.visibleAt <= state.now()) {
    throw new SqsFault('ReceiptHandleIsInvalid', 'The receipt handle has expired.');
  }
  queue.messages = queue.messages.filter((m) => m !== message);
  state.wake();
}

export function changeVisibility(state: EmulatorState, queue: Queue, handle: string, seconds: number): void {
  const message = holder(queue, handle);
  if (message.visibleAt <= state.now()) {
    throw new SqsFault(
      'MessageNotInflight',
      'The message referred to is not in flight.',
      'AWS.SimpleQueueService.MessageNotInflight',
    );
  }
  if (!(seconds >= 0 && seconds <= 43_200))
    throw new SqsFault('InvalidParameterValue', `VisibilityTimeout ${seconds} is out of range`);
  if (state.now() + seconds * 1000 > message.receivedAt + TWELVE_HOURS_MS) {
    throw new SqsFault(
      'InvalidParameterValue',
      'Total VisibilityTimeout for the message is beyond the limit [43200 seconds]',
    );
  }
  message.visibleAt = state.now() + seconds * 1000;
  if (seconds === 0) state.wake();
}
