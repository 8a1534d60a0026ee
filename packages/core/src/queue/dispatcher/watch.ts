/**
 * The running Dispatcher's periodic look at the outbox for operators: it records this worker's presence
 * (`outbox.beat`: state, pause, version) and emits `at-risk` once for each open job whose deadline comes
 * within `DEFAULT_AT_RISK_WITHIN_MS` (24 h). One loop for both, every `watchIntervalMs`, only while the
 * Dispatcher runs; a store that keeps no heart-beats or cannot list open jobs (see `Outbox.features`) is
 * simply not asked.
 */
import type { EpochMs } from '../../policy.ts';
import { DEFAULT_AT_RISK_WITHIN_MS, type WorkerBeat } from '../operator-types.ts';
import type { Outbox } from '../types.ts';
import type { AccountPauses } from './account-pauses.ts';
import type { Emit } from './events.ts';
import type { DispatcherStateMachine } from './state.ts';
import { sleep } from './wake.ts';

/** Most at-risk jobs looked at in one round (the most urgent first); the rest are warned of later. */
const AT_RISK_PAGE = 1_000;

/** What the watch needs. */
export interface WatchContext {
  outbox: Outbox;
  now: () => EpochMs;
  emit: Emit;
  machine: DispatcherStateMachine;
  accounts: AccountPauses;
  watchIntervalMs: number;
  worker: { id: string; version: string; host: string | null; pid: number | null };
}

/** The watch loop; see {@link createWatch}. */
export interface Watch {
  start(): void;
  /** Stops the loop and records a last beat (`stopped`). */
  stop(): Promise<void>;
  /** One round now: a beat and the at-risk check (also what the loop runs). */
  round(): Promise<void>;
  /**
   * A beat now, if the loop runs: the Dispatcher calls it when delivery pauses or resumes, so a pause
   * shows in `status` while it lasts instead of at the next round (up to `watchIntervalMs` later).
   */
  beatNow(): Promise<void>;
}

/** Creates the watch, stopped. */
export function createWatch(ctx: WatchContext): Watch {
  const { outbox, emit, machine } = ctx;
  /** Jobs already warned of and still at risk: each is warned of once. */
  let warned = new Set<string>();
  let running: AbortController | null = null;
  let loop: Promise<void> | null = null;

  const beat = async (state: string) => {
    if (outbox.features?.heartbeats !== true) return;
    const record: WorkerBeat = {
      workerId: ctx.worker.id,
      at: ctx.now(),
      state,
      pausedUntil: machine.pausedUntil,
      pauseReason: machine.pauseReason,
      version: ctx.worker.version,
      host: ctx.worker.host,
      pid: ctx.worker.pid,
      pausedAccounts: ctx.accounts.list(),
    };
    try {
      await outbox.beat(record);
    } catch (error) {
      emit('error', { error, during: 'watch' });
    }
  };

  const checkAtRisk = async () => {
    const listable = outbox.features?.listableStates ?? [];
    if (!listable.includes('pending')) return;
    const at = ctx.now();
    try {
      const jobs = await outbox.listJobs({
        states: ['pending', 'inflight'],
        deadlineBefore: at + DEFAULT_AT_RISK_WITHIN_MS,
        limit: AT_RISK_PAGE,
      });
      const now = new Set<string>();
      for (const job of jobs) {
        now.add(job.id);
        if (warned.has(job.id) || job.deadline === null) continue;
        emit('at-risk', { job, deadline: job.deadline, inMs: job.deadline - at });
      }
      warned = now;
    } catch (error) {
      emit('error', { error, during: 'watch' });
    }
  };

  const round = async () => {
    await beat(machine.state);
    await checkAtRisk();
  };

  return {
    round,
    async beatNow() {
      if (running !== null) await beat(machine.state);
    },
    start() {
      if (running !== null) return;
      const controller = new AbortController();
      running = controller;
      loop = (async () => {
        while (!controller.signal.aborted) {
          await round();
          await sleep(ctx.watchIntervalMs, controller.signal);
        }
      })();
    },
    async stop() {
      if (running === null) return;
      running.abort();
      running = null;
      await loop;
      loop = null;
      await beat('stopped');
    },
  };
}
