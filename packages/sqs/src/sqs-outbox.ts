/**
 * The Outbox on Amazon SQS. The job lives in the message; SQS keeps its state:
 *
 * | Outbox        | SQS                                                                                  |
 * |---------------|--------------------------------------------------------------------------------------|
 * | confirm/refund| `SendMessage` (FIFO: group = order, deduplication id = kind + order)                 |
 * | claim         | `ReceiveMessage`, long poll; the receipt handle is the lease token, visibility the lease |
 * | complete      | `DeleteMessageBatch` (completions of a few ms are coalesced)                         |
 * | retry         | `ChangeMessageVisibility` to the next attempt, capped by the deadline and SQS's 12 h |
 * | fail          | `SendMessage` to the dead-letter queue with state and reason, then delete            |
 * | extendLease   | `ChangeMessageVisibility` (heart-beat)                                               |
 * | release       | `ChangeMessageVisibilityBatch` to 0                                                  |
 * | stats         | `GetQueueAttributes` (approximate counts)                                            |
 *
 * What SQS cannot do, and so this outbox does not claim to: look a job up by id (`get` only scans the dead-letter queue), cancel a
 * confirmation already in the queue (a refund is enqueued behind it instead, and cancelled by the worker if
 * the confirmation ends never charged), give back an attempt (`ApproximateReceiveCount` only grows), keep
 * a retry's error text, or count jobs exactly. Knowing an order's jobs (duplicate confirms, a refund's
 * campaign, `getByOrder`, `maybeAppliedAt` between receives) needs the optional order ledger
 * (`order-ledger.ts`).
 */
import { randomUUID } from 'node:crypto';
import {
  ChangeMessageVisibilityCommand,
  GetQueueAttributesCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import {
  type ConfirmJob,
  completeJob,
  type EnqueueResult,
  type EpochMs,
  extendJobLease,
  failJob,
  type Job,
  JobValidationError,
  newConfirmJob,
  type Outbox,
  type OutboxStats,
  planRefund,
  type RefundJob,
  type RefundOutcome,
  refundAfterConfirm,
  refundDeadlineOf,
  releaseJob,
  replayJob,
  resolvePolicy,
  retryJob,
  type StateCounts,
  validateRefundInput,
} from '@postback/core';
import { type DeadLetter, type DeadLetterState, failureAttributes, peekDeadLetters } from './dead-letter.ts';
import { MalformedMessageError, SqsOutboxError, SqsUnsupportedError } from './errors.ts';
import {
  DEADLINE_ATTRIBUTE,
  decodeJobBody,
  deduplicationIdOf,
  encodeJobBody,
  type JobBody,
  KIND_ATTRIBUTE,
  messageGroupIdOf,
} from './message-codec.ts';
import { createMicroBatcher } from './micro-batcher.ts';
import { parseSqsOutboxOptions, type SqsOutboxOptions } from './options.ts';
import type { OrderLedger, OrderRecord } from './order-ledger.ts';
import { type OutgoingMessage, sendMessage, sendMessageBatch } from './producer.ts';
import { checkQueueAttributes } from './queue-checks.ts';
import { changeVisibility, deleteMessages, type EntryOutcome, isStaleHandleError } from './sqs-calls.ts';
import { leaseVisibilitySeconds, remainingVisibilitySeconds, retryVisibilitySeconds } from './visibility.ts';

/** Most `ReceiveMessage` calls one claim makes at once (each returns at most ten messages). */
const MAX_PARALLEL_RECEIVES = 5;

/** The outcome of one input of {@link SqsOutbox.confirmMany}, in input order. */
export type ConfirmManyResult =
  | { ok: true; job: ConfirmJob; messageId: string }
  | { ok: false; error: Error };

/**
 * What an SQS outbox cannot do, one sentence each: declared to the conformance suite, and for callers that
 * adapt (a status page that explains why delivered jobs are not counted).
 *
 * @example
 * ```ts
 * describeOutbox('sqs', factory, { unsupported: { lookup: SQS_OUTBOX_LIMITS.lookup, exactStats: SQS_OUTBOX_LIMITS.exactStats } });
 * ```
 */
export const SQS_OUTBOX_LIMITS = Object.freeze({
  lookup:
    'SQS has no lookup by id: get() finds only jobs in the dead-letter queue; getByOrder() answers only from the order ledger (last recorded state)',
  cancelPending:
    'a message cannot be taken out of an SQS queue by order: a refund is enqueued behind its confirmation instead of cancelling it',
  duplicateDetection:
    'without an order ledger, confirm() always reports created: true (SQS does not report FIFO deduplication and forgets after 5 minutes)',
  uncountedAttempts:
    'ApproximateReceiveCount only grows: release() and retry({ countAttempt: false }) still count the receive',
  retryError: 'SQS keeps no per-message state: the error of a retry is not stored',
  maybeAppliedState:
    'without an order ledger SQS keeps no per-job state between receives: a retry that may have been applied, and a lease that ran out, are not known at the next receive (a failure keeps it in its dead letter)',
  exactStats:
    'GetQueueAttributes counts are approximate; delayed retries count as inflight; delivered and cancelled jobs are not counted',
});

/** An {@link Outbox} on SQS, plus batch enqueueing and queue checks. */
export interface SqsOutbox extends Outbox {
  /** The queue holding the jobs. */
  readonly queueUrl: string;
  /** Whether it is a FIFO queue (ordering per order, deduplication). */
  readonly fifo: boolean;
  /**
   * Enqueues many confirmations with `SendMessageBatch`. Each input gets its own result: invalid inputs
   * fail with `JobValidationError` without being sent; entries SQS refused fail with its reason.
   */
  confirmMany(inputs: readonly unknown[]): Promise<ConfirmManyResult[]>;
  /** Reads the queues' attributes and returns (and reports through `onWarning`) what is misconfigured. */
  checkQueues(): Promise<string[]>;
  /**
   * Cuts short every claim waiting in a long poll: they return what they have. Later claims poll as usual.
   * Call it when a worker stops, so it does not wait up to `waitTimeSeconds` for an empty queue.
   */
  interruptClaims(): void;
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'RequestAbortedError');
}

