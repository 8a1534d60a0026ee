/**
 * The Dispatcher: the one place where delivery and retry logic lives, written against the `Outbox`
 * interface so every store gets it unchanged. It claims due jobs, sends them through the ad-service
 * client with bounded concurrency, retries network blips in-process (p-retry), then records the outcome
 * durably: delivered, retried with deadline-capped backoff, dead, or expired. 401/403 pause all delivery.
 *
 * This file holds the public API and the run loop; each seam has its own module: `send.ts` (one request
 * with its quick retries), `classify.ts` (what a failure means), `record.ts` (recording the outcome),
 * `state.ts` (the state and the auth pause), `leases.ts` (heart-beat and send-timeout sweep), `claims.ts`
 * (claiming ahead), `wake.ts` (the loop's waits), `metrics.ts` (the snapshot of `metrics()`).
 */
import { parseOptions } from '../../parse-options.ts';
import type { ClaimOptions, Job } from '../types.ts';
import { createAccountPauses } from './account-pauses.ts';
import { createClaims } from './claims.ts';
import { createEmitter, type DispatcherEventName, type DispatcherEvents } from './events.ts';
import { createLeaseKeeper } from './leases.ts';
import { type DispatcherMetrics, readMetrics } from './metrics.ts';
import {
  DEFAULT_STOP_TIMEOUT_MS,
  type DispatcherOptions,
  dispatcherOptionsSchema,
  type ResolvedDispatcherOptions,
} from './options.ts';
import { createRecorder } from './record.ts';
import { createSender } from './send.ts';
import { abortSlot, createSlot, type HeldJobs, type JobOutcome, type Slot } from './slot.ts';
import { createStateMachine, type DispatcherState } from './state.ts';
import { createWakeUps, sleep } from './wake.ts';
import { createWatch } from './watch.ts';

export type { DispatcherMetrics } from './metrics.ts';
export type { DispatcherState } from './state.ts';

/** What one `runOnce` or `drain` did. */
export interface RunSummary {
  claimed: number;
  delivered: number;
  retried: number;
  dead: number;
  expired: number;
  /** Jobs given back because delivery is paused (401/403); their attempt was not counted. */
  deferred: number;
  /** Jobs whose lease was lost to another worker (their outcome was not recorded by us). */
  lost: number;
}

/** A running delivery loop. See {@link createDispatcher}. */
export interface Dispatcher {
  /** Starts claiming and sending in the background. Calling it twice does nothing. */
  start(): void;
  /**
   * Stops claiming, `release`s at once the jobs claimed ahead but not yet sent, waits up to `timeoutMs`
   * for in-flight sends (and records their outcomes), then aborts the rest and `release`s their jobs so
   * nothing is left inflight. Resolves with how many jobs were released.
   */
  stop(options?: { timeoutMs?: number }): Promise<{ released: number }>;
  /** Claims one batch and delivers it (for scripts and tests). */
  runOnce(): Promise<RunSummary>;
  /** Runs batches until nothing is due now (or delivery is paused), at most `maxRounds`. */
  drain(options?: { maxRounds?: number }): Promise<RunSummary>;
  /** Cuts the current poll short (e.g. right after an enqueue). */
  wake(): void;
  /** Subscribes to an event; returns the unsubscribe function. */
  on<K extends DispatcherEventName>(name: K, listener: (payload: DispatcherEvents[K]) => void): () => void;
  /** Queue depth and delivery counters. */
  metrics(): Promise<DispatcherMetrics>;
  /** The current state. */
  readonly state: DispatcherState;
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

const emptySummary = (): RunSummary => ({
  claimed: 0,
  delivered: 0,
  retried: 0,
  dead: 0,
  expired: 0,
  deferred: 0,
  lost: 0,
});

/**
 * Creates a Dispatcher. Options are validated at once (an `OptionsError` names a bad or unknown one).
 *
 * @example
 * ```ts
 * import { createClient } from '@postback/client';
 * const dispatcher = createDispatcher({ outbox, client: createClient({ apiKey: process.env.AD_API_KEY! }) });
 * dispatcher.on('paused', ({ reason }) => alert(`postbacks paused: ${reason}`));
 * dispatcher.start();
 * process.on('SIGTERM', () => dispatcher.stop({ timeoutMs: 10_000 }));
 * ```
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const o = parseOptions(dispatcherOptionsSchema, options);
  const { outbox, now } = o;
  const { emit, on } = createEmitter();

  let loop: Promise<void> | null = null;
  let unsubscribeWake: (() => void) | undefined;
  const machine = createStateMachine({ now, authPauseMs: o.authPauseMs, emit, looping: () => loop !== null });
  const accounts = createAccountPauses({ now, authPauseMs: o.authPauseMs, emit });
  /** Every claim leaves out the paused accounts (and takes urgent deadlines first). */
  const claimOptions = (limit: number): ClaimOptions => {
    const excludeAccounts = accounts.excluded();
    return {
      now: now(),
      limit,
      leaseMs: o.leaseMs,
      ...(excludeAccounts.length > 0 ? { excludeAccounts } : {}),
    };
  };
  const held: HeldJobs = { slots: new Map(), sending: 0 };
  const waits = createWakeUps();
  const leases = createLeaseKeeper({ ...o, emit, held });
  const recorder = createRecorder({
    ...o,
    emit,
    machine,
    accounts,
    perAccountKeys: o.apiKeyFor !== undefined,
  });
  const send = createSender({ ...o, apiKeyFor: o.apiKeyFor, onRequest: leases.startTimeoutSweep });
  const watch = createWatch({ ...o, emit, machine, accounts, worker: describeWorker(o.worker) });
  // A pause and its end are recorded at once, not at the watch's next round (every 30 s by default).
  on('paused', () => void watch.beatNow());
  on('resumed', () => void watch.beatNow());
  on('account-paused', () => void watch.beatNow());
  on('account-resumed', () => void watch.beatNow());

