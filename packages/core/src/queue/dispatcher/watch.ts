/**
 * The running Dispatcher's periodic look at the outbox for operators: it records this worker's presence
 * (`outbox.beat`: state, pause, version) and emits `at-risk` once for each open job whose deadline comes
 * within `DEFAULT_AT_RISK_WITHIN_MS` (24 h). One loop for both, every `watchIntervalMs`, only while the
 * Dispatcher runs; a store that keeps no heart-beats or cannot list open jobs (see `Outbox.features`) is
 * simply not asked.
 */
import type { EpochMs } from '../../policy.ts';
import { DEFAULT_AT_RISK_WITHIN_MS, type Outbox, type WorkerBeat } from '../outbox-types.ts';
import type { Emit } from './events.ts';
import type { ResolvedDispatcherOptions } from './options.ts';
import { sleep } from './wake.ts';

/** Most at-risk jobs looked at in one round (the most urgent first); the rest are warned of later. */
const AT_RISK_PAGE = 1_000;

/** What the watch needs. */
export interface WatchContext {
  outbox: Pick<Outbox, 'beat' | 'listJobs' | 'features'>;
  now: () => EpochMs;
  /** Emits `at-risk`, and `error` when the outbox fails. */
  emit: Emit;
  /** What a beat says of delivery now: the state, the pause of all delivery, the paused accounts. */
  delivery(): Pick<WorkerBeat, 'state' | 'pausedUntil' | 'pauseReason' | 'pausedAccounts'>;
  watchIntervalMs: number;
  /** How this worker names itself, as given (the rest is filled in from the runtime). */
  worker: ResolvedDispatcherOptions['worker'];
}

/** Reads the host name where the runtime lets us (Deno without `--allow-env` throws): else null. */
function runtimeHost(): string | null {
  try {
    const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
    return env?.HOSTNAME ?? null;
  } catch {
    return null;
  }
}

/** The worker's name in heart-beats: what was given, else a random id and the runtime's host and pid. */
function describeWorker(given: ResolvedDispatcherOptions['worker']) {
  const proc = (globalThis as { process?: { pid?: unknown } }).process;
  const pid = given.pid ?? (typeof proc?.pid === 'number' ? proc.pid : null);
  const host = given.host ?? runtimeHost();
  const id = given.id ?? `${host ?? 'worker'}:${pid ?? '-'}:${crypto.randomUUID().slice(0, 8)}`;
  return { id, version: given.version, host, pid };
}

/** The watch loop; see {@link createWatch}. */
export interface Watch {
  start(): void;
  /** Stops the loop and records a last beat (`stopped`); without a loop, a `paused` beat when a run ended paused. */
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
  const { outbox, emit } = ctx;
  const worker = describeWorker(ctx.worker);
  /** Jobs already warned of and still at risk: each is warned of once. */
  let warned = new Set<string>();
  let running: AbortController | null = null;
  let loop: Promise<void> | null = null;

  const beat = async (stopped?: 'stopped' | 'paused') => {
    if (outbox.features?.heartbeats !== true) return;
    const delivery = ctx.delivery();
    const record: WorkerBeat = {
      workerId: worker.id,
      at: ctx.now(),
      state: stopped ?? delivery.state,
      pausedUntil: delivery.pausedUntil,
      pauseReason: delivery.pauseReason,
      version: worker.version,
      host: worker.host,
      pid: worker.pid,
      pausedAccounts: delivery.pausedAccounts,
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
    await beat();
    await checkAtRisk();
  };

  return {
    round,
    async beatNow() {
      if (running !== null) await beat();
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
      if (running === null) {
        // No loop ran (`runOnce`, `drain`, `worker --drain`): a run that ends paused still says so in a
        // beat, so `status --fail-on-paused` sees the refused key between two cron runs.
        const delivery = ctx.delivery();
        if (delivery.pausedUntil !== null || delivery.pausedAccounts.length > 0) await beat('paused');
        return;
      }
      running.abort();
      running = null;
      await loop;
      loop = null;
      await beat('stopped');
    },
  };
}
