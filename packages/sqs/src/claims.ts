/**
 * Claiming on SQS: long-poll receives (several side by side for a large claim), interruption of waiting
 * long polls, and giving messages back (`release`).
 *
 * `excludeAccounts`: SQS cannot receive by account, so a message of an excluded account is received and
 * parked (`receive.ts`): hidden for `excludedAccountDelaySeconds`, and held for the first later claim that
 * no longer excludes its account, which takes parked jobs before anything else. A claim stops receiving
 * after a round that gave only parked jobs, or once it parked `limit` (at least ten) of them, so a paused
 * account's backlog is not drained into hiding by one claim.
 */
import { accountKey, type ClaimOptions, type EpochMs, type Job, releaseJob } from '@postback/core';
import { assertOpen, forget, type SqsOutboxContext } from './outbox-context.ts';
import { MAX_PARALLEL_RECEIVES, receiveJobs, takeParked } from './receive.ts';
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
  /** Takes parked jobs, then receives (long poll first) until `limit` or an empty answer. */
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

  return {
    async claim({ now: at, limit, leaseMs, excludeAccounts = [] }) {
      assertOpen(context);
      if (limit <= 0) return [];
      const exclude = new Set(excludeAccounts.map(accountKey));
      const jobs = await takeParked(context, at, limit, leaseMs, exclude);
      let wait = options.waitTimeSeconds;
      let parked = 0;
      const interrupted = receives.signal;
      while (jobs.length < limit && !context.closed && !interrupted.aborted) {
        const want = Math.min(limit - jobs.length, MAX_PARALLEL_RECEIVES * 10);
        const round = await receiveJobs(context, want, wait, at, leaseMs, interrupted, exclude);
        jobs.push(...round.jobs);
        parked += round.parked;
        if (round.received < want) break;
        if (round.parked > 0 && round.jobs.length === 0) break;
        if (parked >= Math.max(limit, 10)) break;
        wait = 0;
      }
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
