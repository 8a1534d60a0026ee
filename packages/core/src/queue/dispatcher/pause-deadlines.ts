/**
 * A pause never outlives the jobs it holds back, including those that arrive while it lasts: claims leave a
 * paused scope out, so a job enqueued meanwhile with a nearer deadline (an order placed days after its
 * click) is seen by no claim. At most once per `pollIntervalMs` while a scope is paused, its most urgent
 * pending job is asked of the outbox (`listJobs`, nearest deadline first) and the pause is shortened to
 * that job's last chance (`wait-rule.ts`), so one probe goes before it.
 */
import type { EpochMs } from '../../policy.ts';
import type { Outbox } from '../outbox-types.ts';
import { earliestProbeBy, type WaitTiming } from '../wait-rule.ts';
import { ALL_ACCOUNTS, type PauseTable } from './pauses.ts';

/** What the check needs. */
export interface PauseDeadlinesContext {
  outbox: Pick<Outbox, 'listJobs' | 'features'>;
  pauses: Pick<PauseTable, 'held' | 'shorten'>;
  timing: WaitTiming;
  now: () => EpochMs;
  /** How often at most the outbox is asked (the Dispatcher's `pollIntervalMs`). */
  everyMs: number;
  onError(error: unknown): void;
}

/**
 * Creates the check: call it before each claim; it does nothing while no scope is paused, and asks the
 * outbox at most once per `everyMs` while one is. A store that cannot list pending jobs (SQS) is not asked:
 * there the jobs a pause sees (the one that met it, those claimed meanwhile) set its end.
 *
 * @example
 * ```ts
 * const check = createPauseDeadlines({ outbox, pauses, timing, now, everyMs: 1_000, onError });
 * await check();
 * ```
 */
export function createPauseDeadlines(ctx: PauseDeadlinesContext): () => Promise<void> {
  let askedAt = Number.NEGATIVE_INFINITY;
  return async () => {
    const scopes = ctx.pauses.held();
    if (scopes.length === 0) return;
    const at = ctx.now();
    if (at - askedAt < ctx.everyMs) return;
    askedAt = at;
    if (!(ctx.outbox.features?.listableStates ?? []).includes('pending')) return;
    for (const scope of scopes) {
      try {
        const filter = scope === ALL_ACCOUNTS ? {} : { account: scope };
        const urgent = await ctx.outbox.listJobs({ states: ['pending'], limit: 1, ...filter });
        const probeBy = earliestProbeBy(urgent, ctx.timing, at);
        if (probeBy !== null) ctx.pauses.shorten(scope, probeBy);
      } catch (error) {
        ctx.onError(error);
      }
    }
  };
}
