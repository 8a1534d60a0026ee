/**
 * One held job from its turn to send until its outcome is recorded: recorded instead when its account is
 * in shadow mode (`shadow.ts`); otherwise it waits for its turn under the
 * request rate (`rate.ts`), the pauses admit it (or it is given back untried), it is sent (`send.ts`) by
 * its deadline less any clock skew seen (`skew.ts`), and what the send came to is recorded (`record.ts`)
 * unless the job was lost to another worker or given back by `stop()` meanwhile. The whole delivery is one
 * trace (`tracing.ts`), its request a child of it.
 */
import type { EpochMs } from '../../policy.ts';
import type { Job } from '../job-types.ts';
import { mustGoNow, probeBy, type WaitTiming } from '../wait-rule.ts';
import type { HeldJob, HeldJobs, JobOutcome } from './held-jobs.ts';
import type { ResolvedDispatcherOptions } from './options.ts';
import type { PauseTable } from './pauses.ts';
import { createRequestRate } from './rate.ts';
import type { Recorder } from './record.ts';
import type { Send } from './send.ts';
import type { ShadowGate } from './shadow.ts';
import type { DeliveryTrace } from './tracing.ts';

/** Why a job is given back untried when the store's shadow settings could not be read. */
const SHADOW_UNREADABLE = "the outbox's shadow mode could not be read: given back untried";

/** What delivering a job needs. */
export interface DeliverContext {
  held: Pick<HeldJobs, 'start' | 'sent' | 'drop'>;
  pauses: Pick<PauseTable, 'admit' | 'probeEnded'>;
  send: Send;
  /** Records the job instead of sending it when its account is in shadow mode (`shadow.ts`). */
  shadow: ShadowGate;
  recorder: Pick<Recorder, 'defer' | 'settle' | 'undecided'>;
  now: () => EpochMs;
  /** The deadline to send a job by: its own, moved back by any clock skew seen (`skew.ts`). */
  deadlineOf: (job: Job) => EpochMs | null;
  /** What a last chance leaves room for (`wait-rule.ts`). */
  timing: WaitTiming;
  /** Starts the trace of a delivery (`safeTracing`: one that does nothing without `tracing`). */
  trace: (job: Job, startedAt: EpochMs) => DeliveryTrace;
  /** `maxRequestsPerSecond`, and `apiKeyFor` (whether a 429 slows the job's account or all sends): `rate.ts`. */
  options: Pick<ResolvedDispatcherOptions, 'maxRequestsPerSecond' | 'apiKeyFor'>;
  /** Recording failed (the outbox could not answer): the lease runs out and another claim retakes the job. */
  onError(error: unknown): void;
  /** A send ended, before its outcome is recorded: its sending slot is free for the next job. */
  onSendEnded(): void;
  /** A held job was let go (its outcome recorded, or it was lost while it waited). */
  onLetGo(): void;
}

/**
 * Creates the delivery of held jobs: `deliver(job)` sends it and records its outcome, resolving with how
 * it ended once that is recorded.
 */
export function createDelivery(ctx: DeliverContext): (job: HeldJob) => Promise<JobOutcome> {
  const { held, pauses, recorder } = ctx;
  const { maxRequestsPerSecond: max, apiKeyFor } = ctx.options;
  const rate = createRequestRate({ max, perAccountKeys: apiKeyFor !== undefined });

  const deliver = async (job: HeldJob, sent: () => void, trace: DeliveryTrace): Promise<JobOutcome> => {
    let probe = false;
    const { account } = job.job;
    try {
      // A held order awaiting a decision comes due at its last chance: none came, it expires unsent.
      const undecided = recorder.undecided(job.job);
      if (undecided !== null) return await undecided;
      // An account in shadow mode sends nothing: no turn under the rate, no pause, no request. A job whose
      // shadow setting cannot be read is given back untried (not left to a lease that would mark it maybe
      // applied: nothing was sent).
      let shadowed: JobOutcome | null;
      try {
        // Not awaited when the gate answers at once (nearly every job): a send makes enough promises.
        const gate = ctx.shadow(job.job);
        shadowed = gate === null ? null : await gate;
      } catch (error) {
        ctx.onError(error);
        return await recorder.defer(job.job, { until: ctx.now(), reason: SHADOW_UNREADABLE });
      }
      if (shadowed !== null) return shadowed;
      const deadline = ctx.deadlineOf(job.job);
      // Past its deadline, a job goes straight to the send, which expires it unsent: no pause defers it.
      if (deadline === null || ctx.now() <= deadline) {
        // Its turn under the request rate first (`rate.ts`; a job at its last chance does not wait for it),
        // then the pauses, which may have begun meanwhile.
        const turn = mustGoNow(job.job, ctx.timing, ctx.now()) ? undefined : rate.take(account);
        if (turn !== undefined) await turn;
        // Held back by a pause (claimed before it began, or another job is probing): given back untried.
        // The first job to come once a pause is up probes the key; the pause is up by the job's last chance.
        const admitted = pauses.admit(account, probeBy(job.job, ctx.timing, ctx.now()));
        if (admitted.verdict === 'defer') return await recorder.defer(job.job, admitted);
        probe = admitted.verdict === 'probe';
      }
      const result = await ctx.send(job, { deadline, trace });
      const at = ctx.now();
      rate.answered(account, result.kind === 'delivered' ? 200 : (result.sent?.status ?? null));
      sent();
      if (job.abandoned) return 'released';
      if (job.lost) return 'lost';
      return await recorder.settle(job.job, result, at, deadline);
    } catch (error) {
      ctx.onError(error);
      return 'lost';
    } finally {
      if (probe) pauses.probeEnded(account);
    }
  };

  return (job) => {
    // Another worker took it while it waited: nothing was sent, nothing is recorded.
    if (job.lost) {
      held.drop(job);
      ctx.onLetGo();
      return Promise.resolve('lost');
    }
    const sent = () => {
      if (held.sent(job)) ctx.onSendEnded();
    };
    return held.start(job, async () => {
      const trace = ctx.trace(job.job, ctx.now());
      let outcome: JobOutcome = 'lost';
      try {
        outcome = await deliver(job, sent, trace);
        return outcome;
      } finally {
        trace.end({ outcome, endedAt: ctx.now() });
        sent();
        held.drop(job);
        ctx.onLetGo();
      }
    });
  };
}
