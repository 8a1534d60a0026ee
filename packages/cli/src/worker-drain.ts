/**
 * `worker --drain`: batch by batch until a claim finds nothing due, delivery pauses, or a signal comes.
 * Every request is one attempt, retried with backoff (the Dispatcher retries nothing in process), so a job
 * this run retried after a network blip is due again within a second or two: the run waits for it (up to
 * {@link DRAIN_RETRY_WAIT_MS} for one retry, {@link DRAIN_RETRY_WAIT_TOTAL_MS} and
 * {@link DRAIN_RETRY_WAITS} waits in all) instead of leaving it to the next cron run. A 429's pause (its
 * `Retry-After`) is waited out too when it ends within the run's bound ({@link DRAIN_RATE_LIMIT_WAIT_TOTAL_MS}
 * in all, `--rate-limit-wait`) and no later than the nearest deadline of an open job; a longer one ends
 * the run, its jobs handed to the next run (the worker then exits 6, "rate-limited until ...").
 */
import type { RunSummary } from '@postback/core';
import type { DispatcherHandle } from './worker-factories.ts';

/**
 * Longest wait of a `--drain` run for a retry of its own that is due soon.
 * @defaultValue 5_000
 */
export const DRAIN_RETRY_WAIT_MS = 5_000;
/**
 * Longest a `--drain` run waits for its own retries in all.
 * @defaultValue 15_000
 */
export const DRAIN_RETRY_WAIT_TOTAL_MS = 15_000;

/**
 * Most waits of one `--drain` run for its own retries: a worker tuned to retry within milliseconds does
 * not hammer a failing service for the whole {@link DRAIN_RETRY_WAIT_TOTAL_MS}.
 * @defaultValue 10
 */
export const DRAIN_RETRY_WAITS = 10;

/**
 * Longest a `--drain` run waits out the pauses of 429s in all, unless `--rate-limit-wait` says otherwise
 * (a service that keeps answering 429, or asks for a longer wait, ends it then, its jobs left pending).
 * @defaultValue 300_000
 */
export const DRAIN_RATE_LIMIT_WAIT_TOTAL_MS = 300_000;

/** What a drain needs. */
export interface DrainContext {
  /** The clock the Dispatcher runs on (its `nextAttemptAt` are in it). */
  now: () => number;
  /** Resolves when a signal asks the run to stop. */
  interrupted: Promise<unknown>;
  /** Each batch as it starts (awaited before the store closes when a signal cuts it short). */
  onBatch(batch: Promise<RunSummary>): void;
  /** Each batch's summary as it ends. */
  onRound(round: RunSummary): void;
  /** When the pause of a 429 that holds delivery back ends (epoch ms, on `now`'s clock), or null: none does. */
  rateLimited?: () => Promise<number | null>;
  /** The nearest deadline of an open job (epoch ms), or null: none, or the store cannot say. */
  nearestDeadline?: () => Promise<number | null>;
  /** Longest this run waits out 429 pauses in all. @defaultValue {@link DRAIN_RATE_LIMIT_WAIT_TOTAL_MS} */
  rateLimitWaitMs?: number;
}

/**
 * Runs the batches of a `--drain` run (see the module comment).
 *
 * @example
 * ```ts
 * await drainBatches(dispatcher, { now: Date.now, interrupted, onBatch: (b) => (batch = b), onRound: (r) => add(total, r) });
 * ```
 */
export async function drainBatches(
  dispatcher: Pick<DispatcherHandle, 'runOnce' | 'paused' | 'on'>,
  ctx: DrainContext,
): Promise<void> {
  const stop = ctx.interrupted.then(() => null);
  /** When the jobs this run retried are due again (dropped once a claim has looked after that time). */
  let retries: number[] = [];
  dispatcher.on('retried', (payload) => {
    retries.push((payload as { nextAttemptAt: number }).nextAttemptAt);
  });
  let waited = 0;
  let waits = 0;
  /** When the last wait began, by the clock: a clock that does not move (a test's) is not waited on twice. */
  let waitedAt: number | undefined;
  let rateWaited = 0;
  /** Sleeps `ms`; false when a signal came first. */
  const sleep = async (ms: number): Promise<boolean> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const slept = new Promise<true>((resolve) => {
      timer = setTimeout(() => resolve(true), ms);
    });
    const woke = await Promise.race([slept, stop]);
    clearTimeout(timer);
    return woke !== null;
  };
  for (;;) {
    // A retry due by the time the claim looked was claimed (or is another worker's): only later ones wait.
    const claimedAt = ctx.now();
    const batch = dispatcher.runOnce();
    ctx.onBatch(batch);
    const round = await Promise.race([batch, stop]);
    if (round === null) return;
    ctx.onRound(round);
    if (dispatcher.paused() || round.claimed === 0) {
      const until = (await ctx.rateLimited?.()) ?? null;
      if (until !== null) {
        const limited = Math.max(1, until - ctx.now());
        const bound = ctx.rateLimitWaitMs ?? DRAIN_RATE_LIMIT_WAIT_TOTAL_MS;
        // A wait that would end after an open job's deadline is not slept through: the run ends and
        // hands the jobs on (the next run sends them when the wait ends, or at their deadline).
        const deadline = rateWaited + limited <= bound ? ((await ctx.nearestDeadline?.()) ?? null) : null;
        if (rateWaited + limited <= bound && (deadline === null || until <= deadline)) {
          rateWaited += limited;
          if (!(await sleep(limited))) return;
          continue;
        }
      }
    }
    if (dispatcher.paused()) return;
    if (round.claimed > 0) continue;
    retries = retries.filter((at) => at > claimedAt);
    const next = Math.min(...retries);
    const now = ctx.now();
    // A timer may fire a millisecond early: one more millisecond, so the retry is due when the claim looks.
    const wait = Math.max(0, next - now) + 1;
    if (!Number.isFinite(next) || now === waitedAt) return;
    if (wait > DRAIN_RETRY_WAIT_MS || waited + wait > DRAIN_RETRY_WAIT_TOTAL_MS) return;
    if (++waits > DRAIN_RETRY_WAITS) return;
    waited += wait;
    waitedAt = now;
    if (!(await sleep(wait))) return;
  }
}
