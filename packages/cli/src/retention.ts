/**
 * Retention, shared by `postback prune` and the worker's scheduled prune, on core's rules and schedule
 * (`retentionRules`, `schedulePrune`, also what a Dispatcher runs on its own): old final jobs go through
 * `Outbox.prune` (which keeps every job until its deadline, and a charged confirmation until its return
 * window has closed), and clicks older than the confirmation window through the backend's
 * `ClickStore.sweep`, when it has a click store.
 */
import { type Job, MAX_LIST_JOBS_LIMIT, type Outbox } from '@postback/core';
import { type PruneSchedule, prunableAt, type RetentionRules, schedulePrune } from '@postback/core/store';
import type { OpenedBackend } from './backends/backend.ts';

/** How old a final job must be to go, and how long a charged confirmation stays for refunds (core's rules). */
export type RetentionOptions = RetentionRules;

/** The store's return window for refunds, by core's rule (one source of truth). */
export { storeReturnWindowMs } from '@postback/core/store';

/** What one prune deleted. */
export interface PruneResult {
  /** Final jobs deleted. */
  pruned: number;
  /** Clicks swept, or null when the backend keeps no clicks. */
  clicks: number | null;
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

/** A running prune schedule (core's). */
export type RetentionSchedule = PruneSchedule;

/**
 * Prunes at once, then every `everyMs`, until stopped, on core's schedule (`schedulePrune`). A failed
 * prune is reported through `onError` and tried again at the next tick; it never stops delivery.
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
  return schedulePrune({
    everyMs: setup.everyMs,
    prune: () => pruneOnce(setup.backend, setup.now(), setup.options),
    onDone: (result, durationMs) => setup.onPruned({ ...result, durationMs }),
    onError: setup.onError,
  });
}
