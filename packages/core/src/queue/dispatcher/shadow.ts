/**
 * Shadow mode at delivery: before a claimed job is sent, the store's shadow settings (read again at most
 * every `shadowRefreshMs`) say whether its account is in shadow mode; if so the store records the job as it
 * would be sent (`OutboxShadow.record`, which reads the setting again in its own transaction) and nothing
 * is sent. A setting turned off meanwhile (`postback shadow end`) is seen by that transaction: the job is
 * then sent as usual, never left recorded after the decision was made.
 */
import type { EpochMs } from '../../policy.ts';
import { conversionRequestOf } from '../conversion-request.ts';
import type { Job } from '../job-types.ts';
import type { Outbox } from '../outbox-types.ts';
import { coversAccount } from '../shadow-rules.ts';
import type { ShadowSetting } from '../shadow-types.ts';
import type { Emit } from './events.ts';
import type { JobOutcome } from './held-jobs.ts';

/** What the shadow check needs. */
export interface ShadowGateContext {
  outbox: Pick<Outbox, 'shadow'>;
  now: () => EpochMs;
  emit: Emit;
  /** How long a read of the settings is trusted. */
  refreshMs: number;
}

/**
 * Records `job` instead of sending it when its account is in shadow mode: resolves `shadowed` (recorded)
 * or `lost` (its lease is gone), or null when it is to be sent; null at once when the settings read last
 * (still fresh) leave its account out, as for nearly every job.
 */
export type ShadowGate = (job: Job) => Promise<JobOutcome | null> | null;

/** Creates the shadow check of a Dispatcher; a store without shadow mode gets one that never records. */
export function createShadowGate(ctx: ShadowGateContext): ShadowGate {
  const { shadow } = ctx.outbox;
  if (shadow === undefined) return () => null;
  let settings: readonly ShadowSetting[] = [];
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<readonly ShadowSetting[]> | null = null;

  const fresh = () => ctx.now() - readAt < ctx.refreshMs;
  /** The settings, read again when older than `refreshMs` (one read at a time). */
  const current = async (): Promise<readonly ShadowSetting[]> => {
    if (fresh()) return settings;
    reading ??= shadow.settings().finally(() => {
      reading = null;
    });
    settings = await reading;
    readAt = ctx.now();
    return settings;
  };

  /** Records `job` if the settings, read again, cover its account. */
  const gate = async (job: Job): Promise<JobOutcome | null> => {
    if (!coversAccount(await current(), job.account)) return null;
    const at = ctx.now();
    const recorded = await shadow.record(job, { now: at });
    if (recorded === 'not-shadowed') return null;
    if (recorded === 'lost') return 'lost';
    ctx.emit('shadowed', { job, at, request: conversionRequestOf(job) });
    return 'shadowed';
  };

  return (job) => (fresh() && !coversAccount(settings, job.account) ? null : gate(job));
}
