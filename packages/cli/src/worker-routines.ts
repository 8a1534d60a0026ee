/**
 * What the worker does beside delivering, on timers: a summary line at info (delivered, retried, dead and
 * expired since the last summary, the queue's depth and the jobs at risk), and retention (old final jobs
 * pruned, old clicks swept; see `retention.ts`). Both are best effort: a failure is logged at warn and
 * delivery carries on.
 */
import type { DispatcherEventName } from '@postback/core';
import { queueStats } from './at-risk.ts';
import type { OpenedBackend } from './backends/backend.ts';
import { errorFields, type Logger } from './log.ts';
import { type RetentionOptions, type RetentionSchedule, scheduleRetention } from './retention.ts';

/** The Dispatcher events a summary counts. */
const COUNTED = ['delivered', 'retried', 'dead', 'expired'] as const;

/** What the routines need. Intervals of 0 turn a routine off. */
export interface RoutinesSetup {
  backend: Pick<OpenedBackend, 'outbox' | 'clicks'>;
  dispatcher: { on(event: DispatcherEventName, listener: (payload: unknown) => void): void };
  logger: Logger;
  now: () => number;
  summaryEveryMs: number;
  pruneEveryMs: number;
  retention: RetentionOptions;
}

/** Running routines. */
export interface Routines {
  /** Clears the timers and waits for a prune or summary under way. */
  stop(): Promise<void>;
}

/**
 * Starts the summary and the retention schedule.
 *
 * @example
 * ```ts
 * const routines = startRoutines({ backend, dispatcher, logger, now: Date.now, summaryEveryMs: 60_000, pruneEveryMs: 3_600_000, retention });
 * await routines.stop();
 * ```
 */
export function startRoutines(setup: RoutinesSetup): Routines {
  const { logger } = setup;
  const counts: Record<(typeof COUNTED)[number], number> = { delivered: 0, retried: 0, dead: 0, expired: 0 };
  for (const name of COUNTED) {
    setup.dispatcher.on(name, () => {
      counts[name] += 1;
    });
  }
  let summaryTimer: ReturnType<typeof setInterval> | undefined;
  let summarizing: Promise<void> = Promise.resolve();
  if (setup.summaryEveryMs > 0) {
    summaryTimer = setInterval(() => {
      const since = { ...counts };
      for (const name of COUNTED) counts[name] = 0;
      summarizing = (async () => {
        try {
          const stats = await queueStats(setup.backend.outbox, setup.now());
          logger.log('info', 'worker.summary', {
            ...since,
            depth: stats.counts.pending + stats.counts.inflight,
            pending: stats.counts.pending,
            inflight: stats.counts.inflight,
            atRisk: stats.atRisk.count,
            periodMs: setup.summaryEveryMs,
          });
        } catch (error) {
          logger.log('warn', 'worker.summary', {
            ...since,
            periodMs: setup.summaryEveryMs,
            error: errorFields(error),
          });
        }
      })();
    }, setup.summaryEveryMs);
    summaryTimer.unref?.();
  }
  let retention: RetentionSchedule | undefined;
  if (setup.pruneEveryMs > 0 && setup.backend.outbox.features.prune) {
    retention = scheduleRetention({
      backend: setup.backend,
      now: setup.now,
      everyMs: setup.pruneEveryMs,
      options: setup.retention,
      onPruned: (result) => logger.log('info', 'worker.pruned', { ...result }),
      onError: (error) => logger.log('warn', 'worker.prune-failed', { error: errorFields(error) }),
    });
  }
  return {
    async stop() {
      clearInterval(summaryTimer);
      await Promise.all([summarizing, retention?.stop()]);
    },
  };
}
