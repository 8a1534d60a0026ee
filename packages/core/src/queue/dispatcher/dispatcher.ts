/**
 * The Dispatcher: the one place where delivery and retry logic lives, written against the `Outbox`
 * interface so every store gets it unchanged. It claims due jobs, sends them through the ad-service
 * client with bounded concurrency, one request per attempt, then records the outcome durably: delivered,
 * retried with deadline-capped backoff (a network blip too), dead, or expired. 401/403, 429 pause delivery.
 *
 * This file holds the public API and the run loop; each seam has its own module, given only what it
 * reads: `claims.ts` (claiming ahead, at the host's `pace.ts`), `held-jobs.ts` (held jobs; `leases.ts`:
 * heart-beat, send-timeout sweep), `deliver.ts` (one job: its turn under `rate.ts`, admitted, sent,
 * recorded), `send.ts` (its one request), `skew.ts` (clock skew in its stamps), `tracing.ts` (trace hooks),
 * `classify.ts` (what a failure means), `record.ts` (recording it), `pauses.ts` (pauses and states),
 * `watch.ts` (heart-beat, at-risk check), `wake.ts` (the loop's waits), `metrics.ts` (`metrics()`),
 * `holds.ts` (jobs held for a campaign not on s2s, released by a delivery), `shadow.ts` (shadow mode:
 * recorded, not sent).
 */
import { parseOptions } from '../../parse-options.ts';
import type { Job } from '../job-types.ts';
import { waitTimingOf } from '../wait-rule.ts';
import { createClaims } from './claims.ts';
import { createDelivery } from './deliver.ts';
import { createEmitter, type DispatcherEventName, type DispatcherEvents } from './events.ts';
import { createHeldJobs } from './held-jobs.ts';
import { createHolds } from './holds.ts';
import { type DispatcherMetrics, readMetrics } from './metrics.ts';
import { DEFAULT_STOP_TIMEOUT_MS, type DispatcherOptions, dispatcherOptionsSchema } from './options.ts';
import { createPauseDeadlines } from './pause-deadlines.ts';
import { createPauses, type DispatcherState } from './pauses.ts';
import { dispatcherPrune, type PruneSchedule } from './prune-schedule.ts';
import { createRecorder } from './record.ts';
import { createRefusals } from './refusals.ts';
import { createSender } from './send.ts';
import { createShadowGate } from './shadow.ts';
import { createSkewCheck } from './skew.ts';
import { createSwitchWatch } from './switch-watch.ts';
import { safeTracing } from './tracing.ts';
import { createWakeUps, sleep } from './wake.ts';
import { createWatch } from './watch.ts';

export type { DispatcherMetrics } from './metrics.ts';
export type { DispatcherState } from './pauses.ts';

