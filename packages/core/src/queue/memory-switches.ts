/**
 * The switches of held campaigns in the memory outbox (`OutboxSwitches`): a map of the switches seen, and
 * the decisions applied to the outbox's own jobs by core's `switch-rules.ts` through the hooks it hands over.
 */
import type { Job } from './job-types.ts';
import type { ShadowDecided } from './shadow-types.ts';
import {
  checkHeldDecision,
  checkSwitchSeen,
  decideHeldJob,
  heldDecisionFor,
  isDecidable,
  switchKey,
} from './switch-rules.ts';
import type { OutboxSwitches, SwitchSeen } from './switch-types.ts';

/** What the memory outbox hands its switches. */
export interface MemorySwitchesHooks {
  assertOpen(): void;
  /** Every job, in creation order. */
  jobs(): Iterable<Job>;
  /** Stores a job changed outside a claim (its final ledger row written, its refund following it). */
  update(before: Job, after: Job): void;
}

/** Creates the switches of a memory outbox, none seen. */
export function createMemorySwitches(hooks: MemorySwitchesHooks): OutboxSwitches {
  const seen = new Map<string, SwitchSeen>();
  const isHeld = (account: string | null, campaignId: string | null) => {
    for (const job of hooks.jobs())
      if (isDecidable(job, { account, campaignId, createdBefore: null })) return true;
    return false;
  };

  return {
    async note(switchSeen) {
      hooks.assertOpen();
      const checked = checkSwitchSeen(switchSeen);
      const key = switchKey(checked.account, checked.campaignId);
      if (seen.has(key) || !isHeld(checked.account, checked.campaignId)) return false;
      seen.set(key, checked);
      return true;
    },

    async list() {
      hooks.assertOpen();
      return [...seen.values()].sort((a, b) => a.at - b.at).map((s) => ({ ...s }));
    },

    async decide(options) {
      hooks.assertOpen();
      const checked = checkHeldDecision(options);
      const decided: ShadowDecided[] = [];
      for (const job of [...hooks.jobs()]) {
        if (!isDecidable(job, checked)) continue;
        const next = decideHeldJob(job, checked.decision, checked.now);
        hooks.update(job, next);
        decided.push({ decision: heldDecisionFor(job, checked.decision), job: { ...next } });
      }
      if (!isHeld(checked.account, checked.campaignId))
        seen.delete(switchKey(checked.account, checked.campaignId));
      return decided;
    },
  };
}
