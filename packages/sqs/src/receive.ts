/**
 * Receiving jobs: `ReceiveMessage` calls side by side, and the admission of each message as a claimed job
 * (a malformed body goes to the dead-letter queue, a second message of an order received together with the
 * first goes back, a refund follows its confirmation's recorded outcome by core's rules, a job of an
 * account the claim excludes is parked: hidden for `excludedAccountDelaySeconds` and held for a later claim).
 */
import { type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { EpochMs, Job } from '@postback/core';
import { accountKey, releaseJob } from '@postback/core/store';
import { moveToDeadLetter } from './dead-letter-queue.ts';
import { MalformedMessageError } from './errors.ts';
import { decodeJobBody, encodeJobBody, type JobBody, jobOfBody } from './message-codec.ts';
import { MAX_PARKED_JOBS } from './options.ts';
import { maybeAppliedAtOf, orderLedgerKey, recordOf } from './order-ledger.ts';
import { forget, jobAttributes, receivedAtOf, type SqsOutboxContext } from './outbox-context.ts';
import { followConfirm } from './refunds.ts';
import { chainDelay, delaySecondsUntil, resendParked, waitEndAt } from './resend.ts';
import { changeVisibility } from './sqs-calls.ts';
import { leaseVisibilitySeconds, remainingVisibilitySeconds } from './visibility.ts';

/** Most messages one `ReceiveMessage` returns (SQS's limit). */
export const MAX_RECEIVE_SIZE = 10;

/** Most short-poll `ReceiveMessage` calls one claim makes at once. */
export const MAX_PARALLEL_RECEIVES = 5;

/**
 * What one round of receives gave: the jobs admitted, how many messages SQS returned, and how many of them
 * were parked (their account excluded).
 */
export interface ReceivedJobs {
  jobs: Job[];
  received: number;
  parked: number;
}

/**
 * Parks received jobs of excluded accounts: records the receive's outcome in the ledger (handed back, as a
 * release is, so the next receive does not take it for a lease that ran out), hides each message for
 * `excludedAccountDelaySeconds` (so the next receive does not return it at once; its receive count still
 * grows when it comes back) and holds up to `MAX_PARKED_JOBS` of them for a later claim
 * ({@link takeParked}). A message whose visibility cannot be changed is no longer held, and forgotten.
 *
 * @example
 * ```ts
 * await parkJobs(context, excluded, now);
 * ```
 */
export async function parkJobs(context: SqsOutboxContext, jobs: readonly Job[], at: EpochMs): Promise<void> {
  const { ledger, options } = context;
  if (jobs.length === 0) return;
  // A standard queue re-sends them delayed, so waiting out a pause never counts a receive (`resend.ts`).
  if (!context.fifo) return resendParked(context, jobs, at);
  if (ledger !== undefined)
    await Promise.all(jobs.map((job) => ledger.put({ ...releaseJob(job, at), attempts: job.attempts })));
  const bySeconds = new Map<number, Job[]>();
  for (const job of jobs) {
    // Hidden for the delay, but never past the job's last chance (core's wait rule, `waitEndAt`).
    const seconds = Math.min(
      options.excludedAccountDelaySeconds,
      remainingVisibilitySeconds(at, receivedAtOf(context, job, at)),
      delaySecondsUntil(at, waitEndAt(at + options.excludedAccountDelaySeconds * 1000, job.deadline, at)),
    );
    bySeconds.set(seconds, [...(bySeconds.get(seconds) ?? []), job]);
  }
  for (const [seconds, group] of bySeconds) {
    const handles = group.map((job) => job.lease?.token ?? '');
    const outcomes = await changeVisibility(context.client, context.queueUrl, handles, seconds);
    group.forEach((job, i) => {
      if (outcomes[i] === 'ok' && context.parked.length < MAX_PARKED_JOBS && !context.closed)
        context.parked.push({ job, parkedAt: at, seconds });
      else forget(context, job);
    });
  }
}

/**
 * Takes up to `limit` parked jobs whose account `exclude` (account keys) no longer holds, each with at least
 * half of its hiding left (so it cannot have come back to the queue meanwhile): its visibility becomes the
 * lease, and the ledger records the receive as under way again (state `inflight`, like a heart-beat), so
 * a worker that dies holding it is seen at the next receive. Parked jobs whose hiding is half gone are let
 * go: they come back to the queue when it ends.
 *
 * @example
 * ```ts
 * const jobs = await takeParked(context, now, 10, 30_000, new Set());
 * ```
 */
export async function takeParked(
  context: SqsOutboxContext,
  at: EpochMs,
  limit: number,
  leaseMs: number,
  exclude: ReadonlySet<string>,
): Promise<Job[]> {
  if (context.parked.length === 0 || limit <= 0) return [];
  const stale = context.parked.filter((entry) => at - entry.parkedAt > (entry.seconds * 1000) / 2);
  for (const entry of stale) forget(context, entry.job);
  // Taken before any await, so two concurrent claims never take the same job.
  const taken = context.parked.filter((entry) => !exclude.has(accountKey(entry.job.account))).slice(0, limit);
  context.parked = context.parked.filter((entry) => !taken.includes(entry));
  const jobs: Job[] = [];
  for (const { job } of taken) {
    const token = job.lease?.token ?? '';
    const seconds = leaseVisibilitySeconds(leaseMs, at, receivedAtOf(context, job, at));
    const [outcome] = await changeVisibility(context.client, context.queueUrl, [token], seconds);
    if (outcome !== 'ok') {
      forget(context, job);
      continue;
    }
    const claimed: Job = {
      ...job,
      state: 'inflight',
      updatedAt: at,
      nextAttemptAt: at,
      lease: { token, expiresAt: at + seconds * 1000 },
    };
    await context.ledger?.put(claimed);
    jobs.push(claimed);
  }
  return jobs;
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'RequestAbortedError');
}

