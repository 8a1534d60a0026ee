/**
 * The rules of a held campaign's switch to s2s, as pure functions every store applies (the contract is in
 * `switch-types.ts`): which held jobs a decision takes, what each becomes, and the checks of what the calls
 * are given.
 */
import type { EpochMs } from '../policy.ts';
import { accountKey } from './accounts.ts';
import { checkEpoch } from './call-checks.ts';
import type { Job } from './job-types.ts';
import { truncateReason } from './jobs.ts';
import type { SwitchDecision } from './shadow-types.ts';
import type { HeldDecisionOptions, SwitchSeen } from './switch-types.ts';
import { JobValidationError, validateAccount, validateCampaignId } from './validation.ts';

/** The reason a held order dropped by a decision is cancelled with (its prefix). */
export const HELD_DROPPED_PREFIX = 'held drop';

/** The key a store keeps a switch under: the account key and the campaign. */
export function switchKey(account: string | null, campaignId: string | null): string {
  return `${accountKey(account)}\u0001${campaignId ?? ''}`;
}

/** Checks a {@link SwitchSeen}. Throws `JobValidationError` naming the field. */
export function checkSwitchSeen(seen: unknown): SwitchSeen {
  if (typeof seen !== 'object' || seen === null)
    throw new JobValidationError('seen', 'must be { account, campaignId, at }');
  const { account, campaignId, at } = seen as Partial<SwitchSeen>;
  return {
    account: validateAccount(account),
    campaignId: validateCampaignId(campaignId, 'campaignId'),
    at: checkEpoch(at, 'at'),
  };
}

/** Checks what `OutboxSwitches.decide` is given. Throws `JobValidationError` naming the field. */
export function checkHeldDecision(options: unknown): Required<HeldDecisionOptions> {
  if (typeof options !== 'object' || options === null)
    throw new JobValidationError('options', 'must be { account, campaignId, decision, now }');
  const o = options as Partial<HeldDecisionOptions>;
  if (o.decision !== 'send' && o.decision !== 'drop')
    throw new JobValidationError('decision', "must be 'send' or 'drop'");
  return {
    account: validateAccount(o.account),
    campaignId: o.campaignId === null ? null : validateCampaignId(o.campaignId, 'campaignId'),
    decision: o.decision,
    now: checkEpoch(o.now, 'now'),
    createdBefore:
      o.createdBefore === undefined || o.createdBefore === null
        ? null
        : checkEpoch(o.createdBefore, 'createdBefore'),
  };
}

/** Whether a decision on `options`' problem takes `job`: pending, held for it, created before the bound. */
export function isDecidable(
  job: Pick<Job, 'state' | 'heldAt' | 'account' | 'heldCampaignId' | 'createdAt'>,
  options: Pick<HeldDecisionOptions, 'account' | 'campaignId' | 'createdBefore'>,
): boolean {
  return (
    job.state === 'pending' &&
    job.heldAt !== null &&
    job.account === options.account &&
    job.heldCampaignId === options.campaignId &&
    (options.createdBefore == null || job.createdAt < options.createdBefore)
  );
}

/** The decision a held job gets: a reversal is always sent (the pixel bills no reversal), an order as decided. */
export function heldDecisionFor(job: Pick<Job, 'kind'>, decision: SwitchDecision): SwitchDecision {
  return job.kind === 'refund' ? 'send' : decision;
}

/**
 * A held job once decided at `now`:
 * - `send`: due now, held no longer, unless its deadline has passed (`expired`: never sent late);
 * - `drop`: `cancelled`, naming why it was not sent.
 *
 * @example
 * ```ts
 * await db.update(decideHeldJob(stored, 'drop', now));
 * ```
 */
export function decideHeldJob<J extends Job>(stored: J, decision: SwitchDecision, now: EpochMs): J {
  const ended = (state: 'cancelled' | 'expired', reason: string): J => ({
    ...stored,
    state,
    updatedAt: now,
    lastError: truncateReason(reason),
    heldAt: null,
    heldCampaignId: null,
  });
  if (heldDecisionFor(stored, decision) === 'drop')
    return ended(
      'cancelled',
      `${HELD_DROPPED_PREFIX}: billed by the pixel before the switch to s2s; not sent`,
    );
  if (stored.deadline !== null && stored.deadline < now)
    return ended('expired', 'held send: its deadline passed while it waited for a decision; not sent');
  return {
    ...stored,
    updatedAt: now,
    nextAttemptAt: now,
    lastError: null,
    heldAt: null,
    heldCampaignId: null,
  };
}
