/**
 * The dead-letter queue: how a failed job is recorded there, and how operators' tools read it back.
 * A dead-lettered message keeps its original body (so a malformed one stays exactly as it arrived) and
 * carries the outcome in message attributes: state, reason, time and attempts. SQS cannot list a queue,
 * so reading means receiving with a short visibility timeout and giving the messages back afterwards.
 * Messages moved by the queue's own redrive policy carry no attributes; they read as `dead` with a reason
 * saying so. Whether the job may have been applied (`maybeAppliedAt`) is in the body, like the rest of it,
 * and so are the attempts its last worker knew (`history`: see `message-codec.ts`).
 */
import {
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { AttemptRecord, EpochMs, Job } from '@postback/core';
import { truncateReason } from '@postback/core/store';
import { MalformedMessageError } from './errors.ts';
import { decodeJobBody, type JobBody, jobOfBody } from './message-codec.ts';

/** Message attribute: `dead`, `expired`, `cancelled` or `unmatched`. */
export const STATE_ATTRIBUTE = 'postback-state';
/** Message attribute: why the job failed (the service's `detail`, or ours). */
export const REASON_ATTRIBUTE = 'postback-reason';
/** Message attribute: when it failed (epoch ms). */
export const FAILED_AT_ATTRIBUTE = 'postback-failed-at';
/** Message attribute: attempts made before it failed. */
export const ATTEMPTS_ATTRIBUTE = 'postback-attempts';

/** What a dead-letter record says happened to the job. */
export type DeadLetterState = 'dead' | 'expired' | 'cancelled' | 'unmatched';

/** One message of the dead-letter queue, as read by {@link peekDeadLetters}. */
export interface DeadLetter {
  messageId: string;
  receiptHandle: string;
  /** The job, or null when the body is not a postback job (a malformed message). */
  job: Job | null;
  state: DeadLetterState;
  reason: string;
  /** The attempts its body carries, oldest first (`[]` for a malformed body or a job with none). */
  history: AttemptRecord[];
}

// Characters SQS accepts in a string attribute (XML 1.0 characters); anything else becomes U+FFFD.
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/**
 * The attributes recording a failure. The reason is cut to `MAX_REASON_LENGTH` and cleaned of characters
 * SQS refuses; it comes from the service's `detail` or our own messages, never from credentials.
 *
 * @example
 * ```ts
 * failureAttributes({ state: 'dead', reason: 'HTTP 422: unknown click', failedAt: now, attempts: 3 });
 * ```
 */
export function failureAttributes(failure: {
  state: DeadLetterState;
  reason: string;
  failedAt: EpochMs;
  attempts: number;
}): Record<string, MessageAttributeValue> {
  const reason = truncateReason(failure.reason).replace(NOT_XML_CHAR, '\uFFFD') || '(no reason given)';
  return {
    [STATE_ATTRIBUTE]: { DataType: 'String', StringValue: failure.state },
    [REASON_ATTRIBUTE]: { DataType: 'String', StringValue: reason },
    [FAILED_AT_ATTRIBUTE]: { DataType: 'Number', StringValue: String(failure.failedAt) },
    [ATTEMPTS_ATTRIBUTE]: { DataType: 'Number', StringValue: String(failure.attempts) },
  };
}

function attribute(message: Message, name: string): string | undefined {
  return message.MessageAttributes?.[name]?.StringValue;
}

function numberAttribute(message: Message, name: string): number | undefined {
  const text = attribute(message, name);
  const value = text === undefined ? Number.NaN : Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * Builds the job a dead-letter body describes, in its final state. `maybeAppliedAt` comes from the body
 * (written there when the job failed after a request that may have reached the service).
 *
 * @example
 * ```ts
 * const job = deadJobOf(decodeJobBody(text), { state: 'dead', reason: 'HTTP 422', failedAt: now, attempts: 2 });
 * ```
 */
export function deadJobOf(
  body: JobBody,
  failure: { state: DeadLetterState; reason: string; failedAt: EpochMs; attempts: number },
): Job {
  return jobOfBody(body, {
    state: failure.state,
    attempts: failure.attempts,
    updatedAt: failure.failedAt,
    lastError: failure.reason,
    lease: null,
    campaignId: body.campaignId,
    maybeAppliedAt: body.maybeAppliedAt,
  });
}

/** Reads one received dead-letter message. */
export function readDeadLetter(message: Message): DeadLetter {
  const receiveCount = Number(message.Attributes?.ApproximateReceiveCount ?? 0);
  const stateText = attribute(message, STATE_ATTRIBUTE);
  const state: DeadLetterState =
    stateText === 'expired' || stateText === 'cancelled' || stateText === 'unmatched' ? stateText : 'dead';
  const sentAt = Number(message.Attributes?.SentTimestamp ?? 0);
  const failedAt =
    numberAttribute(message, FAILED_AT_ATTRIBUTE) ?? (Number.isSafeInteger(sentAt) ? sentAt : 0);
  const reason =
    attribute(message, REASON_ATTRIBUTE) ??
    `moved to the dead-letter queue by the queue's redrive policy (received ${Number.isFinite(receiveCount) ? receiveCount : '?'} times)`;
  const attempts =
    numberAttribute(message, ATTEMPTS_ATTRIBUTE) ?? (Number.isSafeInteger(receiveCount) ? receiveCount : 0);
  let job: Job | null = null;
  let history: AttemptRecord[] = [];
  try {
    const body = decodeJobBody(message.Body ?? '');
    job = deadJobOf(body, { state, reason, failedAt, attempts });
    history = body.history;
  } catch (err) {
    if (!(err instanceof MalformedMessageError)) throw err;
  }
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    job,
    state,
    reason,
    history,
  };
}

/**
 * Receives up to `scanLimit` dead-letter messages, hiding them for `visibilitySeconds`. The caller must
 * delete or give back (visibility 0) every one it got.
 *
 * @example
 * ```ts
 * const letters = await peekDeadLetters(client, dlqUrl, { scanLimit: 1000, visibilitySeconds: 30, waitSeconds: 1 });
 * ```
 */
export async function peekDeadLetters(
  client: SQSClient,
  queueUrl: string,
  options: { scanLimit: number; visibilitySeconds: number; waitSeconds: number },
): Promise<DeadLetter[]> {
  const letters: DeadLetter[] = [];
  while (letters.length < options.scanLimit) {
    const output = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(10, options.scanLimit - letters.length),
        VisibilityTimeout: options.visibilitySeconds,
        WaitTimeSeconds: options.waitSeconds,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
      }),
    );
    const messages = output.Messages ?? [];
    if (messages.length === 0) break;
    for (const message of messages) letters.push(readDeadLetter(message));
  }
  return letters;
}
