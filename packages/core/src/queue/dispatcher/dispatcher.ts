/**
 * The Dispatcher: the one place where delivery and retry logic lives, written against the `Outbox`
 * interface so every store gets it unchanged. It claims due jobs, sends them through the ad-service
 * client with bounded concurrency, retries network blips in-process (p-retry), then records the outcome
 * durably: delivered, retried with deadline-capped backoff, dead, or expired. 401/403 pause all delivery.
 */
import pRetry, { AbortError } from 'p-retry';
import { parseOptions } from '../../parse-options.ts';
import type { EpochMs } from '../../policy.ts';
import { backoffDelay, nextAttemptTime } from '../backoff.ts';
import type { Job, OutboxStats, StateCounts } from '../types.ts';
import { classifyFailure, type Failure } from './classify.ts';
import { createEmitter, type DispatcherEventName, type DispatcherEvents } from './events.ts';
import { DEFAULT_STOP_TIMEOUT_MS, type DispatcherOptions, dispatcherOptionsSchema } from './options.ts';

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

/** Where the Dispatcher is: `paused` after a 401/403, `probing` while one job tests the key again. */
export type DispatcherState = 'idle' | 'running' | 'paused' | 'probing' | 'stopping';

/** A snapshot for dashboards and `postback status`. */
export interface DispatcherMetrics {
  /** Jobs by state, from `outbox.stats`. */
  depth: StateCounts;
  /** Age of the oldest pending job, or null. */
  oldestPendingAgeMs: number | null;
  /** The pending/inflight job closest to its deadline, and how long it has left (negative: passed). */
  nearestDeadline: (NonNullable<OutboxStats['nearestDeadline']> & { inMs: number }) | null;
  state: DispatcherState;
  /** End of the current auth pause, or null. */
  pausedUntil: EpochMs | null;
  /** Jobs this process holds the lease of: being sent, claimed ahead and waiting to be sent, or being recorded. */
  inflight: number;
  /** Outcomes recorded by this Dispatcher since it was created. */
  counters: {
    delivered: number;
    retried: number;
    dead: number;
    expired: number;
    failed: number;
    pauses: number;
  };
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

/** Thrown inside a send when the job's deadline has passed: it ends retrying and the job expires. */
class DeadlinePassed extends Error {
  override name = 'DeadlinePassed';
}

type SendResult =
  | { kind: 'delivered'; campaignId: string | null }
  | { kind: 'expired'; lastError: string | null; maybeApplied: boolean }
  | { kind: 'failed'; failure: Failure };
type JobOutcome = 'delivered' | 'retried' | 'dead' | 'expired' | 'deferred' | 'lost' | 'released';

interface Slot {
  job: Job;
  /** Why the slot was aborted (`stop()`, a lost lease), once it was: no further request is made. */
  abortReason: Error | undefined;
  /** The HTTP request under way, aborted with the slot or by the send-timeout sweep. */
  request: AbortController | null;
  /** When that request started (`performance.now()`), for the send-timeout sweep. */
  requestStartedAt: number;
  /** A request of this slot was begun: it may have reached the service whatever happens next. */
  requested: boolean;
  /** When the lease we hold runs out (as far as we know), for the heart-beat. */
  leaseUntil: EpochMs;
  /** Given back by `stop()`: its outcome must not be recorded. */
  abandoned: boolean;
  /** Another worker took the lease: its outcome cannot be recorded. */
  lost: boolean;
  /** Its HTTP send is still under way (counts against `concurrency`); false while its outcome is recorded. */
  sending: boolean;
  done: Promise<JobOutcome>;
}

/** Reason of internal aborts: a preallocated error, so waking a sleep does not build a DOMException. */
const WOKEN = new Error('woken');
/**
 * Longest a finished send waits for its outcome to be recorded together with others (see `nextRecording`):
 * short next to any lease, long enough to gather the responses of a busy stream into one commit.
 */
const RECORD_DELAY_MS = 5;
const SEND_TIMED_OUT = Object.assign(new Error('send timed out'), { name: 'TimeoutError' });
/** Longest pause between two sweeps for sends past `sendTimeoutMs` (shorter timeouts sweep 4 times as often). */
const MAX_SWEEP_MS = 1_000;

/** Aborts a slot: its request under way now, and any it would make later. */
function abortSlot(slot: Slot, reason: Error): void {
  slot.abortReason ??= reason;
  slot.request?.abort(reason);
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
  const { outbox, client, now, sleep } = o;
  const classifyOptions = {
    windowClosedPattern: o.windowClosedPattern,
    ...(client.redact === undefined ? {} : { redact: (text: string) => client.redact?.(text) ?? text }),
  };
  const classify = (error: unknown) => classifyFailure(error, classifyOptions);
  const { emit, on } = createEmitter();

  let state: DispatcherState = 'idle';
  // A function, not an inline comparison: `state` changes across awaits, which flow analysis cannot see.
  const stopping = () => state === 'stopping';
  let pausedAt: EpochMs | null = null;
  let pausedUntil: EpochMs | null = null;
  let loop: Promise<void> | null = null;
  let unsubscribeWake: (() => void) | undefined;
  let idleController: AbortController | null = null;
  let wakePending = false;
  const active = new Map<string, Slot>();
  /** Slots whose send is under way: what `concurrency` bounds (a slot recording its outcome no longer counts). */
  let sending = 0;
  const counters = { delivered: 0, retried: 0, dead: 0, expired: 0, failed: 0, pauses: 0 };

  let changeWaiters: Array<() => void> = [];
  const wakeUp = () => {
    wakePending = true;
    idleController?.abort(WOKEN);
    const waiters = changeWaiters;
    changeWaiters = [];
    for (const resolve of waiters) resolve();
  };

  /**
   * A send finished or a held job was let go. The run loop is woken only if that lets it claim now or it
   * sleeps between polls (a finished job may have made another due, e.g. the refund behind a confirm):
   * while it waits for room or is claiming, it looks at the room again anyway (and stop() wakes it).
   */
  const slotFreed = () => {
    if (idleController === null && wanted() <= 0) return;
    wakeUp();
  };

  /** Waits, without a timer, until a send finishes or someone calls `wake()`/`stop()`. */
  const nextChange = async () => {
    if (wakePending) {
      wakePending = false;
      return;
    }
    await new Promise<void>((resolve) => changeWaiters.push(resolve));
    wakePending = false;
  };

  /** Sleeps up to `ms`, or less when woken (a job finished, `wake()`, `stop()`). */
  const idle = async (ms: number) => {
    if (wakePending) {
      wakePending = false;
      return;
    }
    const controller = new AbortController();
    idleController = controller;
    try {
      await sleep(ms, controller.signal);
    } finally {
      if (idleController === controller) idleController = null;
      wakePending = false;
    }
  };

  const pause = (failure: Failure) => {
    const at = now();
    pausedUntil = at + o.authPauseMs;
    if (state === 'probing' || state === 'paused') {
      state = 'paused';
      return; // still the same outage: one alert per outage
    }
    if (state !== 'stopping') state = 'paused';
    pausedAt = at;
    counters.pauses += 1;
    emit('paused', { status: failure.status, reason: failure.reason, until: pausedUntil });
  };

  const resume = () => {
    if (state !== 'probing') return;
    state = loop === null ? 'idle' : 'running';
    const pausedForMs = pausedAt === null ? 0 : now() - pausedAt;
    pausedAt = null;
    pausedUntil = null;
    emit('resumed', { pausedForMs });
  };

  /** Moves a pause whose time is up to `probing`; returns whether claiming may proceed. */
  const mayClaim = (): boolean => {
    if (state === 'paused') {
      if (pausedUntil !== null && now() < pausedUntil) return false;
      state = 'probing';
    }
    return true;
  };

  const send = async (slot: Slot): Promise<SendResult> => {
    const { job } = slot;
    if (job.deadline === null) {
      return {
        kind: 'failed',
        failure: {
          class: 'transient',
          blip: false,
          status: null,
          retryAfterMs: null,
          maybeApplied: false,
          reason: 'refund is waiting for its confirmation',
        },
      };
    }
    if (job.kind === 'refund' && job.campaignId === null) {
      const reason =
        'no campaign_id is known for this reversal (the confirmation answer carried none, or was lost): ' +
        'supply it with a refund of the order that gives campaignId (postback refund --campaign)';
      return {
        kind: 'failed',
        failure: {
          class: 'permanent',
          blip: false,
          status: null,
          retryAfterMs: null,
          maybeApplied: false,
          reason,
        },
      };
    }
    const deadline = job.deadline;
    let lastError = job.lastError;
    /** Whether any request of this send may have been applied without our reading an answer. */
    let maybeApplied = false;
    const failed = (error: unknown): Failure => {
      const failure = classify(error);
      maybeApplied ||= failure.maybeApplied;
      lastError = failure.reason;
      return failure;
    };
    const attempt = async () => {
      // Checked before every HTTP request, quick retries included: nothing is sent after a deadline.
      if (now() > deadline) throw new AbortError(new DeadlinePassed());
      if (slot.abortReason !== undefined) throw new AbortError(new Error('send aborted'));
      // One controller per request: aborted with the slot (stop, lost lease) or by the send-timeout sweep.
      const request = new AbortController();
      slot.request = request;
      slot.requested = true;
      slot.requestStartedAt = performance.now();
      ensureTimeoutSweep();
      try {
        if (job.kind === 'confirm') {
          const body = {
            click_token: job.clickToken,
            order_id: job.orderId,
            value_micros: job.valueMicros,
          };
          return await client.conversions.confirm(body, { signal: request.signal });
        }
        return await client.conversions.refund(
          { campaign_id: job.campaignId as string, order_id: job.orderId },
          { signal: request.signal },
        );
      } finally {
        slot.request = null;
      }
    };
    try {
      let response: unknown;
      try {
        // The first attempt runs bare: most sends succeed, and p-retry's machinery is for the rest.
        response = await attempt();
      } catch (error) {
        if (error instanceof AbortError) throw error.originalError;
        if (!failed(error).blip || slot.abortReason !== undefined) throw error;
        // Quick retries take over with this failure as their first attempt (same delays, same checks).
        let first: unknown = error;
        response = await pRetry(
          () => {
            if (first === undefined) return attempt();
            const failed = first;
            first = undefined;
            return Promise.reject(failed);
          },
          {
            retries: o.quickRetries.retries,
            minTimeout: o.quickRetries.minTimeoutMs,
            maxTimeout: o.quickRetries.maxTimeoutMs,
            factor: 2,
            randomize: true,
            onFailedAttempt: ({ error }) => {
              if (error !== first) failed(error);
            },
            shouldRetry: ({ error }) => slot.abortReason === undefined && classify(error).blip,
          },
        );
      }
      const campaignId = (response as { campaign_id?: unknown } | null)?.campaign_id;
      return {
        kind: 'delivered',
        campaignId: job.kind === 'confirm' && typeof campaignId === 'string' ? campaignId : null,
      };
    } catch (error) {
      if (error instanceof DeadlinePassed) return { kind: 'expired', lastError, maybeApplied };
      const failure = classify(error);
      // A 2xx means applied, whatever its body: a campaign_id we could not read stays unknown.
      if (failure.class === 'applied') return { kind: 'delivered', campaignId: null };
      return { kind: 'failed', failure: { ...failure, maybeApplied: maybeApplied || failure.maybeApplied } };
    }
  };

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

  /** Records the outcome of a send durably, then tells listeners. */
  const settle = async (slot: Slot, result: SendResult, at: EpochMs): Promise<JobOutcome> => {
    const { job } = slot;
    if (result.kind === 'delivered') {
      if (!(await outbox.complete(job, { now: at, campaignId: result.campaignId }))) return 'lost';
      counters.delivered += 1;
      resume();
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
      pause(failure);
      const until = pausedUntil ?? at;
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
    resume(); // any answer of the service but 401/403 proves the key and the address work again
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
    const wanted = failure.retryAfterMs ?? backoffDelay(job.attempts, { ...o.backoff, random: o.random });
    const delay = Math.max(o.backoff.minMs, wanted);
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

  /**
   * One heart-beat for all sends in flight (not a timer per job): every third of the lease it renews each
   * lease with two thirds or less left. A refused renewal means another worker took the job: its send is
   * aborted and its outcome not recorded. Runs only while something is in flight.
   */
  let heartbeatController: AbortController | null = null;
  const renewLeases = async () => {
    const at = now();
    const due = [...active.values()].filter(
      (slot) => !slot.lost && slot.leaseUntil - at <= (o.leaseMs * 2) / 3,
    );
    await Promise.all(
      due.map(async (slot) => {
        try {
          if (await outbox.extendLease(slot.job, { now: at, leaseMs: o.leaseMs })) {
            slot.leaseUntil = at + o.leaseMs;
          } else {
            slot.lost = true;
            abortSlot(slot, new Error('lease lost'));
          }
        } catch (error) {
          emit('error', { error, during: 'heartbeat' });
        }
      }),
    );
  };
  const ensureHeartbeat = () => {
    if (heartbeatController !== null) return;
    const controller = new AbortController();
    heartbeatController = controller;
    const every = Math.max(1, Math.floor(o.leaseMs / 3));
    void (async () => {
      while (!controller.signal.aborted) {
        await sleep(every, controller.signal);
        if (controller.signal.aborted) return;
        await renewLeases();
      }
    })();
  };
  const stopHeartbeat = () => {
    heartbeatController?.abort(WOKEN);
    heartbeatController = null;
  };

  /**
   * The backstop of `sendTimeoutMs`: one sweep for all sends (not a timer per request) aborts any request
   * under way for longer, at most a quarter of the timeout (and {@link MAX_SWEEP_MS}) late. Runs only while
   * something is held.
   */
  let sweepTimer: ReturnType<typeof setInterval> | null = null;
  const sweepTimedOut = () => {
    const at = performance.now();
    for (const slot of active.values()) {
      if (slot.request !== null && at - slot.requestStartedAt >= o.sendTimeoutMs) {
        slot.request.abort(SEND_TIMED_OUT);
      }
    }
  };
  const ensureTimeoutSweep = () => {
    if (sweepTimer !== null) return;
    sweepTimer = setInterval(
      sweepTimedOut,
      Math.max(1, Math.min(MAX_SWEEP_MS, Math.floor(o.sendTimeoutMs / 4))),
    );
    sweepTimer.unref?.();
  };
  const stopTimeoutSweep = () => {
    if (sweepTimer !== null) clearInterval(sweepTimer);
    sweepTimer = null;
  };
  /** Nothing is held any more: neither leases to renew nor sends to time out. */
  const stopBackground = () => {
    stopHeartbeat();
    stopTimeoutSweep();
  };

  /**
   * Outcomes are recorded together: while the run loop runs, a finished send waits (at most
   * {@link RECORD_DELAY_MS}) until the loop claims again, no send is left in flight, or `stop()`; then every waiting outcome is handed to the
   * outbox in the same turn as that claim, so a store with group commit records a whole batch of outcomes
   * and the next claim in one transaction (one fsync) instead of one per turn in which a response arrived.
   */
  let recording: {
    promise: Promise<void>;
    release: () => void;
    timer: ReturnType<typeof setTimeout>;
  } | null = null;
  const nextRecording = (): Promise<void> => {
    // Without the run loop (`runOnce`, `drain`) no claim is coming to share a commit with: record at once.
    if (stopping() || loop === null) return Promise.resolve();
    if (recording === null) {
      let release = () => {};
      const promise = new Promise<void>((resolve) => {
        release = resolve;
      });
      const timer = setTimeout(recordOutcomes, RECORD_DELAY_MS);
      timer.unref?.();
      recording = { promise, release, timer };
    }
    return recording.promise;
  };
  /** Lets every outcome waiting in {@link nextRecording} go to the outbox now. */
  function recordOutcomes(): void {
    if (recording === null) return;
    clearTimeout(recording.timer);
    recording.release();
    recording = null;
  }

  /** Claimed jobs waiting for a sending slot, in claim order (also in `active`: their leases are renewed). */
  const waiting: Slot[] = [];

  /** Takes a claimed job into `active`; it is sent once {@link begin} is called. */
  const hold = (job: Job): Slot => {
    const slot = {
      job,
      abortReason: undefined,
      request: null,
      requestStartedAt: 0,
      requested: false,
      leaseUntil: job.lease?.expiresAt ?? now() + o.leaseMs,
      abandoned: false,
      lost: false,
      sending: false,
    } as Slot;
    active.set(job.id, slot);
    ensureHeartbeat();
    return slot;
  };

  /** Sends a held job, then records its outcome; `slot.done` resolves once it is recorded. */
  const begin = (slot: Slot): Slot => {
    const { job } = slot;
    slot.sending = true;
    sending += 1;
    const sent = () => {
      if (!slot.sending) return;
      slot.sending = false;
      sending -= 1;
      // The freed sending slot takes the next waiting job at once; the run loop may claim more, and that
      // claim releases the outcomes waiting to be recorded. With nothing left in flight, record them now.
      startWaiting();
      if (sending === 0) recordOutcomes();
      slotFreed();
    };
    slot.done = (async (): Promise<JobOutcome> => {
      try {
        if (state === 'paused') {
          // Claimed before a 401/403 paused delivery: give it back untried instead of sending into the outage.
          const nextAttemptAt = Math.min(pausedUntil ?? now(), job.deadline ?? Number.POSITIVE_INFINITY);
          const ok = await outbox.retry(job, {
            now: now(),
            nextAttemptAt,
            error: 'delivery paused',
            countAttempt: false,
          });
          return ok ? 'deferred' : 'lost';
        }
        const result = await send(slot);
        const at = now();
        sent();
        if (slot.abandoned) return 'released';
        if (slot.lost) return 'lost';
        await nextRecording();
        if (slot.lost) return 'lost';
        return await settle(slot, result, at);
      } catch (error) {
        emit('error', { error, during: 'transition' });
        return 'lost'; // the lease runs out and another claim retakes the job
      } finally {
        sent();
        active.delete(job.id);
        if (active.size === 0) stopBackground();
        slotFreed();
      }
    })();
    return slot;
  };

  const processJob = (job: Job): Slot => begin(hold(job));

  /** Starts waiting jobs while sending slots are free (one at a time while probing a paused key). */
  const startWaiting = () => {
    while (waiting.length > 0 && !stopping()) {
      if (sending >= (state === 'probing' ? 1 : o.concurrency)) return;
      const slot = waiting.shift() as Slot;
      if (slot.lost) {
        // Another worker took it while it waited: nothing was sent, nothing is recorded.
        active.delete(slot.job.id);
        if (active.size === 0) stopBackground();
        continue;
      }
      begin(slot);
    }
  };

  const tally = (summary: RunSummary, outcome: JobOutcome) => {
    if (outcome === 'released') return;
    summary[outcome] += 1;
  };

  const giveBackRequested = async (job: Job) => {
    try {
      const at = now();
      const error = 'stopped while its request was under way; it may have been applied';
      await outbox.retry(job, { now: at, nextAttemptAt: at, error, countAttempt: false, maybeApplied: true });
    } catch (error) {
      emit('error', { error, during: 'release' });
    }
  };

  const releaseQuietly = async (jobs: readonly Job[]) => {
    if (jobs.length === 0) return;
    try {
      await outbox.release(jobs, now());
    } catch (error) {
      emit('error', { error, during: 'release' });
    }
  };

  /**
   * Jobs claimed ahead of free sending slots: a claim takes a whole batch and the sends draw from it one
   * by one, so a steady stream costs the store one claim per `batchSize` jobs, issued in the same turn
   * (hence the same group commit) as the outcomes that freed the slots. The jobs at hand must outlast a
   * claim's commit (with its fsync, on the SQLite outbox's thread: 4-9 ms at p50-p90 on a busy 2-core
   * machine) while every slot keeps sending, and that rate grows with `concurrency`: two batches, plus twice
   * the sending slots. With several claims under way (see `claims`) the sends then never wait for a claim.
   */
  const prefetch = 2 * (o.batchSize + o.concurrency);
  /** Jobs held at once (waiting, sending, or recording their outcome, which waits for a commit and its sync). */
  const maxHeld = 2 * (o.concurrency + prefetch);

  /**
   * Claims under way: several may be, each of at most `batchSize` jobs, so that the rate at which jobs are
   * claimed is not one batch per claim's commit (with an fsync, milliseconds: a ceiling of a few thousand
   * jobs a second at batches of 16). Jobs asked for count as held while their claim is under way.
   */
  const claims = new Set<Promise<void>>();
  let claimingJobs = 0;
  /** The last claim found nothing due, or failed: poll (after the claims under way) instead of claiming again. */
  let pollNext = false;

  /** How many jobs to claim now (0: wait for a change). */
  const wanted = (): number => {
    // While probing, one job at a time tests the key.
    if (state === 'probing') return active.size === 0 && claims.size === 0 ? 1 : 0;
    const room = Math.min(
      o.concurrency + prefetch - sending - waiting.length - claimingJobs,
      maxHeld - active.size - claimingJobs,
    );
    // Claim whole batches while jobs are still at hand: claiming for every freed slot would cost the store
    // one claim (a write transaction) per job.
    const empty = sending === 0 && waiting.length === 0 && claims.size === 0;
    if (room >= o.batchSize || (room > 0 && empty)) return Math.min(room, o.batchSize);
    return 0;
  };

  /** One claim of the run loop: its jobs wait for a sending slot, or go straight back if we are stopping. */
  const claimAhead = async (limit: number): Promise<void> => {
    let jobs: Job[];
    try {
      jobs = await outbox.claim({ now: now(), limit, leaseMs: o.leaseMs });
    } catch (error) {
      emit('error', { error, during: 'claim' });
      pollNext = true;
      return;
    } finally {
      claimingJobs -= limit;
    }
    if (stopping()) {
      // stop() was called while we claimed: give the jobs straight back.
      await releaseQuietly(jobs);
      return;
    }
    for (const job of jobs) waiting.push(hold(job));
    startWaiting();
    if (jobs.length === 0) pollNext = true;
  };

  const run = async () => {
    while (!stopping()) {
      if (!mayClaim()) {
        await idle(Math.max(1, (pausedUntil ?? now()) - now()));
        continue;
      }
      if (pollNext) {
        // Nothing was due (or the store failed): once the claims under way are back, sleep until the next poll.
        if (claims.size > 0) {
          await nextChange();
          continue;
        }
        pollNext = false;
        await idle(o.pollIntervalMs);
        continue;
      }
      const limit = wanted();
      if (limit <= 0) {
        await nextChange();
        continue;
      }
      // The outcomes waiting to be recorded reach the outbox in this turn too: one commit for all.
      recordOutcomes();
      claimingJobs += limit;
      const claim: Promise<void> = claimAhead(limit).finally(() => {
        claims.delete(claim);
        wakeUp();
      });
      claims.add(claim);
    }
  };

  const runOnce = async (): Promise<RunSummary> => {
    const summary = emptySummary();
    if (!mayClaim()) return summary;
    const limit = state === 'probing' ? 1 : o.batchSize;
    const jobs = await outbox.claim({ now: now(), limit, leaseMs: o.leaseMs });
    summary.claimed = jobs.length;
    // Bounded concurrency: `concurrency` workers pull from the claimed batch.
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const job = jobs[next++] as Job;
        tally(summary, await processJob(job).done);
      }
    };
    await Promise.all(Array.from({ length: Math.min(o.concurrency, jobs.length) }, worker));
    return summary;
  };

  const dispatcher: Dispatcher = {
    get state() {
      return state;
    },

    start() {
      if (loop !== null) return;
      if (state === 'idle') state = 'running';
      const unsubscribe = o.wake?.(wakeUp);
      unsubscribeWake = typeof unsubscribe === 'function' ? (unsubscribe as () => void) : undefined;
      loop = run();
    },

    async stop({ timeoutMs = DEFAULT_STOP_TIMEOUT_MS } = {}) {
      const previous = state;
      state = 'stopping';
      recordOutcomes();
      unsubscribeWake?.();
      unsubscribeWake = undefined;
      wakeUp();
      // Jobs claimed but never started are given back at once.
      const unsent = waiting.splice(0);
      for (const slot of unsent) active.delete(slot.job.id);
      if (active.size === 0) stopBackground();
      const unsentJobs = unsent.filter((slot) => !slot.lost).map((slot) => slot.job);
      await releaseQuietly(unsentJobs);
      const waited = new AbortController();
      const settled = Promise.all([loop, ...claims, ...[...active.values()].map((slot) => slot.done)]);
      await Promise.race([settled, sleep(timeoutMs, waited.signal)]);
      waited.abort(WOKEN);
      const remaining = [...active.values()];
      for (const slot of remaining) {
        slot.abandoned = true;
        abortSlot(slot, new Error('dispatcher stopping'));
      }
      // A job whose request was under way may have been applied: it goes back due now, marked so.
      const requested = remaining.filter((slot) => slot.requested);
      await releaseQuietly(remaining.filter((slot) => !slot.requested).map((slot) => slot.job));
      await Promise.all(requested.map((slot) => giveBackRequested(slot.job)));
      await Promise.all([loop, ...claims, ...remaining.map((slot) => slot.done)]);
      loop = null;
      state = previous === 'paused' || previous === 'probing' ? 'paused' : 'idle';
      return { released: unsentJobs.length + remaining.length };
    },

    runOnce,

    async drain({ maxRounds = 1_000 } = {}) {
      const total = emptySummary();
      for (let round = 0; round < maxRounds; round++) {
        const summary = await runOnce();
        for (const key of Object.keys(total) as Array<keyof RunSummary>) total[key] += summary[key];
        if (summary.claimed === 0 || state === 'paused') break;
      }
      return total;
    },

    wake: wakeUp,
    on,

    async metrics() {
      const at = now();
      const stats = await outbox.stats(at);
      return {
        depth: stats.counts,
        oldestPendingAgeMs: stats.oldestPendingAt === null ? null : at - stats.oldestPendingAt,
        nearestDeadline:
          stats.nearestDeadline === null
            ? null
            : { ...stats.nearestDeadline, inMs: stats.nearestDeadline.deadline - at },
        state,
        pausedUntil,
        inflight: active.size,
        counters: { ...counters },
      };
    },
  };
  return dispatcher;
}
