/**
 * Holds and pauses on a standard queue, by delayed re-send. A received message that must wait without
 * counting an attempt — held for its campaign (not on s2s), met during a 401/403 or 429 pause, or of an
 * account a claim excludes — is sent again as a new message (`SendMessage` with `DelaySeconds`, at most
 * SQS's 900 s) and only then its received copy deleted: the new message's `ApproximateReceiveCount`
 * starts at 0, so waiting never counts toward the queue's redrive policy. Sent first, deleted second: a
 * crash between the two leaves a duplicate, which the service's idempotency on `order_id` (and the order
 * ledger) makes harmless; the other order could lose the job.
 *
 * The new body carries what the receive count kept: the attempts counted so far (`priorAttempts`), the
 * held fields, and `notBefore` when the wait is longer than one delay. A message received before its
 * `notBefore` is re-sent for the rest (a chain of delays), unless a `releaseHeld` of this outbox covers it.
 * FIFO queues refuse a per-message delay, and a re-sent message would land behind its own refund in the
 * order's group: there a hold stays a visibility change (README, "Holds and pauses").
 */
import type { AttemptRecord, EpochMs, Job } from '@postback/core';
import {
  capWait,
  DEFAULT_WAIT_TIMING,
  isReleasable,
  type ReleaseHeldOptions,
  releaseJob,
} from '@postback/core/store';
import { fairGroupIdOf, type JobBody } from './message-codec.ts';
import {
  carriedHistoryOf,
  changeOne,
  forget,
  jobAttributes,
  messageFor,
  receivedAtOf,
  type SqsOutboxContext,
} from './outbox-context.ts';
import { sendMessage } from './producer.ts';
import { deleteMessages } from './sqs-calls.ts';
import { remainingVisibilitySeconds } from './visibility.ts';

/** SQS's longest per-message delay, in seconds (15 minutes). */
export const SQS_MAX_DELAY_SECONDS = 900;

/** Most `releaseHeld` calls an outbox remembers (the oldest are forgotten first). */
export const MAX_REMEMBERED_RELEASES = 1000;

/**
 * A body due within this of now is due: a delay is whole seconds, rounded down so that a message never
 * comes up after its `notBefore` (a deadline's last chance), so it may come up to a second early.
 */
const EARLY_MS = 1000;

/**
 * When a wait that wants to end at `wanted` (asked at `now`) ends, by core's one wait rule: no later than
 * the job's last chance (`lastChanceAt`, with a Dispatcher's default timing, `DEFAULT_WAIT_TIMING`: the
 * outbox does not know the worker's), so it comes up while a real try remains; once that is spent, no
 * later than the deadline, so it comes up in time to be expired (never sent late).
 */
export function waitEndAt(wanted: EpochMs, deadline: EpochMs | null, now: EpochMs): EpochMs {
  if (deadline === null) return wanted;
  const capped = capWait({ deadline }, wanted, DEFAULT_WAIT_TIMING, now);
  return capped === null ? Math.min(wanted, deadline) : capped.at;
}

/**
 * The delay that brings a message up at `notBefore` or at most a second before it (whole seconds, rounded
 * down, so never later), capped by SQS's 900 s; 0 when it is due.
 *
 * @example
 * ```ts
 * delaySecondsUntil(now, now + 90_500); // 90
 * delaySecondsUntil(now, now + 3_600_000); // 900: the rest is chained
 * ```
 */
export function delaySecondsUntil(now: EpochMs, notBefore: EpochMs | null): number {
  if (notBefore === null) return 0;
  return Math.min(SQS_MAX_DELAY_SECONDS, Math.max(0, Math.floor((notBefore - now) / 1000)));
}

/**
 * Re-sends a claimed job, as `next` (its state after the hold or pause, attempts uncounted), to come up at
 * `next.nextAttemptAt`; then deletes the received copy. First checks that the claim still holds the
 * message (a worker whose lease ran out must not put a second copy in the queue); false when it does not.
 * The ledger records `next` before the new message can be received.
 *
 * @example
 * ```ts
 * await resendHeld(context, job, retryJob(job, result), now);
 * ```
 */
export async function resendHeld(
  context: SqsOutboxContext,
  claimed: Job,
  next: Job,
  at: EpochMs,
): Promise<boolean> {
  if (claimed.lease === null) return false;
  const receivedAt = receivedAtOf(context, claimed, at);
  if (!(await changeOne(context, claimed, Math.min(60, remainingVisibilitySeconds(at, receivedAt))))) {
    forget(context, claimed);
    return false;
  }
  // Every wait yields to the deadline: the new message comes up by it, in time to be sent or expired.
  const due = waitEndAt(next.nextAttemptAt, next.deadline, at);
  const held = due === next.nextAttemptAt ? next : { ...next, nextAttemptAt: due };
  await context.ledger?.put(held);
  const notBefore = due > at ? due : null;
  await sendAgain(context, held, notBefore, carriedHistoryOf(context, claimed), at);
  await deleteCopies(context, [claimed.lease.token]);
  forget(context, claimed);
  return true;
}

