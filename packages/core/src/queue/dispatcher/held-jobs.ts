/**
 * The jobs this process holds the lease of, from their claim until their outcome is recorded, with the
 * chores that keep them (lease heart-beat and send-timeout sweep, `leases.ts`), and the one place their
 * fields change: the send (its requests), the heart-beat (the lease), the sweep and `stop()` each call a
 * method here instead of setting a flag of their own.
 */
import type { EpochMs } from '../../policy.ts';
import type { Job } from '../job-types.ts';
import { createLeaseKeeper, type LeaseContext } from './leases.ts';

/** How a held job ended for this process (`released`: given back by `stop()`, not counted). */
export type JobOutcome =
  | 'delivered'
  | 'retried'
  | 'held'
  | 'dead'
  | 'expired'
  | 'unmatched'
  | 'shadowed'
  | 'deferred'
  | 'lost'
  | 'released';

/** The reason a request past the send timeout is aborted with: read as a timeout. */
const sendTimedOut = () => Object.assign(new Error('send timed out'), { name: 'TimeoutError' });

/** One held job. */
export class HeldJob {
  readonly job: Job;
  #leaseUntil: EpochMs;
  #abortReason: Error | undefined;
  #request: AbortController | null = null;
  #requestStartedAt = 0;
  #sentAt: EpochMs | null = null;
  #lost = false;
  #abandoned = false;
  readonly #onRequest: () => void;

  /** A held job whose lease runs until `leaseUntil`; `onRequest` is told as each request starts. */
  constructor(job: Job, leaseUntil: EpochMs, onRequest: () => void) {
    this.job = job;
    this.#leaseUntil = leaseUntil;
    this.#onRequest = onRequest;
  }

  /** When the lease we hold runs out (as far as we know), for the heart-beat. */
  get leaseUntil(): EpochMs {
    return this.#leaseUntil;
  }
  /** Why it was aborted (`stop()`, a lost lease), once it was: no further request is made. */
  get abortReason(): Error | undefined {
    return this.#abortReason;
  }
  /** When its first request began (wall clock, for the attempt history), or null: nothing was sent. */
  get sentAt(): EpochMs | null {
    return this.#sentAt;
  }
  /** A request was begun: it may have reached the service whatever happens next. */
  get requested(): boolean {
    return this.#sentAt !== null;
  }
  /** Another worker took the lease: its outcome cannot be recorded. */
  get lost(): boolean {
    return this.#lost;
  }
  /** Given back by `stop()`: its outcome must not be recorded. */
  get abandoned(): boolean {
    return this.#abandoned;
  }

  /** A request begins at `now`: returns its signal, aborted with the job or by the send-timeout sweep. */
  startRequest(now: EpochMs): AbortSignal {
    const request = new AbortController();
    this.#request = request;
    this.#sentAt ??= now;
    this.#requestStartedAt = performance.now();
    this.#onRequest();
    return request.signal;
  }

  /** The request has ended (answered, failed or aborted). */
  endRequest(): void {
    this.#request = null;
  }

  /** Aborts the request under way, and any it would make later. */
  abort(reason: Error): void {
    this.#abortReason ??= reason;
    this.#request?.abort(reason);
  }

  /** Aborts the request under way if it has run for `timeoutMs` or longer (read as a timeout). */
  timeOut(timeoutMs: number): void {
    if (this.#request !== null && performance.now() - this.#requestStartedAt >= timeoutMs) {
      this.#request.abort(sendTimedOut());
    }
  }

  /** The lease was renewed until `until`. */
  renewed(until: EpochMs): void {
    this.#leaseUntil = until;
  }

  /** Another worker holds the lease now: the send is aborted and its outcome not recorded. */
  lose(): void {
    this.#lost = true;
    this.abort(new Error('lease lost'));
  }

  /** `stop()` gives it back: the send is aborted and its outcome not recorded. */
  abandon(): void {
    this.#abandoned = true;
    this.abort(new Error('dispatcher stopping'));
  }
}

/**
 * The jobs held, by job id (waiting for a sending slot, sending, or recording their outcome), which of
 * them are sending (what `concurrency` bounds), and the outcomes of those started.
 */
export interface HeldJobs extends Iterable<HeldJob> {
  /** Jobs held. */
  readonly size: number;
  /** Jobs sending (a job recording its outcome no longer counts). */
  readonly sending: number;
  /** Takes a claimed job (its lease renewed from now on); not yet sending. */
  hold(job: Job): HeldJob;
  /** Starts sending a held job with `deliver`; resolves with its outcome once it is recorded. */
  start(held: HeldJob, deliver: () => Promise<JobOutcome>): Promise<JobOutcome>;
  /** Its send is over (its outcome may still be recording): returns false if it was not sending. */
  sent(held: HeldJob): boolean;
  /** Lets go of a job (with none left, the chores stop). */
  drop(held: HeldJob): void;
  /** The outcomes of the held jobs started, each resolving once recorded. */
  outcomes(): Promise<JobOutcome>[];
}

/** Creates the held jobs, none (their chores are started by the first). */
export function createHeldJobs(ctx: Omit<LeaseContext, 'held'>): HeldJobs {
  const jobs = new Map<string, HeldJob>();
  const sending = new Set<HeldJob>();
  const outcomes = new Map<HeldJob, Promise<JobOutcome>>();
  const chores = createLeaseKeeper({ ...ctx, held: { [Symbol.iterator]: () => jobs.values() } });
  return {
    get size() {
      return jobs.size;
    },
    get sending() {
      return sending.size;
    },
    [Symbol.iterator]: () => jobs.values(),

    hold(job) {
      const leaseUntil = job.lease?.expiresAt ?? ctx.now() + ctx.leaseMs;
      const held = new HeldJob(job, leaseUntil, chores.startTimeoutSweep);
      jobs.set(job.id, held);
      chores.startHeartbeat();
      return held;
    },

    start(held, deliver) {
      sending.add(held);
      const done = deliver();
      // A delivery that ended at once has already let go of its job.
      if (jobs.get(held.job.id) === held) outcomes.set(held, done);
      return done;
    },

    sent: (held) => sending.delete(held),

    drop(held) {
      jobs.delete(held.job.id);
      outcomes.delete(held);
      if (jobs.size === 0) chores.stop();
    },

    outcomes: () => [...outcomes.values()],
  };
}