/** Handles a message whose body is not a postback job: dead-lettered, or hidden for 12 hours without a DLQ. */
async function setAsideMalformed(
  context: SqsOutboxContext,
  message: Message,
  err: MalformedMessageError,
  at: EpochMs,
  attempts: number,
): Promise<void> {
  const handle = message.ReceiptHandle ?? '';
  if (context.dlqUrl === undefined) {
    context.warn(
      `message ${message.MessageId ?? '?'} is not a postback job (${err.message}); no deadLetterQueueUrl to move it to, so it is hidden for 12 hours`,
    );
    await changeVisibility(context.client, context.queueUrl, [handle], remainingVisibilitySeconds(at, at));
    return;
  }
  context.warn(
    `message ${message.MessageId ?? '?'} is not a postback job (${err.message}); moved to the dead-letter queue`,
  );
  await moveToDeadLetter(
    context,
    { body: message.Body ?? '', attributes: {}, order: null },
    { state: 'dead', reason: err.message, failedAt: at, attempts },
    handle,
    context.queueUrl,
  );
}

/** Turns a received message into a claimed job, or handles it here (malformed, cancelled refund) and returns null. */
async function admit(
  context: SqsOutboxContext,
  message: Message,
  at: EpochMs,
  leaseMs: number,
  seenOrders: Set<string>,
): Promise<Job | 'later' | null> {
  const { ledger } = context;
  const handle = message.ReceiptHandle ?? '';
  const receiveCount = Number(message.Attributes?.ApproximateReceiveCount ?? 1);
  const receives = Number.isSafeInteger(receiveCount) && receiveCount > 0 ? receiveCount : 1;
  let body: JobBody;
  try {
    body = decodeJobBody(message.Body ?? '');
  } catch (err) {
    if (!(err instanceof MalformedMessageError)) throw err;
    await setAsideMalformed(context, message, err, at, receives);
    return null;
  }
  // A hold re-sent on a standard queue and not due yet: sent again for the rest of its wait (`resend.ts`).
  try {
    if (await chainDelay(context, message.Body ?? '', body, handle, at)) return null;
  } catch (err) {
    if (isAbort(err) || context.closed) return null;
    // Not sent again: the copy comes back when its lease ends (one more receive counted), never lost.
    context.warn(`a held message could not be sent again for the rest of its wait: ${String(err)}`);
    return null;
  }
  // A message re-sent for a hold or a pause carries the attempts counted before it (`priorAttempts`).
  const attempts = body.priorAttempts + receives;
  const record = ledger === undefined ? null : await ledger.get(body.orderId, body.account);
  const order = orderLedgerKey(body.orderId, body.account);
  const recorded = recordOf(record, body);
  // FIFO may hand out a confirm and its refund in one receive; the refund must wait until the confirm is
  // done, so every message after the first of an order goes back (SQS keeps it behind in its group). The
  // hand-back is recorded as this receive's outcome, so the next receive does not take it for a lease
  // that ran out.
  const maybeAppliedAt = maybeAppliedAtOf(body.maybeAppliedAt, recorded, attempts - 1);
  if (context.fifo && seenOrders.has(order)) {
    if (recorded !== null) {
      const handedBack = { ...recorded, state: 'pending' as const, lease: null, attempts, updatedAt: at };
      await ledger?.put({ ...handedBack, maybeAppliedAt });
    }
    return 'later';
  }
  seenOrders.add(order);
  let job = jobOfBody(body, {
    state: 'pending',
    attempts,
    updatedAt: at,
    lease: null,
    lastError: null,
    // A campaign given after the refund was enqueued (`updated`) is only in the ledger, with its source.
    campaignId: body.campaignId ?? recorded?.campaignId ?? null,
    ...(body.campaignId === null && recorded?.kind === 'refund'
      ? { campaignFrom: recorded.campaignFrom ?? null }
      : {}),
    maybeAppliedAt,
    // FIFO holds are visibility changes: the held fields are in the ledger's record, not the body.
    ...(context.fifo && recorded?.state === 'pending' && recorded.heldAt !== null
      ? { heldAt: recorded.heldAt, heldCampaignId: recorded.heldCampaignId }
      : {}),
  });
  if (job.kind === 'refund') {
    const next = followConfirm(context, job, record?.confirm ?? null, at);
    if (next.state === 'cancelled') {
      const reason = next.lastError ?? 'cancelled: nothing was charged';
      const failure = { state: 'cancelled' as const, reason, failedAt: at, attempts };
      await moveToDeadLetter(
        context,
        { body: encodeJobBody(next, body.history), attributes: jobAttributes(next), order: body },
        failure,
        handle,
        context.queueUrl,
        () => ledger?.put(next) ?? Promise.resolve(),
      );
      return null;
    }
    job = next;
  }
  context.receivedAt.set(handle, at);
  // The attempts its body carries (a replayed job): a failure writes them, with its own, to the dead letter.
  if (body.history.length > 0) context.carriedHistory.set(handle, body.history);
  const lease = { token: handle, expiresAt: at + leaseVisibilitySeconds(leaseMs, at, at) * 1000 };
  return { ...job, state: 'inflight', updatedAt: at, nextAttemptAt: at, lease };
}