/** What one `runOnce` or `drain` did. */
export interface RunSummary {
  claimed: number;
  delivered: number;
  retried: number;
  /** Jobs held for their campaign (not on s2s): `pending`, probed again, their attempt not counted. */
  held: number;
  dead: number;
  expired: number;
  /** Reversals the service had no conversion for (see the `unmatched` event). */
  unmatched: number;
  /** Jobs recorded in shadow mode, not sent (see the `shadowed` event). */
  shadowed: number;
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

const emptySummary = (): RunSummary => ({
  ...{ claimed: 0, delivered: 0, retried: 0, held: 0, dead: 0, expired: 0, unmatched: 0, shadowed: 0 },
  ...{ deferred: 0, lost: 0 },
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
  let lifecycle: 'idle' | 'running' | 'stopping' = 'idle';
  let unsubscribeWake: (() => void) | undefined;
  /** What every wait leaves room for before a deadline (`wait-rule.ts`). */
  const timing = waitTimingOf(o);
  const pauses = createPauses({ now, authPauseMs: o.authPauseMs, emit });
  const state = (): DispatcherState =>
    lifecycle === 'stopping' ? 'stopping' : (pauses.globalState() ?? lifecycle);
  const stopping = () => lifecycle === 'stopping';
  const waits = createWakeUps();
  const held = createHeldJobs({
    outbox,
    now,
    leaseMs: o.leaseMs,
    sendTimeoutMs: o.sendTimeoutMs,
    onError: (error) => emit('error', { error, during: 'heartbeat' }),
  });
  const recorder = createRecorder({
    outbox,
    now,
    emit,
    pauses,
    perAccountKeys: o.apiKeyFor !== undefined,
    backoff: o.backoff,
    authPauseMs: o.authPauseMs,
    timing,
    refusals: createRefusals(o.systematicRefusalAfter),
    random: o.random,
    holds: createHolds({
      outbox,
      emit,
      holdProbeMs: o.holdProbeMs,
      timing,
      onSwitch: o.onSwitch,
      switches: createSwitchWatch({ outbox, emit, onSwitch: o.onSwitch, askEveryMs: o.holdProbeMs }),
    }),
  });
  const send = createSender(o); // its client, clock, both patterns and apiKeyFor
  let pruning: PruneSchedule | null = null;
  const watch = createWatch({
    outbox,
    now,
    emit,
    watchIntervalMs: o.watchIntervalMs,
    worker: o.worker,
    delivery: () => ({
      state: state(),
      pausedUntil: pauses.global.until,
      pauseReason: pauses.global.reason,
      pausedAccounts: pauses.accounts(),
    }),
  });
  // A pause and its end are recorded at once, not at the watch's next round (every 30 s by default).
  for (const name of ['paused', 'resumed', 'account-paused', 'account-resumed'] as const)
    on(name, () => void watch.beatNow());
  /** Every claim leaves out the paused accounts (and takes urgent deadlines first). */
  const claim = (limit: number) => {
    const excludeAccounts = pauses.excluded();
    const leave = excludeAccounts.length > 0 ? { excludeAccounts } : {};
    return outbox.claim({ now: now(), limit, leaseMs: o.leaseMs, ...leave });
  };

  /** Sends a held job, then records its outcome; resolves once it is recorded. */
  const begin = createDelivery({
    held,
    pauses,
    send,
    shadow: createShadowGate({ outbox, now, emit, refreshMs: o.shadowRefreshMs }),
    recorder,
    now,
    deadlineOf: createSkewCheck({ now, emit }),
    timing,
    trace: safeTracing(o.tracing, (error) => emit('error', { error, during: 'tracing' })),
    options: o,
    onError: (error) => emit('error', { error, during: 'transition' }),
    // The freed sending slot takes the next waiting job at once; the run loop may claim more.
    onSendEnded: () => {
      claims.startWaiting();
      slotFreed();
    },
    onLetGo: () => slotFreed(),
  });

  const claims = createClaims({
    claim,
    release: recorder.release,
    held,
    begin: (job) => begin(job),
    mode: () => (stopping() ? 'stopping' : pauses.globalState() === 'probing' ? 'probing' : 'running'),
    options: o,
    onError: (error) => emit('error', { error, during: 'claim' }),
    onSettled: () => waits.wakeUp(),
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

  /** A paused scope's pause is shortened to the last chance of its most urgent pending job, new ones too. */
  const checkPauseDeadlines = createPauseDeadlines({
    outbox,
    pauses,
    timing,
    now,
    everyMs: o.pollIntervalMs,
    onError: (error) => emit('error', { error, during: 'claim' }),
  });

  const run = async () => {
    while (!stopping()) {
      if (!pauses.mayClaim()) {
        await checkPauseDeadlines();
        await waits.idle(Math.max(1, (pauses.global.until ?? now()) - now()));
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
    await checkPauseDeadlines();
    if (!pauses.mayClaim()) return summary;
    const jobs = await claim(state() === 'probing' ? 1 : o.batchSize);
    summary.claimed = jobs.length;
    // Bounded concurrency: `concurrency` workers pull from the claimed batch.
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const outcome = await begin(held.hold(jobs[next++] as Job));
        if (outcome !== 'released') summary[outcome] += 1;
      }
    };
    await Promise.all(Array.from({ length: Math.min(o.concurrency, jobs.length) }, worker));
    return summary;
  };

  const dispatcher: Dispatcher = {
    get state() {
      return state();
    },

    start() {
      if (loop !== null) return;
      lifecycle = 'running';
      const unsubscribe = o.wake?.(waits.wakeUp);
      unsubscribeWake = typeof unsubscribe === 'function' ? (unsubscribe as () => void) : undefined;
      loop = run();
      watch.start();
      pruning = dispatcherPrune(outbox, now, o.prune, (error) => emit('error', { error, during: 'prune' }));
    },

    async stop({ timeoutMs = DEFAULT_STOP_TIMEOUT_MS } = {}) {
      lifecycle = 'stopping';
      unsubscribeWake?.();
      unsubscribeWake = undefined;
      waits.wakeUp();
      // Jobs claimed but never started are given back at once.
      const unsent = claims.takeWaiting();
      for (const job of unsent) held.drop(job);
      const unsentJobs = unsent.filter((job) => !job.lost).map((job) => job.job);
      await recorder.release(unsentJobs);
      const waited = new AbortController();
      const settled = Promise.all([loop, ...claims.pending(), ...held.outcomes()]);
      await Promise.race([settled, sleep(timeoutMs, waited.signal)]);
      waited.abort();
      const remaining = [...held];
      const outcomes = held.outcomes();
      for (const job of remaining) job.abandon();
      // A job whose request was under way may have been applied: it goes back due now, marked so.
      const requested = remaining.filter((job) => job.requested);
      await recorder.release(remaining.filter((job) => !job.requested).map((job) => job.job));
      await Promise.all(requested.map((job) => recorder.giveBackRequested(job.job, job.sentAt)));
      await Promise.all([loop, ...claims.pending(), ...outcomes]);
      loop = null;
      lifecycle = 'idle';
      pauses.stopped();
      await watch.stop();
      await pruning?.stop();
      pruning = null;
      return { released: unsentJobs.length + remaining.length };
    },

    runOnce,

    async drain({ maxRounds = 1_000 } = {}) {
      const total = emptySummary();
      for (let round = 0; round < maxRounds; round++) {
        const summary = await runOnce();
        for (const key of Object.keys(total) as Array<keyof RunSummary>) total[key] += summary[key];
        if (summary.claimed === 0 || state() === 'paused') break;
      }
      return total;
    },

    wake: waits.wakeUp,
    on,

    metrics: () =>
      readMetrics(outbox, now(), () => ({
        state: state(),
        pausedUntil: pauses.global.until,
        pauseCause: pauses.global.cause,
        inflight: held.size,
        outcomes: recorder.counters,
        pauses: pauses.begun.pauses,
        pausedAccounts: pauses.accounts(),
        accountPauses: pauses.begun.accountPauses,
      })),
  };
  return dispatcher;
}
