/**
 * The two background chores of the jobs held: one heart-beat that renews their leases, and one sweep
 * that aborts the requests running past `sendTimeoutMs`. One of each for all jobs, not a timer per job;
 * both run only while something is held.
 */
import type { EpochMs } from '../../policy.ts';
import type { Job } from '../job-types.ts';
import type { Outbox } from '../outbox-types.ts';
import { sleep } from './wake.ts';

/** Longest pause between two sweeps for sends past `sendTimeoutMs` (shorter timeouts sweep 4 times as often). */
const MAX_SWEEP_MS = 1_000;

/** What the chores see of a held job (a `HeldJob`). */
export interface Leased {
  readonly job: Job;
  readonly lost: boolean;
  readonly leaseUntil: EpochMs;
  /** The lease was renewed until `until`. */
  renewed(until: EpochMs): void;
  /** Another worker took the job. */
  lose(): void;
  /** Aborts its request if it has run for `timeoutMs` or longer. */
  timeOut(timeoutMs: number): void;
}

/** What the heart-beat and the sweep need. */
export interface LeaseContext {
  /** Renews the leases (false: another worker took the job). */
  outbox: Pick<Outbox, 'extendLease'>;
  /** The jobs held now. */
  held: Iterable<Leased>;
  now: () => EpochMs;
  leaseMs: number;
  sendTimeoutMs: number;
  /** A renewal failed (the outbox could not answer): the heart-beat goes on. */
  onError(error: unknown): void;
}

/** The running chores; see {@link createLeaseKeeper}. */
export interface LeaseKeeper {
  /** A job is held: make sure the heart-beat runs. */
  startHeartbeat(): void;
  /** A request started: make sure the send-timeout sweep runs. */
  startTimeoutSweep(): void;
  /** Nothing is held any more: neither leases to renew nor sends to time out. */
  stop(): void;
}

/**
 * Creates the heart-beat and the sweep, both stopped. Every third of the lease the heart-beat renews each
 * lease with two thirds or less left; a refused renewal means another worker took the job, so its send is
 * aborted and its outcome not recorded. The sweep aborts any request under way for longer than
 * `sendTimeoutMs`, at most a quarter of it (and {@link MAX_SWEEP_MS}) late.
 */
export function createLeaseKeeper(ctx: LeaseContext): LeaseKeeper {
  const { leaseMs, held } = ctx;
  let heartbeat: AbortController | null = null;
  let sweepTimer: ReturnType<typeof setInterval> | null = null;

  const renewLeases = async () => {
    const at = ctx.now();
    const due = [...held].filter((job) => !job.lost && job.leaseUntil - at <= (leaseMs * 2) / 3);
    await Promise.all(
      due.map(async (job) => {
        try {
          if (await ctx.outbox.extendLease(job.job, { now: at, leaseMs })) job.renewed(at + leaseMs);
          else job.lose();
        } catch (error) {
          ctx.onError(error);
        }
      }),
    );
  };

  const sweepTimedOut = () => {
    for (const job of held) job.timeOut(ctx.sendTimeoutMs);
  };

  return {
    startHeartbeat() {
      if (heartbeat !== null) return;
      const controller = new AbortController();
      heartbeat = controller;
      const every = Math.max(1, Math.floor(leaseMs / 3));
      void (async () => {
        while (!controller.signal.aborted) {
          await sleep(every, controller.signal);
          if (controller.signal.aborted) return;
          await renewLeases();
        }
      })();
    },

    startTimeoutSweep() {
      if (sweepTimer !== null) return;
      const every = Math.max(1, Math.min(MAX_SWEEP_MS, Math.floor(ctx.sendTimeoutMs / 4)));
      sweepTimer = setInterval(sweepTimedOut, every);
      sweepTimer.unref?.();
    },

    stop() {
      heartbeat?.abort();
      heartbeat = null;
      if (sweepTimer !== null) clearInterval(sweepTimer);
      sweepTimer = null;
    },
  };
}