/**
 * Parks received jobs of excluded accounts on a standard queue: each is re-sent delayed by
 * `excludedAccountDelaySeconds` (its attempt uncounted, due when it comes up), then its copy deleted.
 *
 * @example
 * ```ts
 * await resendParked(context, excluded, now);
 * ```
 */
export async function resendParked(
  context: SqsOutboxContext,
  jobs: readonly Job[],
  at: EpochMs,
): Promise<void> {
  const handles: string[] = [];
  for (const job of jobs) {
    if (job.lease === null) continue;
    const next = releaseJob(job, at);
    // Hidden for the delay, but never past the deadline: it comes up in time to be sent or expired.
    const delay = context.options.excludedAccountDelaySeconds;
    const seconds = delaySecondsUntil(at, waitEndAt(at + delay * 1000, job.deadline, at));
    try {
      await context.ledger?.put(next);
      await sendAgain(context, next, null, carriedHistoryOf(context, job), at, seconds);
      handles.push(job.lease.token);
    } catch (err) {
      // Not sent again: the copy comes back when its lease ends (one more receive counted), never lost.
      context.warn(`a paused account's message could not be sent again with a delay: ${String(err)}`);
    }
    forget(context, job);
  }
  await deleteCopies(context, handles);
}

/**
 * A received message whose body is not due yet (`notBefore` more than a second away) and not released:
 * sent again, as it is, for the rest of its wait (at most 900 s more), and its copy deleted. Returns
 * whether it was (false: it is due, or released, and is to be claimed).
 *
 * @example
 * ```ts
 * if (await chainDelay(context, message.Body, body, handle, now)) continue;
 * ```
 */
export async function chainDelay(
  context: SqsOutboxContext,
  text: string,
  body: JobBody,
  handle: string,
  at: EpochMs,
): Promise<boolean> {
  if (context.fifo || body.notBefore === null || body.notBefore - at < EARLY_MS) return false;
  if (isReleased(context, body)) return false;
  // A deadline's last chance is never waited past (`notBefore` was capped by it; checked again here).
  const due = waitEndAt(body.notBefore, body.deadline, at);
  if (due - at < EARLY_MS) return false;
  await sendMessage(context.client, context.queueUrl, {
    body: text,
    attributes: jobAttributes(body),
    ...(context.options.fairQueueGroups ? { groupId: fairGroupIdOf(body.account) } : {}),
    delaySeconds: delaySecondsUntil(at, due),
  });
  await deleteCopies(context, [handle]);
  return true;
}

/**
 * Remembers a `releaseHeld` on a standard queue: held messages it covers that this outbox receives later,
 * held before it, are due at once instead of waiting out the rest of their chain of delays.
 *
 * @example
 * ```ts
 * rememberRelease(context, { now, account: 'shop-17', campaignId: 'cmp_8f3a' });
 * ```
 */
export function rememberRelease(context: SqsOutboxContext, release: ReleaseHeldOptions): void {
  context.releases.push(release);
  if (context.releases.length > MAX_REMEMBERED_RELEASES) context.releases.shift();
}

/** Whether a remembered release, made after the body's job was held, covers it. */
function isReleased(context: SqsOutboxContext, body: JobBody): boolean {
  const { heldAt } = body;
  if (heldAt === null) return false;
  const job = {
    state: 'pending' as const,
    heldAt,
    account: body.account,
    heldCampaignId: body.heldCampaignId,
  };
  return context.releases.some((release) => release.now >= heldAt && isReleasable(job, release));
}

/** Sends `job` again (attempts so far and held fields in its body), delayed until `notBefore` or by `delaySeconds`. */
async function sendAgain(
  context: SqsOutboxContext,
  job: Job,
  notBefore: EpochMs | null,
  history: readonly AttemptRecord[],
  at: EpochMs,
  delaySeconds = delaySecondsUntil(at, notBefore),
): Promise<void> {
  const message = messageFor(context, job, undefined, history, { notBefore });
  await sendMessage(context.client, context.queueUrl, { ...message, delaySeconds });
}

/** Deletes received copies already sent again; a copy that cannot be deleted only makes a harmless duplicate. */
async function deleteCopies(context: SqsOutboxContext, handles: readonly string[]): Promise<void> {
  if (handles.length === 0) return;
  const outcomes = await deleteMessages(context.client, context.queueUrl, handles);
  for (const outcome of outcomes)
    if (typeof outcome === 'object')
      context.warn(
        `a message sent again could not be deleted (${outcome.error}): it is delivered twice at most, which the service's order_id makes harmless`,
      );
}
