/**
 * What the store contract says of a campaign's switch to s2s while jobs are held for it (issue 31): the
 * held orders may have been billed by the pixel already, so they wait for a decision (`onSwitch`, or an
 * operator's `postback held send|drop`) instead of being sent. The rules are core's `switch-rules.ts`.
 */
import type { EpochMs } from '../policy.ts';
import type { ShadowDecided, SwitchDecision } from './shadow-types.ts';

/**
 * What the held orders of a campaign get when the kit sees the campaign accept s2s:
 * - `ask` (default): they wait for an operator's decision (`postback held send|drop`, the dashboard);
 * - `send`: they are sent (no pixel billed them: a campaign left on pixel by mistake);
 * - `drop`: they are cancelled (the pixel billed them).
 */
export type OnSwitch = 'ask' | 'send' | 'drop';

/** Every {@link OnSwitch} value. */
export const ON_SWITCH_VALUES: readonly OnSwitch[] = ['ask', 'send', 'drop'];

/** One held problem (an account's campaign) whose campaign was seen accepting s2s. */
export interface SwitchSeen {
  account: string | null;
  /** The campaign (`cmp_…`) a delivery's answer named for the account. */
  campaignId: string;
  /** When the kit first saw it accept s2s. */
  at: EpochMs;
}

/** Which held jobs {@link OutboxSwitches.decide} decides: one problem's, optionally only the older ones. */
export interface HeldDecisionOptions {
  account: string | null;
  /** The campaign they are held for (null: held without a named campaign). */
  campaignId: string | null;
  decision: SwitchDecision;
  now: EpochMs;
  /** Only jobs created before this time. @defaultValue every held job of the problem */
  createdBefore?: EpochMs | null;
}

/**
 * The switches of held campaigns, kept by the store so that a command and every worker see them. A store
 * without it (`Outbox.switches` undefined: SQS) keeps held jobs until a decision option says otherwise.
 */
export interface OutboxSwitches {
  /**
   * Notes that the kit saw `campaignId` accept s2s for `account` at `at`, when jobs are held for it: kept
   * once (the first sighting's time). Resolves true when it was new and jobs are held for it.
   */
  note(seen: SwitchSeen): Promise<boolean>;
  /** The switches seen and not yet decided, oldest first. */
  list(): Promise<SwitchSeen[]>;
  /**
   * Decides the pending held jobs of one problem in one transaction (core's `decideHeldJob`): `send` makes
   * them due now (past its deadline: `expired`, never sent late), `drop` cancels them; a held reversal is
   * always sent. The switch is forgotten once no job of the problem is held. Resolves the jobs decided.
   */
  decide(options: HeldDecisionOptions): Promise<ShadowDecided[]>;
}
