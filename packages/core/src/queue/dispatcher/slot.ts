/**
 * A job this process holds the lease of, from its claim until its outcome is recorded: what the send,
 * the heart-beat, the send-timeout sweep, claiming ahead and `stop()` each know of it.
 */
import type { EpochMs } from '../../policy.ts';
import type { Job } from '../types.ts';

/** How a held job ended for this process (`released`: given back by `stop()`, not counted). */
export type JobOutcome = 'delivered' | 'retried' | 'dead' | 'expired' | 'deferred' | 'lost' | 'released';

/** One held job. */
export interface Slot {
  job: Job;
  /** Why the slot was aborted (`stop()`, a lost lease), once it was: no further request is made. */
  abortReason: Error | undefined;
  /** The HTTP request under way, aborted with the slot or by the send-timeout sweep. */
  request: AbortController | null;
  /** When that request started (`performance.now()`), for the send-timeout sweep. */
  requestStartedAt: number;
  /** A request of this slot was begun: it may have reached the service whatever happens next. */
  requested: boolean;
  /** When this send's first request began (wall clock, for the attempt history), or null before it. */
  sentAt: EpochMs | null;
  /** When the lease we hold runs out (as far as we know), for the heart-beat. */
  leaseUntil: EpochMs;
  /** Given back by `stop()`: its outcome must not be recorded. */
  abandoned: boolean;
  /** Another worker took the lease: its outcome cannot be recorded. */
  lost: boolean;
  /** Its HTTP send is still under way (counts against `concurrency`); false while its outcome is recorded. */
  sending: boolean;
  /** Resolves once the outcome is recorded (set when the send begins). */
  done: Promise<JobOutcome>;
}

/**
 * The jobs this process holds, shared by the loop, the heart-beat and claiming ahead: `slots` by job id
 * (sending, waiting for a sending slot, or recording their outcome), and how many of them are sending.
 */
export interface HeldJobs {
  readonly slots: Map<string, Slot>;
  /** Slots whose send is under way: what `concurrency` bounds (a slot recording its outcome no longer counts). */
  sending: number;
}

/** A slot for a job just claimed, its lease running until `leaseUntil`; not yet sending. */
export function createSlot(job: Job, leaseUntil: EpochMs): Slot {
  return {
    job,
    abortReason: undefined,
    request: null,
    requestStartedAt: 0,
    requested: false,
    sentAt: null,
    leaseUntil,
    abandoned: false,
    lost: false,
    sending: false,
    done: Promise.resolve('released'),
  };
}

/** Aborts a slot: its request under way now, and any it would make later. */
export function abortSlot(slot: Slot, reason: Error): void {
  slot.abortReason ??= reason;
  slot.request?.abort(reason);
}
