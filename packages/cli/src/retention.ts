/**
 * Retention, shared by `postback prune` and the worker's scheduled prune: old final jobs go through
 * `Outbox.prune` (which keeps every job until its deadline, and a charged confirmation until its return
 * window has closed), and clicks older than the confirmation window through the backend's
 * `ClickStore.sweep`, when it has a click store.
 */
import {
  DEFAULT_CONFIRMATION_RETENTION_MS,
  type Job,
  MAX_LIST_JOBS_LIMIT,
  type Outbox,
} from '@postback/core';
import { prunableAt } from '@postback/core/store';
import type { OpenedBackend } from './backends/backend.ts';

/** How old a final job must be to go, and how long a charged confirmation stays for refunds. */
export interface RetentionOptions {
  olderThanMs: number;
  returnWindowMs: number;
}

/** What one prune deleted. */
export interface PruneResult {
  /** Final jobs deleted. */
  pruned: number;
  /** Clicks swept, or null when the backend keeps no clicks. */
  clicks: number | null;
}

/**
 * How long the store keeps a charged confirmation for refunds: its configured return window, or, with an
 * open-ended window (core's default: `returnWindowMs: null`), its `confirmationRetentionMs`. A store that
 * does not tell its policy (only an SQLite outbox does) gets core's default, 400 days: keeping a
 * confirmation too long costs a row; pruning it too early loses a refund's campaign.
 *
 * @example
 * ```ts
 * const returnWindowMs = values['return-window'] ?? storeReturnWindowMs(backend.outbox);
 * ```
 */
export function storeReturnWindowMs(outbox: Outbox): number {
  const policy = (outbox as { policy?: { returnWindowMs?: unknown; confirmationRetentionMs?: unknown } })
    .policy;
  if (typeof policy?.returnWindowMs === 'number') return policy.returnWindowMs;
  const retention = policy?.confirmationRetentionMs;
  return typeof retention === 'number' ? retention : DEFAULT_CONFIRMATION_RETENTION_MS;
}

/**
 * Deletes old final jobs and sweeps old clicks.
 *
 * @example
 * ```ts
 * const { pruned, clicks } = await pruneOnce(backend, Date.now(), { olderThanMs: 30 * DAY_MS, returnWindowMs });
 * ```
 */
export async function pruneOnce(
  backend: Pick<OpenedBackend, 'outbox' | 'clicks'>,
  now: number,
  options: RetentionOptions,
): Promise<PruneResult> {
  const pruned = await backend.outbox.prune({ now, ...options });
  if (backend.clicks === undefined) return { pruned, clicks: null };
  const store = backend.clicks();
  try {
    return { pruned, clicks: await store.sweep(now) };
  } finally {
    await store.close();
  }
}

/**
 * The final jobs a prune at `now` would delete, by core's own rule (`prunableAt`), changing nothing.
 *
 * @example
 * ```ts
 * const jobs = await prunableJobs(outbox, Date.now(), { olderThanMs, returnWindowMs });
 * ```
 */
export async function prunableJobs(outbox: Outbox, now: number, options: RetentionOptions): Promise<Job[]> {
  const out: Job[] = [];
  for (let offset = 0; ; offset += MAX_LIST_JOBS_LIMIT) {
    const page = await outbox.listJobs({
      states: ['delivered', 'cancelled', 'expired', 'unmatched'],
      updatedBefore: now - options.olderThanMs,
      limit: MAX_LIST_JOBS_LIMIT,
      offset,
    });
    for (const job of page) {
      const at = prunableAt(job, options);
      if (at !== null && at <= now) out.push(job);
    }
    if (page.length < MAX_LIST_JOBS_LIMIT) return out;
  }
}

/** A running prune schedule. */
export interface RetentionSchedule {
  /** Stops the schedule and waits for a prune under way. */
  stop(): Promise<void>;
}

/**
 * Prunes at once, then every `everyMs`, until stopped. A failed prune is reported through `onError` and
 * tried again at the next tick; it never stops delivery.
 *
 * @example
 * ```ts
 * const schedule = scheduleRetention({ backend, now: Date.now, everyMs: 3_600_000, options, onPruned, onError });
 * await schedule.stop();
 * ```
 */
export function scheduleRetention(setup: {
  backend: Pick<OpenedBackend, 'outbox' | 'clicks'>;
  now: () => number;
  everyMs: number;
  options: RetentionOptions;
  onPruned(result: PruneResult & { durationMs: number }): void;
  onError(error: unknown): void;
}): RetentionSchedule {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = (async () => {
      const started = Date.now();
      try {
        const result = await pruneOnce(setup.backend, setup.now(), setup.options);
        setup.onPruned({ ...result, durationMs: Date.now() - started });
      } catch (error) {
        setup.onError(error);
      }
      if (!stopped) {
        timer = setTimeout(tick, setup.everyMs);
        timer.unref?.();
      }
    })();
  };
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