  /** Lets go of a held job; with nothing held, the heart-beat and the sweep stop. */
  const drop = (slot: Slot) => {
    held.slots.delete(slot.job.id);
    if (held.slots.size === 0) leases.stop();
  };

  /** Takes a claimed job into `held`; it is sent once {@link begin} is called. */
  const hold = (job: Job): Slot => {
    const slot = createSlot(job, job.lease?.expiresAt ?? now() + o.leaseMs);
    held.slots.set(job.id, slot);
    leases.startHeartbeat();
    return slot;
  };

  /** Sends a held job, then records its outcome; `slot.done` resolves once it is recorded. */
  const begin = (slot: Slot): Slot => {
    const { job } = slot;
    slot.sending = true;
    held.sending += 1;
    const sent = () => {
      if (!slot.sending) return;
      slot.sending = false;
      held.sending -= 1;
      // The freed sending slot takes the next waiting job at once; the run loop may claim more.
      claims.startWaiting();
      slotFreed();
    };
    let probe = false;
    slot.done = (async (): Promise<JobOutcome> => {
      try {
        // Claimed before a 401/403 paused delivery: give it back untried instead of sending into the outage.
        if (machine.state === 'paused') return await recorder.deferPaused(job);
        // The same for a paused account; the first job of an account whose pause is up probes its key.
        const admitted = accounts.admit(job.account);
        if (admitted === 'defer') return await recorder.deferAccount(job);
        probe = admitted === 'probe';
        const result = await send(slot);
        const at = now();
        sent();
        if (slot.abandoned) return 'released';
        if (slot.lost) return 'lost';
        return await recorder.settle(job, result, at);
      } catch (error) {
        emit('error', { error, during: 'transition' });
        return 'lost'; // the lease runs out and another claim retakes the job
      } finally {
        if (probe) accounts.probeEnded(job.account);
        sent();
        drop(slot);
        slotFreed();
      }
    })();
    return slot;
  };

  const claims = createClaims({
    ...o,
    emit,
    held,
    machine,
    claimOptions,
    hold,
    begin,
    drop,
    release: recorder.release,
    wakeUp: waits.wakeUp,
  });

  /**
   * A send finished or a held job was let go. The run loop is woken only if that lets it claim now or it
   * sleeps between polls (a finished job may have made another due, e.g. the refund behind a confirm):
   * while it waits for room or is claiming, it looks at the room again anyway (and stop() wakes it).
   */
  const slotFreed = () => {
    if (!waits.idling && claims.wanted() <= 0) return;
    waits.wakeUp();
  };

