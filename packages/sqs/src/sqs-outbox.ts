/**
 * The Outbox on Amazon SQS. The job lives in the message; SQS keeps its state:
 *
 * | Outbox        | SQS                                                                                  |
 * |---------------|--------------------------------------------------------------------------------------|
 * | confirm/refund| `SendMessage` (FIFO: group = order, deduplication id = kind + order)                 |
 * | claim         | `ReceiveMessage`, long poll; the receipt handle is the lease token, visibility the lease |
 * | complete      | `DeleteMessageBatch` (completions of a few ms are coalesced)                         |
 * | retry         | `ChangeMessageVisibility` to the next attempt, capped by the deadline and SQS's 12 h |
 * | hold, pause   | standard: `SendMessage` again with `DelaySeconds`, then delete (`resend.ts`); FIFO: retry's |
 * | releaseHeld   | FIFO: visibility 0 of the holds of this outbox; standard: remembered (`releases.ts`)  |
 * | fail          | `SendMessage` to the dead-letter queue with state and reason, then delete            |
 * | extendLease   | `ChangeMessageVisibility` (heart-beat)                                               |
 * | release       | `ChangeMessageVisibilityBatch` to 0                                                  |
 * | stats         | `GetQueueAttributes` (approximate counts; no deadlines, so nothing counts at risk)   |
 * | listJobs      | a scan of the dead-letter queue (`dead`, `expired`, `cancelled`, `unmatched` only)   |
 * | history       | the attempts a dead letter's body carries (the failing one, and those replayed)      |
 * | prune, beat   | no-ops: SQS deletes a final message itself, and keeps no worker heart-beats          |
 *
 * What SQS cannot do, and so this outbox does not claim to: look a job up by id (`get` only scans the dead-letter queue), cancel a
 * confirmation already in the queue (a refund is enqueued behind it instead, and cancelled by the worker if
 * the confirmation ends never charged), give back an attempt (`ApproximateReceiveCount` only grows), keep
 * a retry's error text, or count jobs exactly. Knowing an order's jobs (duplicate confirms, a refund's
 * campaign, `getByOrder`, `maybeAppliedAt` between receives) needs the optional order ledger
 * (`order-ledger.ts`).
 *
 * This file wires the Outbox methods; the work is in `confirmations.ts`, `refunds.ts`, `claims.ts` (claims
 * and their interruption, over `receive.ts`) and `dead-letter-queue.ts`, on the state shared in `outbox-context.ts`.
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { Job, Outbox, OutboxFeatures, OutboxStats } from '@postback/core';
import {
  appendAttempt,
  checkBeat,
  checkComplete,
  checkEpoch,
  checkExtendLease,
  checkFail,
  checkOrderLookup,
  checkRelease,
  checkReleaseHeld,
  checkRetry,
  checkWithdraw,
  checkWorkersQuery,
  completeJob,
  createBatcher,
  extendJobLease,
  failJob,
  resolveStatsOptions,
  retryJob,
  type StateCounts,
  validatePruneOptions,
} from '@postback/core/store';
import { createClaims, releaseJobs } from './claims.ts';
import { type ConfirmManyResult, confirmManyOnSqs, confirmOnSqs } from './confirmations.ts';
import { deadLetterMethods, listableStatesOf, moveToDeadLetter } from './dead-letter-queue.ts';
import { SqsOutboxError, SqsUnsupportedError } from './errors.ts';
import { encodeJobBody } from './message-codec.ts';
import type { SqsOutboxOptions } from './options.ts';
import {
  assertOpen,
  carriedHistoryOf,
  changeOne,
  createSqsOutboxContext,
  forget,
  jobAttributes,
  receivedAtOf,
  requireDeadLetterQueue,
} from './outbox-context.ts';
import { checkQueueAttributes } from './queue-checks.ts';
import { refundOnSqs } from './refunds.ts';
import { releaseHeldOnSqs, rememberHold } from './releases.ts';
import { resendHeld } from './resend.ts';
import { deleteMessages, type EntryOutcome } from './sqs-calls.ts';
import { leaseVisibilitySeconds, remainingVisibilitySeconds, retryVisibilitySeconds } from './visibility.ts';

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
    'ApproximateReceiveCount only grows: release() counts the receive, and so do a hold and retry({ countAttempt: false }) on a FIFO queue (a standard queue re-sends the message instead)',
  retryError: 'SQS keeps no per-message state: the error of a retry is not stored',
  maybeAppliedState:
    'without an order ledger SQS keeps no per-job state between receives: a retry that may have been applied, and a lease that ran out, are not known at the next receive (a failure keeps it in its dead letter)',
  exactStats:
    'GetQueueAttributes counts are approximate; delayed retries count as inflight; delivered and cancelled jobs are not counted; deadlines of queued messages cannot be read, so atRisk and deadlineBuckets count 0',
  attemptHistory:
    'SQS keeps no per-message state: a retry only changes visibility and a delivery deletes the message, so their attempts are lost; history() answers only for dead-lettered jobs (the failing attempt, plus those a replayed body carried)',
  listJobs:
    "SQS cannot list a queue: listJobs() lists only the dead-letter queue's dead, expired, cancelled and unmatched jobs, and throws SqsUnsupportedError for other states",
  prune:
    'SQS deletes a message once its job is final (delivered) or moves it to the dead-letter queue (whose retention ends it): prune() has nothing to delete and returns 0',
  heartbeats:
    'SQS is a queue, not a store: beat() is a no-op and workers() returns []; watch the Dispatcher (its events, metrics) instead',
  holds:
    'SQS cannot list a queue: stats() reports no held problems, and releaseHeld() reaches only what a receipt handle reaches (FIFO: the holds of this outbox, counted; standard: none counted, a remembered release makes a held message due when its current delay ends, within 900 s); on a FIFO queue a hold is a visibility change, and each probe counts a receive toward the redrive policy',
  shadow:
    'a job recorded in shadow mode must wait, unsent and uncounted, for the decision of `postback shadow end`, and the settings must be read by every worker; a queue keeps no per-message state and no settings, and every receive counts towards the redrive: `shadow` is undefined, so an account to migrate from pixel runs its shadow period on a SQLite or Postgres outbox',
  fairClaims:
    'the queue decides which messages a receive returns: claim() cannot take urgent deadlines first nor take turns across accounts; on a standard queue each account is a message group of an SQS fair queue, on a FIFO queue each order is',
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
  const context = createSqsOutboxContext(input);
  const { client, queueUrl, fifo, dlqUrl, ledger, policy, options, warn } = context;
  const claims = createClaims(context);
  // complete() is called once per job; SQS deletes up to ten messages per DeleteMessageBatch.
  const deletes = createBatcher<string, EntryOutcome>(
    (handles) => deleteMessages(client, queueUrl, handles),
    {
      maxSize: 10,
      windowMs: options.deleteBatchWindowMs,
    },
  );

  const features: OutboxFeatures = Object.freeze({
    attemptHistory: false,
    listableStates: listableStatesOf(context),
    heartbeats: false,
    prune: false,
    fairClaims: false,
    holds: true,
  });

  const outbox: SqsOutbox = {
    queueUrl,
    fifo,
    features,
    ...deadLetterMethods(context),

    async confirm(confirmInput) {
      assertOpen(context);
      return confirmOnSqs(context, confirmInput);
    },

    async confirmMany(inputs) {
      assertOpen(context);
      return confirmManyOnSqs(context, inputs);
    },

    async refund(refundInput) {
      assertOpen(context);
      return refundOnSqs(context, refundInput);
    },

    async withdraw(withdrawInput) {
      assertOpen(context);
      checkWithdraw(withdrawInput);
      throw new SqsUnsupportedError(
        'withdraw()',
        'a confirmation already in the queue cannot be taken back out of it; withdraw consent before confirmOrder, or use a SQLite or Postgres outbox',
      );
    },

    claim: (claimOptions) => claims.claim(claimOptions),

    async complete(given, completed) {
      assertOpen(context);
      const { job, result } = checkComplete(given, completed);
      if (job.lease === null) return false;
      // Recorded before the delete: the refund behind this confirm becomes receivable only after it.
      await ledger?.put(completeJob(job, result));
      const outcome = await deletes.add(job.lease.token);
      forget(context, job);
      if (outcome === 'ok') return true;
      if (outcome === 'stale') return false;
      throw new SqsOutboxError('send_failed', `DeleteMessage failed: ${outcome.error}`);
    },

    async retry(given, retried) {
      assertOpen(context);
      const { job, result } = checkRetry(given, retried, { holds: true });
      // A hold or a pause (the attempt not counted) on a standard queue leaves the queue for a delayed
      // re-send, so waiting never counts toward the redrive policy (`resend.ts`). FIFO: a visibility change.
      if (!fifo && (result.hold !== undefined || result.countAttempt === false) && job.lease !== null)
        return resendHeld(context, job, retryJob(job, result), result.now);
      // Recorded while this worker still holds the message, before it can become visible again: the next
      // receive finds this outcome (and `maybeAppliedAt`, if the attempt may have been applied). `attempts`
      // stays the receive count: SQS gives no attempt back, and the record must explain this receive.
      if (ledger !== undefined && job.lease !== null)
        await ledger.put({ ...retryJob(job, result), attempts: job.attempts });
      if (result.hold !== undefined && job.lease !== null)
        rememberHold(context, job.lease.token, retryJob(job, result));
      const seconds = retryVisibilitySeconds({
        now: result.now,
        nextAttemptAt: result.nextAttemptAt,
        deadline: job.deadline,
        receivedAt: receivedAtOf(context, job, result.now),
      });
      const changed = await changeOne(context, job, seconds);
      if (!changed && job.lease !== null) context.held.delete(job.lease.token);
      forget(context, job);
      return changed;
    },

    async fail(given, failure) {
      assertOpen(context);
      const { job, result, attempt } = checkFail(given, failure);
      requireDeadLetterQueue(context, 'fail()');
      if (job.lease === null) return false;
      // Make sure we still hold the message (and keep holding it while we copy it) before copying it.
      const held = await changeOne(
        context,
        job,
        Math.min(60, remainingVisibilitySeconds(result.now, receivedAtOf(context, job, result.now))),
      );
      if (!held) {
        forget(context, job);
        return false;
      }
      const failed = failJob(job, result);
      // The dead letter keeps the attempts this worker knows: those its body carried (a replayed job) and
      // this one. Earlier retries only changed the message's visibility; their attempts are not known here.
      const carried = carriedHistoryOf(context, job);
      const history = attempt === null ? carried : appendAttempt(carried, attempt);
      const outcome = await moveToDeadLetter(
        context,
        { body: encodeJobBody(failed, history), attributes: jobAttributes(failed), order: job },
        { state: result.state, reason: result.reason, failedAt: result.now, attempts: job.attempts },
        job.lease.token,
        queueUrl,
        // Recorded before the delete, as a delivery is: the refund behind it becomes receivable only
        // after the delete, and must find how the confirmation ended.
        () => ledger?.put(failed) ?? Promise.resolve(),
      );
      forget(context, job);
      if (typeof outcome === 'object')
        throw new SqsOutboxError('send_failed', `DeleteMessage failed: ${outcome.error}`);
      return outcome === 'ok';
    },

    async release(given, now) {
      assertOpen(context);
      const { jobs, now: at } = checkRelease(given, now);
      return releaseJobs(context, jobs, at);
    },

    async extendLease(given, options) {
      assertOpen(context);
      const { job, now: at, leaseMs } = checkExtendLease(given, options);
      const extended = await changeOne(
        context,
        job,
        leaseVisibilitySeconds(leaseMs, at, receivedAtOf(context, job, at)),
      );
      // A heart-beat is recorded as "this receive is under way" (state inflight): if its worker dies, the
      // next receive takes the last heart-beat as the time the job may have been applied.
      if (extended && ledger !== undefined) await ledger.put(extendJobLease(job, { now: at, leaseMs }));
      return extended;
    },

    async getByOrder(orderId, account = null) {
      assertOpen(context);
      const order = checkOrderLookup(orderId, account);
      if (ledger === undefined)
        throw new SqsUnsupportedError(
          'getByOrder()',
          'SQS has no lookup by order; configure an order ledger',
        );
      const { confirm, refund } = await ledger.get(order.orderId, order.account);
      return [confirm, refund].filter((job): job is Job => job !== null);
    },

    async stats(now, statsOptions): Promise<OutboxStats> {
      assertOpen(context);
      checkEpoch(now, 'now');
      const { atRiskWithinMs, deadlineBucketsMs } = resolveStatsOptions(statsOptions);
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
        unmatched: 0,
      };
      // Deadlines are inside the messages, which SQS cannot read without receiving them: none is known
      // at risk (documented in SQS_OUTBOX_LIMITS.exactStats and the README; the Dispatcher's expiries show it).
      return {
        counts,
        oldestPendingAt: null,
        nearestDeadline: null,
        atRisk: { count: 0, withinMs: atRiskWithinMs },
        deadlineBuckets: deadlineBucketsMs.map((withinMs) => ({ withinMs, count: 0 })),
        held: [],
      };
    },

    async releaseHeld(options) {
      assertOpen(context);
      const release = checkReleaseHeld(options);
      return releaseHeldOnSqs(context, release);
    },

    async prune(pruneOptions) {
      assertOpen(context);
      validatePruneOptions(pruneOptions);
      // Nothing final stays in the queue: a delivered job's message is deleted; the others are dead letters.
      return 0;
    },

    async beat(beat) {
      assertOpen(context);
      checkBeat(beat);
    },

    async workers(workersOptions) {
      assertOpen(context);
      checkWorkersQuery(workersOptions);
      return [];
    },

    async checkQueues() {
      assertOpen(context);
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
      // Harmless after close(): a stopping worker may call it once the outbox is closed.
      claims.interrupt();
    },

    async close() {
      if (context.closed) return;
      context.closed = true;
      await claims.close();
      await deletes.flush();
      if (context.ownsClient) client.destroy();
    },
  };
  return outbox;
}
