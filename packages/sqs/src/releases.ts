/**
 * `releaseHeld` on SQS. A held message is in the queue, where nothing but its receipt handle reaches it:
 * - FIFO (held by a visibility change): the handles of the jobs this outbox held are kept (with the held
 *   job, until its probe is due), and a release makes the matching ones visible now: exact for the holds of
 *   this process, none for another's (theirs come up at their next probe).
 * - standard (held by a delayed re-send, `resend.ts`): the new message has no handle until it is received,
 *   so the release is remembered, and a held message it covers is due when it next comes up, at the end of
 *   its current delay (within 900 s) instead of at its probe; it returns 0, since nothing is known to move.
 */
import type { EpochMs, Job } from '@postback/core';
import { isReleasable, type ReleaseHeldOptions } from '@postback/core/store';
import type { SqsOutboxContext } from './outbox-context.ts';
import { rememberRelease } from './resend.ts';
import { changeVisibility } from './sqs-calls.ts';

/** Most held FIFO messages an outbox remembers for `releaseHeld` (the oldest are forgotten first). */
export const MAX_REMEMBERED_HOLDS = 10_000;

/**
 * Remembers a job held on a FIFO queue by a visibility change (`held`: the job as held, its lease's token
 * the message's receipt handle), for a later `releaseHeld`.
 *
 * @example
 * ```ts
 * rememberHold(context, token, retryJob(job, result));
 * ```
 */
export function rememberHold(context: SqsOutboxContext, token: string, held: Job): void {
  context.held.set(token, held);
  if (context.held.size > MAX_REMEMBERED_HOLDS) {
    const oldest = context.held.keys().next();
    if (oldest.done !== true) context.held.delete(oldest.value);
  }
}

/**
 * Releases held jobs of `release` (checked): on FIFO, makes visible now the messages this outbox held and
 * still hides, and returns how many; on a standard queue, remembers the release and returns 0.
 *
 * @example
 * ```ts
 * const released = await releaseHeldOnSqs(context, { now, account: 'shop-17', campaignId: 'cmp_8f3a' });
 * ```
 */
export async function releaseHeldOnSqs(
  context: SqsOutboxContext,
  release: ReleaseHeldOptions,
): Promise<number> {
  if (!context.fifo) {
    rememberRelease(context, release);
    return 0;
  }
  const at: EpochMs = release.now;
  const handles: string[] = [];
  for (const [token, job] of context.held) {
    // Its probe is due: it is in the queue again (or claimed), beyond this handle's reach.
    if (job.nextAttemptAt <= at) context.held.delete(token);
    else if (isReleasable(job, release)) handles.push(token);
  }
  for (const token of handles) context.held.delete(token);
  if (handles.length === 0) return 0;
  const outcomes = await changeVisibility(context.client, context.queueUrl, handles, 0);
  return outcomes.filter((outcome) => outcome === 'ok').length;
}
