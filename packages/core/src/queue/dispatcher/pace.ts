/**
 * Pace: delivery takes the host's idle time, not its pages' time. A Dispatcher running inside a shop's
 * own process (the README's one-file server) shares its event loop with the shop's pages; draining a
 * backlog at full speed takes them 40 % of their capacity. With `pace: 'adaptive'` the running loop
 * watches the host every {@link PACE_SAMPLE_MS} (`host-load.ts`: the event loop's utilization and delay)
 * and sets its pace by AIMD, the idea behind Netflix's concurrency-limits and Fastify's under-pressure:
 *
 * The load read is the others', since a drain alone can keep the loop as busy as pages do. While the
 * Dispatcher has nothing under way (`quiet-time.ts`: the gaps between its sends when it sends one at a
 * time), the loop's utilization then is the others'. Otherwise it is the share of the loop's work that
 * is not its own: its own work per unit (a send started, a job claimed, an outcome recorded) is measured
 * from the thread's CPU time over the recent samples (`own-work.ts`), since the client's and the
 * outbox's calls (the AWS SDK's, for SQS) run on the loop in callbacks it cannot time one by one; that
 * share of the loop's utilization and of its delay is the others'. CPU time, not the clock: other
 * processes holding the machine's cores stretch every callback, its own as much as the pages'.
 *
 * - busy (others' utilization ≥ {@link BUSY_UTILIZATION}, or a mean event-loop delay ≥ {@link BUSY_DELAY_MS}):
 *   the sends in flight are halved, down to 1; then the gap between two send starts (hence between claims)
 *   doubles, from {@link MIN_SEND_GAP_MS} up to {@link MAX_SEND_GAP_MS};
 * - otherwise: the gap halves away, then the limit grows back by half of `concurrency` per sample; but
 *   once a gap was needed (pages kept the loop busy even at one send), the gap holds until the loop is
 *   idle (others' utilization < {@link IDLE_UTILIZATION}, a delay under half the busy one).
 *
 * One busy sample in a drain (a GC, a neighbour's burst) so costs a halved limit for a few samples, not a
 * gap: the gap comes only once one send at a time is still too much.
 *
 * It starts as TCP does, at one send in flight, and grows from there while the host stays idle (looking
 * every {@link SLOW_START_SAMPLE_MS} until it first reaches `concurrency` or meets a busy host: at the
 * default `concurrency` of 4, full speed after 50 ms): a
 * Dispatcher started while pages are being served does not first take them a burst of sends. With a gap,
 * the next send starts a gap after the last one's outcome is recorded (so the gaps are quiet time).

 *
 * Never at the cost of a deadline: a job whose deadline is within {@link DEFAULT_URGENT_WITHIN_MS} (the
 * window in which claims take it first) is started whatever the pace, up to `concurrency`. `pace: 'off'`
 * (a dedicated worker: `postback worker`) keeps `concurrency` in flight with no gap.
 */
import type { EpochMs } from '../../policy.ts';
import { DEFAULT_URGENT_WITHIN_MS } from '../accounts.ts';
import type { Job } from '../job-types.ts';
import { type HostLoad, readHostLoad } from './host-load.ts';
import { createOwnWork } from './own-work.ts';
import { createQuietTime } from './quiet-time.ts';

const elu = (globalThis.performance as { eventLoopUtilization?: () => { active: number } } | undefined)
  ?.eventLoopUtilization;
/** The event loop's busy time so far (ms), null where the runtime cannot say. */
const loopActiveMs = (): number | null =>
  elu === undefined ? null : elu.call(globalThis.performance).active;

/** `adaptive`: sends adapt to the host's load (see the module header); `off`: always full speed. */
export type PaceMode = 'adaptive' | 'off';

