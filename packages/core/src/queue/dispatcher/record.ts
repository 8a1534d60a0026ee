/**
 * Records the outcome of a send durably, then tells listeners: delivered, retried with deadline-capped
 * backoff (or the service's `Retry-After`), dead, expired, or given back untried while delivery is paused.
 * What each failure class means is decided in `classify.ts`; what is done with it is decided here.
 */
import type { EpochMs } from '../../policy.ts';
import { backoffDelay, nextAttemptTime } from '../backoff.ts';
import type { Job, Outbox } from '../types.ts';
import type { Emit } from './events.ts';
import type { ResolvedDispatcherOptions } from './options.ts';
import type { SendResult } from './send.ts';
import type { JobOutcome } from './slot.ts';
import type { DispatcherStateMachine } from './state.ts';

/** What recording needs. */
export interface RecordContext {
  outbox: Outbox;
  now: () => EpochMs;
  emit: Emit;
  /** Paused by a 401/403, resumed by any other answer of the service. */
  machine: DispatcherStateMachine;
  backoff: ResolvedDispatcherOptions['backoff'];
  random: () => number;
}

/** Outcomes recorded since the Dispatcher was created (`failed` = dead + expired). */
export interface OutcomeCounters {
  delivered: number;
  retried: number;
  dead: number;
  expired: number;
  failed: number;
}

/** Records outcomes; see {@link createRecorder}. Each method returns `lost` when another worker holds the job. */
export interface Recorder {
  readonly counters: Readonly<OutcomeCounters>;
  /** Records what a send came to, at `at` (when the send ended). */
  settle(job: Job, result: SendResult, at: EpochMs): Promise<JobOutcome>;
  /** Gives back, untried and its attempt not counted, a job claimed before delivery was paused. */
  deferPaused(job: Job): Promise<JobOutcome>;
  /** Gives back, due now, a job whose request was under way at `stop()`: it may have been applied. */
  giveBackRequested(job: Job): Promise<void>;
  /** Gives back jobs never sent (`stop()`, a claim that came back while stopping). */
  release(jobs: readonly Job[]): Promise<void>;
}

/** Creates a recorder with its counters at zero. */
export function createRecorder(ctx: RecordContext): Recorder {
  const { outbox, emit, machine } = ctx;
  const counters: OutcomeCounters = { delivered: 0, retried: 0, dead: 0, expired: 0, failed: 0 };

  const expire = async (
    job: Job,
    at: EpochMs,
    reason: string,
    maybeApplied: boolean,
  ): Promise<JobOutcome> => {
    if (!(await outbox.fail(job, { now: at, state: 'expired', reason, maybeApplied }))) return 'lost';
    counters.expired += 1;
    counters.failed += 1;
    emit('expired', { job, reason });
    return 'expired';
  };

  const settle = async (job: Job, result: SendResult, at: EpochMs): Promise<JobOutcome> => {
    if (result.kind === 'delivered') {
      if (!(await outbox.complete(job, { now: at, campaignId: result.campaignId }))) return 'lost';
      counters.delivered += 1;
      machine.resume();
      emit('delivered', { job, campaignId: result.campaignId, at });
      return 'delivered';
    }
    if (result.kind === 'expired') {
      const when = new Date(job.deadline ?? at).toISOString();
      const last = result.lastError === null ? '' : `; last error: ${result.lastError}`;
      const reason = `deadline ${when} passed before the job could be sent${last}`;
      return expire(job, at, reason, result.maybeApplied);
    }

    const { failure } = result;
    const { maybeApplied } = failure;
    if (failure.class === 'auth' || failure.class === 'misconfigured') {
      machine.pause(failure);
      const until = machine.pausedUntil ?? at;
      const nextAttemptAt = job.deadline === null ? until : Math.min(until, job.deadline);
      const ok = await outbox.retry(job, {
        now: at,
        nextAttemptAt,
        error: failure.reason,
        countAttempt: false,
        maybeApplied,
      });
      return ok ? 'deferred' : 'lost';
    }
    machine.resume(); // any answer of the service but 401/403 proves the key and the address work again
    if (failure.class === 'window-closed') {
      return expire(job, at, `the service says the window has closed: ${failure.reason}`, maybeApplied);
    }
    if (failure.class === 'permanent') {
      const dead = { now: at, state: 'dead' as const, reason: failure.reason, maybeApplied };
      if (!(await outbox.fail(job, dead))) return 'lost';
      counters.dead += 1;
      counters.failed += 1;
      emit('dead', { job, reason: failure.reason, status: failure.status });
      return 'dead';
    }
    // A failure at (or after) the deadline was the last chance: retrying "at the deadline" would loop.
    if (job.deadline !== null && at >= job.deadline) {
      const when = new Date(job.deadline).toISOString();
      const reason = `deadline ${when} passed before the job could be sent; last error: ${failure.reason}`;
      return expire(job, at, reason, maybeApplied);
    }
    // The service's Retry-After, when it sent one (any status), else the backoff.
    const wanted = failure.retryAfterMs ?? backoffDelay(job.attempts, { ...ctx.backoff, random: ctx.random });
    const delay = Math.max(ctx.backoff.minMs, wanted);
    const nextAttemptAt = nextAttemptTime(job, at, delay);
    const retried = { now: at, nextAttemptAt, error: failure.reason, maybeApplied };
    if (!(await outbox.retry(job, retried))) return 'lost';
    counters.retried += 1;
    emit('retried', {
      job,
      reason: failure.reason,
      status: failure.status,
      nextAttemptAt,
      lastChance: nextAttemptAt === job.deadline,
    });
    return 'retried';
  };

  return {
    counters,
    settle,

    async deferPaused(job) {
      const at = ctx.now();
      const nextAttemptAt = Math.min(machine.pausedUntil ?? at, job.deadline ?? Number.POSITIVE_INFINITY);
      const ok = await outbox.retry(job, {
        now: at,
        nextAttemptAt,
        error: 'delivery paused',
        countAttempt: false,
      });
      return ok ? 'deferred' : 'lost';
    },

    async giveBackRequested(job) {
      try {
        const at = ctx.now();
        const error = 'stopped while its request was under way; it may have been applied';
        await outbox.retry(job, {
          now: at,
          nextAttemptAt: at,
          error,
          countAttempt: false,
          maybeApplied: true,
        });
      } catch (error) {
        emit('error', { error, during: 'release' });
      }
    },

    async release(jobs) {
      if (jobs.length === 0) return;
      try {
        await outbox.release(jobs, ctx.now());
      } catch (error) {
        emit('error', { error, during: 'release' });
      }
    },
  };
}
