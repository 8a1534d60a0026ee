/**
 * Shadow mode of the memory outbox (`OutboxShadow`): the settings and spend readings in maps, and the
 * recording and ending of jobs by core's `shadow-rules.ts`, applied to the outbox's own jobs through the
 * few hooks it hands over. Written to be read, like the memory outbox itself.
 */
import type { EpochMs } from '../policy.ts';
import { checkEpoch } from './call-checks.ts';
import type { Job } from './job-types.ts';
import {
  checkShadowEnd,
  checkShadowRecord,
  checkShadowScope,
  checkSpendReading,
  coversAccount,
  decideAtShadowEnd,
  decidedAtEnd,
  endShadowJob,
  isShadowable,
  shadowRecordJob,
  shadowScopeKey,
  shadowSettingOf,
} from './shadow-rules.ts';
import type { OutboxShadow, ShadowDecided, ShadowSetting, SpendReading } from './shadow-types.ts';

/** What the memory outbox hands its shadow mode. */
export interface MemoryShadowHooks {
  assertOpen(): void;
  /** Every job, in creation order. */
  jobs(): Iterable<Job>;
  /** Applies a fenced transition (false: `claimed` lost its lease). */
  transition(claimed: Job, apply: (stored: Job) => Job): boolean;
  /** The stored job, unfenced; the order's refund follows a confirm that changed. */
  update(job: Job): void;
  /** Whether the order of `job` has a refund job. */
  hasRefund(job: Job): boolean;
}

/** Creates the shadow mode of a memory outbox. */
export function createMemoryShadow(hooks: MemoryShadowHooks): OutboxShadow {
  const settings = new Map<string, ShadowSetting>();
  const readings: SpendReading[] = [];
  const copy = (setting: ShadowSetting): ShadowSetting => ({ ...setting });

  return {
    async start(scope, now) {
      hooks.assertOpen();
      const checked = checkShadowScope(scope);
      const key = shadowScopeKey(checked);
      const setting = settings.get(key) ?? shadowSettingOf(checked, now);
      settings.set(key, setting);
      return copy(setting);
    },

    async settings() {
      hooks.assertOpen();
      return [...settings.values()].sort((a, b) => a.since - b.since).map(copy);
    },

    async record(job, options) {
      hooks.assertOpen();
      const { job: claimed, now } = checkShadowRecord(job, options);
      if (!coversAccount([...settings.values()], claimed.account) || !isShadowable(claimed, now))
        return 'not-shadowed';
      return hooks.transition(claimed, (stored) => shadowRecordJob(stored, now)) ? 'recorded' : 'lost';
    },

    async end(scope, options) {
      hooks.assertOpen();
      const { scope: checked, now, sendCreatedFrom } = checkShadowEnd(scope, options);
      const ended = settings.delete(shadowScopeKey(checked));
      const remaining = [...settings.values()];
      const decided: ShadowDecided[] = [];
      for (const job of [...hooks.jobs()]) {
        if (!decidedAtEnd(job, remaining)) continue;
        const decision = decideAtShadowEnd(job, { sendCreatedFrom });
        const next = endShadowJob(job, decision, {
          now,
          orderHasRefund: hooks.hasRefund(job),
          sendCreatedFrom,
        });
        hooks.update(next);
        decided.push({ decision, job: { ...next } });
      }
      return { ended, decided };
    },

    async noteSpend(reading) {
      hooks.assertOpen();
      const checked = checkSpendReading(reading);
      readings.push({ ...checked, campaigns: checked.campaigns.map((c) => ({ ...c })) });
      readings.sort((a, b) => a.at - b.at);
    },

    async spend(options: { since: EpochMs }) {
      hooks.assertOpen();
      const since = checkEpoch(options?.since, 'since');
      return readings
        .filter((reading) => reading.at >= since)
        .map((reading) => ({ ...reading, campaigns: reading.campaigns.map((c) => ({ ...c })) }));
    },
  };
}