/** How often the pace looks at the host's load (ms). */
export const PACE_SAMPLE_MS = 100;
/** How often the pace looks during its slow start (ms): until `concurrency` is first reached, or a busy host. */
export const SLOW_START_SAMPLE_MS = 25;
/** Event-loop utilization (0..1) over a sample from which the host counts as busy. */
export const BUSY_UTILIZATION = 0.5;
/** Event-loop utilization by others (0..1) over a sample under which the host counts as idle. */
export const IDLE_UTILIZATION = 0.35;
/** Longest a send with a gap waits for the outcome of the one before to be recorded (ms). */
export const RECORD_WAIT_MS = 1_000;
/** Mean event-loop delay over a sample (ms, beyond the timer's own interval) from which the host is busy. */
export const BUSY_DELAY_MS = 20;
/** Longest gap between two send starts while the host stays busy (ms): at least 50 sends a second. */
export const MAX_SEND_GAP_MS = 20;
/** The first gap between two send starts once the host is busy (ms); it doubles from there. */
export const MIN_SEND_GAP_MS = 5;

/** What a pace needs. */
export interface PaceContext {
  mode: PaceMode;
  /** The most sends in flight (the Dispatcher's `concurrency`). */
  concurrency: number;
  /** The Dispatcher's clock, for deadlines. */
  now: () => EpochMs;
  /** A monotonic clock for samples and gaps (ms). @defaultValue `performance.now` */
  clock?: () => number;
  /** The host's load since the previous call (a test injects its own). @defaultValue {@link readHostLoad} */
  load?: () => HostLoad;
  /**
   * The event loop's busy time so far (ms; null: unknown), for the utilization while the Dispatcher is
   * quiet (`quiet-time.ts`). @defaultValue `performance.eventLoopUtilization().active` when `load` is the
   * default, else none (a test gives its own)
   */
  activeMs?: () => number | null;
  /** A gap ended: waiting jobs may start. */
  onReady(): void;
}

/** The pace of one Dispatcher's sends; see the module header. */
export interface Pace {
  /** Whether a send may start now with `sending` in flight (counted as started when it may). */
  mayStart(sending: number): boolean;
  /** `jobs` were claimed: work of its own on the loop, as a send is (`own-work.ts`). */
  claimed(jobs: number): void;
  /** A send started, its outcome recorded when `done` settles; with a gap, the next waits for it. */
  sent(done: Promise<unknown>): void;
  /** Whether `job`'s deadline is near enough that it is sent whatever the pace. */
  urgent(job: Job): boolean;
  /** Sends allowed in flight now. */
  readonly limit: number;
  /** Gap between two send starts now (ms). */
  readonly gapMs: number;
  /** Stops the pending gap timer. */
  stop(): void;
}

/** Whether `load` says the host is busy. */
export function hostBusy(load: HostLoad): boolean {
  return (
    (load.utilization !== null && load.utilization >= BUSY_UTILIZATION) ||
    (load.delayMs !== null && load.delayMs >= BUSY_DELAY_MS)
  );
}

/** Whether `load` says the host is idle enough for more sends (see the module header). */
export function hostIdle(load: HostLoad): boolean {
  return (
    (load.utilization === null || load.utilization < IDLE_UTILIZATION) &&
    (load.delayMs === null || load.delayMs < BUSY_DELAY_MS / 2)
  );
}

/**
 * Creates the pace of a Dispatcher: one send at a time at first, full speed once the host proves idle.
 *
 * @example
 * ```ts
 * const pace = createPace({ mode: 'adaptive', concurrency: 4, now: Date.now, onReady: startWaiting });
 * if (pace.mayStart(held.sending)) begin(next);
 * ```
 */