  const run = async () => {
    while (!machine.stopping()) {
      if (!machine.mayClaim()) {
        await waits.idle(Math.max(1, (machine.pausedUntil ?? now()) - now()));
        continue;
      }
      if (claims.pollNext) {
        // Nothing was due (or the store failed): once the claims under way are back, sleep until the next poll.
        if (claims.underWay > 0) {
          await waits.nextChange();
          continue;
        }
        claims.pollNext = false;
        await waits.idle(o.pollIntervalMs);
        continue;
      }
      const limit = claims.wanted();
      if (limit <= 0) {
        await waits.nextChange();
        continue;
      }
      claims.claim(limit);
    }
  };

  const runOnce = async (): Promise<RunSummary> => {
    const summary = emptySummary();
    if (!machine.mayClaim()) return summary;
    const limit = machine.state === 'probing' ? 1 : o.batchSize;
    const jobs = await outbox.claim(claimOptions(limit));
    summary.claimed = jobs.length;
    // Bounded concurrency: `concurrency` workers pull from the claimed batch.
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const outcome = await begin(hold(jobs[next++] as Job)).done;
        if (outcome !== 'released') summary[outcome] += 1;
      }
    };
    await Promise.all(Array.from({ length: Math.min(o.concurrency, jobs.length) }, worker));
    return summary;
  };

  const dispatcher: Dispatcher = {
    get state() {
      return machine.state;
    },

    start() {
      if (loop !== null) return;
      if (machine.state === 'idle') machine.state = 'running';
      const unsubscribe = o.wake?.(waits.wakeUp);
      unsubscribeWake = typeof unsubscribe === 'function' ? (unsubscribe as () => void) : undefined;
      loop = run();
      watch.start();
    },

    async stop({ timeoutMs = DEFAULT_STOP_TIMEOUT_MS } = {}) {
      const previous = machine.state;
      machine.state = 'stopping';
      unsubscribeWake?.();
      unsubscribeWake = undefined;
      waits.wakeUp();
      // Jobs claimed but never started are given back at once.
      const unsent = claims.takeWaiting();
      for (const slot of unsent) drop(slot);
      const unsentJobs = unsent.filter((slot) => !slot.lost).map((slot) => slot.job);
      await recorder.release(unsentJobs);
      const waited = new AbortController();
      const settled = Promise.all([
        loop,
        ...claims.pending(),
        ...[...held.slots.values()].map((slot) => slot.done),
      ]);
      await Promise.race([settled, sleep(timeoutMs, waited.signal)]);
      waited.abort();
      const remaining = [...held.slots.values()];
      for (const slot of remaining) {
        slot.abandoned = true;
        abortSlot(slot, new Error('dispatcher stopping'));
      }
      // A job whose request was under way may have been applied: it goes back due now, marked so.
      const requested = remaining.filter((slot) => slot.requested);
      await recorder.release(remaining.filter((slot) => !slot.requested).map((slot) => slot.job));
      await Promise.all(requested.map((slot) => recorder.giveBackRequested(slot.job, slot.sentAt)));
      await Promise.all([loop, ...claims.pending(), ...remaining.map((slot) => slot.done)]);
      loop = null;
      machine.state = previous === 'paused' || previous === 'probing' ? 'paused' : 'idle';
      await watch.stop();
      return { released: unsentJobs.length + remaining.length };
    },

    runOnce,

    async drain({ maxRounds = 1_000 } = {}) {
      const total = emptySummary();
      for (let round = 0; round < maxRounds; round++) {
        const summary = await runOnce();
        for (const key of Object.keys(total) as Array<keyof RunSummary>) total[key] += summary[key];
        if (summary.claimed === 0 || machine.state === 'paused') break;
      }
      return total;
    },

    wake: waits.wakeUp,
    on,

    metrics: () =>
      readMetrics(outbox, now(), () => ({
        state: machine.state,
        pausedUntil: machine.pausedUntil,
        inflight: held.slots.size,
        outcomes: recorder.counters,
        pauses: machine.pauses,
        pausedAccounts: accounts.list(),
        accountPauses: accounts.pauses,
      })),
  };
  return dispatcher;
}
