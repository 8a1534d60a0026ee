/**
 * Retention, one place for every host: the rules of how long final jobs and charged confirmations stay
 * (`retentionRules`), and a schedule that prunes at once and then every interval until stopped
 * (`schedulePrune`). A Dispatcher runs one on its outbox by default (the `prune` option), so a shop that
 * never runs the CLI does not grow its outbox forever; the CLI worker and `postback prune` use the same
 * rules (and sweep clicks too). The ledger is never pruned here beyond its own retention.
 */
import { DAY_MS, DEFAULT_CONFIRMATION_RETENTION_MS, type EpochMs } from '../../policy.ts';
import type { Outbox } from '../outbox-types.ts';

/**
 * How old a final job must be before the scheduled prune deletes it.
 * @defaultValue 30 days
 */
export const DEFAULT_PRUNE_OLDER_THAN_MS: number = 30 * DAY_MS;

/**
 * How often a Dispatcher prunes its outbox.
 * @defaultValue 1 hour
 */
export const DEFAULT_PRUNE_EVERY_MS = 3_600_000;

/** How old a final job must be to go, and how long a charged confirmation stays for refunds. */
export interface RetentionRules {
  olderThanMs: number;
  returnWindowMs: number;
}

/**
 * How long the store keeps a charged confirmation for refunds: its configured return window, or, with an
 * open-ended window, its `confirmationRetentionMs`. A store that does not tell its policy gets core's
 * default, 400 days: keeping a confirmation too long costs a row; pruning it too early loses a refund's
 * campaign.
 *
 * @example
 * ```ts
 * const returnWindowMs = flags.returnWindow ?? storeReturnWindowMs(outbox);
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
 * The retention rules of `outbox`: final jobs older than `olderThanMs` (default 30 days) go, a charged
 * confirmation stays for the store's return window.
 *
 * @example
 * ```ts
 * await outbox.prune({ now: Date.now(), ...retentionRules(outbox) });
 * ```
 */
export function retentionRules(
  outbox: Outbox,
  olderThanMs: number = DEFAULT_PRUNE_OLDER_THAN_MS,
): RetentionRules {
  return { olderThanMs, returnWindowMs: storeReturnWindowMs(outbox) };
}

/** A running prune schedule. */
export interface PruneSchedule {
  /** Stops the schedule and waits for a prune under way. */
  stop(): Promise<void>;
}

/**
 * Runs `prune` at once, then every `everyMs`, until stopped. A failed prune goes to `onError` and is tried
 * again at the next tick; it never stops delivery. The timer does not keep the process alive.
 *
 * @example
 * ```ts
 * const schedule = schedulePrune({ everyMs: 3_600_000, prune: () => outbox.prune({ now: Date.now(), ...rules }), onDone() {}, onError: console.error });
 * await schedule.stop();
 * ```
 */
export function schedulePrune<R>(setup: {
  everyMs: number;
  prune: () => Promise<R>;
  onDone(result: R, durationMs: number): void;
  onError(error: unknown): void;
}): PruneSchedule {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = (async () => {
      const started = Date.now();
      try {
        const result = await setup.prune();
        setup.onDone(result, Date.now() - started);
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

/**
 * The Dispatcher's own prune of its outbox on `now`'s clock, or null when turned off (`prune: false`)
 * or the store prunes nothing (`features.prune` false: SQS).
 *
 * @example
 * ```ts
 * const schedule = dispatcherPrune(outbox, now, options.prune, (error) => emit('error', { error, during: 'prune' }));
 * ```
 */
export function dispatcherPrune(
  outbox: Outbox,
  now: () => EpochMs,
  option: false | { everyMs: number; olderThanMs: number },
  onError: (error: unknown) => void,
): PruneSchedule | null {
  if (option === false || !outbox.features.prune) return null;
  const rules = retentionRules(outbox, option.olderThanMs);
  return schedulePrune({
    everyMs: option.everyMs,
    prune: () => outbox.prune({ now: now(), ...rules }),
    onDone: () => {},
    onError,
  });
}
