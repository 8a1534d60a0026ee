/**
 * Claiming on SQS: receives, interruption of waiting long polls, and giving messages back (`release`).
 *
 * A claim sends one receive at a time while it may wait (a long poll), so no job it received waits on
 * another receive that long-polls an empty queue: only when that receive came back full (the queue holds
 * more) do up to five receives go side by side, short-polled, for the rest of the claim. The claim after
 * one that received something long-polls for {@link FOLLOW_UP_WAIT_SECONDS} at most: the queue was busy
 * a moment ago, so that is how long an answer takes to say whether it still is, and a `drain` ends a
 * second after its last job instead of a whole `waitTimeSeconds` later. Once a claim finds nothing, the
 * next waits the full `waitTimeSeconds` (fewer requests on an idle queue). Every receive a claim sends is
 * answered before the claim returns, so no message is received with no claim to hand it to; only an
 * interruption aborts a waiting long poll (a message SQS gave that request comes back when its visibility
 * timeout ends).
 *
 * `excludeAccounts`: SQS cannot receive by account, so a message of an excluded account is received and
 * parked (`receive.ts`): hidden for `excludedAccountDelaySeconds`, and held for the first later claim that
 * no longer excludes its account, which takes parked jobs before anything else. A claim stops receiving
 * after a round that gave only parked jobs, or once it parked `limit` (at least ten) of them, so a paused
 * account's backlog is not drained into hiding by one claim.
 */
import type { EpochMs, Job } from '@postback/core';
import { type ClaimOptions, checkClaim, releaseJob } from '@postback/core/store';
import { FOLLOW_UP_WAIT_SECONDS } from './options.ts';
import { assertOpen, forget, type SqsOutboxContext } from './outbox-context.ts';
import { MAX_PARALLEL_RECEIVES, MAX_RECEIVE_SIZE, receiveJobs, takeParked } from './receive.ts';
import { changeVisibility } from './sqs-calls.ts';

/**
 * Gives claimed jobs back to the queue at once (visibility 0), recording each as an outcome of its receive.
 *
 * @example
 * ```ts
 * await releaseJobs(context, jobs, Date.now());
 * ```
 */
export async function releaseJobs(
  context: SqsOutboxContext,
  jobs: readonly Job[],
  at: EpochMs,
): Promise<void> {
  const { ledger } = context;
  // Recorded before the messages become visible: a release is an outcome of their receive (nothing
  // was sent), not a lease that ran out.
  if (ledger !== undefined)
    await Promise.all(
      jobs.flatMap((job) =>
        job.lease === null ? [] : [ledger.put({ ...releaseJob(job, at), attempts: job.attempts })],
      ),
    );
  const handles = jobs.flatMap((job) => (job.lease === null ? [] : [job.lease.token]));
  for (const job of jobs) forget(context, job);
  if (handles.length > 0) await changeVisibility(context.client, context.queueUrl, handles, 0);
}

/** The claiming side of an SQS outbox. */
export interface Claims {
  /** Takes parked jobs, then receives (one long poll, then short polls side by side) until `limit` or a short answer. */
  claim(options: ClaimOptions): Promise<Job[]>;
  /** Cuts short every claim waiting in a long poll. */
  interrupt(): void;
  /** Stops receiving: cuts waiting long polls short and lets go of parked jobs. */
  close(): Promise<void>;
}

/**
 * The claims of an SQS outbox.
 *
 * @example
 * ```ts
 * const claims = createClaims(context);
 * const jobs = await claims.claim({ now: Date.now(), limit: 10, leaseMs: 30_000 });
 * ```
 */
export function createClaims(context: SqsOutboxContext): Claims {
  const { options } = context;
  // Replaced after each interruption, so only the claims waiting at that moment are cut short.
  let receives = new AbortController();
  // Whether the last claim to finish received any message: the next one then waits at most a second.
  let busy = false;

  return {
    async claim(claimOptions) {
      assertOpen(context);
      const { now: at, limit, leaseMs, excludeKeys } = checkClaim(claimOptions);
      const exclude = new Set(excludeKeys);
      const jobs = await takeParked(context, at, limit, leaseMs, exclude);
      let wait = busy ? Math.min(options.waitTimeSeconds, FOLLOW_UP_WAIT_SECONDS) : options.waitTimeSeconds;
      let parked = 0;
      let received = 0;
      const interrupted = receives.signal;
      while (jobs.length < limit && !context.closed && !interrupted.aborted) {
        // A long poll goes alone: a second one beside it could wait out the poll on an empty queue while
        // the first one's jobs wait for it. Short polls answer at once, so they may go side by side.
        const most = wait > 0 ? MAX_RECEIVE_SIZE : MAX_PARALLEL_RECEIVES * MAX_RECEIVE_SIZE;
        const want = Math.min(limit - jobs.length, most);
        const round = await receiveJobs(context, want, wait, at, leaseMs, interrupted, exclude);
        jobs.push(...round.jobs);
        parked += round.parked;
        received += round.received;
        if (round.received < want) break;
        if (round.parked > 0 && round.jobs.length === 0) break;
        if (parked >= Math.max(limit, 10)) break;
        wait = 0;
      }
      busy = received > 0;
      return jobs;
    },

    interrupt() {
      receives.abort();
      receives = new AbortController();
    },

    async close() {
      receives.abort();
      // Parked jobs stay hidden until their delay ends (their accounts were paused); the ledger already
      // records them handed back.
      for (const { job } of [...context.parked]) forget(context, job);
    },
  };
}
