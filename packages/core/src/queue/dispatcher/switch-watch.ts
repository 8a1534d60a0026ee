/**
 * A held campaign's switch to s2s, as a Dispatcher sees it. A delivery whose answer names a campaign for an
 * account proves that campaign accepts s2s now; when orders of that account are held for it (the store
 * answers), the switch is noted once (`OutboxSwitches.note`) and `onSwitch` decides what the held orders
 * get: `ask` leaves them for an operator (`switch-seen`, `postback held`), `drop` cancels them and `send`
 * makes them due, each with a ledger row naming the option. The store is asked at most once per account and
 * campaign every `askEveryMs`, so the deliveries of a switched campaign cost no store call each.
 */
import type { EpochMs } from '../../policy.ts';
import { jobLedgerRow } from '../ledger.ts';
import type { Outbox } from '../outbox-types.ts';
import { switchKey } from '../switch-rules.ts';
import type { OnSwitch } from '../switch-types.ts';
import type { Emit } from './events.ts';
import { type OnSwitchResolver, onSwitchFor } from './switch-options.ts';

/** The ledger actor of a decision `onSwitch` took. */
export const ON_SWITCH_ACTOR = 'option onSwitch';

/** Most (account, campaign) pairs whose last question is remembered; the oldest are forgotten first. */
const MAX_REMEMBERED = 10_000;

/** What watching for switches needs. */
export interface SwitchWatchContext {
  outbox: Pick<Outbox, 'switches' | 'features' | 'appendLedger'>;
  emit: Emit;
  onSwitch: OnSwitch | OnSwitchResolver;
  /** How often one campaign's switch is asked of the store (the holds' `holdProbeMs`). */
  askEveryMs: number;
}

/** See {@link createSwitchWatch}. */
export interface SwitchWatch {
  /**
   * A delivery at `at` named `campaignId` for `account`: notes the switch if orders are held for it. Null
   * at once when the store is not to be asked (asked within `askEveryMs`, or a store without switches).
   */
  delivered(account: string | null, campaignId: string, at: EpochMs): Promise<void> | null;
}

/** Creates the switch watch of a Dispatcher; a store without switches (SQS) is never asked. */
export function createSwitchWatch(ctx: SwitchWatchContext): SwitchWatch {
  const { outbox, emit } = ctx;
  const askedAt = new Map<string, EpochMs>();

  const delivered: SwitchWatch['delivered'] = (account, campaignId, at) => {
    const switches = outbox.switches;
    if (switches === undefined) return null;
    const key = switchKey(account, campaignId);
    const last = askedAt.get(key);
    if (last !== undefined && at - last < ctx.askEveryMs) return null;
    askedAt.delete(key);
    askedAt.set(key, at);
    if (askedAt.size > MAX_REMEMBERED) askedAt.delete(askedAt.keys().next().value as string);
    return ask(switches, account, campaignId, at);
  };

  /** Asks the store whether orders are held for the campaign, and lets `onSwitch` decide them if so. */
  const ask = async (
    switches: NonNullable<Outbox['switches']>,
    account: string | null,
    campaignId: string,
    at: EpochMs,
  ): Promise<void> => {
    if (!(await switches.note({ account, campaignId, at }))) return;
    const onSwitch = onSwitchFor(ctx.onSwitch, account, campaignId);
    if (onSwitch === 'ask') {
      emit('switch-seen', { account, campaignId, at, onSwitch, decided: 0 });
      return;
    }
    const decided = await switches.decide({ account, campaignId, decision: onSwitch, now: at });
    if (outbox.features.ledger)
      for (const { decision, job } of decided)
        await outbox.appendLedger(
          jobLedgerRow(job, {
            actor: ON_SWITCH_ACTOR,
            kind: decision === 'send' ? 'held-send' : 'held-drop',
            at,
            reason: `onSwitch '${onSwitch}': ${job.lastError ?? job.state}`,
          }),
        );
    emit('switch-seen', { account, campaignId, at, onSwitch, decided: decided.length });
  };

  return { delivered };
}