function jobAttributes(job: Job): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {
    [KIND_ATTRIBUTE]: { DataType: 'String', StringValue: job.kind },
  };
  if (job.deadline !== null)
    attributes[DEADLINE_ATTRIBUTE] = { DataType: 'Number', StringValue: String(job.deadline) };
  return attributes;
}

/**
 * Opens an outbox on an SQS queue. Credentials and region come from the AWS SDK's provider chain unless
 * you pass a configured `client` (or `clientConfig`).
 *
 * @example
 * ```ts
 * const outbox = createSqsOutbox({
 *   queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/postback.fifo',
 *   deadLetterQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/postback-dlq.fifo',
 * });
 * await outbox.confirm({ orderId: 'A-1001', valueMicros: 12_340_000, click });
 * ```
 */
export function createSqsOutbox(input: SqsOutboxOptions): SqsOutbox {
  const options = parseSqsOutboxOptions(input);
  const policy = resolvePolicy(options.policy);
  const now = options.now ?? Date.now;
  const warn = options.onWarning ?? ((message: string) => console.warn(`[postback/sqs] ${message}`));
  const ownsClient = options.client === undefined;
  const client = options.client ?? new SQSClient(options.clientConfig ?? {});
  const queueUrl = options.queueUrl;
  const fifo = options.fifo ?? queueUrl.endsWith('.fifo');
  const dlqUrl = options.deadLetterQueueUrl;
  const dlqFifo = dlqUrl?.endsWith('.fifo') ?? false;
  const ledger: OrderLedger | undefined = options.ledger;
  // Replaced after each interruption, so only the claims waiting at that moment are cut short.
  let receives = new AbortController();
  // When each held receipt handle was received: SQS's 12-hour visibility cap counts from there.
  const receivedAt = new Map<string, EpochMs>();
  let closed = false;
  // Jobs received ahead of claims (option `prefetch`), with the time they were received.
  let buffer: Array<{ job: Job; bufferedAt: EpochMs }> = [];
  // The refill in flight, if any: a claim waits for it, or it would find the messages hidden by it.
  let refilling: Promise<void> | null = null;

  const deletes = createMicroBatcher<string, EntryOutcome>(
    (handles) => deleteMessages(client, queueUrl, handles),
    {
      maxSize: 10,
      windowMs: options.deleteBatchWindowMs,
    },
  );

  function messageFor(job: Job, deduplicationId?: string): OutgoingMessage {
    return {
      body: encodeJobBody(job),
      attributes: jobAttributes(job),
      ...(fifo
        ? {
            groupId: messageGroupIdOf(job.orderId),
            deduplicationId: deduplicationId ?? deduplicationIdOf(job.kind, job.orderId),
          }
        : {}),
    };
  }

  function requireDeadLetterQueue(operation: string): string {
    if (dlqUrl === undefined) {
      throw new SqsOutboxError(
        'configuration',
        `${operation} needs the deadLetterQueueUrl option (the queue dead jobs are moved to)`,
      );
    }
    return dlqUrl;
  }

  /** Sends a message body to the dead-letter queue with its failure, then deletes it from `fromUrl`. */
  async function moveToDeadLetter(
    message: {
      body: string;
      attributes: Record<string, MessageAttributeValue>;
      orderId: string | null;
    },
    failure: { state: DeadLetterState; reason: string; failedAt: EpochMs; attempts: number },
    receiptHandle: string,
    fromUrl: string,
    beforeDelete?: () => Promise<void>,
  ): Promise<EntryOutcome> {
    const target = requireDeadLetterQueue('dead-lettering');
    await sendMessage(client, target, {
      body: message.body,
      attributes: { ...message.attributes, ...failureAttributes(failure) },
      ...(dlqFifo
        ? {
            groupId: message.orderId === null ? 'malformed' : messageGroupIdOf(message.orderId),
            // Unique per move: a job may be dead-lettered again (after a replay) within SQS's 5-minute
            // deduplication interval, and a deduplicated copy would be lost once the source is deleted.
            // The SDK's own retries of this request reuse it, so they still cannot make two copies.
            deduplicationId: `d:${randomUUID()}`,
          }
        : {}),
    });
    await beforeDelete?.();
    const [outcome] = await deleteMessages(client, fromUrl, [receiptHandle]);
    return outcome ?? 'ok';
  }

  /**
   * The job the ledger records under the same id as a received body (null without a ledger, or when the
   * record is of another job: an order confirmed again after its record was dropped).
   */
  function recordOf(record: OrderRecord | null, job: Pick<Job, 'kind' | 'id'>): Job | null {
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
   */
  function maybeAppliedAtOf(
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

  /**
   * What a received refund does, by core's `refundAfterConfirm` applied to the ledger's record of its
   * confirmation (FIFO order means that confirmation has left the queue): cancelled when it ended never
   * charged; else it takes the campaign and deadline from it. A refund still without a deadline has a
   * confirmation that left the queue with no outcome recorded (a ledger write lost in a crash, or no
   * record): it may have been charged, so it is sent, bounded by the latest the return window can end.
   * A refund with no campaign known is handed over as is: the Dispatcher dead-letters it, naming what to
   * supply (`refund({ orderId, campaignId })` then sends it again).
   */
  function followConfirm(refund: RefundJob, confirm: ConfirmJob | null, at: EpochMs): RefundJob {
    const next = confirm === null ? refund : refundAfterConfirm(refund, confirm, policy);
    if (next.state === 'cancelled' || next.deadline !== null) return next;
    return {
      ...next,
      campaignId: next.campaignId ?? confirm?.campaignId ?? null,
      deadline: refundDeadlineOf(at, policy),
    };
  }

  /** The job a body describes, in `state`, with what SQS and the ledger keep beside the body. */
  function jobOf(
    body: JobBody,
    fields: Pick<Job, 'state' | 'attempts' | 'updatedAt' | 'lease' | 'campaignId' | 'maybeAppliedAt'>,
  ): Job {
    const common = {
      ...fields,
      id: body.id,
      orderId: body.orderId,
      createdAt: body.createdAt,
      nextAttemptAt: fields.updatedAt,
      deadline: body.deadline,
      lastError: null,
      deliveredAt: null,
    };
    return body.kind === 'confirm'
      ? {
          ...common,
          kind: 'confirm',
          clickToken: body.clickToken,
          valueMicros: body.valueMicros,
          clickedAt: body.clickedAt,
        }
      : { ...common, kind: 'refund' };
  }

  /** Turns a received message into a claimed job, or handles it here (malformed, cancelled refund) and returns null. */
  async function admit(
    message: Message,
    at: EpochMs,
    leaseMs: number,
    seenOrders: Set<string>,
  ): Promise<Job | 'later' | null> {
    const handle = message.ReceiptHandle ?? '';
    const receiveCount = Number(message.Attributes?.ApproximateReceiveCount ?? 1);
    const attempts = Number.isSafeInteger(receiveCount) && receiveCount > 0 ? receiveCount : 1;
    let body: JobBody;
    try {
      body = decodeJobBody(message.Body ?? '');
    } catch (err) {
      if (!(err instanceof MalformedMessageError)) throw err;
      if (dlqUrl === undefined) {
        warn(
          `message ${message.MessageId ?? '?'} is not a postback job (${err.message}); no deadLetterQueueUrl to move it to, so it is hidden for 12 hours`,
        );
        await changeVisibility(client, queueUrl, [handle], remainingVisibilitySeconds(at, at));
        return null;
      }
      warn(
        `message ${message.MessageId ?? '?'} is not a postback job (${err.message}); moved to the dead-letter queue`,
      );
      await moveToDeadLetter(
        {
          body: message.Body ?? '',
          attributes: {},
          orderId: null,
        },
        { state: 'dead', reason: err.message, failedAt: at, attempts },
        handle,
        queueUrl,
      );
      return null;
    }
    const record = ledger === undefined ? null : await ledger.get(body.orderId);
    const recorded = recordOf(record, body);
    // FIFO may hand out a confirm and its refund in one receive; the refund must wait until the confirm is
    // done, so every message after the first of an order goes back (SQS keeps it behind in its group). The
    // hand-back is recorded as this receive's outcome, so the next receive does not take it for a lease
    // that ran out.
    const maybeAppliedAt = maybeAppliedAtOf(body.maybeAppliedAt, recorded, attempts - 1);
    if (fifo && seenOrders.has(body.orderId)) {
      if (recorded !== null) {
        const handedBack = { ...recorded, state: 'pending' as const, lease: null, attempts, updatedAt: at };
        await ledger?.put({ ...handedBack, maybeAppliedAt });
      }
      return 'later';
    }
    seenOrders.add(body.orderId);
    let job = jobOf(body, {
      state: 'pending',
      attempts,
      updatedAt: at,
      lease: null,
      // A campaign given after the refund was enqueued (`updated`) is only in the ledger.
      campaignId: body.campaignId ?? recorded?.campaignId ?? null,
      maybeAppliedAt,
    });
    if (job.kind === 'refund') {
      const next = followConfirm(job, record?.confirm ?? null, at);
      if (next.state === 'cancelled') {
        const reason = next.lastError ?? 'cancelled: nothing was charged';
        const failure = { state: 'cancelled' as const, reason, failedAt: at, attempts };
        await moveToDeadLetter(
          { body: encodeJobBody(next), attributes: jobAttributes(next), orderId: body.orderId },
          failure,
          handle,
          queueUrl,
          () => ledger?.put(next) ?? Promise.resolve(),
        );
        return null;
      }
      job = next;
    }
    receivedAt.set(handle, at);
    const lease = { token: handle, expiresAt: at + leaseVisibilitySeconds(leaseMs, at, at) * 1000 };
    return { ...job, state: 'inflight', updatedAt: at, nextAttemptAt: at, lease };
  }

  /**
   * Receives up to `want` messages with up to five concurrent `ReceiveMessage` calls (SQS gives at most ten
   * per call), admits them as jobs, and hands back a second message of an order received together with
   * the first. `received` counts every message SQS returned.
   */
  async function receiveJobs(
    want: number,
    wait: number,
    requestedAt: EpochMs,
    leaseMs: number,
    signal: AbortSignal,
    receivedAtClock?: () => EpochMs,
  ): Promise<{ jobs: Job[]; received: number; at: EpochMs }> {
    const at = requestedAt;
    const sizes = Array.from({ length: Math.ceil(want / 10) }, (_, i) => Math.min(10, want - i * 10));
    const batches = await Promise.all(
      sizes.map(async (size) => {
        try {
          const output = await client.send(
            new ReceiveMessageCommand({
              QueueUrl: queueUrl,
              MaxNumberOfMessages: size,
              VisibilityTimeout: leaseVisibilitySeconds(leaseMs, requestedAt, requestedAt),
              WaitTimeSeconds: wait,
              // The body holds the whole job; the attributes are for people reading the console.
              MessageSystemAttributeNames: ['ApproximateReceiveCount'],
            }),
            { abortSignal: signal },
          );
          return output.Messages ?? [];
        } catch (err) {
          if (isAbort(err) || closed) return [];
          throw err;
        }
      }),
    );
    const jobs: Job[] = [];
    const seenOrders = new Set<string>();
    const handBack: string[] = [];
    let received = 0;
    // A background receive may answer well after it was asked: its lease counts from the answer.
    const admittedAt = receivedAtClock?.() ?? at;
    for (const message of batches.flat()) {
      received += 1;
      const job = await admit(message, admittedAt, leaseMs, seenOrders);
      if (job === 'later') handBack.push(message.ReceiptHandle ?? '');
      else if (job !== null) jobs.push(job);
    }
    if (handBack.length > 0) await changeVisibility(client, queueUrl, handBack, 0);
    return { jobs, received, at: admittedAt };
  }

  /**
   * Takes up to `limit` prefetched jobs. A job that waited in the buffer longer than a quarter of the lease
   * is given back to the queue instead: the Dispatcher renews a lease every third of it from the claim, so a
   * job handed out with at least three quarters of its lease left is renewed in time.
   */
  async function takeFromBuffer(at: EpochMs, limit: number, leaseMs: number): Promise<Job[]> {
    if (buffer.length === 0) return [];
    const fresh = buffer.filter((entry) => at - entry.bufferedAt <= leaseMs / 4);
    const stale = buffer.filter((entry) => at - entry.bufferedAt > leaseMs / 4).map((entry) => entry.job);
    // Taken before any await, so two concurrent claims never take the same job.
    const taken = fresh.slice(0, limit);
    buffer = fresh.slice(limit);
    // Given back before this claim receives, so it can take them afresh.
    if (stale.length > 0) await outbox.release(stale, at).catch(() => {});
    return taken.map((entry) => entry.job);
  }

  /** Receives ahead, in the background, so the next claim is served without a round trip to SQS. */
  function refill(at: EpochMs, leaseMs: number): void {
    if (refilling !== null || closed || buffer.length >= options.prefetch) return;
    const signal = receives.signal;
    // A short poll: a long one would hold messages while no claim asks for them. An empty answer (or an
    // error) just leaves the next claim to receive directly, where errors are reported.
    refilling = receiveJobs(options.prefetch - buffer.length, 0, at, leaseMs, signal, now)
      .then(
        async ({ jobs, at: receivedAt }) => {
          if (closed || signal.aborted) await outbox.release(jobs, receivedAt);
          else for (const job of jobs) buffer.push({ job, bufferedAt: receivedAt });
        },
        () => {},
      )
      .finally(() => {
        refilling = null;
      });
  }

  function receivedAtOf(job: Job, at: EpochMs): EpochMs {
    return (job.lease && receivedAt.get(job.lease.token)) ?? at;
  }

  async function changeOne(job: Job, visibilityTimeout: number): Promise<boolean> {
    if (job.lease === null) return false;
    try {
      await client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
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

  function forget(job: Job): void {
    if (job.lease !== null) receivedAt.delete(job.lease.token);
  }

  async function scanDeadLetters(): Promise<{ url: string; letters: DeadLetter[] }> {
    const url = requireDeadLetterQueue('reading dead jobs');
    const letters = await peekDeadLetters(client, url, {
      scanLimit: options.deadLetterScanLimit,
      visibilitySeconds: options.peekVisibilitySeconds,
      waitSeconds: options.deadLetterWaitSeconds,
    });
    return { url, letters };
  }

  async function giveBack(url: string, letters: readonly DeadLetter[]): Promise<void> {
    if (letters.length > 0)
      await changeVisibility(
        client,
        url,
        letters.map((l) => l.receiptHandle),
        0,
      );
  }

  /**
   * Stores the campaign a refund was given after it was enqueued without one (core's `updated`). A refund
   * still in the queue cannot be rewritten: the ledger keeps the campaign and the worker takes it from
   * there when the refund comes up. A dead one (dead-lettered for want of a campaign) is sent again with
   * it, and its dead-letter record removed; if that record cannot be found (purged, or beyond
   * `deadLetterScanLimit`) it is sent all the same: the ledger says it is owed.
   */
  async function supplyCampaign(updated: RefundJob, before: RefundJob): Promise<void> {
    if (before.state !== 'dead') {
      await ledger?.put(updated);
      return;
    }
    const { url, letters } = await scanDeadLetters();
    const letter = letters.find((l) => l.job?.id === before.id && l.state === 'dead');
    try {
      // Its own deduplication id: the refund's usual one may be within SQS's 5-minute interval.
      await sendMessage(client, queueUrl, messageFor(updated, `u:${letter?.messageId ?? randomUUID()}`));
      await ledger?.put(updated);
      if (letter !== undefined) await deleteMessages(client, url, [letter.receiptHandle]);
    } finally {
      await giveBack(
        url,
        letters.filter((l) => l !== letter),
      );
    }
  }

  const outbox: SqsOutbox = {
    queueUrl,
    fifo,

    async confirm(confirmInput) {
      const job = newConfirmJob(confirmInput, { now: now(), id: randomUUID(), policy });
      if (ledger !== undefined) {
        const { confirm } = await ledger.get(job.orderId);
        if (confirm !== null) return { created: false, job: confirm } satisfies EnqueueResult<ConfirmJob>;
      }
      await sendMessage(client, queueUrl, messageFor(job));
      // Recorded after the send: a failed send must leave the order free to be confirmed again.
      await ledger?.put(job);
      return { created: true, job } satisfies EnqueueResult<ConfirmJob>;
    },

    async confirmMany(inputs) {
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
        jobs.map(({ job }) => messageFor(job)),
        { maxBatchBytes: options.maxBatchBytes, attempts: options.sendAttempts },
      );
      jobs.forEach(({ index, job }, i) => {
        const outcome = outcomes[i];
        results[index] =
          outcome?.ok === true
            ? { ok: true, job, messageId: outcome.messageId }
            : {
                ok: false,
                error: new SqsOutboxError(
                  'send-failed',
                  `order ${job.orderId}: ${outcome?.error ?? 'not sent'}`,
                ),
              };
      });
      if (ledger !== undefined) {
        for (const result of results) if (result?.ok === true) await ledger.put(result.job);
      }
      return results as ConfirmManyResult[];
    },

    async refund(refundInput): Promise<RefundOutcome> {
      if (!fifo) {
        throw new SqsOutboxError(
          'configuration',
          'refunds need a FIFO queue: a standard SQS queue does not keep order, so a reversal could overtake its confirmation',
        );
      }
      const checked = validateRefundInput(refundInput);
      if (ledger === undefined && checked.campaignId === undefined) {
        throw new JobValidationError(
          'campaignId',
          'is required on SQS unless an order ledger is configured: SQS cannot look up the confirmation',
        );
      }
      const at = now();
      const id = randomUUID();
      const { confirm, refund: existing } =
        ledger === undefined ? { confirm: null, refund: null } : await ledger.get(checked.orderId);
      // Core's rules decide; SQS only differs where it cannot take a message out of the queue.
      const planned = planRefund(checked, { now: at, id, policy, confirm, refund: existing });
      let job: RefundJob;
      switch (planned.outcome) {
        case 'duplicate':
        case 'not-charged':
          return planned;
        case 'updated':
          await supplyCampaign(planned.job, existing ?? planned.job);
          return planned;
        case 'cancelled':
          // The confirmation is still in the queue (or dead in the DLQ): SQS cannot take it out, so the
          // refund waits behind it in its FIFO group; the worker applies core's refundAfterConfirm to the
          // confirmation's recorded outcome when the refund comes up (cancelled if it was never charged).
          job = {
            kind: 'refund',
            id,
            orderId: checked.orderId,
            state: 'pending',
            attempts: 0,
            createdAt: at,
            updatedAt: at,
            nextAttemptAt: at,
            deadline: null,
            lastError: null,
            lease: null,
            deliveredAt: null,
            campaignId: checked.campaignId ?? null,
            maybeAppliedAt: null,
          };
          break;
        default:
          job = planned.job;
      }
      await sendMessage(client, queueUrl, messageFor(job));
      await ledger?.put(job);
      return { outcome: 'enqueued', job };
    },

    async claim({ now: at, limit, leaseMs }) {
      if (closed || limit <= 0) return [];
      if (refilling !== null) await refilling;
      const jobs = await takeFromBuffer(at, limit, leaseMs);
      let wait = options.waitTimeSeconds;
      const interrupted = receives.signal;
      while (jobs.length < limit && !closed && !interrupted.aborted) {
        const want = Math.min(limit - jobs.length, MAX_PARALLEL_RECEIVES * 10);
        const round = await receiveJobs(want, wait, at, leaseMs, interrupted);
        jobs.push(...round.jobs);
        if (round.received < want) break;
        wait = 0;
      }
      if (options.prefetch > 0) refill(at, leaseMs);
      return jobs;
    },

    async complete(job, result) {
      if (job.lease === null) return false;
      // Recorded before the delete: the refund behind this confirm becomes receivable only after it.
      await ledger?.put(completeJob(job, result));
      const outcome = await deletes.add(job.lease.token);
      forget(job);
      if (outcome === 'ok') return true;
      if (outcome === 'stale') return false;
      throw new SqsOutboxError('send-failed', `DeleteMessage failed: ${outcome.error}`);
    },

    async retry(job, result) {
      // Recorded while this worker still holds the message, before it can become visible again: the next
      // receive finds this outcome (and `maybeAppliedAt`, if the attempt may have been applied). `attempts`
      // stays the receive count: SQS gives no attempt back, and the record must explain this receive.
      if (ledger !== undefined && job.lease !== null)
        await ledger.put({ ...retryJob(job, result), attempts: job.attempts });
      const seconds = retryVisibilitySeconds({
        now: result.now,
        nextAttemptAt: result.nextAttemptAt,
        deadline: job.deadline,
        receivedAt: receivedAtOf(job, result.now),
      });
      const changed = await changeOne(job, seconds);
      forget(job);
      return changed;
    },

    async fail(job, result) {
      requireDeadLetterQueue('fail()');
      if (job.lease === null) return false;
      // Make sure we still hold the message (and keep holding it while we copy it) before copying it.
      const held = await changeOne(
        job,
        Math.min(60, remainingVisibilitySeconds(result.now, receivedAtOf(job, result.now))),
      );
      if (!held) {
        forget(job);
        return false;
      }
      const failed = failJob(job, result);
      const outcome = await moveToDeadLetter(
        { body: encodeJobBody(failed), attributes: jobAttributes(failed), orderId: job.orderId },
        { state: result.state, reason: result.reason, failedAt: result.now, attempts: job.attempts },
        job.lease.token,
        queueUrl,
        // Recorded before the delete, as a delivery is: the refund behind it becomes receivable only
        // after the delete, and must find how the confirmation ended.
        () => ledger?.put(failed) ?? Promise.resolve(),
      );
      forget(job);
      if (typeof outcome === 'object')
        throw new SqsOutboxError('send-failed', `DeleteMessage failed: ${outcome.error}`);
      return outcome === 'ok';
    },

    async release(jobs, at) {
      // Recorded before the messages become visible: a release is an outcome of their receive (nothing
      // was sent), not a lease that ran out.
      if (ledger !== undefined)
        await Promise.all(
          jobs.flatMap((job) =>
            job.lease === null ? [] : [ledger.put({ ...releaseJob(job, at), attempts: job.attempts })],
          ),
        );
      const handles = jobs.flatMap((job) => (job.lease === null ? [] : [job.lease.token]));
      for (const job of jobs) forget(job);
      if (handles.length > 0) await changeVisibility(client, queueUrl, handles, 0);
    },

    async extendLease(job, { now: at, leaseMs }) {
      const extended = await changeOne(job, leaseVisibilitySeconds(leaseMs, at, receivedAtOf(job, at)));
      // A heart-beat is recorded as "this receive is under way" (state inflight): if its worker dies, the
      // next receive takes the last heart-beat as the time the job may have been applied.
      if (extended && ledger !== undefined) await ledger.put(extendJobLease(job, { now: at, leaseMs }));
      return extended;
    },

    async get(id) {
      // SQS cannot look into a queue by id; the dead-letter queue can be scanned, which is what operators
      // need (`dlq replay --id`). A job that is not there reads as null, wherever else it may be.
      if (dlqUrl === undefined)
        throw new SqsUnsupportedError(
          'get()',
          'SQS has no lookup by id; configure deadLetterQueueUrl to find dead jobs',
        );
      const { url, letters } = await scanDeadLetters();
      try {
        return letters.find((letter) => letter.job?.id === id)?.job ?? null;
      } finally {
        await giveBack(url, letters);
      }
    },

    async getByOrder(orderId) {
      if (ledger === undefined)
        throw new SqsUnsupportedError(
          'getByOrder()',
          'SQS has no lookup by order; configure an order ledger',
        );
      const { confirm, refund } = await ledger.get(orderId);
      return [confirm, refund].filter((job): job is Job => job !== null);
    },

    async stats(): Promise<OutboxStats> {
      const names = [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ] as const;
      const source = await client.send(
        new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: [...names] }),
      );
      const read = (attrs: Record<string, string> | undefined, name: string) =>
        Number(attrs?.[name] ?? 0) || 0;
      let dead = 0;
      if (dlqUrl !== undefined) {
        const dlq = await client.send(
          new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: [...names] }),
        );
        dead = names.reduce((sum, name) => sum + read(dlq.Attributes, name), 0);
      }
      const counts: StateCounts = {
        pending: read(source.Attributes, names[0]) + read(source.Attributes, names[2]),
        inflight: read(source.Attributes, names[1]),
        delivered: 0,
        dead,
        expired: 0,
        cancelled: 0,
      };
      return { counts, oldestPendingAt: null, nearestDeadline: null };
    },

    async listDead(listOptions = {}) {
      const { url, letters } = await scanDeadLetters();
      try {
        const dead = letters
          .flatMap((letter) => (letter.job !== null && letter.state === 'dead' ? [letter.job] : []))
          .sort((a, b) => a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const start =
          listOptions.after === undefined ? 0 : dead.findIndex((job) => job.id === listOptions.after) + 1;
        return dead.slice(start, start + (listOptions.limit ?? 100));
      } finally {
        await giveBack(url, letters);
      }
    },

    async replay(target, at) {
      const { url, letters } = await scanDeadLetters();
      const wanted = 'ids' in target ? new Set(target.ids) : null;
      const untouched: DeadLetter[] = [];
      let replayed = 0;
      try {
        for (const letter of letters) {
          const job = letter.job;
          if (job === null || letter.state !== 'dead' || (wanted !== null && !wanted.has(job.id))) {
            untouched.push(letter);
            continue;
          }
          const record = ledger === undefined ? null : await ledger.get(job.orderId);
          const orderHasRefund = record !== null && record.refund !== null;
          // A message the redrive policy moved after receives that recorded no outcome (workers that died
          // holding it) may have been applied: the ledger's record shows it, as at a receive.
          const maybeAppliedAt = maybeAppliedAtOf(job.maybeAppliedAt, recordOf(record, job), job.attempts);
          const dead = { ...job, maybeAppliedAt };
          const next = replayJob(dead, { now: at, orderHasRefund });
          if (next.state !== 'pending') {
            // Expired (deadline passed) or cancelled (the order was refunded meanwhile): recorded, not sent.
            await moveToDeadLetter(
              {
                body: encodeJobBody(dead),
                attributes: jobAttributes(dead),
                orderId: job.orderId,
              },
              {
                state: next.state === 'expired' ? 'expired' : 'cancelled',
                reason: next.lastError ?? next.state,
                failedAt: at,
                attempts: job.attempts,
              },
              letter.receiptHandle,
              url,
            );
            await ledger?.put(next);
            continue;
          }
          await sendMessage(client, queueUrl, messageFor(next, `p:${letter.messageId}`));
          await deleteMessages(client, url, [letter.receiptHandle]);
          await ledger?.put(next);
          replayed += 1;
        }
      } finally {
        await giveBack(url, untouched);
      }
      return replayed;
    },

    async purgeDead(purgeOptions = {}) {
      const { url, letters } = await scanDeadLetters();
      const wanted = purgeOptions.ids === undefined ? null : new Set(purgeOptions.ids);
      const doomed = letters.filter(
        (l) => l.state === 'dead' && (wanted === null || (l.job !== null && wanted.has(l.job.id))),
      );
      const kept = letters.filter((l) => !doomed.includes(l));
      try {
        const outcomes =
          doomed.length === 0
            ? []
            : await deleteMessages(
                client,
                url,
                doomed.map((l) => l.receiptHandle),
              );
        return outcomes.filter((o) => o === 'ok').length;
      } finally {
        await giveBack(url, kept);
      }
    },

    async checkQueues() {
      const warnings = await checkQueueAttributes(client, {
        queueUrl,
        deadLetterQueueUrl: dlqUrl,
        fifo,
        policy,
        retentionMarginMs: options.retentionMarginMs,
      });
      for (const warning of warnings) warn(warning);
      return warnings;
    },

    interruptClaims() {
      receives.abort();
      receives = new AbortController();
      const held = buffer.map((entry) => entry.job);
      buffer = [];
      if (held.length > 0) void outbox.release(held, now()).catch(() => {});
    },

    async close() {
      if (closed) return;
      closed = true;
      receives.abort();
      // An aborted refill settles at once; waiting for it means nothing it received stays held.
      if (refilling !== null) await refilling;
      const held = buffer.map((entry) => entry.job);
      buffer = [];
      if (held.length > 0) await outbox.release(held, now()).catch(() => {});
      await deletes.flush();
      if (ownsClient) client.destroy();
    },
  };
  return outbox;
}
