/**
 * Claiming ahead: a claim takes a whole batch and the sends draw from it one by one, so a steady stream
 * costs the store one claim per `batchSize` jobs, issued in the same turn (hence the same group commit) as
 * the outcomes that freed the sending slots. The jobs at hand must outlast a claim's commit (with its
 * fsync, on the SQLite outbox's thread: 4-9 ms at p50-p90 on a busy 2-core machine) while every slot keeps
 * sending, and that rate grows with `concurrency`: two batches, plus twice the sending slots. Several claims
 * may be under way, so the rate at which jobs are claimed is not one batch per claim's commit (with an
 * fsync, milliseconds: a ceiling of a few thousand jobs a second at batches of 16). Only while claims come
 * back full: once one takes less than it asked, the store had nothing more due, and claims go one at a time
 * (a Postgres claim that finds nothing still costs its backend a millisecond of CPU; issue 32).
 */
import type { Job } from '../job-types.ts';
import type { HeldJob, HeldJobs } from './held-jobs.ts';
import type { ResolvedDispatcherOptions } from './options.ts';
import { createPace } from './pace.ts';

/** What claiming ahead needs. */
export interface ClaimContext {
  /** Claims up to `limit` due jobs (the paused accounts left out, urgent deadlines first). */
  claim(limit: number): Promise<Job[]>;
  /** Gives jobs back to the outbox unsent (a claim that came back while stopping). */
  release(jobs: readonly Job[]): Promise<void>;
  /** The jobs held: claimed jobs are taken in (their leases renewed from then on), not yet sending. */
  held: Pick<HeldJobs, 'size' | 'sending' | 'hold'>;
  /** Starts sending a held job (one lost meanwhile is let go unsent); settles once its outcome is recorded. */
  begin(held: HeldJob): Promise<unknown>;
  /** `stopping`: claim nothing, start nothing; `probing`: one job at a time tests a paused key. */
  mode(): 'running' | 'probing' | 'stopping';
  /** `pace` (`pace.ts`): how many of the `concurrency` slots may send now; urgent jobs go whatever it says. */
  options: Pick<ResolvedDispatcherOptions, 'batchSize' | 'concurrency' | 'pace' | 'now'>;
  /** A claim failed (the outbox could not answer): the loop polls later. */
  onError(error: unknown): void;
  /** A claim came back (or failed): the run loop looks again. */
  onSettled(): void;
}

/** The claims of the run loop and the jobs they brought; see {@link createClaims}. */
export interface Claims {
  /** How many jobs to claim now (0: wait for a change). */
  wanted(): number;
  /** Starts a claim of `limit` jobs; they wait for a sending slot, or go straight back if we are stopping. */
  claim(limit: number): void;
  /** Starts waiting jobs while sending slots are free (one at a time while probing a paused key). */
  startWaiting(): void;
  /** Claims under way. */
  readonly underWay: number;
  /** The last claim found nothing due, or failed: the loop polls (after the claims under way) instead. */
  pollNext: boolean;

  /** Takes every job waiting for a sending slot out of the queue, and ends the pace's wait (for `stop()`). */
  takeWaiting(): HeldJob[];
  /** The claims under way, resolving when each is back (never rejecting). */
  pending(): Promise<void>[];
}

/** Creates the claim queue, empty. */
export function createClaims(ctx: ClaimContext): Claims {
  const { held } = ctx;
  const { batchSize, concurrency } = ctx.options;
  const pace = createPace({
    mode: ctx.options.pace,
    concurrency,
    now: ctx.options.now,
    onReady: () => startWaiting(),
  });
  /** Claimed jobs waiting for a sending slot, in claim order (also in `held`: their leases are renewed). */
  const waiting: HeldJob[] = [];
  /** Jobs claimed ahead of free sending slots. */
  const prefetch = 2 * (batchSize + concurrency);
  /** Jobs held at once (waiting, sending, or recording their outcome, which waits for a commit and its sync). */
  const maxHeld = 2 * (concurrency + prefetch);
  /** Jobs asked for count as held while their claim is under way. */
  const claims = new Set<Promise<void>>();
  let claimingJobs = 0;
  /**
   * The last claim to come back took fewer jobs than it asked for (or none, or failed; true before the
   * first): the store had nothing more due, so one claim at a time until a claim comes back full.
   */
  let drained = true;

  /** The next waiting job to start: the first when the pace lets it, else the first urgent one (-1: none). */
  const nextToStart = (): number =>
    pace.mayStart(held.sending) ? 0 : waiting.findIndex((job) => pace.urgent(job.job));

  const startWaiting = () => {
    for (let mode = ctx.mode(); waiting.length > 0 && mode !== 'stopping'; mode = ctx.mode()) {
      if (held.sending >= (mode === 'probing' ? 1 : concurrency)) return;
      const next = mode === 'probing' ? 0 : nextToStart();
      if (next < 0) return;
      // The first is taken with shift (no array made per job); an urgent one further on with splice.
      const job = next === 0 ? waiting.shift() : waiting.splice(next, 1)[0];
      pace.sent(ctx.begin(job as HeldJob));
    }
  };

  const claimAhead = async (limit: number): Promise<void> => {
    let jobs: Job[];
    try {
      jobs = await ctx.claim(limit);
    } catch (error) {
      ctx.onError(error);
      queue.pollNext = true;
      drained = true;
      return;
    } finally {
      claimingJobs -= limit;
    }
    drained = jobs.length < limit;
    if (ctx.mode() === 'stopping') {
      // stop() was called while we claimed: give the jobs straight back.
      await ctx.release(jobs);
      return;
    }
    pace.claimed(jobs.length);
    for (const job of jobs) waiting.push(held.hold(job));
    startWaiting();
    if (jobs.length === 0) queue.pollNext = true;
  };

  const queue: Claims = {
    pollNext: false,
    get underWay() {
      return claims.size;
    },

    wanted() {
      // While probing, one job at a time tests the key.
      if (ctx.mode() === 'probing') return held.size === 0 && claims.size === 0 ? 1 : 0;
      // Nothing more was due at the last claim: claims in parallel would find nothing either (each still
      // runs the whole claim in the store), so one at a time until one comes back full.
      if (drained && claims.size > 0) return 0;
      const room = Math.min(
        concurrency + prefetch - held.sending - waiting.length - claimingJobs,
        maxHeld - held.size - claimingJobs,
      );
      // Claim whole batches while jobs are still at hand: claiming for every freed slot would cost the
      // store one claim (a write transaction) per job.
      const empty = held.sending === 0 && waiting.length === 0 && claims.size === 0;
      if (room >= batchSize || (room > 0 && empty)) return Math.min(room, batchSize);
      return 0;
    },

    claim(limit) {
      claimingJobs += limit;
      const claim: Promise<void> = claimAhead(limit).finally(() => {
        claims.delete(claim);
        ctx.onSettled();
      });
      claims.add(claim);
    },

    startWaiting,
    takeWaiting() {
      pace.stop();
      return waiting.splice(0);
    },
    pending: () => [...claims],
  };
  return queue;
}