export function createPace(ctx: PaceContext): Pace {
  const { concurrency } = ctx;
  const clock = ctx.clock ?? (() => performance.now());
  const load = ctx.load ?? readHostLoad;
  const step = Math.max(1, Math.ceil(concurrency / 2));
  let limit = ctx.mode === 'off' ? concurrency : 1;
  let gapMs = 0;
  let sampledAt: number | null = null;
  /** Until the limit first reaches `concurrency` or the host is first busy. */
  let slowStart = ctx.mode !== 'off';
  /** Sends started since the last sample. */
  let started = 0;
  /** Jobs claimed, and sends whose outcome was recorded, since the last sample. */
  let claimed = 0;
  let recorded = 0;
  let nextStartAt = Number.NEGATIVE_INFINITY;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const own = createOwnWork();
  const quiet = createQuietTime(ctx.activeMs ?? (ctx.load === undefined ? loopActiveMs : () => null), clock);

  /** One AIMD step per sample: the in-flight limit first, then the gap. */
  const sample = () => {
    const at = clock();
    if (sampledAt === null) {
      load(); // the baseline: the next sample covers the time from now
      quiet.take();
      sampledAt = at;
      return;
    }
    // Samples come sooner in the slow start: a Dispatcher alone need not send below `concurrency` long.
    if (at - sampledAt < (slowStart ? SLOW_START_SAMPLE_MS : PACE_SAMPLE_MS)) return;
    const ms = at - sampledAt;
    const units = started + claimed + recorded;
    sampledAt = at;
    started = 0;
    claimed = 0;
    recorded = 0;
    const read = load();
    // The loop's work over the sample: the thread's CPU time where the runtime gives it (other processes
    // holding the cores do not inflate it), else its busy time.
    const workMs = read.cpuMs ?? (read.utilization === null ? null : read.utilization * ms);
    if (workMs !== null) own.observe(workMs, units);
    const quietUtilization = quiet.take();
    const ownShare = workMs === null || workMs <= 0 ? 1 : Math.min(1, (units * own.msPerUnit) / workMs);
    // Measured while quiet, the loop's utilization is the others' (a loop they blocked counts in it too);
    // else the others' share of the loop's work is theirs of its utilization and of its delay.
    const others = 1 - ownShare;
    const host: HostLoad =
      quietUtilization !== null
        ? { utilization: quietUtilization, delayMs: null }
        : {
            utilization: read.utilization === null ? null : read.utilization * others,
            delayMs: read.delayMs === null ? null : read.delayMs * others,
          };
    if (hostBusy(host)) {
      slowStart = false;
      if (limit > 1) limit = Math.max(1, Math.floor(limit / 2));
      else gapMs = Math.min(MAX_SEND_GAP_MS, Math.max(MIN_SEND_GAP_MS, gapMs * 2));
    } else if (gapMs > 0 && !hostIdle(host)) {
      // Given way to pages: the gap holds until the loop is idle.
    } else if (gapMs > 0) {
      gapMs = gapMs < 2 ? 0 : Math.floor(gapMs / 2);
    } else {
      limit = Math.min(concurrency, limit + step);
      if (limit === concurrency) slowStart = false;
    }
  };

  /** When the pending timer fires. */
  let timerAt = Number.POSITIVE_INFINITY;
  const wakeAt = (at: number) => {
    if (timer !== undefined && timerAt <= at) return;
    clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(
      () => {
        timer = undefined;
        timerAt = Number.POSITIVE_INFINITY;
        ctx.onReady();
      },
      Math.max(1, Math.ceil(at - clock())),
    );
    (timer as { unref?: () => void }).unref?.();
  };

  return {
    mayStart(sending) {
      if (ctx.mode === 'off') return true;
      sample();
      if (sending >= limit) return false;
      const at = clock();
      if (at < nextStartAt) {
        wakeAt(nextStartAt);
        return false;
      }
      nextStartAt = at + gapMs;
      started += 1;
      return true;
    },
    claimed(jobs) {
      claimed += jobs;
    },
    sent(done) {
      if (ctx.mode === 'off') return;
      quiet.begin();
      // With a gap (one send at a time), the next starts a gap after this one's outcome is recorded, so
      // the gaps are quiet time (at most RECORD_WAIT_MS after its start if the record hangs).
      if (gapMs > 0) nextStartAt = Math.max(nextStartAt, clock() + gapMs + RECORD_WAIT_MS);
      const ended = () => {
        quiet.end();
        recorded += 1;
        if (nextStartAt > clock() + gapMs) {
          nextStartAt = clock() + gapMs;
          wakeAt(nextStartAt);
        }
      };
      done.then(ended, ended);
    },
    urgent: (job) => job.deadline !== null && job.deadline - ctx.now() <= DEFAULT_URGENT_WITHIN_MS,
    get limit() {
      return limit;
    },
    get gapMs() {
      return gapMs;
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
      timerAt = Number.POSITIVE_INFINITY;
    },
  };
}