/**
 * Receives up to `want` messages with `ReceiveMessage` calls side by side (SQS gives at most ten per
 * call; the claim asks for more than ten only with short polls), admits them as jobs, and hands back a second message of an order received together with
 * the first. Jobs of accounts in `exclude` (account keys) are parked ({@link parkJobs}). `received` counts
 * every message SQS returned.
 *
 * @example
 * ```ts
 * const { jobs } = await receiveJobs(context, 10, 20, now, 30_000, signal);
 * ```
 */
export async function receiveJobs(
  context: SqsOutboxContext,
  want: number,
  wait: number,
  at: EpochMs,
  leaseMs: number,
  signal: AbortSignal,
  exclude: ReadonlySet<string> = new Set(),
): Promise<ReceivedJobs> {
  const sizes = Array.from({ length: Math.ceil(want / MAX_RECEIVE_SIZE) }, (_, i) =>
    Math.min(MAX_RECEIVE_SIZE, want - i * MAX_RECEIVE_SIZE),
  );
  const batches = await Promise.all(
    sizes.map(async (size) => {
      try {
        const output = await context.client.send(
          new ReceiveMessageCommand({
            QueueUrl: context.queueUrl,
            MaxNumberOfMessages: size,
            VisibilityTimeout: leaseVisibilitySeconds(leaseMs, at, at),
            WaitTimeSeconds: wait,
            // The body holds the whole job; the attributes are for people reading the console.
            MessageSystemAttributeNames: ['ApproximateReceiveCount'],
          }),
          { abortSignal: signal },
        );
        return output.Messages ?? [];
      } catch (err) {
        if (isAbort(err) || context.closed) return [];
        throw err;
      }
    }),
  );
  const jobs: Job[] = [];
  const excluded: Job[] = [];
  const seenOrders = new Set<string>();
  const handBack: string[] = [];
  let received = 0;
  for (const message of batches.flat()) {
    received += 1;
    const job = await admit(context, message, at, leaseMs, seenOrders);
    if (job === 'later') handBack.push(message.ReceiptHandle ?? '');
    else if (job !== null && exclude.has(accountKey(job.account))) excluded.push(job);
    else if (job !== null) jobs.push(job);
  }
  if (handBack.length > 0) await changeVisibility(context.client, context.queueUrl, handBack, 0);
  await parkJobs(context, excluded, at);
  return { jobs, received, parked: excluded.length };
}
