/**
 * Claiming on SQS: long-poll receives (several side by side for a large claim), the prefetch buffer that
 * receives ahead in the background (option `prefetch`), interruption of waiting long polls, and giving
 * messages back (`release`). A job held in the buffer is given back rather than handed out once it waited
 * too long for its lease to be renewed in time.
 *
 * `excludeAccounts`: SQS cannot receive by account, so a message of an excluded account is received and
 * parked (`receive.ts`): hidden for `excludedAccountDelaySeconds`, and held for the first later claim that
 * no longer excludes its account, which takes parked jobs before anything else. A claim stops receiving
 * after a round that gave only parked jobs, or once it parked `limit` (at least ten) of them, so a paused
 * account's backlog is not drained into hiding by one claim.
 */
import { accountKey, type ClaimOptions, type EpochMs, type Job, releaseJob } from '@postback/core';
import { assertOpen, forget, type SqsOutboxContext } from './outbox-context.ts';
import { MAX_PARALLEL_RECEIVES, parkJobs, receiveJobs, takeParked } from './receive.ts';
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
  async function takeFromBuffer(
    at: EpochMs,
    limit: number,
    leaseMs: number,
    exclude: ReadonlySet<string>,
  ): Promise<Job[]> {
    if (buffer.length === 0) return [];
    const fresh = buffer.filter((entry) => at - entry.bufferedAt <= leaseMs / 4);
    const stale = buffer.filter((entry) => at - entry.bufferedAt > leaseMs / 4).map((entry) => entry.job);
    // Taken before any await, so two concurrent claims never take the same job.
    const excluded = fresh.filter((entry) => exclude.has(accountKey(entry.job.account)));
    const allowed = fresh.filter((entry) => !excluded.includes(entry));
    const taken = allowed.slice(0, Math.max(0, limit));
    buffer = allowed.slice(taken.length);
    // Given back before this claim receives, so it can take them afresh.
    if (stale.length > 0) await releaseJobs(context, stale, at).catch(() => {});
    // Prefetched before the claim said which accounts it leaves out: parked like received ones.
    if (excluded.length > 0)
      await parkJobs(
        context,
        excluded.map((entry) => entry.job),
        at,
      ).catch(() => {});
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
    async claim({ now: at, limit, leaseMs, excludeAccounts = [] }) {
      assertOpen(context);
      if (limit <= 0) return [];
      const exclude = new Set(excludeAccounts.map(accountKey));
      if (refilling !== null) await refilling;
      const jobs = await takeParked(context, at, limit, leaseMs, exclude);
      jobs.push(...(await takeFromBuffer(at, limit - jobs.length, leaseMs, exclude)));
      let wait = options.waitTimeSeconds;
      let parked = 0;
      const interrupted = receives.signal;
      while (jobs.length < limit && !context.closed && !interrupted.aborted) {
        const want = Math.min(limit - jobs.length, MAX_PARALLEL_RECEIVES * 10);
        const round = await receiveJobs(context, want, wait, at, leaseMs, interrupted, undefined, exclude);
        jobs.push(...round.jobs);
        parked += round.parked;
        if (round.received < want) break;
        if (round.parked > 0 && round.jobs.length === 0) break;
        if (parked >= Math.max(limit, 10)) break;
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
      // Parked jobs stay hidden until their delay ends (their accounts were paused); the ledger already
      // records them handed back.
      for (const { job } of [...context.parked]) forget(context, job);
      const held = drain();
      if (held.length > 0) await releaseJobs(context, held, context.now()).catch(() => {});
    },
  };
}
