/**
 * What every part of the SQS outbox shares: the client and its queues, the parsed options, the order
 * ledger, and the receipt handles this outbox holds (with when each was received). `createSqsOutbox`
 * builds it once; the claim, receive, refund and dead-letter modules take it as their first argument.
 */
import { ChangeMessageVisibilityCommand, type MessageAttributeValue, SQSClient } from '@aws-sdk/client-sqs';
import {
  type AttemptRecord,
  type EpochMs,
  type Job,
  OutboxClosedError,
  type WindowPolicy,
} from '@postback/core';
import { type ReleaseHeldOptions, resolvePolicy } from '@postback/core/store';
import { sqsClientConfig } from './client-config.ts';
import { SqsOutboxError } from './errors.ts';
import {
  DEADLINE_ATTRIBUTE,
  deduplicationIdOf,
  encodeJobBody,
  fairGroupIdOf,
  KIND_ATTRIBUTE,
  messageGroupIdOf,
  type ResentFields,
} from './message-codec.ts';
import { parseSqsOutboxOptions, type ResolvedSqsOutboxOptions, type SqsOutboxOptions } from './options.ts';
import { type OrderBook, orderBookOf } from './order-ledger.ts';
import type { OutgoingMessage } from './producer.ts';
import { isStaleHandleError } from './sqs-calls.ts';

/** The state and settings shared by the parts of one SQS outbox. */
export interface SqsOutboxContext {
  readonly client: SQSClient;
  /** Whether `close()` destroys the client (it was created here, not passed in). */
  readonly ownsClient: boolean;
  readonly queueUrl: string;
  readonly fifo: boolean;
  readonly dlqUrl: string | undefined;
  readonly dlqFifo: boolean;
  /** The order ledger, keyed by order (account and order id). */
  readonly ledger: OrderBook | undefined;
  readonly policy: WindowPolicy;
  readonly options: ResolvedSqsOutboxOptions;
  readonly now: () => EpochMs;
  readonly warn: (message: string) => void;
  /** When each held receipt handle was received: SQS's 12-hour visibility cap counts from there. */
  readonly receivedAt: Map<string, EpochMs>;
  /**
   * The attempt history the body of each held message carried (only non-empty ones): a failure writes it,
   * with its own attempt, into the dead letter.
   */
  readonly carriedHistory: Map<string, AttemptRecord[]>;
  /**
   * Received jobs of accounts a claim excluded, hidden for `excludedAccountDelaySeconds` from `parkedAt`
   * and held (at most `MAX_PARKED_JOBS`) for a later claim that does not exclude them.
   */
  parked: Array<{ job: Job; parkedAt: EpochMs; seconds: number }>;
  /** `releaseHeld` calls remembered for held messages re-sent with a delay (standard queues, `resend.ts`). */
  releases: ReleaseHeldOptions[];
  /** Jobs held on a FIFO queue by a visibility change, by receipt handle, for `releaseHeld` (`releases.ts`). */
  readonly held: Map<string, Job>;
  /** Set by `close()`. */
  closed: boolean;
}

/**
 * Parses the options and opens (or takes) the SQS client.
 *
 * @example
 * ```ts
 * const context = createSqsOutboxContext({ queueUrl, deadLetterQueueUrl });
 * ```
 */
export function createSqsOutboxContext(input: SqsOutboxOptions): SqsOutboxContext {
  const options = parseSqsOutboxOptions(input);
  const queueUrl = options.queueUrl;
  const dlqUrl = options.deadLetterQueueUrl;
  return {
    client: options.client ?? new SQSClient(sqsClientConfig(options.clientConfig ?? {}, process.env)),
    ownsClient: options.client === undefined,
    queueUrl,
    fifo: options.fifo ?? queueUrl.endsWith('.fifo'),
    dlqUrl,
    dlqFifo: dlqUrl?.endsWith('.fifo') ?? false,
    ledger: options.ledger === undefined ? undefined : orderBookOf(options.ledger),
    policy: resolvePolicy(options.policy),
    options,
    now: options.now ?? Date.now,
    warn: options.onWarning ?? ((message: string) => console.warn(`[postback/sqs] ${message}`)),
    receivedAt: new Map(),
    carriedHistory: new Map(),
    parked: [],
    releases: [],
    held: new Map(),
    closed: false,
  };
}

