/**
 * Claiming on SQS: long-poll receives (several side by side for a large claim), the prefetch buffer that
 * receives ahead in the background (option `prefetch`), interruption of waiting long polls, and giving
 * messages back (`release`). A job held in the buffer is given back rather than handed out once it waited
 * too long for its lease to be renewed in time.
 */
import { type ClaimOptions, type EpochMs, type Job, releaseJob } from '@postback/core';
import { assertOpen, forget, type SqsOutboxContext } from './outbox-context.ts';
import { MAX_PARALLEL_RECEIVES, receiveJobs } from './receive.ts';
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
  /** Takes prefetched jobs, then receives (long poll first) until `limit` or an empty answer. */
  claim(options: ClaimOptions): Promise<Job[]>;
  /** Cuts short every claim waiting in a long poll and gives back what the buffer holds. */
  interrupt(): void;
  /** Stops receiving: waits for a refill in flight and gives back what the buffer holds. */
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
  // Jobs received ahead of claims (option `prefetch`), with the time they were received.
  let buffer: Array<{ job: Job; bufferedAt: EpochMs }> = [];
  // The refill in flight, if any: a claim waits for it, or it would find the messages hidden by it.
  let refilling: Promise<void> | null = null;

  /** Empties the buffer and returns the jobs it held. */
  function drain(): Job[] {
    const held = buffer.map((entry) => entry.job);
    buffer = [];
    return held;
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
    if (stale.length > 0) await releaseJobs(context, stale, at).catch(() => {});
    return taken.map((entry) => entry.job);
  }

  /** Receives ahead, in the background, so the next claim is served without a round trip to SQS. */
  function refill(at: EpochMs, leaseMs: number): void {
    if (refilling !== null || context.closed || buffer.length >= options.prefetch) return;
    const signal = receives.signal;
    // A short poll: a long one would hold messages while no claim asks for them. An empty answer (or an
    // error) just leaves the next claim to receive directly, where errors are reported.
    refilling = receiveJobs(context, options.prefetch - buffer.length, 0, at, leaseMs, signal, context.now)
      .then(
        async ({ jobs, at: receivedAt }) => {
          if (context.closed || signal.aborted) await releaseJobs(context, jobs, receivedAt);
          else for (const job of jobs) buffer.push({ job, bufferedAt: receivedAt });
        },
        () => {},
      )
      .finally(() => {
        refilling = null;
      });
  }

  return {
    async claim({ now: at, limit, leaseMs }) {
      assertOpen(context);
      if (limit <= 0) return [];
      if (refilling !== null) await refilling;
      const jobs = await takeFromBuffer(at, limit, leaseMs);
      let wait = options.waitTimeSeconds;
      const interrupted = receives.signal;
      while (jobs.length < limit && !context.closed && !interrupted.aborted) {
        const want = Math.min(limit - jobs.length, MAX_PARALLEL_RECEIVES * 10);
        const round = await receiveJobs(context, want, wait, at, leaseMs, interrupted);
        jobs.push(...round.jobs);
        if (round.received < want) break;
        wait = 0;
      }
      if (options.prefetch > 0) refill(at, leaseMs);
      return jobs;
    },

    interrupt() {
      receives.abort();
      receives = new AbortController();
      const held = drain();
      if (held.length > 0) void releaseJobs(context, held, context.now()).catch(() => {});
    },

    async close() {
      receives.abort();
      // An aborted refill settles at once; waiting for it means nothing it received stays held.
      if (refilling !== null) await refilling;
      const held = drain();
      if (held.length > 0) await releaseJobs(context, held, context.now()).catch(() => {});
    },
  };
}
