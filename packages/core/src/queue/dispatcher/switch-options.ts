/**
 * The Dispatcher's option of what a held campaign's switch to s2s does to its held orders (`switches.ts`),
 * as a part of the one options schema (`options.ts`, which holds it under `onSwitch`).
 */
import { z } from 'zod';
import { documented } from '../../options-table.ts';
import { ON_SWITCH_VALUES, type OnSwitch } from '../switch-types.ts';

/**
 * What the held orders of a campaign get when it starts accepting s2s, unless the option says otherwise:
 * they wait for an operator's decision (they may have been billed by the pixel).
 * @defaultValue 'ask'
 */
export const DEFAULT_ON_SWITCH: OnSwitch = 'ask';

/** A choice per problem: the account and the campaign its orders are held for (null: not named). */
export type OnSwitchResolver = (problem: { account: string | null; campaignId: string | null }) => OnSwitch;

const choice = z.enum(ON_SWITCH_VALUES as [OnSwitch, ...OnSwitch[]]);

/** `onSwitch` of the options schema: one choice, or one per account and campaign. */
export const onSwitchOption = documented(
  z
    .union([
      choice,
      z.custom<OnSwitchResolver>(
        (value) => typeof value === 'function',
        "must be 'ask', 'send', 'drop' or a function ({ account, campaignId }) => one of them",
      ),
    ])
    .default(DEFAULT_ON_SWITCH),
  "'ask' \\| 'send' \\| 'drop' \\| ({ account, campaignId }) => …",
  "`'ask'` (`DEFAULT_ON_SWITCH`)",
  "What the held orders of a campaign get when the kit sees it accept s2s (see [Held jobs](#held-jobs-a-campaign-not-on-s2s)): `'ask'` keeps them for an operator's `postback held send\\|drop` (the pixel may have billed them); `'send'` sends them (no pixel: the campaign was left on pixel by mistake; held orders then probe the campaign); `'drop'` cancels them (the pixel billed them). A function decides per account and campaign.",
);

/**
 * The choice for one problem: `onSwitch` itself, or what its function answers (an answer that is not a
 * choice counts as `'ask'`: nothing moves without a decision).
 */
export function onSwitchFor(
  option: OnSwitch | OnSwitchResolver,
  account: string | null,
  campaignId: string | null,
): OnSwitch {
  if (typeof option !== 'function') return option;
  const chosen = option({ account, campaignId });
  return ON_SWITCH_VALUES.includes(chosen) ? chosen : 'ask';
}