/**
 * Throws core's `OutboxClosedError` once `close()` was called: every Outbox method checks it first.
 *
 * @example
 * ```ts
 * assertOpen(context); // OutboxClosedError: the SQS outbox on https://sqs…/postback.fifo is closed
 * ```
 */
export function assertOpen(context: SqsOutboxContext): void {
  if (context.closed) throw new OutboxClosedError(`the SQS outbox on ${context.queueUrl}`);
}

/** Message attribute holding the job's account (absent for a job without one). */
export const ACCOUNT_ATTRIBUTE = 'postback-account';

/** The message attributes of a job, for people reading the console (the body holds the whole job). */
export function jobAttributes(
  job: Pick<Job, 'kind' | 'account' | 'deadline'>,
): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {
    [KIND_ATTRIBUTE]: { DataType: 'String', StringValue: job.kind },
  };
  if (job.account !== null) attributes[ACCOUNT_ATTRIBUTE] = { DataType: 'String', StringValue: job.account };
  if (job.deadline !== null)
    attributes[DEADLINE_ATTRIBUTE] = { DataType: 'Number', StringValue: String(job.deadline) };
  return attributes;
}

/**
 * The message that carries a job to the queue (`resent`: a hold's or pause's re-send, see `resend.ts`). FIFO: grouped by order (account and order id), deduplicated
 * by kind and order. Standard: grouped by account (SQS fair queues), unless `fairQueueGroups` is off.
 */
export function messageFor(
  context: SqsOutboxContext,
  job: Job,
  deduplicationId?: string,
  history: readonly AttemptRecord[] = [],
  resent: ResentFields | null = null,
): OutgoingMessage {
  return {
    body: encodeJobBody(job, history, resent),
    attributes: jobAttributes(job),
    ...(context.fifo
      ? {
          groupId: messageGroupIdOf(job.orderId, job.account),
          deduplicationId: deduplicationId ?? deduplicationIdOf(job.kind, job.orderId, job.account),
        }
      : context.options.fairQueueGroups
        ? { groupId: fairGroupIdOf(job.account) }
        : {}),
  };
}

/** The dead-letter queue's URL, or a configuration error naming the operation that needs it. */
export function requireDeadLetterQueue(context: SqsOutboxContext, operation: string): string {
  if (context.dlqUrl === undefined) {
    throw new SqsOutboxError(
      'configuration',
      `${operation} needs the deadLetterQueueUrl option (the queue dead jobs are moved to)`,
    );
  }
  return context.dlqUrl;
}

/** When the message a claimed job holds was received (`at` when it is not held). */
export function receivedAtOf(context: SqsOutboxContext, job: Job, at: EpochMs): EpochMs {
  return (job.lease && context.receivedAt.get(job.lease.token)) ?? at;
}

/** Drops what this outbox remembers of a job's receipt handle (it is no longer held). */
export function forget(context: SqsOutboxContext, job: Job): void {
  if (job.lease === null) return;
  const token = job.lease.token;
  const at = context.parked.findIndex((entry) => entry.job.lease?.token === token);
  if (at >= 0) context.parked.splice(at, 1);
  context.receivedAt.delete(job.lease.token);
  context.carriedHistory.delete(job.lease.token);
}

/** The attempt history the body of a held job's message carried (`[]` when none, or not held). */
export function carriedHistoryOf(context: SqsOutboxContext, job: Job): AttemptRecord[] {
  return (job.lease && context.carriedHistory.get(job.lease.token)) ?? [];
}

/** Changes the visibility of one held message; false when its receipt handle no longer holds it. */
export async function changeOne(
  context: SqsOutboxContext,
  job: Job,
  visibilityTimeout: number,
): Promise<boolean> {
  if (job.lease === null) return false;
  try {
    await context.client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: context.queueUrl,
        ReceiptHandle: job.lease.token,
        VisibilityTimeout: visibilityTimeout,
      }),
    );
    return true;
  } catch (err) {
    if (isStaleHandleError(err)) return false;
    throw err;
  }
}
